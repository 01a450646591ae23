"""The gate's collection order: the modules of long end-to-end tests first, every module whole.

Invariant: `early_modules_first` puts every item of `EARLY_MODULES` before every other item, keeps the order of
the items within each module and among the other modules, and never splits a module (a module-scoped fixture is
set up once per worker as before); every name in EARLY_MODULES is a module of the gate.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from properties.conftest import EARLY_MODULES, early_modules_first

HERE = Path(__file__).resolve().parent


def _items(names: list[str]) -> list[SimpleNamespace]:
    return [SimpleNamespace(path=HERE / module, nodeid=f"{module}::{test}")
            for module, test in (name.split("::") for name in names)]


def test_early_modules_come_first_whole_and_in_order() -> None:
    early = EARLY_MODULES[0]
    names = ["test_a.py::t1", f"{early}::t1", "test_a.py::t2", "test_b.py::t1", f"{early}::t2", "test_b.py::t2"]
    items = _items(names)
    early_modules_first(items)
    assert [i.nodeid for i in items] == [f"{early}::t1", f"{early}::t2", "test_a.py::t1", "test_a.py::t2",
                                         "test_b.py::t1", "test_b.py::t2"]


def test_every_early_module_is_a_module_of_the_gate() -> None:
    missing = [name for name in EARLY_MODULES if not (HERE / name).is_file()]
    assert not missing, missing
