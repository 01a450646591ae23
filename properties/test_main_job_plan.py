"""The main job knows what it was meant to run: its plan, written first, and a row for every planned step.

`ledger.job.step_rows` lists a planned step without a row as a failure (status NO_ROW, named in the verdict), and
job rows without a plan as one too; a step left out on purpose stays "not selected", the verdict's first word is
PARTIAL and its "steps not selected: ..." names it. Driven through the real job (scripts/main-job.sh, short: smoke
only, or smoke and a planner that crashes): a `python` first on PATH plants each fault, passing every other call
through to this interpreter. A listing of the campaign's tokenizers that crashes is the failed step "list
tokenizers" and the verdict is not PASS (it was an empty loop of fuzz steps, read as a clean run); a step row that
cannot be written fails the job with exit 3 and the verdict names the step (it was swallowed).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from delta_suite.ledger.job import NO_ROW, NOT_SELECTED, plan_record, step_record, step_rows
from delta_suite.ledger.records import make_record
from delta_suite.reports.table3 import build_table3
from delta_suite.reports.verdict import verdict

from properties.conftest import ADMITTED, PROVISIONED
from properties.fresh_homes import home_with_rows

ROOT = Path(__file__).resolve().parents[1]
PROVISIONING = [{"name": "qwen3_8b", "alias": "qwen3", "status": "provisioned (exact)", "sha256": "x"}]
COMPARED = make_record("test-plan", "encoder", "corpus.whole", tokenizer="qwen3_8b", tokenizer_sha256="sha",
                       comparisons=100, unit="documents", oracle="reference")


def _step(name: str, status: int) -> dict:
    return step_record(name, status, 1.0, ["true"])


def _verdict(records: list[dict]):
    return verdict(build_table3([COMPARED, *records], provisioning=PROVISIONING, with_mutation=False))


def test_a_planned_step_without_a_row_fails_the_verdict_by_name(ledger) -> None:
    """Every planned step has its row: PASS. The plan names a fuzz step with no row (the job stopped, or the row
    was lost): FAIL, naming that step. Rows without a plan: FAIL. Left out on purpose: PARTIAL, naming them."""
    plan = plan_record(["list tokenizers", "smoke", "fuzz qwen3_8b", "corpus", "cut-gain", "checks"])
    rows = [_step("list tokenizers", 0), _step("smoke", 0), _step("fuzz qwen3_8b", 0), _step("corpus", 0),
            _step("cut-gain", 0), _step("checks", 0)]
    whole = _verdict([plan, *rows])
    assert whole.passed, whole.problems
    lost = _verdict([plan, *[r for r in rows if r["details"]["step"] != "fuzz qwen3_8b"]])
    assert not lost.passed and lost.line.startswith("FAIL")
    assert "step fuzz qwen3_8b: planned, but no row was written" in lost.line, lost.line
    unplanned = _verdict(rows)
    assert not unplanned.passed and "step plan: the job wrote no plan" in unplanned.line, unplanned.line
    partial = _verdict([plan_record(["smoke", "fuzz", "corpus", "cut-gain", "checks"]), _step("smoke", 0),
                        *[_step(s, NOT_SELECTED) for s in ("fuzz", "corpus", "cut-gain", "checks")]])
    assert partial.passed, partial.problems
    assert partial.line.startswith("PARTIAL: "), partial.line
    assert "steps not selected: fuzz, corpus, cut-gain, checks" in partial.line, partial.line
    shown = step_rows([_step("smoke", 0)], [plan])
    assert [r["step"] for r in shown if r["status"] == NO_ROW] == ["list tokenizers", "fuzz qwen3_8b", "corpus",
                                                                    "cut-gain", "checks"]
    ledger.record("harness", "main_job.plan_rows", None, comparisons=4,
                  differences=int(not whole.passed) + int(lost.passed) + int(unplanned.passed)
                  + int(not partial.passed), unit="ledgers", oracle="self")


PLANT = """#!/usr/bin/env bash
# a planted fault: {what}; every other call goes to the real interpreter
case "$* " in
  {pattern}) {action} ;;
esac
exec {python} "$@"
"""
CRASHING_PLANNER = (
    "import runpy, sys\n"
    "import delta_suite.frozen.registry as registry\n"
    "def rows():\n"
    "    raise RuntimeError('planted: the registry cannot be read')\n"
    "registry.rows = rows\n"
    "sys.argv = ['campaign_tokenizers', *sys.argv[1:]]\n"
    "runpy.run_module('delta_suite.fuzz.campaign_tokenizers', run_name='__main__', alter_sys=True)\n"
)


def _planted_python(tmp_path: Path, what: str, pattern: str, action: str) -> Path:
    bin_dir = tmp_path / "planted-bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "python"
    wrapper.write_text(PLANT.format(what=what, pattern=pattern, action=action, python=sys.executable))
    wrapper.chmod(0o755)
    return bin_dir


def _main_job(tmp_path: Path, steps: str, bin_dir: Path | None = None) -> tuple[subprocess.CompletedProcess, dict]:
    """The job's run and its report, on a home of its own where one row is provisioned, the first admitted one (else
    the first provisioned one): its smoke step compares that tokenizer, and what the job makes of a step's status
    and row does not depend on how many tokenizers the step compared."""
    path = os.pathsep.join([*([str(bin_dir)] if bin_dir else []), str(Path(sys.executable).parent),
                            os.environ.get("PATH", "")])
    home = home_with_rows(tmp_path / "home", ([n for n in ADMITTED if n in PROVISIONED] or PROVISIONED)[:1])
    job = subprocess.run(["bash", str(ROOT / "scripts" / "main-job.sh")], cwd=ROOT, capture_output=True, text=True,
                         timeout=600, env={**os.environ, "PATH": path, "DELTA_OUT": str(tmp_path / "out"),
                                           "DELTA_HOME": str(home), "DELTA_MAIN_STEPS": steps,
                                           "DELTA_MAIN_BUDGET": "2s"})
    report = tmp_path / "out" / "report" / "table3.json"
    assert report.is_file(), job.stdout + job.stderr
    return job, json.loads(report.read_text())


@pytest.mark.skipif(not ADMITTED, reason="no admitted tokenizer provisioned: the smoke step compares nothing")
def test_the_main_job_with_a_crashing_planner_is_not_pass(tmp_path: Path, ledger) -> None:
    """The listing of the campaign's tokenizers raises: the job's verdict is FAIL, naming the failed step "list
    tokenizers" (exit 3), no fuzz step is planned or run, and the smoke step's comparisons are still reported."""
    bin_dir = _planted_python(tmp_path, "the tokenizer listing crashes", "'-m delta_suite.fuzz.campaign_tokenizers '*",
                              f'exec {sys.executable} -c "{CRASHING_PLANNER}" "${{@:3}}"')
    job, model = _main_job(tmp_path, "smoke,fuzz", bin_dir)
    steps = {s["step"]: (s["status"], s["outcome"]) for s in model["job_steps"]}
    assert "planted: the registry cannot be read" in job.stderr, job.stderr
    assert not model["verdict"]["passed"], model["verdict"]["line"]
    assert "step list tokenizers: environment or I/O error" in model["verdict"]["line"]
    assert steps.get("list tokenizers") == (3, "environment or I/O error"), steps
    assert not [s for s in steps if s.startswith("fuzz ")], steps
    assert job.returncode == 3, job.stdout + job.stderr
    ledger.record("harness", "main_job.crashing_planner", None, comparisons=1,
                  differences=int(model["verdict"]["passed"]), unit="jobs", oracle="self")


@pytest.mark.skipif(not ADMITTED, reason="no admitted tokenizer provisioned: the smoke step compares nothing")
def test_a_step_row_that_cannot_be_written_fails_the_job(tmp_path: Path, ledger) -> None:
    """The smoke step runs clean but its row cannot be written: the job says so, exits 3, and its verdict names the
    planned step without a row; the same job without the plant passes (exit 0) with a row for every planned step."""
    clean, clean_model = _main_job(tmp_path / "clean", "smoke")
    assert clean.returncode == 0 and clean_model["verdict"]["passed"], clean.stdout + clean.stderr
    assert {s["step"]: s["status"] for s in clean_model["job_steps"]} == {
        "smoke": 0, "fuzz": NOT_SELECTED, "corpus": NOT_SELECTED, "cut-gain": NOT_SELECTED, "checks": NOT_SELECTED}
    bin_dir = _planted_python(tmp_path, "the smoke step's row cannot be written",
                              "'-m delta_suite.ledger.job '*'--step smoke '*",
                              "echo 'planted: no space left on device' >&2; exit 3")
    job, model = _main_job(tmp_path / "lost", "smoke", bin_dir)
    assert "the job's row of smoke could not be written" in job.stderr, job.stderr
    assert job.returncode == 3, job.stdout + job.stderr
    assert not model["verdict"]["passed"]
    assert "step smoke: planned, but no row was written" in model["verdict"]["line"], model["verdict"]["line"]
    ledger.record("harness", "main_job.lost_row", None, comparisons=2,
                  differences=int(not clean_model["verdict"]["passed"]) + int(model["verdict"]["passed"]),
                  unit="jobs", oracle="self")
