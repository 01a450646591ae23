"""Deliberately broken variants of the minimal implementation; the suite must catch every one.

`names()` lists them, `get(name)` returns a `Control` (its path, and the CutRules, RepairParams or fault
planter that break exactly one thing). `controls.kill_matrix` runs the battery against each.
"""

from delta_suite.controls.registry import Control, get, names, unbroken

__all__ = ["Control", "get", "names", "unbroken"]
