"""The report's verdict line: PASS only when everything the suite owns agreed; FAIL names each reason.

Built from small hand-written ledgers: a difference, a failed test record, a surviving control and an obligation
that failed each turn PASS into FAIL; a stated open finding, a control proven redundant, a control that does not
apply and a third-party subject's differences do not. `reports table3 --require-pass` exits by the verdict, which
is the last line it prints.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from delta_suite.ledger.gate import session_record
from delta_suite.ledger.job import plan_record, step_record
from delta_suite.ledger.records import append_records, make_record
from delta_suite.reports import table3
from delta_suite.reports.cli import main as reports_main
from delta_suite.reports.table3 import ObligationTable, build_table3
from delta_suite.reports.verdict import verdict
from delta_suite.subjects.records import subject_record

PROVISIONING = [{"name": "qwen3_8b", "alias": "qwen3", "status": "provisioned (exact)", "sha256": "x"},
                {"name": "gpt_oss_120b", "alias": "gpt-oss", "status": "provisioned (exact)", "sha256": "y"}]


def _rec(level: str, check: str, tok: str | None, **kw) -> dict:
    kw.setdefault("oracle", "reference")  # these hand-made records stand for comparisons with the reference
    return make_record("test-verdict", level, check, tokenizer=tok, tokenizer_sha256=f"sha-{tok}" if tok else None,
                       **kw)


def _control(name: str, tok: str, status: str, **details) -> dict:
    killed = status == "killed"
    return _rec("control", f"control.{name}", tok, comparisons=10, differences=3 if killed else 0, unit="strings",
                details={"control": name, "status": status, "killed": killed, **details})


CLEAN = [
    _rec("encoder", "corpus.whole", "qwen3_8b", comparisons=100, unit="documents"),
    _rec("chunked", "corpus.chunked", "gpt_oss_120b", comparisons=50, fast_path=40, fallbacks=10, unit="documents"),
    _control("cut.no_guard", "qwen3_8b", "killed"),
    _control("cut.anchor_no_hangul", "qwen3_8b", "survives-by-proof"),
    _control("cut.anchor_no_hangul", "gpt_oss_120b", "not applicable"),
    _control("repair.no_witness", "qwen3_8b", "survived", open_finding="stated in controls/findings.py"),
]


def _verdict(records: list[dict]):
    return verdict(build_table3(records, provisioning=PROVISIONING))


def test_a_clean_run_passes_and_counts_what_ran() -> None:
    v = _verdict(CLEAN)
    assert v.passed, v.problems
    assert v.open_obligations > 0  # CLEAN discharges no obligation and has no gate run: PARTIAL, and why
    assert v.word == "PARTIAL" and v.line.startswith("PARTIAL: 0 of ")
    assert "what ran was clean: 2 tokenizers, 150 comparisons with the reference, 0 differences; controls killed or "\
           "proven 2/3" in v.line
    assert v.line.endswith(f"partial: {v.open_obligations} obligations open; no gate run behind the checks"), v.line
    assert "1 open findings: repair.no_witness" in v.line


def test_a_subject_difference_does_not_fail_the_verdict() -> None:
    peer = subject_record(SimpleNamespace(name="fastokens", version="0.1.2"),
                          SimpleNamespace(name="qwen3_8b", sha256="sha-qwen3_8b"), "encoder", "fastokens_nfc_skew",
                          comparisons=279, differences=150)
    assert _verdict([*CLEAN, peer]).passed


@pytest.mark.parametrize(("extra", "reason"), [
    (_rec("encoder", "corpus.whole", "qwen3_8b", comparisons=10, differences=1), "1 differences outside"),
    (_rec("battery", "battery.cut", "qwen3_8b", comparisons=5, details={"outcome": "failed"}), "records of failed"),
    (_control("cut.add_S_L", "gpt_oss_120b", "survived"), "controls surviving without"),
], ids=["difference", "failed-test", "survivor"])
def test_each_reason_fails_the_verdict(extra: dict, reason: str) -> None:
    v = _verdict([*CLEAN, extra])
    assert not v.passed and v.line.startswith("FAIL") and reason in v.line, v.line


def test_nothing_compared_fails() -> None:
    v = _verdict([])
    assert not v.passed and "nothing was compared" in v.line


def test_require_pass_exits_by_the_verdict(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    good, bad = tmp_path / "good.jsonl", tmp_path / "bad.jsonl"
    append_records(good, CLEAN)
    append_records(bad, [*CLEAN, _rec("encoder", "corpus.whole", "qwen3_8b", comparisons=10, differences=1)])
    assert reports_main(["table3", "--ledgers", str(good), "--out", str(tmp_path / "g"), "--format", "json",
                         "--require-pass", "--allow-open"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1].startswith("PARTIAL: ")
    assert reports_main(["table3", "--ledgers", str(bad), "--out", str(tmp_path / "b"), "--format", "md",
                         "--require-pass"]) == 1
    assert capsys.readouterr().out.strip().splitlines()[-1].startswith("FAIL")
    assert "**FAIL:" in (tmp_path / "b" / "table3.md").read_text()
    assert reports_main(["table3", "--ledgers", str(bad), "--out", str(tmp_path / "c"), "--format", "md"]) == 0


def _report(tmp_path: Path, name: str, records: list[dict]) -> Path:
    ledger = tmp_path / f"{name}.jsonl"
    append_records(ledger, records)
    assert reports_main(["table3", "--ledgers", str(ledger), "--out", str(tmp_path / name), "--format", "json"]) == 0
    return tmp_path / name / "table3.json"


def test_diff_reports_a_control_left_in_as_a_regression(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A run whose implementation has a control left in by hand (its corpus rows now differ, the kill matrix no
    longer kills that control, the verdict turns FAIL) against a clean run: each is a regression, exit 1; the
    same report against itself: exit 0; a missing report: exit 2."""
    old = _report(tmp_path, "old", CLEAN)
    left_in = [r for r in CLEAN if r["check"] not in ("corpus.whole", "control.cut.no_guard")]
    left_in += [_rec("encoder", "corpus.whole", "qwen3_8b", comparisons=100, differences=7, unit="documents"),
                _control("cut.no_guard", "qwen3_8b", "survived")]
    new = _report(tmp_path, "new", left_in)
    capsys.readouterr()
    assert reports_main(["diff", str(old), str(new)]) == 1
    out = capsys.readouterr().out
    assert "regression: new differences: encoder: corpus.whole [documents] on qwen3_8b: 7" in out
    assert "regression: control cut.no_guard on qwen3_8b: killed -> survived" in out
    assert "regression: verdict PASS -> FAIL" in out
    assert reports_main(["diff", str(old), str(old)]) == 0
    assert capsys.readouterr().out.strip().endswith("0 regressions, 0 other changes")
    assert reports_main(["diff", str(tmp_path / "missing.json"), str(old)]) == 2


def test_diff_reports_lost_coverage(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    old = _report(tmp_path, "old", CLEAN)
    new = _report(tmp_path, "new", [r for r in CLEAN if r["check"] != "corpus.chunked"])
    capsys.readouterr()
    assert reports_main(["diff", str(old), str(new)]) == 1
    assert "regression: lost coverage: row chunked: corpus.chunked [documents] is gone" in capsys.readouterr().out


def test_a_partial_job_says_so_in_its_verdict_line() -> None:
    """Steps left out on purpose (DELTA_MAIN_STEPS, status -2) fail nothing, and the verdict line names them, so a
    PASS of part of the job never reads as the whole job's; a job with every step selected says nothing of it."""
    def step(name: str, status: int) -> dict:
        return step_record(name, status, 1.0, ["true"])

    partial = _verdict([*CLEAN, plan_record(["smoke", "corpus", "checks"]), step("smoke", 0), step("corpus", -2),
                        step("checks", -2)])
    assert partial.passed, partial.problems
    assert partial.word == "PARTIAL" and "steps not selected: corpus, checks" in partial.line, partial.line
    whole = _verdict([*CLEAN, plan_record(["smoke", "corpus"]), step("smoke", 0), step("corpus", 0)])
    assert whole.passed and "not selected" not in whole.line


def _discharged(monkeypatch: pytest.MonkeyPatch, state: str) -> None:
    """Every obligation cell of both provisioned tokenizers reads `state` (the table stood in for)."""
    table = ObligationTable(True, "stand-in", ["id", "qwen3_8b", "gpt_oss_120b"],
                            [{"id": "cut.a", "qwen3_8b": "discharged", "gpt_oss_120b": state},
                             {"id": "cut.b", "qwen3_8b": "discharged", "gpt_oss_120b": "not applicable"}])
    monkeypatch.setattr(table3, "obligation_table", lambda *a, **k: table)


def test_open_obligations_fail_require_pass_unless_allowed(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """PASS means every applicable obligation discharged with a whole gate run behind: with one cell open the line
    begins "PARTIAL: 2 of 3 obligations discharged" and `--require-pass` exits 1 unless `--allow-open`; with none
    open and a complete gate session it is a plain PASS, exit 0."""
    ledger = tmp_path / "l.jsonl"
    append_records(ledger, [*CLEAN, session_record("r1", exitstatus=0, collected=3, ran=3, passed=3, skipped=0,
                                                   failing={}, workers=1)])
    args = ["table3", "--ledgers", str(ledger), "--out", str(tmp_path / "o"), "--format", "json", "--require-pass"]
    for state in ("open", "partial"):
        _discharged(monkeypatch, state)
        assert reports_main(args) == 1
        line = capsys.readouterr().out.strip().splitlines()[-1]
        assert line.startswith("PARTIAL: 2 of 3 obligations discharged;") and line.endswith("1 obligations open"), line
        assert reports_main([*args, "--allow-open"]) == 0
        capsys.readouterr()
    _discharged(monkeypatch, "discharged")
    assert reports_main(args) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith("PASS: ") and line.endswith("obligations discharged 3 of 3"), line
