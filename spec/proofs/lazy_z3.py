"""z3, imported when a proof first uses it rather than when a module that can prove is imported.

Every command and test process imports `spec.admission`, which can derive an unseen split pattern by proof and so
imports the provers; importing z3 costs about half a second of CPU, and almost no process proves anything (the
derivations are cached per machine). `z3` here is the real module behind the standard library's
`importlib.util.LazyLoader`: the first attribute read (`z3.Solver`, ...) executes the import, and from then on it
is the module itself. Invariant: a prover sees exactly the installed z3 (the same module object `import z3` gives
afterwards, registered in `sys.modules`).
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType


def lazy_import(name: str) -> ModuleType:
    """`name` registered in `sys.modules` as a module that executes on its first attribute read (or the module
    itself when something imported it already)."""
    if name in sys.modules:
        return sys.modules[name]
    found = importlib.util.find_spec(name)
    if found is None or found.loader is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    loader = importlib.util.LazyLoader(found.loader)
    found.loader = loader
    module = importlib.util.module_from_spec(found)
    sys.modules[name] = module
    loader.exec_module(module)
    return module


z3 = lazy_import("z3")
