"""Every record names its oracle, and the report never adds unlike counts: the verdict line and "at a glance" give the
comparisons with the reference apart from the checks against the spec, the self-consistency checks and the premise
and proof checks, each with its own number; a record without an oracle (an older ledger) reads "oracle unknown",
never a comparison with the reference; level 1's whole encode of the minimal implementation (the library's own
batch path) says it compares the library with itself. Every writer names an oracle, and every record a small run
writes carries one."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from delta_suite.corpora.compare import Shard, Unit, unit_oracle
from delta_suite.corpora.smoke import run_smoke
from delta_suite.ledger.job import step_record
from delta_suite.ledger.records import ORACLES, UNKNOWN_ORACLE, make_record, oracle_of
from delta_suite.reports.glance import levels
from delta_suite.reports.oracles import group_totals
from delta_suite.reports.render_md import render_markdown
from delta_suite.reports.table3 import build_table3, check_title
from delta_suite.reports.verdict import verdict

from properties.conftest import REPO

PROVISIONING = [{"name": "qwen3_8b", "alias": "qwen3", "status": "provisioned (exact)", "sha256": "x"}]


def _rec(level: str, check: str, comparisons: int, oracle: str | None, unit: str = "strings") -> dict:
    rec = make_record("test-oracles", level, check, tokenizer="qwen3_8b", tokenizer_sha256="sha", unit=unit,
                      comparisons=comparisons, oracle=oracle or "reference")
    if oracle is None:
        del rec["oracle"]  # as an older ledger's record reads
    return rec


MIXED = [
    _rec("encoder", "corpus.whole_encode.delta", 7, "self", "documents"),
    _rec("chunked", "corpus.chunked_encode", 100, "reference"),
    _rec("chunked", "cut_map.battery", 20, "spec", "offsets"),
    _rec("exhaustive", "unassigned_planes_alike", 9_800_000, "premise", "code point x input"),
    _rec("proof", "proofs.transitions_z3", 5, "proof", "pairs"),
]


def _model(records: list[dict]):
    return build_table3(records, provisioning=PROVISIONING, results_file=None, with_mutation=False)


def test_make_record_requires_a_known_oracle() -> None:
    writer = make_record  # (a call by another name: the scan of the writers below looks for the plain names)
    with pytest.raises(TypeError):
        writer("k", "encoder", "c")  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="unknown oracle"):
        make_record("k", "encoder", "c", oracle="the reference")
    assert oracle_of(make_record("k", "encoder", "c", oracle="spec")) == "spec"
    assert oracle_of({"schema": "delta-suite.ledger.v1"}) == UNKNOWN_ORACLE == oracle_of({"oracle": "nonsense"})


def test_the_verdict_counts_the_reference_apart_from_every_other_check() -> None:
    v = verdict(_model(MIXED))
    assert v.passed, v.problems
    assert ("1 tokenizers, 100 comparisons with the reference, 0 differences; apart: 20 checks against the spec "
            "(0 differences), 7 self-consistency checks (0 differences), 9,800,005 premise and proof checks "
            "(0 differences); controls") in v.line, v.line


def test_a_record_without_an_oracle_is_never_a_comparison_with_the_reference() -> None:
    old = [_rec("chunked", "corpus.chunked_encode", 100, None)]
    v = verdict(_model(old))
    assert "0 comparisons with the reference" in v.line, v.line
    assert "100 checks whose records name no oracle (0 differences)" in v.line, v.line
    assert group_totals(_model(old).rows)["oracle unknown"] == (100, 0)
    md = render_markdown(_model(old))
    assert "| unknown | 100 |" in md


def test_at_a_glance_gives_each_oracle_its_own_number() -> None:
    model = _model(MIXED)
    by_level = {r.level: r for r in levels(model)}
    assert by_level["1"].reference == 0 and by_level["1"].by_group["self"] == 7
    assert by_level["2"].reference == 100 and by_level["2"].other == "spec 20"
    assert by_level["exhaustive"].other == "premise and proof 9,800,000"
    md = render_markdown(model)
    assert "| level | what | checks | comparisons with the reference | other checks (by oracle) |" in md
    assert "| 1 | the encoder: whole encodes | 1 | 0 | self 7 | 0 |" in md, md


def test_level_1_of_the_minimal_implementation_says_it_compares_the_library_with_itself() -> None:
    shard = Shard("s.jsonl", "0" * 64)
    assert unit_oracle(Unit(shard, "qwen3_8b", 1)) == "self"
    assert unit_oracle(Unit(shard, "qwen3_8b", 1, "reference-batch")) == "self"
    assert unit_oracle(Unit(shard, "qwen3_8b", 2)) == unit_oracle(Unit(shard, "qwen3_8b", 3)) == "reference"
    for subject in ("delta", "reference-batch"):
        title = check_title(f"corpus.whole_encode.{subject}")
        assert "vs the reference" not in title and "against itself" in title
    md = render_markdown(_model(MIXED))
    row = next(line for line in md.splitlines() if "`corpus.whole_encode.delta`" in line)
    assert "| self |" in row and "against itself" in row
    assert "compared with the reference)" not in md.split("### Level 1")[1].splitlines()[0]


WRITERS = ("make_record", "ledger.record", "gl.record")


def _calls_without_oracle(path: Path) -> list[str]:
    """Calls of a record writer in `path` that pass no `oracle` (and no **kwargs that could carry one)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and ast.unparse(node.func) in WRITERS:
            keywords = {k.arg for k in node.keywords}
            if "oracle" not in keywords and None not in keywords:
                out.append(f"{path.relative_to(REPO)}:{node.lineno}")
    return out


def test_every_writer_names_an_oracle() -> None:
    """No call of make_record or of the gate's `ledger.record` in the suite leaves the oracle out (make_record
    refuses such a call when it runs; this finds it before)."""
    files = [p for d in ("benchmarks", "checks", "controls", "corpora", "fuzz", "ledger", "mutation", "properties",
                         "reports", "subjects") for p in sorted((REPO / d).rglob("*.py"))]
    missing = [c for f in files for c in _calls_without_oracle(f)]
    assert not missing, missing


def _records(folder: Path) -> list[dict]:
    return [json.loads(line) for f in sorted(folder.rglob("*.jsonl"))
            for line in f.read_text(encoding="utf-8").splitlines() if line.strip()]


# The small run: quick tests that write gate records, every oracle among them. Tests of these files that write no
# record, and the slow writers (a corpus command, a bound sweep, the window maps of every tokenizer, the
# prover on every pattern family but one), run in the gate itself; every writer is checked by the static scan above.
SMALL_RUN = (
    "properties/test_reference.py",  # self
    "properties/test_cut_spec.py::test_short_text_never_cut",  # spec
    "properties/test_cut_spec.py::test_u0958_slash_refused_under_nfc",  # spec
    "properties/test_cut_spec.py::test_repeated_letter_document_encoded_whole",  # reference
    "properties/test_cut_spec.py::test_inadmissible_or_post_processed",  # reference
    "properties/test_cut_spec.py::test_nfc_window_touching_special_is_a_conservative_refusal",  # premise
    "properties/test_repair_spec.py::test_margin_premise_holds_and_is_sharp",  # premise
    "properties/test_repair_spec.py::test_window_covering_all_encodes_whole",  # reference
    "properties/test_repair_spec.py::test_wide_bound_needs_a_wider_first_window",  # reference
    "properties/test_pattern_pairs.py::test_added_pairs_are_accepted_and_exact",  # reference
    "properties/test_pattern_pairs.py::test_gain_on_samples_is_exact",  # reference
    "properties/test_pattern_pairs.py::test_pattern_pairs_are_what_the_prover_finds_sound[llama3]",  # proof
)


def test_every_record_of_a_small_run_has_an_oracle(tmp_path: Path) -> None:
    """A small gate run (`SMALL_RUN`, a few quick tests through the real `ledger` fixture): every record it writes
    names one of ORACLES, and together they name the five kinds of evidence."""
    gate = tmp_path / "gate"
    env = {**os.environ, "DELTA_LEDGER_DIR": str(gate), "DELTA_PREFETCH": "0", "DELTA_EXHAUSTIVE_STRIDE": "4096"}
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "0", "-q", *SMALL_RUN],
                         cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    records = _records(tmp_path)
    assert {r["kind"] for r in records} >= {"gate"} and len(records) > 20
    without = [(r["kind"], r["check"]) for r in records if r.get("oracle") not in ORACLES]
    assert not without, without[:10]
    assert {r["oracle"] for r in records} >= {"self", "spec", "premise", "proof", "reference"}


def test_every_record_of_the_smoke_step_and_its_job_row_has_an_oracle(tmp_path: Path) -> None:
    """The corpus smoke test (the main job's first step) and the job's row for it: every record names one of
    ORACLES."""
    assert run_smoke(tmp_path / "smoke") == 0  # `corpora smoke`, the main job's first step
    records = _records(tmp_path)
    records.append(step_record("smoke", 0, 1.0, ["corpora", "smoke"]))
    assert {"smoke", "job"} <= {r["kind"] for r in records}, {r["kind"] for r in records}
    without = [(r["kind"], r["check"]) for r in records if r.get("oracle") not in ORACLES]
    assert not without, without[:10]
