"""`--subject` wired through the levels: fuzz, corpus compare, the battery and the report's Subjects section.

LoPT (`subjects/lopt.py`) is local, so it runs without installing anything; it has a whole and a chunked encode
but no session, so its repair rows must say "not installed", never pass. Exit codes must follow what the subject
did: 0 no difference, 1 a difference, 2 it cannot run.
"""

from __future__ import annotations

import json
from pathlib import Path

import delta_suite.subjects.wiring as wiring
import pytest
from delta_suite.controls.kill_matrix import main as km_main
from delta_suite.corpora.cli import main as corpora_main
from delta_suite.frozen.loader import load_tokenizer
from delta_suite.fuzz.cases import FuzzCase
from delta_suite.fuzz.checker import SubjectChecker, checker_for, opened_subject
from delta_suite.fuzz.cli import main as fuzz_main
from delta_suite.reports.cli import main as reports_main
from delta_suite.spec.reference import reference_encode
from delta_suite.subjects.by_name import get_subject
from delta_suite.subjects.protocol import SubjectUnavailable, names

from properties.conftest import PROVISIONED
from properties.expectations import Expectations

QWEN3 = "qwen3_8b"
ROUNDING = 1e-4  # records round seconds (wall to 4 decimals, the parts to 6)
PINNED_FASTOKENS = "fastokens==0.1.2"
pytestmark = pytest.mark.skipif(QWEN3 not in PROVISIONED, reason=f"{QWEN3} not provisioned")


def _records(folder: Path, pattern: str = "*.jsonl") -> list[dict]:
    return [json.loads(line) for f in sorted(folder.glob(pattern)) for line in f.read_text().splitlines() if line]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One fuzz campaign and one corpus comparison (a slice of the small corpus, level 1) on LoPT under Qwen3."""
    root = tmp_path_factory.mktemp("subject-wiring")
    fuzz_out, corpus_out = root / "fuzz", root / "corpus"
    fuzz_rc = fuzz_main(["--tokenizer", "qwen3", "--examples", "5", "--subject", "lopt", "--out", str(fuzz_out),
                         "--regressions", str(root / "regressions")])
    compare_rc = corpora_main(["compare", "--profile", "small", "--tokenizer", "qwen3", "--levels", "1",
                               "--subject", "lopt", "--shard", "0/4", "--out", str(corpus_out)])
    return {"root": root, "fuzz": fuzz_out, "fuzz_rc": fuzz_rc, "corpus": corpus_out, "compare_rc": compare_rc}


def test_fuzz_on_lopt_checks_its_chunked_path_and_exits_by_its_differences(runs, ledger) -> None:
    """fuzz --subject lopt: kind "subject" rows for the cut path (chunked encode), the repair path "not installed",
    the exit code 1 exactly when a difference was recorded, and no regression saved for the minimal implementation."""
    expect = Expectations()
    recs = _records(runs["fuzz"])
    ran = [r for r in recs if r["kind"] == "subject" and r["details"]["status"] == "ran"]
    missing = [r for r in recs if r["kind"] == "subject" and r["details"]["status"] == "not installed"]
    batches = [r for r in recs if r["kind"] == "fuzz"]
    expect.check(ran and all(r["details"]["subject"] == "lopt" and r["level"] == "chunked" for r in ran))
    expect.check(sum(r["details"]["cases"] for r in ran) == 5)
    expect.check(sum(r["comparisons"] for r in ran) == sum(r["comparisons"] for r in batches) >= 5)
    expect.check([(r["level"], r["details"]["reason"]) for r in missing] == [("repair", "offers no repair path")])
    expect.check(all(r["details"]["subject"] == "lopt" for r in batches))
    differences = sum(r["differences"] for r in ran)
    expect.check(runs["fuzz_rc"] == (1 if differences else 0))
    expect.check(not (runs["root"] / "regressions").exists())
    expect.record(ledger, "harness", "subject_wiring.fuzz", load_tokenizer(QWEN3),
                  details={"subject": "lopt", "exit": runs["fuzz_rc"], "lopt_differences": differences}, oracle="self")
    expect.assert_all()


def test_fuzz_unknown_subject_exits_2_with_the_known_names(capsys: pytest.CaptureFixture, tmp_path: Path,
                                                           ledger) -> None:
    """An unknown --subject is a usage error (exit 2) naming the known subjects, never a traceback or a pass."""
    expect = Expectations()
    rc = fuzz_main(["--tokenizer", "qwen3", "--examples", "1", "--subject", "nosuch", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    expect.check(rc == 2)
    expect.check("unknown subject 'nosuch'" in err and all(n in err for n in names()))
    expect.check("Traceback" not in err)
    expect.record(ledger, "harness", "subject_wiring.unknown_subject", None, oracle="self")
    expect.assert_all()


class _WrongSession:
    """A session that answers S right and S + D with one extra token: the repair check must see it."""

    def __init__(self, tok) -> None:
        self.tok, self.calls = tok, 0

    def encode(self, text: str) -> list[int]:
        self.calls += 1
        ids = reference_encode(self.tok, text)
        return ids if self.calls == 1 else [*ids, 0]


class _BrokenSubject:
    name, version = "broken", "0"

    def __init__(self, tok) -> None:
        self.tok = tok

    def encode(self, text: str) -> list[int]:
        return reference_encode(self.tok, text)

    def session(self) -> _WrongSession:
        return _WrongSession(self.tok)


def test_subject_checker_repair_path_passes_delta_and_catches_a_wrong_session(ledger) -> None:
    """The fuzz repair checker on a subject: the minimal implementation's session returns ref(S) and ref(S + D);
    a session that appends a token to S + D is reported as a difference at that position."""
    expect = Expectations()
    tok = load_tokenizer(QWEN3)
    case = FuzzCase("repair", "Hello world, a session grows.\n  Then more text arrives here.", split=31)
    good = SubjectChecker(tok, "repair", get_subject("delta", tok)).check(case)
    bad = SubjectChecker(tok, "repair", _BrokenSubject(tok)).check(case)
    expect.check(good.difference is None and good.repairs_checked == 1)
    expect.check(bad.difference is not None)
    expect.check(bad.difference is not None
                 and bad.difference.first_position == len(reference_encode(tok, case.text)))
    expect.record(ledger, "harness", "subject_wiring.repair_checker", tok, oracle="self")
    expect.assert_all()


def test_compare_on_lopt_writes_records_naming_the_subject(runs, ledger) -> None:
    """corpora compare --subject lopt: every unit's record is kind "subject" for lopt at level encoder, with as many
    comparisons as documents; exit 1 exactly when one differed."""
    expect = Expectations()
    recs = _records(runs["corpus"], "corpus-ledger.jsonl")
    expect.check(recs and all(r["kind"] == "subject" and r["details"]["subject"] == "lopt" for r in recs))
    expect.check(all(r["level"] == "encoder" and r["details"]["status"] == "ran" for r in recs))
    expect.check(all(r["comparisons"] == r["details"]["documents"] > 0 for r in recs))
    for r in recs:  # the subject's seconds and the reference's, apart, within the unit's wall time
        d = r["details"]
        assert d["subject_seconds"] > 0 and d["reference_seconds"] > 0
        assert d["subject_seconds"] + d["reference_seconds"] <= d["wall_seconds"] + ROUNDING
    differences = sum(r["differences"] for r in recs)
    expect.check(all(bool(r["differences"]) == bool(r["details"]["minimal_counterexample"]) for r in recs))
    expect.check(runs["compare_rc"] == (1 if differences else 0))
    expect.record(ledger, "harness", "subject_wiring.compare", load_tokenizer(QWEN3),
                  details={"subject": "lopt", "lopt_differences": differences}, oracle="self")
    expect.assert_all()


def test_kill_matrix_subject_runs_the_unbroken_battery(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                       ledger) -> None:
    """python -m delta_suite.controls.kill_matrix --subject lopt: encoder and chunked battery rows ran on every case,
    repair
    "not installed"; exit 1 exactly when a difference was found."""
    expect = Expectations()
    out = tmp_path / "battery.jsonl"
    rc = km_main(["--tokenizer", "qwen3", "--subject", "lopt", "--stop", "8", "--ledger", str(out)])
    capsys.readouterr()
    recs = _records(tmp_path)
    by_check = {r["check"]: r for r in recs}
    expect.check(set(by_check) == {"battery.encoder", "battery.chunked", "battery.repair"})
    expect.check(by_check["battery.encoder"]["comparisons"] == by_check["battery.chunked"]["comparisons"] == 8)
    expect.check(by_check["battery.repair"]["details"]["status"] == "not installed")
    expect.check(rc == (1 if any(r["differences"] for r in recs) else 0))
    expect.record(ledger, "harness", "subject_wiring.battery", load_tokenizer(QWEN3), oracle="self")
    expect.assert_all()


def test_report_lists_subjects_separately_and_deterministically(runs, tmp_path: Path, ledger) -> None:
    """The report's Subjects section lists lopt's ran and not-installed rows; subject records never enter the
    minimal implementation's rows; two builds of the same ledgers are byte-identical."""
    expect = Expectations()
    ledgers = [str(runs["fuzz"]), str(runs["corpus"] / "corpus-ledger.jsonl")]
    outs = []
    for name in ("a", "b"):
        assert reports_main(["table3", "--ledgers", *ledgers, "--out", str(tmp_path / name), "--format", "md,html,json"
                             ]) == 0
        outs.append(tmp_path / name)

    version = get_subject("lopt", load_tokenizer(QWEN3)).version
    md = (outs[0] / "table3.md").read_text()
    section = md.split("## Subjects", 1)[1].split("\n## ", 1)[0]
    expect.check(f"| lopt | {version} | qwen3_8b | encoder | ran |" in section)
    expect.check(f"| lopt | {version} | qwen3_8b | chunked | ran |" in section)
    expect.check("| lopt | default | qwen3_8b | repair | not installed | 0 | 0 | offers no repair path |" in section)
    model = json.loads((outs[0] / "table3.json").read_text())
    expect.check([row for sec in model["sections"] for row in sec["rows"]] == [])
    expect.check(all(r["subject"] == "lopt" for r in model["subjects"]))
    for f in ("table3.md", "table3.html", "table3.json"):
        assert (outs[0] / f).read_bytes() == (outs[1] / f).read_bytes(), f
    expect.check('id="subjects"' in (outs[0] / "table3.html").read_text())
    expect.record(ledger, "harness", "subject_wiring.report", None, oracle="self")
    expect.assert_all()


class _SleepySubject:
    """A subject whose whole encode and session calls take `seconds` each and answer the reference's IDs."""
    name, version = "sleepy", "0"

    def __init__(self, tok, seconds: float) -> None:
        self.tok, self.seconds = tok, seconds

    def encode(self, text: str) -> list[int]:
        import time

        time.sleep(self.seconds)
        return reference_encode(self.tok, text)

    def session(self):
        return self


def test_check_on_subject_times_the_subject_and_the_reference_apart(monkeypatch: pytest.MonkeyPatch, ledger) -> None:
    """check_on_subject puts the subject's calls in timing["subject"] and the reference encodes in
    timing["reference"]: a slow subject with a fast reference, then a fast subject with a slow reference, each land
    on their own side (the slow side at least its sleeps, the other side below one sleep)."""
    expect = Expectations()
    import time

    tok = load_tokenizer(QWEN3)
    text = "A session grows.\n  Then more arrives."
    slow = 0.2
    fast_sub: dict = {}
    wiring.check_on_subject(_SleepySubject(tok, slow), tok, text, "repair", splits=(5, 9), timing=fast_sub)
    expect.check(fast_sub["subject"] >= 4 * slow and fast_sub["reference"] < slow)

    def slow_reference(t, s):
        time.sleep(slow)
        return reference_encode(t, s)

    monkeypatch.setattr(wiring, "reference_encode", slow_reference)
    slow_ref: dict = {}
    n, bad, _ = wiring.check_on_subject(_SleepySubject(tok, 0.0), tok, text, "encoder", timing=slow_ref)
    expect.check((n, bad) == (1, 0))
    expect.check(slow_ref["reference"] >= slow and slow_ref["subject"] < slow)
    expect.record(ledger, "harness", "subject_wiring.timing_split", tok,
                  details={"slow_subject": fast_sub, "slow_reference": slow_ref}, oracle="self")
    expect.assert_all()


@pytest.fixture(scope="module")
def fastokens_campaign(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One batch (32 repair cases) of a fuzz campaign on fastokens 0.1.2, the SGLang pin, under Qwen3."""
    try:
        opened_subject(PINNED_FASTOKENS, load_tokenizer(QWEN3))
    except SubjectUnavailable as exc:
        pytest.skip(f"{PINNED_FASTOKENS} not installed here: {exc.reason}")
    out = tmp_path_factory.mktemp("fastokens-fuzz")
    rc = fuzz_main(["--tokenizer", "qwen3", "--examples", "32", "--subject", PINNED_FASTOKENS, "--path", "repair",
                    "--out", str(out / "fuzz"), "--regressions", str(out / "regressions")])
    return {"rc": rc, "records": _records(out / "fuzz"), "root": out}


def test_fuzz_on_a_peer_records_subject_and_reference_seconds_apart(fastokens_campaign, ledger) -> None:
    """fuzz --subject fastokens==0.1.2 --path repair: every batch record carries subject_seconds and reference_seconds,
    both positive, whose sum stays within the batch's checking time (batch_seconds - generate_seconds, and the
    subject row's check_seconds); 32 cases give 32 repairs (64 compared encodes) on the peer."""
    expect = Expectations()
    recs = fastokens_campaign["records"]
    batches = [r for r in recs if r["kind"] == "fuzz"]
    rows = [r for r in recs if r["kind"] == "subject" and r["details"]["status"] == "ran"]
    assert len(batches) == len(rows) == 1  # what follows reads the one batch and its row
    d, row = batches[0]["details"], rows[0]["details"]
    expect.check(d["cases"] == batches[0]["comparisons"] == rows[0]["comparisons"] == 32)
    expect.check(d["paths"] == {"subject:repair": 64})
    expect.check(d["subject_seconds"] > 0 and d["reference_seconds"] > 0 and d["suite_seconds"] >= -ROUNDING)
    expect.check(d["subject_seconds"] + d["reference_seconds"] <= d["batch_seconds"] - d["generate_seconds"] + ROUNDING)
    expect.check((row["subject_seconds"], row["reference_seconds"]) == (d["subject_seconds"], d["reference_seconds"]))
    expect.check(row["subject_seconds"] + row["reference_seconds"] <= row["check_seconds"] + ROUNDING)
    expect.check(fastokens_campaign["rc"] == (1 if rows[0]["differences"] else 0))
    expect.check(not (fastokens_campaign["root"] / "regressions").exists())
    expect.record(ledger, "harness", "subject_wiring.peer_timing", load_tokenizer(QWEN3),
                  details={"subject": PINNED_FASTOKENS, "subject_seconds": d["subject_seconds"],
                           "reference_seconds": d["reference_seconds"], "check_seconds": row["check_seconds"],
                           "peer_differences": rows[0]["differences"]}, oracle="self")
    expect.assert_all()


def test_fuzz_repair_checker_catches_the_fastokens_whitespace_trigger(fastokens_campaign, ledger) -> None:
    """The fuzz repair path on fastokens 0.1.2 reports the whitespace divergence when a case carries its trigger
    (S = 4,096 characters ending "\\n ", D = "\\n"), marks it as caused by the earlier call (a new session given
    S + D alone returns the reference), and passes the same case one character shorter."""
    expect = Expectations()
    tok = load_tokenizer(QWEN3)
    checker = checker_for(tok, "repair", None, PINNED_FASTOKENS)
    s = "x" * 4094 + "\n "
    hit = checker.check(FuzzCase("repair", s + "\n", split=len(s)))
    miss = checker.check(FuzzCase("repair", s[1:] + "\n", split=len(s) - 1))
    expect.check(hit.difference is not None and hit.difference.where["single_call_matches"] is True)
    expect.check(hit.difference is not None and hit.difference.actual[0] == 198)
    expect.check(miss.difference is None)
    expect.record(ledger, "harness", "subject_wiring.fastokens_trigger", tok,
                  details={"subject": PINNED_FASTOKENS,
                           "first_difference": hit.difference.first_position if hit.difference else None},
                  oracle="self")
    expect.assert_all()
