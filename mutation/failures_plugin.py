"""A pytest plugin for the mutants' runs through the test server (`-p mutation.failures_plugin --failures-file F`):
the node id of every test (or file, at collection) that fails is appended to F, one per line, so the caller can
check that the test that killed a mutant passes on the unmutated module through the same server
(mutation.mutant_tests).
"""

from __future__ import annotations

from pathlib import Path

import pytest

_path: list[Path] = []


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--failures-file", default=None, help="append the node id of each failure to this file")


def pytest_configure(config: pytest.Config) -> None:
    value = config.getoption("--failures-file")
    _path[:] = [Path(value)] if value else []


def _record(nodeid: str) -> None:
    if _path:
        with _path[0].open("a", encoding="utf-8") as out:
            out.write(nodeid + "\n")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.failed:
        _record(report.nodeid)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:
        _record(report.nodeid)
