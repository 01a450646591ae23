"""Fault injection, campaigns and the main job: each fault of the reliability issue driven through the real CLIs.

Every test runs `fuzz`, `reports` or the main job as a subprocess and asserts the exit status (one meaning each:
0 clean, 1 difference, 2 usage or input, 3 environment or I/O, 130 interrupted), the message (never a traceback)
and the ledger: no batch lost (a resumed campaign ends with every batch of the uninterrupted one) and none counted
twice (a second writer is refused; a copied ledger counts once). Items, as numbered in the issue:

1. a concurrent `--resume` is refused with the holder's pid; a ledger copied next to itself counts once; a
   conflicting duplicate is listed with file and line and not counted.
2. SIGINT and SIGTERM exit 130 with 1 and 2 workers and during setup; the main job interrupted writes its report,
   which states the interruption, and exits 130.
3. the main job with a corrupt tokenizer writes the report, runs the others and exits 2; `fuzz --tokenizer all`
   records the corrupt one as not loadable and runs the others.
4. an output folder that is a file, or below a file, and a full disk (RLIMIT_FSIZE) exit 3 with the path; after
   the full disk, a resume completes every batch exactly once.
7. a resume keeps the campaign's worker count, says where it resumes, and a finished campaign resumes to a no-op.
9. the setup phase is shown at once; the budget counts checking time and is honoured.
And a `--control` campaign saves its counterexamples under its own folder, never in the source tree.
(Items 5, 6 and 8 are in test_faults_corpus.py and test_faults_provisioning.py.)
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from delta_suite.frozen.loader import load_tokenizer
from delta_suite.fuzz.regressions import CORPUS
from delta_suite.ledger.lock import FolderLock
from delta_suite.ledger.records import read_ledgers

from properties.fresh_homes import share_derived_caches

ROOT = Path(__file__).resolve().parents[1]
FUZZ = [sys.executable, "-m", "delta_suite.fuzz.cli"]
SHARED = ROOT.parent / "shared" / "tokenizers"


def _qwen3_or_skip() -> None:
    try:
        load_tokenizer("qwen3")
    except Exception as exc:  # not provisioned here
        pytest.skip(f"qwen3 not available: {exc}")


@pytest.fixture(autouse=True)
def _needs_qwen3() -> None:
    _qwen3_or_skip()


def ledger_lines(folder: Path) -> int:
    return sum(f.read_bytes().count(b"\n") for f in folder.glob("fuzz-*.jsonl")) if folder.is_dir() else 0


def start(args: list[str], **kw) -> subprocess.Popen:
    """A campaign in its own session (so a signal reaches it even where the shell ignores SIGINT in background)."""
    return subprocess.Popen([*FUZZ, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, cwd=ROOT, **kw)


def wait_for(predicate, proc: subprocess.Popen, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and proc.poll() is None:
        if predicate():
            return
        time.sleep(0.05)
    out, err = proc.communicate(timeout=30) if proc.poll() is not None else ("", "")
    raise AssertionError(f"condition not reached while the campaign ran (rc {proc.returncode}): {out}{err}")


def batches(folder: Path) -> list[tuple]:
    """(tokenizer, path, batch, inputs digest, comparisons) of every batch record, one per identity."""
    read = read_ledgers(sorted(folder.glob("fuzz-*.jsonl")))
    return sorted((r["tokenizer"], r["details"]["path"], r["details"]["batch"], r["details"]["cases_digest"],
                   r["comparisons"]) for r in read.records)


def raw_batch_ids(folder: Path) -> list[str]:
    """The identity of every batch line on disk (duplicates included)."""
    ids = []
    for f in folder.glob("fuzz-*.jsonl"):
        for line in f.read_text(encoding="utf-8").splitlines():
            if line.strip():
                try:
                    ids.append(json.loads(line)["id"])
                except ValueError:
                    pass  # a torn last line
    return ids


# --- 1. one writer per folder; records counted once ----------------------------------------------------------


def test_concurrent_resume_is_refused_with_the_holders_pid(tmp_path: Path) -> None:
    """While a campaign runs in a folder, `fuzz --resume` of that folder exits 2 naming the running process, and
    writes nothing: no batch identity appears twice on disk."""
    out = tmp_path / "c"
    first = start(["--tokenizer", "qwen3", "--path", "cut", "--budget", "60s", "--out", str(out),
                   "--regressions", str(tmp_path / "r")])
    try:
        wait_for(lambda: ledger_lines(out) >= 1, first)
        second = subprocess.run([*FUZZ, "--resume", str(out)], capture_output=True, text=True, timeout=120, cwd=ROOT)
        assert second.returncode == 2, second.stdout + second.stderr
        assert f"in use by process {first.pid}" in second.stderr and "Traceback" not in second.stderr
    finally:
        os.killpg(first.pid, signal.SIGINT)
        first.communicate(timeout=60)
    assert first.returncode == 130
    ids = raw_batch_ids(out)
    assert ids and len(ids) == len(set(ids))


def test_a_copied_ledger_counts_once_and_a_conflict_is_named(tmp_path: Path) -> None:
    """A ledger copied next to itself: the report counts every batch once and says how many repeats it dropped.
    A copy whose counts were altered is a conflicting duplicate: listed with its file and line, not counted."""
    out = tmp_path / "c"
    done = subprocess.run([*FUZZ, "--tokenizer", "qwen3", "--path", "cut", "--examples", "64", "--out", str(out),
                           "--regressions", str(tmp_path / "r")], capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    (ledger,) = out.glob("fuzz-*.jsonl")
    lines = ledger.read_text(encoding="utf-8").splitlines()
    total = sum(json.loads(x)["comparisons"] for x in lines)

    def report(folder: Path) -> dict:
        proc = subprocess.run([sys.executable, "-m", "delta_suite.reports.cli", "table3", "--ledgers", str(folder),
                               "--out",
                               str(folder / "report"), "--format", "json,md"], capture_output=True, text=True,
                              timeout=180, cwd=ROOT)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
        return json.loads((folder / "report" / "table3.json").read_text())

    shutil.copy(ledger, out / "z-copy-of-ledger.jsonl")
    model = report(out)
    counted = sum(r["total"]["comparisons"] for s in model["sections"] for r in s["rows"])
    assert counted == total and model["duplicate_records"] == len(lines)
    assert "repeat one already read" in (out / "report" / "table3.md").read_text()

    altered = json.loads(lines[0])
    altered["comparisons"] += 1
    (out / "z-copy-of-ledger.jsonl").write_text(json.dumps(altered) + "\n", encoding="utf-8")
    model = report(out)
    counted = sum(r["total"]["comparisons"] for s in model["sections"] for r in s["rows"])
    assert counted == total
    (conflict,) = [e for e in model["ledger_errors"] if "conflicting duplicate" in e["reason"]]
    assert conflict["file"].endswith("z-copy-of-ledger.jsonl") and conflict["line"] == 1
    assert not model["verdict"]["passed"]


# --- 2. interruption ------------------------------------------------------------------------------------------


# The default run stops a 2-worker campaign with SIGTERM (a pool to shut down, the signal a scheduler sends); the
# one-worker and SIGINT variants are in the slow tier (15 to 24 s each).
@pytest.mark.parametrize(("workers", "sig"), [pytest.param(1, signal.SIGTERM, marks=pytest.mark.slow),
                                              pytest.param(2, signal.SIGINT, marks=pytest.mark.slow),
                                              (2, signal.SIGTERM)])
def test_a_signal_stops_a_campaign_with_130_and_a_resume_completes_it(tmp_path: Path, workers: int, sig) -> None:
    """SIGINT or SIGTERM mid-campaign: exit 130, the summary says how to resume, every written line is a record.
    The resume (here with 1 worker and a larger budget) says where it resumes, keeps the campaign's worker count in
    its campaign file, records this segment's own count per batch, and counts no batch twice."""
    out = tmp_path / "c"
    proc = start(["--tokenizer", "qwen3", "--path", "cut", "--budget", "2s", "--workers", str(workers),
                  "--out", str(out), "--regressions", str(tmp_path / "r")])
    wait_for(lambda: ledger_lines(out) >= 2, proc)
    os.killpg(proc.pid, sig)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stdout + stderr
    assert f"fuzz --resume {out}" in stdout and "Traceback" not in stderr
    before = batches(out)
    assert before and not read_ledgers(sorted(out.glob("fuzz-*.jsonl"))).errors
    # the campaign's clock counts checking only and stopped short of its 2 s (it exited 130, unfinished), so a resume
    # under 2.5 s has at least half a second of checking left: a batch at least
    resumed = subprocess.run([*FUZZ, "--resume", str(out), "--budget", "2.5s"], capture_output=True, text=True,
                             timeout=180, cwd=ROOT)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"resumed: {len(before)} batches were already recorded; started with {workers} worker(s)" in resumed.stdout
    (campaign,) = out.glob("campaign-*.json")
    assert json.loads(campaign.read_text())["workers"] == workers
    after = batches(out)
    assert set(before) <= set(after) and len(after) > len(before)
    ids = raw_batch_ids(out)
    assert len(ids) == len(set(ids)), "a batch was recorded twice"
    new = [json.loads(x) for f in out.glob("fuzz-*-s2-w*.jsonl") for x in f.read_text().splitlines()]
    assert new and {r["details"]["workers"] for r in new} == {1}


def test_an_interrupt_during_setup_exits_130_without_a_traceback(tmp_path: Path) -> None:
    """Ctrl-C before the first batch: exit 130, a one-line message, no traceback, nothing recorded."""
    out = tmp_path / "c"
    proc = start(["--tokenizer", "qwen3", "--budget", "60s", "--out", str(out), "--regressions", str(tmp_path / "r")])
    first_line = proc.stderr.readline()
    assert "setting up" in first_line
    os.killpg(proc.pid, signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stdout + stderr
    assert "Traceback" not in stderr and "interrupted" in (stdout + stderr)
    assert "Traceback" not in first_line
    assert ledger_lines(out) == 0


def _main_job(tmp_path: Path, env: dict, **kw) -> subprocess.Popen:
    """The main job with the interpreter running these tests first on PATH (its steps run `python -m ...`)."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    return subprocess.Popen(["bash", str(ROOT / "scripts" / "main-job.sh")], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True,
                            env={**os.environ, "PATH": path, "DELTA_OUT": str(tmp_path / "out"), **env}, **kw)


def test_the_main_job_interrupted_writes_a_report_that_says_so(tmp_path: Path) -> None:
    """Ctrl-C during the main job's campaign: the job stops its steps, still writes the report, whose job-steps
    table shows the interrupted step (130) and the steps that never ran, whose verdict is not PASS, and exits 130."""
    job = _main_job(tmp_path, {"DELTA_MAIN_STEPS": "fuzz,corpus", "DELTA_MAIN_BUDGET": "120s"})
    fuzz_dir = tmp_path / "out" / "ledgers" / "main" / "fuzz"
    wait_for(lambda: any(ledger_lines(d) >= 1 for d in fuzz_dir.glob("*")) if fuzz_dir.is_dir() else False, job,
             seconds=150)
    os.killpg(job.pid, signal.SIGINT)
    output, _ = job.communicate(timeout=240)
    assert job.returncode == 130, output
    model = json.loads((tmp_path / "out" / "report" / "table3.json").read_text())
    steps = {s["step"]: s["status"] for s in model["job_steps"]}
    assert 130 in steps.values() and steps["corpus"] == -1, steps
    assert not model["verdict"]["passed"] and "interrupted" in model["verdict"]["line"]
    assert "Traceback" not in output


# --- 3. a corrupt tokenizer is recorded and skipped -----------------------------------------------------------


@pytest.fixture
def home_with_a_corrupt_row(tmp_path: Path) -> Path:
    """A cache with deepseek-v4 intact and deepseek-v3 changed after install (its derived caches, keyed by content,
    are the run's own: properties.fresh_homes)."""
    if not (SHARED / "deepseek_v3").is_dir():
        pytest.skip("shared mirror not on this machine")
    home = share_derived_caches(tmp_path / "home")
    env = {**os.environ, "DELTA_HOME": str(home), "DELTA_NO_HUB": "1", "HF_HUB_OFFLINE": "1"}
    pull = subprocess.run([sys.executable, "-m", "delta_suite.corpora.cli", "tokenizers", "pull", "deepseek-v4",
                           "deepseek-v3",
                           "--from", str(SHARED)], capture_output=True, text=True, env=env, timeout=300)
    assert pull.returncode == 0, pull.stderr
    with (home / "tokenizers" / "deepseek_v3" / "tokenizer.json").open("ab") as f:
        f.write(b" ")
    return home


def test_fuzz_all_records_a_corrupt_tokenizer_and_runs_the_others(tmp_path: Path, home_with_a_corrupt_row) -> None:
    out = tmp_path / "c"
    proc = subprocess.run([*FUZZ, "--tokenizer", "all", "--path", "cut", "--examples", "32", "--out", str(out),
                           "--regressions", str(tmp_path / "r")], capture_output=True, text=True, timeout=300,
                          cwd=ROOT, env={**os.environ, "DELTA_HOME": str(home_with_a_corrupt_row)})
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "corpora tokenizers pull deepseek_v3 --force" in proc.stderr or "pull deepseek-v3 --force" in proc.stderr
    assert {b[0] for b in batches(out)} == {"deepseek_v4_flash"}
    (row,) = read_ledgers([out / "tokenizers-unloadable.jsonl"]).records
    assert row["tokenizer"] == "deepseek_v3" and row["details"]["status"] == "not loadable"


def test_the_main_job_with_a_corrupt_tokenizer_still_reports(tmp_path: Path, home_with_a_corrupt_row) -> None:
    """One corrupt tokenizer: the other's smoke and campaign results are in the report, the report names the
    corrupt one with the remedy, and the job exits 2 (an input error), not 0 and not a missing report."""
    job = _main_job(tmp_path, {"DELTA_HOME": str(home_with_a_corrupt_row), "DELTA_MAIN_STEPS": "smoke,fuzz",
                               "DELTA_MAIN_BUDGET": "1s"})
    output, _ = job.communicate(timeout=300)
    assert job.returncode == 2, output
    model = json.loads((tmp_path / "out" / "report" / "table3.json").read_text())
    assert [u["tokenizer"] for u in model["unloadable"]] == ["deepseek_v3"]
    assert "--force" in model["unloadable"][0]["remedy"]
    ran = {c for s in model["sections"] for r in s["rows"] for c, cell in r["cells"].items()
           if cell["status"] == "figures"}
    assert "deepseek_v4_flash" in ran and "deepseek_v3" not in ran
    assert "could not be loaded" in model["verdict"]["line"]


# --- 4. I/O errors are exit 3 ---------------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["a file", "below a file"])
def test_an_output_folder_that_cannot_be_made_is_exit_3(tmp_path: Path, where: str) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    out = blocker if where == "a file" else blocker / "sub"
    proc = subprocess.run([*FUZZ, "--tokenizer", "qwen3", "--examples", "32", "--out", str(out), "--regressions",
                           str(tmp_path / "r")], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert str(blocker) in proc.stderr and "Traceback" not in proc.stderr


def _file_size_limit(limit: int):
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail with EFBIG instead of killing
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def test_a_full_disk_is_exit_3_and_a_resume_loses_nothing(tmp_path: Path) -> None:
    """Files capped at 12 KB (a disk that fills): the campaign stops with exit 3 and the OS error, the records
    written are whole (at most one torn last line, reported), and a resume without the cap completes every batch of
    the campaign exactly once, with the same inputs as an uninterrupted run."""
    out, whole = tmp_path / "c", tmp_path / "whole"
    args = ["--tokenizer", "qwen3", "--path", "cut", "--examples", str(32 * 12), "--seed", "5"]
    full = subprocess.run([*FUZZ, *args, "--out", str(out), "--regressions", str(tmp_path / "r")],
                          capture_output=True, text=True, timeout=180, cwd=ROOT, preexec_fn=_file_size_limit(12_000))
    assert full.returncode == 3, full.stdout + full.stderr
    assert "File too large" in full.stderr and "Traceback" not in full.stderr
    read = read_ledgers(sorted(out.glob("fuzz-*.jsonl")))
    assert len(read.errors) <= 1 and 0 < len(read.records) < 12
    resumed = subprocess.run([*FUZZ, "--resume", str(out)], capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    ok = subprocess.run([*FUZZ, *args, "--out", str(whole), "--regressions", str(tmp_path / "r")],
                        capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert ok.returncode == 0
    assert batches(out) == batches(whole) and len(batches(out)) == 12


# --- 7. a finished campaign resumes to a no-op ------------------------------------------------------------------


def test_a_finished_campaign_resumes_to_a_no_op(tmp_path: Path) -> None:
    """Resuming a finished campaign runs nothing, adds no line, leaves its clock and worker count alone, exits 0."""
    out = tmp_path / "c"
    first = subprocess.run([*FUZZ, "--tokenizer", "qwen3", "--path", "cut", "--examples", "64", "--workers", "2",
                            "--out", str(out), "--regressions", str(tmp_path / "r")], capture_output=True, text=True,
                           timeout=180, cwd=ROOT)
    assert first.returncode == 0, first.stdout + first.stderr
    (summary,) = out.glob("summary-*.json")
    before = (summary.read_text(), ledger_lines(out), sorted(p.name for p in out.iterdir()))
    again = subprocess.run([*FUZZ, "--resume", str(out), "--workers", "1"], capture_output=True, text=True,
                           timeout=180, cwd=ROOT)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "already finished: nothing ran, nothing was added" in again.stdout
    assert (summary.read_text(), ledger_lines(out), sorted(p.name for p in out.iterdir())) == before
    (campaign,) = out.glob("campaign-*.json")
    assert json.loads(campaign.read_text())["workers"] == 2


# --- 9. progress and budget -----------------------------------------------------------------------------------


def test_setup_is_shown_at_once_and_the_budget_counts_checking_time(tmp_path: Path) -> None:
    """The first progress line says the campaign is setting up; the summary's clock is checking time only (setup
    apart), and no worker starts a batch once its own budget of checking time is spent.

    No upper bound in seconds on the summary's clock: it runs from the first worker's end of setup to the last
    worker's stop, so on a loaded machine it exceeds the budget by the spread of the workers' setups. What is
    checked instead is the order of events each worker recorded (start of every batch before its budget)."""
    out = tmp_path / "c"
    t0 = time.monotonic()
    proc = subprocess.run([*FUZZ, "--tokenizer", "qwen3", "--path", "cut", "--budget", "3s", "--out", str(out),
                           "--regressions", str(tmp_path / "r")], capture_output=True, text=True, timeout=180,
                          cwd=ROOT)
    wall = time.monotonic() - t0
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "setting up" in proc.stderr.splitlines()[0]
    summary = json.loads(next(out.glob("summary-*.json")).read_text())
    assert summary["elapsed"] >= 2.0, summary["elapsed"]  # a time budget's schedule is endless: the budget is used
    assert summary["elapsed"] < wall  # setup is not on the campaign clock
    records = [r for r in read_ledgers([out]).records if r.get("details", {}).get("worker") is not None]
    assert records, "no batch was recorded"
    for record in records:
        details = record["details"]
        started = details["elapsed"] - details["batch_seconds"]  # the worker's clock when the batch began
        assert started < 3.0 + 0.5, (details["worker"], details["batch"], started)  # 0.5: two clocks, rounding
    assert "setup not counted" in proc.stdout


# --- a control's counterexamples stay in its folder ---------------------------------------------------------------


def test_a_control_campaign_saves_under_its_own_folder(tmp_path: Path) -> None:
    """A campaign against a control writes its shrunk kill under OUT/regressions, not into fuzz/regressions."""
    before = sorted(p.name for p in CORPUS.glob("*"))
    out = tmp_path / "c"
    proc = subprocess.run([*FUZZ, "--control", "internal.accept_every_cut", "--tokenizer", "qwen3", "--examples",
                           "32", "--out", str(out)], capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # killed: a difference was found
    assert list((out / "regressions").glob("*.json"))
    assert sorted(p.name for p in CORPUS.glob("*")) == before


def test_the_folder_lock_is_released_by_a_killed_holder(tmp_path: Path) -> None:
    """A process killed with SIGKILL while holding a folder leaves it free: the next writer gets it."""
    holder = subprocess.Popen([sys.executable, "-c",
                               "import sys, time; from delta_suite.ledger.lock import FolderLock; "
                               f"FolderLock({str(tmp_path)!r}).acquire(); print('held', flush=True); time.sleep(60)"],
                              stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert holder.stdout.readline().strip() == "held"
    with pytest.raises(Exception, match=f"in use by process {holder.pid}"):
        FolderLock(tmp_path).acquire()
    holder.kill()
    holder.wait()
    with FolderLock(tmp_path):
        pass


def test_a_waiting_lock_gets_the_folder_when_its_holder_ends(tmp_path: Path) -> None:
    """`FolderLock(folder, wait=S)` waits for the holder instead of being refused: it gets the folder once the
    holder ends within S seconds, and is refused with the holder's pid when the holder outlasts S."""
    holder = subprocess.Popen([sys.executable, "-c",
                               "import sys, time; from delta_suite.ledger.lock import FolderLock; "
                               f"FolderLock({str(tmp_path)!r}).acquire(); print('held', flush=True); time.sleep(1.5)"],
                              stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert holder.stdout.readline().strip() == "held"
    with pytest.raises(Exception, match=f"in use by process {holder.pid}"):
        FolderLock(tmp_path, wait=0.2).acquire()
    with FolderLock(tmp_path, wait=30):
        assert holder.poll() is not None  # held until its holder ended
    holder.wait()
