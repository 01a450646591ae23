"""The pytest entry point of the suite, loaded by every pytest run in an environment that has it installed.

Invariant: in a run that gives none of its options, this module is all of the suite that is imported; it declares
the options (so `pytest --help` lists them) and nothing else. With `--delta-subject` it imports and registers
`delta_suite.fuzz.subject_plugin`, which adds the subject gate's tests. A project whose own packages are named like
the suite's folders (`fuzz`, `spec`, `reports`, ...) is never touched: the suite's modules live under
`delta_suite` only.
"""

from __future__ import annotations

import pytest

SUBJECT_PLUGIN = "delta_suite.subject-gate"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("delta-suite", "certify an implementation against the reference (delta-suite)")
    group.addoption("--delta-subject", metavar="SPEC",
                    help="the implementation under test: module:factory, exec:COMMAND, or an entry-point name")
    group.addoption("--delta-tokenizer", default="all", metavar="NAME|PATH",
                    help="registry name or alias, all (every provisioned admitted tokenizer; default), or a path to "
                    "a tokenizer.json or a folder holding one (a user file, run as its own tokenizer)")
    group.addoption("--delta-tokenizer-name", default=None, metavar="NAME",
                    help="the name of a --delta-tokenizer path (default: the folder's name, or the file's stem)")
    group.addoption("--delta-examples", type=int, default=200, metavar="N",
                    help="Hypothesis examples of the property, and cases per path of each campaign (default 200)")
    group.addoption("--delta-ledger", default="out/ledgers/subject", metavar="DIR",
                    help="where the ledger records go (default out/ledgers/subject)")
    group.addoption("--delta-timeout", type=float, default=None, metavar="SECONDS",
                    help="per-call timeout of the subject (default $DELTA_SUBJECT_TIMEOUT or 30)")



@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if not config.getoption("--delta-subject"):
        return
    from delta_suite.fuzz import subject_plugin

    if not config.pluginmanager.has_plugin(SUBJECT_PLUGIN):
        config.pluginmanager.register(subject_plugin, SUBJECT_PLUGIN)
