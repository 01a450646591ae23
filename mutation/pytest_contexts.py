"""A pytest plugin loaded only while the coverage map is measured (`-p mutation.pytest_contexts`): the lines each
test executes are recorded under the test's name, setup and teardown included, so a fixture's work counts for the
test that needed it; the subprocesses a test starts write their data under the test's own number.

A test is named by its node id without the parameters (`file::Class::test`): rerunning that name runs every
parameter set, so the name stays valid for any mutant. Lines executed outside any test (collection, imports at
module level) stay under the empty context; the map charges those to the whole file. Children measured through
coverage's `patch = subprocess` read their configuration from COVERAGE_PROCESS_CONFIG; during a test its data file
becomes `<data file>.node<number>`. The names, numbers and durations are appended to `$MUTATION_NODES` (JSON lines)
when set.
"""

from __future__ import annotations

import base64
import json
import os
import time

import coverage
import pytest

_numbers: dict[str, int] = {}


def short_name(nodeid: str) -> str:
    """`file::test[params]` -> `file::test`."""
    return nodeid.split("[", 1)[0]


def _with_data_file(config: str, data_file: str) -> str:
    """Coverage's configuration for children (base64 of JSON, as coverage 7 serializes it) with another data
    file: the children's data are then told apart by the test that started them."""
    data = json.loads(base64.b64decode(config.encode()).decode())
    data["data_file"] = os.path.abspath(data_file)
    return base64.b64encode(json.dumps(data).encode()).decode()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    name = short_name(item.nodeid)
    number = _numbers.setdefault(name, len(_numbers))
    cov = coverage.Coverage.current()
    config = os.environ.get("COVERAGE_PROCESS_CONFIG")
    base = os.environ.get("COVERAGE_FILE")
    if cov is not None:
        cov.switch_context(name)
    if config and base:  # children started by this test inherit a data file name of their own
        os.environ["COVERAGE_PROCESS_CONFIG"] = _with_data_file(config, f"{base}.node{number}")
    t0 = time.monotonic()
    try:
        yield
    finally:
        seconds = time.monotonic() - t0
        if config and base:
            os.environ["COVERAGE_PROCESS_CONFIG"] = config
        if cov is not None:
            cov.switch_context("")
        nodes = os.environ.get("MUTATION_NODES")
        if nodes:
            with open(nodes, "a", encoding="utf-8") as out:
                out.write(json.dumps({"name": name, "number": number, "seconds": seconds}) + "\n")
