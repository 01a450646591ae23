"""The report's level-3 section by front end: figures summed and medians taken over the raw figures of every
record (never medians of medians), the recorded full-set results shown apart and never counted, and the
results-file command's exit codes."""

from __future__ import annotations

import json
import statistics

from delta_suite.ledger.records import append_records, make_record
from delta_suite.reports.render_md import render_markdown
from delta_suite.reports.table3 import build_table3
from delta_suite.reports.transcripts import main as transcripts_main
from delta_suite.reports.transcripts import read_results, transcript_figures, write_results


def _front(turns: int, cpu: list[float], ms: list[float], band: list[float], fast=0, fallbacks=0, diff=0, cuts=None):
    out = {"turns": turns, "fast_path": fast, "fallbacks": fallbacks, "differences": diff, "transcripts": len(cpu),
           "turns_history_250k_500k": len(band), "cpu_seconds_per_transcript": cpu, "ms_per_turn": ms,
           "ms_per_turn_history_250k_500k": band}
    if cuts:
        out["cuts"] = cuts
    return out


def _record(shard: str, cpu_chunked: list[float], differences: int = 0) -> dict:
    fronts = {"clean": {
        "reference": _front(4, [0.5, 0.7], [10, 20, 30, 40], [30, 40]),
        "chunked": _front(4, cpu_chunked, [5, 6, 7, 8], [7, 8], fast=4, cuts={"special_token": 6, "transition": 1},
                          diff=differences),
        "session": _front(4, [0.1, 0.2], [1, 2, 3, 4], [3, 4], fast=2, fallbacks=1)
        | {"ms_per_turn_by_path": {"repaired": [1, 2], "initialized": [3, 4]}},
    }}
    return make_record("corpus", "repair", "corpus.session_replay", tokenizer="qwen3_8b", tokenizer_sha256="s",
                       comparisons=8, differences=differences, fast_path=2, fallbacks=1, unit="turn_comparisons",
                       details={"front_ends": fronts, "shard": shard, "characters": 1000, "suite_digest": "d",
                                "reference_version": "0.22.1"}, oracle="reference")


def test_figures_are_exact_medians_over_records() -> None:
    """Two records: turns and cuts add up; the CPU median is over all four transcripts, not of the two medians."""
    figs = transcript_figures([_record("full-000.jsonl", [0.1, 0.2]), _record("full-001.jsonl", [0.3, 10.0])])
    chunked = next(f for f in figs if f.front_end == "chunked")
    assert chunked.turns == 8 and chunked.fast_path == 8 and chunked.special_token_cuts == 12
    assert chunked.cpu_ms_per_transcript == round(statistics.median([0.1, 0.2, 0.3, 10.0]), 3) * 1000
    reference = next(f for f in figs if f.front_end == "reference")
    assert reference.differences is None and reference.fast_path is None  # the oracle: cost only
    assert chunked.ms_per_turn_250k_500k == 7.5
    session = next(f for f in figs if f.front_end == "session")
    assert session.by_path == {"initialized": (4, 3.5), "repaired": (4, 1.5)}  # both records' turns, by path


def test_recorded_results_are_shown_apart_and_not_counted(tmp_path) -> None:
    """A results file written from a ledger appears in its own part of the report; Table 3's counts and its
    per-front-end table come from the report's own records only."""
    ledger = tmp_path / "corpus-ledger.jsonl"
    append_records(ledger, [_record("full-000.jsonl", [0.1, 0.2], differences=1)])
    results = write_results(ledger, tmp_path / "results.json", note="test run")
    assert read_results(results).about["differences"] == 1
    own = [_record("small-000.jsonl", [0.4, 0.5])]
    model = build_table3(own, provisioning=[], results_file=results)
    assert sum(r.total.comparisons for r in model.rows) == 8  # the results file counts nothing
    assert model.transcripts_recorded is not None and model.transcripts_recorded.figures
    text = render_markdown(model)
    assert "The recorded full transcript set" in text and "test run" in text
    assert "4.0 ms with cuts and 2.3 ms incrementally" in text
    none = build_table3(own, provisioning=[], results_file=tmp_path / "absent.json")
    assert "No results file of a full-set run is committed." in render_markdown(none)


def test_results_command_exit_codes(tmp_path, capsys) -> None:
    """2 for a ledger without full-set records, 3 for an unreadable ledger, 0 when written."""
    empty = tmp_path / "empty.jsonl"
    empty.write_text(json.dumps({"schema": "x"}) + "\n")
    assert transcripts_main(["--from", str(empty), "--to", str(tmp_path / "r.json")]) == 2
    assert transcripts_main(["--from", str(tmp_path / "missing.jsonl"), "--to", str(tmp_path / "r.json")]) == 3
    ledger = tmp_path / "l.jsonl"
    append_records(ledger, [_record("full-000.jsonl", [0.1])])
    assert transcripts_main(["--from", str(ledger), "--to", str(tmp_path / "r.json")]) == 0
    assert "error" in capsys.readouterr().err
