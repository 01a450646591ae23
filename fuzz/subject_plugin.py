"""A pytest plugin that certifies YOUR implementation with the suite's checks, in your own CI:

    pip install delta-suite && corpora tokenizers pull qwen3
    pytest --delta-subject=my_pkg.module:factory -n auto          # or exec:COMMAND, or an entry-point name
    pytest --delta-subject=my_pkg.module:factory --delta-tokenizer path/to/snapshot/   # your own tokenizer.json

Installed with the package, the plugin's entry (`delta_suite.pytest_plugin`, also `-p delta_suite.pytest_plugin`)
only declares the options; when `--delta-subject` is given it registers this module, which adds the tests of
`fuzz/subject_gate.py` to the session, once per tokenizer (and per path for the campaigns), so pytest-xdist spreads
them over workers: a Hypothesis property of the whole encode on seam texts, the `ci` seam battery on every path the
subject offers, and a short fuzz campaign per path. Each writes ledger records under `--delta-ledger` (default
out/ledgers/subject) that `reports table3 --ledgers DIR` renders in its Subjects section, with the name and version
the subject reports. A subject that cannot be imported or built fails its tests as "not installed" (recorded, never
a pass); one that crashes, hangs (`--delta-timeout`) or returns malformed output on an input fails with the input,
recorded as such.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from delta_suite.frozen.errors import NotProvisioned, SuiteError
from delta_suite.frozen.loader import load_tokenizer
from delta_suite.frozen.registry import lookup, rows
from delta_suite.frozen.user_files import is_path_argument, resolve_tokenizer
from delta_suite.spec.admission import admission_of
from delta_suite.spec.refusals import refusal_message

GATE = Path(__file__).resolve().with_name("subject_gate.py")


def selected_tokenizers(name: str, user_name: str | None = None) -> list[str]:
    """NAME (a registry name or alias), a path to a user's tokenizer.json or snapshot folder (named `user_name`,
    else after the file; it must be admitted), or every provisioned admitted tokenizer for "all"."""
    if name != "all" and (user_name is not None or is_path_argument(name)):
        try:
            tok = resolve_tokenizer(name, user_name)
        except SuiteError as exc:
            raise pytest.UsageError(str(exc)) from exc
        decided = admission_of(tok)
        if not decided.admitted:
            raise pytest.UsageError(f"tokenizer refused: {tok.name} ({name}): {refusal_message(decided.reason)}")
        return [tok.name]
    if name != "all":
        return [lookup(name).name]
    out = []
    for row in rows():
        try:
            tok = load_tokenizer(row.name)
        except NotProvisioned:
            continue
        if admission_of(tok).admitted:
            out.append(row.name)
    if not out:
        raise pytest.UsageError("no provisioned tokenizer: run corpora tokenizers pull NAME first")
    return out


def pytest_configure(config: pytest.Config) -> None:
    """Check the options and add the subject gate's tests to the session (registered only with --delta-subject)."""
    if config.getoption("--delta-examples") < 1:
        raise pytest.UsageError("--delta-examples must be at least 1")
    timeout = config.getoption("--delta-timeout")
    if timeout is not None:
        os.environ["DELTA_SUBJECT_TIMEOUT"] = str(timeout)  # read by the subject adapters (workers inherit it)
    name, user_name = config.getoption("--delta-tokenizer"), config.getoption("--delta-tokenizer-name")
    if name != "all" and (user_name is not None or is_path_argument(name)):
        selected_tokenizers(name, user_name)  # a user file: named (for every xdist worker) or refused before collection
    if str(GATE) not in config.args:
        config.args.append(str(GATE))


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "delta_tokenizer" not in metafunc.fixturenames:
        return
    names = selected_tokenizers(metafunc.config.getoption("--delta-tokenizer"),
                                metafunc.config.getoption("--delta-tokenizer-name"))
    metafunc.parametrize("delta_tokenizer", names)
