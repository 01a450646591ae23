"""The suite claims one import name, and its pytest plugin is safe to have installed.

Invariants:
- a user's project with its own packages named like the suite's folders (`fuzz`, `spec`, `reports`, `benchmarks`)
  runs its own tests under the suite's environment as if the suite were absent, and `pytest --help` there still
  lists `--delta-subject`;
- in a pytest run that gives none of the suite's options, the plugin imports nothing of the suite but
  `delta_suite` and `delta_suite.pytest_plugin`; with `--delta-subject` the subject gate is registered;
- the wheel's package list holds the one name and its subpackages, and neither the mutation profile nor the tests.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mutation.verdicts import tomllib

ROOT = Path(__file__).resolve().parent.parent
USER_PACKAGES = ("fuzz", "spec", "reports", "benchmarks")

USER_TEST = '''
import sys

import benchmarks
import fuzz
import reports
import spec
from fuzz.engine import MINE


def test_my_own_packages():
    assert MINE == "the user's own"
    assert spec.WHO == fuzz.WHO == reports.WHO == benchmarks.WHO == "user"


def test_the_suite_stays_out_of_my_run():
    loaded = sorted(m for m in sys.modules if m == "delta_suite" or m.startswith("delta_suite."))
    with open("loaded.json", "w") as out:
        out.write(__import__("json").dumps(loaded))
'''


def _user_project(root: Path) -> Path:
    """A project of a user's with packages named like four of the suite's folders, and tests that import them."""
    for name in USER_PACKAGES:
        (root / name).mkdir(parents=True)
        (root / name / "__init__.py").write_text('WHO = "user"\n')
    (root / "fuzz" / "engine.py").write_text('MINE = "the user\'s own"\n')
    (root / "tests").mkdir()
    (root / "tests" / "test_mine.py").write_text(USER_TEST)
    (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["tests"]\npythonpath = ["."]\n')
    return root


def _pytest(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def test_a_users_packages_named_like_the_suites_folders_run_as_if_the_suite_were_absent(tmp_path: Path,
                                                                                         ledger) -> None:
    """The user's `fuzz`, `spec`, `reports` and `benchmarks` are the ones imported; their tests pass; the suite's
    plugin loaded nothing of the suite but its own module; `pytest --help` there lists `--delta-subject`."""
    project = _user_project(tmp_path / "user-project")
    run = _pytest(project, "-q")
    written = project / "loaded.json"
    loaded = json.loads(written.read_text()) if written.is_file() else None
    helped = _pytest(project, "--help")
    outcomes = {"user tests pass": run.returncode == 0 and "2 passed" in run.stdout,
                "only the plugin's module loaded": loaded == ["delta_suite", "delta_suite.pytest_plugin"],
                "--delta-subject listed": helped.returncode == 0 and "--delta-subject" in helped.stdout}
    # recorded before the verdict, so a failing run leaves its record with what differed
    ledger.record("harness", "packaging.user_project", comparisons=len(outcomes),
                  differences=sum(not held for held in outcomes.values()), unit="checks", oracle="self",
                  details={"suite_modules_loaded": loaded, "failed": [k for k, held in outcomes.items() if not held]})
    assert all(outcomes.values()), (outcomes, loaded, run.stdout[-3000:] + run.stderr[-3000:])


def test_the_subject_option_registers_the_subject_gate(tmp_path: Path) -> None:
    """With `--delta-subject` the plugin imports and registers the subject gate (its tests are collected);
    without it, no such plugin is registered."""
    project = tmp_path / "empty"
    project.mkdir()
    asked = _pytest(project, "--collect-only", "-q", "--delta-subject=delta", "--delta-tokenizer", "qwen3")
    assert "test_whole_encode_property[qwen3_8b]" in asked.stdout, asked.stdout[-3000:] + asked.stderr[-3000:]
    plain = _pytest(project, "--collect-only", "-q")
    assert "test_whole_encode_property" not in plain.stdout


def test_the_wheel_installs_one_name_without_the_development_tools() -> None:
    """pyproject.toml's package list: `delta_suite` and its subpackages only, each mapped onto a floor's folder
    of the checkout, with neither the mutation profile nor the tests; the entry points name modules under it."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    packages = project["tool"]["setuptools"]["packages"]
    assert {p.split(".")[0] for p in packages} == {"delta_suite"}
    assert not [p for p in packages if p.split(".")[1:2] in (["mutation"], ["properties"])]
    mapping = project["tool"]["setuptools"]["package-dir"]
    for name, folder in mapping.items():
        assert (ROOT / folder / "__init__.py").is_file(), (name, folder)
    for target in [*project["project"]["scripts"].values(), *project["project"]["entry-points"]["pytest11"].values()]:
        assert target.startswith("delta_suite."), target


@pytest.mark.parametrize("module", ["delta_suite.pytest_plugin", "delta_suite"])
def test_the_plugin_module_imports_nothing_of_the_suite(module: str) -> None:
    """Importing the plugin's module (as pytest does at start-up) loads no other module of the suite."""
    code = (f"import sys, json; import {module}; "
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('delta_suite'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd="/")
    assert out.returncode == 0, out.stderr
    assert set(json.loads(out.stdout)) <= {"delta_suite", "delta_suite.pytest_plugin"}
