"""The provers' z3 is imported when a proof first uses it (`spec.proofs.lazy_z3`), not by importing a command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
COMMAND_MODULES = ("delta_suite.fuzz.cli", "delta_suite.corpora.cli", "delta_suite.reports.cli",
                   "delta_suite.spec.admission", "delta_suite.spec.proofs.derive", "controls",
                   "properties.conftest")


def _python(code: str) -> str:
    run = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout.strip()


def test_importing_the_commands_does_not_execute_z3() -> None:
    """After importing every command's module and the provers, z3's own code has not run (its `z3.z3` submodule
    is not loaded); the first use of an attribute loads it, and the provers then hold the module `import z3` gives,
    which proves (a satisfiable formula is sat)."""
    imports = "; ".join(f"import {m}" for m in COMMAND_MODULES)
    out = _python(f"import sys; {imports}; print('z3.z3' in sys.modules)")
    assert out == "False", f"importing {COMMAND_MODULES} executed z3"
    out = _python("import sys; from delta_suite.spec.proofs.lazy_z3 import z3 as lazy; x = lazy.Int('x'); s = "
                  "lazy.Solver(); "
                  "s.add(x > 1); import z3; print(lazy is z3, 'z3.z3' in sys.modules, s.check() == z3.sat)")
    assert out == "True True True", out
