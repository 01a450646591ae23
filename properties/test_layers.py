"""The floors: an import never goes up, nothing imports the tests, and no package's modules import in a cycle.

The contracts are in pyproject.toml (`[tool.importlinter]`) and checked by import-linter's `lint-imports`, which
reads every import statement, function-local ones included, under the names the wheel installs
(`scripts/lint_imports.py` builds that layout as a view of links). These tests run it on the checkout, and on a
copy of the checkout with one deliberate violation planted, to show that each contract can fail and names the
line.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("delta_suite", "frozen", "ledger", "spec", "delta", "subjects", "checks", "controls", "fuzz", "corpora",
            "reports", "benchmarks", "mutation", "properties")
CONTRACTS = 3


def _lint_imports(root: Path) -> subprocess.CompletedProcess:
    """`lint-imports` on the checkout at `root`, under the installed names (`scripts/lint_imports.py`)."""
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "lint_imports.py"), str(root), "--no-cache"],
                          env=env, capture_output=True, text=True, timeout=300)


def test_the_checkout_keeps_every_contract(ledger) -> None:
    """Every floor, the test package and the per-package acyclicity contract are kept on this checkout."""
    run = _lint_imports(ROOT)
    out = run.stdout + run.stderr
    kept = f"Contracts: {CONTRACTS} kept, 0 broken."
    ledger.record("harness", "layers.contracts", comparisons=CONTRACTS, differences=0 if kept in out else 1,
                  unit="contracts", oracle="self")
    assert run.returncode == 0 and kept in out, out


@pytest.fixture(scope="module")
def copy_of_checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's packages and pyproject.toml, copied (Python files only) into a fresh folder."""
    root = tmp_path_factory.mktemp("layers")
    shutil.copy2(ROOT / "pyproject.toml", root / "pyproject.toml")
    for package in PACKAGES:
        shutil.copytree(ROOT / package, root / package, ignore=shutil.ignore_patterns("__pycache__", "*.json*",
                                                                                         "regressions", "*.md"))
    return root


VIOLATIONS = [
    # (file, planted import, the contract it breaks, what the report must name)
    ("spec/admission.py", "import delta_suite.reports.table3", "Floors",
     "delta_suite.spec.admission -> delta_suite.reports.table3"),
    ("frozen/loader.py", "import delta_suite.spec.admission", "Floors",
     "delta_suite.frozen.loader -> delta_suite.spec.admission"),
    ("delta/cuts.py", "import delta_suite.subjects.protocol", "Floors",
     "delta_suite.delta.cuts -> delta_suite.subjects.protocol"),
    ("checks/battery.py", "import delta_suite.controls.registry", "Floors",
     "delta_suite.checks.battery -> delta_suite.controls.registry"),
    ("fuzz/generate.py", "import properties.conftest", "Nothing imports the test package",
     "delta_suite.fuzz.generate -> properties"),
    ("subjects/protocol.py", "import delta_suite.subjects.wiring", "No import cycle", "subjects"),
    # the protocol reaching the user subjects again (they import it): the circle the protocol's floor removed
    ("subjects/protocol.py", "import delta_suite.subjects.user", "No import cycle", "subjects"),
]


@pytest.mark.parametrize(("path", "planted", "contract", "named"), VIOLATIONS,
                         ids=[f"{v[0]}:{v[1].split()[-1]}" for v in VIOLATIONS])
def test_a_planted_violation_breaks_its_contract(copy_of_checkout: Path, path: str, planted: str, contract: str,
                                                 named: str, ledger) -> None:
    """One planted upward import (or test import, or cycle) inside a function makes lint-imports fail (exit 1),
    mark that contract BROKEN, and name the importing module and the imported one."""
    target = copy_of_checkout / path
    original = target.read_text()
    try:
        target.write_text(original + f"\n\ndef _planted() -> None:\n    {planted}  # deliberately against the floors\n")
        run = _lint_imports(copy_of_checkout)
    finally:
        target.write_text(original)
    out = run.stdout + run.stderr
    broken = [line for line in out.splitlines() if line.endswith("BROKEN")]
    caught = run.returncode == 1 and any(contract in line for line in broken) and named in out
    # the planted violation is the broken variant: caught by lint-imports, it is killed (one difference seen)
    ledger.record("control", f"layers.planted:{path}:{planted.split()[-1]}", comparisons=1, differences=int(caught),
                  unit="contracts", details={"killed": caught}, oracle="self")
    assert caught, out
