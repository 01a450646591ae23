"""A user's file whose split regex is none of the six, end to end: admitted by proof under a derived family, then
through the commands a user runs on it (admission, a campaign, the kill matrix) and into the gate's per-code-point
checks, which collect the derived family from the user table exactly as they collect a known family.

The file is synthetic (`properties.synthetic.stages_config`: the power vocabulary under one Split stage of a regex
no frozen tokenizer has, digits in pairs) so the test owns its pattern; the public-file side of the same path is
`test_public_gpt2_form.py` (the GPT-2 form of a real package's file).
"""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from delta_suite.frozen.user_table import USER_TABLE_ENV
from delta_suite.ledger.records import read_ledgers
from delta_suite.spec.families import is_derived
from delta_suite.spec.patterns import identify

from properties.derived_synthetic import GATE_PATTERNS
from properties.synthetic import stages_config, write

ROOT = Path(__file__).resolve().parents[1]
REGEXES, USE_REGEX = GATE_PATTERNS["digit_pairs"]


def run(module: str, *args: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, USER_TABLE_ENV: "{}", **(env or {})})


def run_together(*runs: tuple[tuple[str, ...], dict], timeout: float = 300) -> list[subprocess.CompletedProcess]:
    """`run(module, *args, env=env)` for each (module and args, env) of `runs`, the processes started together and
    each waited for: independent commands whose start-ups (imports, tokenizer loads) need not follow one another."""
    with ThreadPoolExecutor(max_workers=len(runs)) as pool:
        futures = [pool.submit(run, *argv, env=env, timeout=timeout) for argv, env in runs]
        return [f.result() for f in futures]


@pytest.fixture(scope="module")
def derived_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A snapshot folder holding the synthetic file; its stages are none of the six (checked, so the test cannot
    pass through a known family by accident)."""
    assert identify(REGEXES) is None
    folder = tmp_path_factory.mktemp("digit-pairs")
    write(folder, stages_config(REGEXES, use_regex=USE_REGEX))
    return folder


def test_a_user_file_with_an_unseen_regex_runs_clean_through_admission_a_campaign_and_the_kill_matrix(
        derived_file: Path, tmp_path: Path) -> None:
    """Admission names the derived family (exit 0); `fuzz --tokenizer PATH` compares cuts and repairs with the
    reference and finds no difference (exit 0, records of the user file); the kill matrix on the file exits 0."""
    admitted = run("delta_suite.spec.admission_cli", str(derived_file))
    assert admitted.returncode == 0 and "derived:" in admitted.stdout, admitted.stdout + admitted.stderr
    campaign = run("delta_suite.fuzz.cli", "--tokenizer", str(derived_file), "--examples", "64", "--out",
                   str(tmp_path / "f"))
    assert campaign.returncode == 0, campaign.stdout[-1500:] + campaign.stderr[-1500:]
    recs = read_ledgers([tmp_path / "f"]).records
    compared = sum(r["comparisons"] for r in recs)
    differing = sum(r["differences"] for r in recs if r["level"] != "control")
    assert recs and all(r["tokenizer_file"]["source"] == "user file" for r in recs)
    assert compared > 0 and differing == 0, (compared, differing)
    matrix = run("delta_suite.controls.kill_matrix", "--tokenizer", str(derived_file), "--ledger",
                 str(tmp_path / "km.jsonl"))
    assert matrix.returncode == 0, matrix.stdout[-1500:] + matrix.stderr[-1500:]


def test_the_per_code_point_gate_collects_a_user_files_derived_family(derived_file: Path, tmp_path: Path) -> None:
    """With the file in the user table, the per-code-point files collect tests for its derived family (the
    transitions and the alphabet, as for the six); without it they do not."""
    exported = run("delta_suite.frozen.export_user_files", f"digits={derived_file}")
    assert exported.returncode == 0, exported.stderr
    files = ["properties/test_derived_exhaustive.py"]
    env = {"DELTA_DERIVED_GATE": "gpt2"}
    collect = ("pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-n", "0", *files)
    # the two collections at once, each with a ledger folder of its own (a session clears its folder's old ledgers)
    without, with_file = run_together(
        (collect, {**env, "DELTA_LEDGER_DIR": str(tmp_path / "gate")}),
        (collect, {**env, "DELTA_LEDGER_DIR": str(tmp_path / "gate-with"), USER_TABLE_ENV: exported.stdout.strip()}))
    assert without.returncode == 0 and with_file.returncode == 0, with_file.stdout[-1500:] + with_file.stderr[-1500:]
    new_ids = set(with_file.stdout.splitlines()) - set(without.stdout.splitlines())
    families = {i for i in new_ids if "derived:" in i}
    assert families, with_file.stdout[-1500:]
    assert all(is_derived(i[i.index("derived:"):].split("-")[0].split("]")[0]) for i in families)
