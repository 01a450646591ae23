"""Which modules are mutated, and which test files run against each mutant of a module.

A module of `spec/` or `delta/` is tested by the test files (`properties/test_*.py`) that import it directly or
through one module of the suite in between (test -> X -> module). The import graph is the one import-linter checks
(grimp). Test files that import a module only through longer chains exercise it too, but rarely enough that the
profile's time is better spent elsewhere; EXTRA_TESTS adds files by hand where a module is reached only that way.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import grimp

from mutation.modules import dotted_name, module_path

SUITE_PACKAGES = ("frozen", "ledger", "spec", "delta", "subjects", "checks", "controls", "fuzz", "corpora",
                  "reports", "benchmarks", "mutation", "properties")
TEST_PACKAGE = "properties"
MAX_CHAIN = 3  # modules in the chain test -> X -> module
# module path -> test files added by hand (reached only through longer chains)
EXTRA_TESTS: dict[str, tuple[str, ...]] = {}


@dataclass(frozen=True)
class Selection:
    """A module to mutate and the test files that run against each of its mutants (nearest importers first)."""

    module: str  # path relative to the repository, e.g. "spec/cut.py"
    tests: tuple[str, ...]  # test file paths relative to the repository


@lru_cache(maxsize=1)
def _graph() -> grimp.ImportGraph:
    return grimp.build_graph(*SUITE_PACKAGES, cache_dir=None)


def select(module: str) -> Selection:
    """The test files for `module`: direct importers first, then those one module away, then EXTRA_TESTS."""
    graph = _graph()
    target = dotted_name(module)
    if target not in graph.modules:
        raise KeyError(f"{module} is not a module of the suite")
    ranked: dict[str, int] = {}
    for test in sorted(m for m in graph.modules if m.startswith(TEST_PACKAGE + ".test_")):
        chain = graph.find_shortest_chain(importer=test, imported=target)
        if chain is not None and len(chain) <= MAX_CHAIN:
            ranked[module_path(test)] = len(chain)
    for extra in EXTRA_TESTS.get(module, ()):
        ranked.setdefault(extra, MAX_CHAIN + 1)
    tests = tuple(sorted(ranked, key=lambda t: (ranked[t], t)))
    return Selection(module, tests)
