"""The proof-obligation table lists every premise of both propositions and reads its status off recorded runs.

Synthetic ledgers exercise each status: open with no record, partial and discharged as mechanisms gain passing
records, failed on a record with differences or a failed test, control kills counted only from control records,
"not applicable" for normalization premises of tokenizers without a normalizer, and "pattern only" / "not
provisioned" for tokenizers whose files are absent.
"""

from __future__ import annotations

from delta_suite.ledger.records import make_record
from delta_suite.spec.proofs.obligations import (
    BOUNDED,
    CONTROL,
    DISCHARGED,
    EXHAUSTIVE,
    FAILED,
    NOT_APPLICABLE,
    NOT_PROVISIONED,
    OPEN,
    PARTIAL,
    PATTERN_ONLY,
    PATTERN_PROOF_CHECK,
    Z3,
    declare,
    obligations,
    pattern_proofs,
    pipeline_verdict,
    status_details,
    status_from_ledger,
)

CUT = {"special_token_guard", "special_token_cut", "normalization_equation", "class_table", "transition_soundness",
       "end_of_input", "per_piece_bpe", "post_processing_once",
       "free_pair_locality", "whole_word_chunk_encoder",  # the whole-word family's
       "separator_normalizer", "separator_pre_tokenizer", "piece_local_chunks"}  # the piece-local family's
REPAIR = {"margin", "bound", "match_key", "sync_witness", "nfc_window_start", "fallback",
          "whole_word_free_cut", "piece_local_one_cut"}  # the last two: the whole-word and piece-local families'
WHOLE_WORD_PREMISES = {"cut.free_pair_locality", "cut.whole_word_chunk_encoder", "repair.whole_word_free_cut",
                       # and the piece-local family's: not applicable to these byte-level rows either
                       "cut.separator_normalizer", "cut.separator_pre_tokenizer", "cut.piece_local_chunks",
                       "repair.piece_local_one_cut"}
TOKS = ["qwen3_8b", "llama_3_1_8b", "glm_5_2"]
FAMILIES = {"qwen3_8b": "qwen2", "llama_3_1_8b": "llama3", "glm_5_2": "llama3"}


REGISTRY = {"tokenizers": TOKS, "families": FAMILIES, "provisioned": ["qwen3_8b", "llama_3_1_8b"],
            "normalizing": ["qwen3_8b"]}


def _status(records: list[dict]) -> dict:
    return status_details(records, **REGISTRY)


def _rec(level: str, check: str, tok: str | None = None, comparisons: int = 10, differences: int = 0, **details):
    rec = make_record("gate", level, check, tokenizer=tok, comparisons=comparisons, differences=differences,
                      details=details, oracle="reference")
    rec["details"].setdefault("outcome", "passed")
    return declare(rec)


def test_every_premise_of_both_propositions_is_listed_with_a_discharge() -> None:
    """The table has exactly the thirteen cut premises and eight repair premises (of which two and one are the
    whole-word family's and three and one the piece-local family's, properties/test_user_obligations.py), each
    with at least one mechanism naming at least one ledger check."""
    table = obligations()
    assert {o["premise"] for o in table if o["proposition"] == "cut"} == CUT
    assert {o["premise"] for o in table if o["proposition"] == "repair"} == REPAIR
    for o in table:
        assert o["statement"] and o["discharge"], o["id"]
        assert all(m["checks"] for m in o["discharge"]), o["id"]


def test_no_record_leaves_every_premise_open_or_not_provisioned() -> None:
    """With an empty ledger every premise is open for provisioned tokenizers, not provisioned for the others, and
    not applicable where it is about a normalizer the tokenizer lacks or about another kind of family (the
    whole-word premises, for these byte-level rows)."""
    table = _status([])
    for pid, row in table.items():
        if pid in WHOLE_WORD_PREMISES:
            assert {cell["status"] for cell in row.values()} == {NOT_APPLICABLE}, pid
            continue
        normalization = pid in ("cut.normalization_equation", "repair.nfc_window_start")
        assert row["qwen3_8b"]["status"] == OPEN
        assert row["llama_3_1_8b"]["status"] == (NOT_APPLICABLE if normalization else OPEN)
        assert row["glm_5_2"]["status"] == (NOT_APPLICABLE if normalization else NOT_PROVISIONED)


def test_transition_soundness_is_discharged_only_when_every_mechanism_has_passed() -> None:
    """The z3 record alone makes the premise partial; adding the bounded, exhaustive and control-kill records
    discharges it, for the tokenizer they name or whose family they name."""
    z3 = _rec("proof", "proofs.transitions_z3.pattern", family="qwen2", tokenizers=["qwen3_8b"])
    partial = _status([z3])["cut.transition_soundness"]["qwen3_8b"]
    assert partial["status"] == PARTIAL and partial["mechanisms"][Z3] == DISCHARGED
    assert _status([z3])["cut.transition_soundness"]["llama_3_1_8b"]["status"] == OPEN
    full = [
        z3,
        _rec("exhaustive", "proofs.bounded_enumeration", "qwen3_8b"),
        _rec("exhaustive", "proofs.representatives", family="qwen2"),
        _rec("control", "fuzz.kill.internal.accept_every_cut", "qwen3_8b", differences=3, killed=True),
    ]
    row = _status(full)["cut.transition_soundness"]["qwen3_8b"]
    assert row["status"] == DISCHARGED, row
    assert row["mechanisms"][BOUNDED] == DISCHARGED and row["mechanisms"][EXHAUSTIVE] == DISCHARGED


def test_a_difference_or_a_failed_test_fails_the_premise() -> None:
    """A non-control record with differences, or any record of a failed test, makes the premise failed."""
    diff = _rec("exhaustive", "proofs.bounded_enumeration", "qwen3_8b", differences=1)
    assert _status([diff])["cut.transition_soundness"]["qwen3_8b"]["status"] == FAILED
    failed = _rec("proof", "proofs.transitions_z3", "qwen3_8b")
    failed["details"]["outcome"] = "failed"
    assert _status([failed])["cut.end_of_input"]["qwen3_8b"]["status"] == FAILED


def test_controls_count_only_as_kills() -> None:
    """A control run that says it killed discharges the control-kill mechanism; one that says it did not kill, or
    does not say (whatever its difference count), is no evidence; one that says the control survives fails; a
    control record never discharges another mechanism."""
    killed = _rec("control", "repair_knob:margin=0", "qwen3_8b", differences=2, killed=True)
    unstated = _rec("control", "repair_knob:margin=0", "qwen3_8b", differences=2)
    refused = _rec("control", "repair_knob:margin=0", "qwen3_8b", differences=0, killed=False)
    survived = _rec("control", "repair_knob:margin=0", "qwen3_8b", differences=0, killed=False, status="survived")
    assert _status([killed])["repair.margin"]["qwen3_8b"]["mechanisms"][CONTROL] == DISCHARGED
    assert _status([killed])["repair.margin"]["qwen3_8b"]["mechanisms"]["admission check"] == OPEN
    assert _status([unstated])["repair.margin"]["qwen3_8b"]["mechanisms"][CONTROL] == OPEN
    assert _status([refused])["repair.margin"]["qwen3_8b"]["mechanisms"][CONTROL] == OPEN
    assert _status([survived])["repair.margin"]["qwen3_8b"]["status"] == FAILED


def test_unprovisioned_tokenizers_show_pattern_only_or_not_provisioned() -> None:
    """Pattern-level records discharge a pattern premise of an unprovisioned tokenizer only as "pattern only";
    a tokenizer premise stays "not provisioned" whatever global records exist."""
    records = [
        _rec("proof", "proofs.transitions_z3.pattern_only", "glm_5_2", status="not provisioned", family="llama3"),
        _rec("exhaustive", "proofs.bounded_enumeration.pattern_only", "glm_5_2", status="not provisioned"),
        _rec("repair", "session_append", None),
    ]
    table = _status(records)
    assert table["cut.end_of_input"]["glm_5_2"]["status"] == PATTERN_ONLY
    assert table["repair.match_key"]["glm_5_2"]["status"] == NOT_PROVISIONED
    assert table["cut.end_of_input"]["llama_3_1_8b"]["status"] == OPEN


def test_status_from_ledger_gives_one_status_per_premise_and_tokenizer() -> None:
    """The table's cells are the detailed statuses, one string per premise and tokenizer."""
    records = [_rec("proof", "proofs.transitions_z3", "qwen3_8b")]
    cells = status_from_ledger(records, **REGISTRY)
    details = status_details(records, **REGISTRY)
    assert set(cells) == {o["id"] for o in obligations()}
    assert all(cells[p][t] == details[p][t]["status"] for p in cells for t in TOKS)
    assert cells["cut.end_of_input"]["qwen3_8b"] == PARTIAL


def test_only_declared_records_count_never_check_names() -> None:
    """A record counts for an obligation only through what it declares (`details.obligations`, written by the
    suite's own writers); one whose check name matches a premise's pattern but declares nothing (a third-party
    subject's `fastokens_nfc_skew`, with differences) neither discharges nor fails it."""
    undeclared = make_record("subject", "encoder", "fastokens_nfc_skew", tokenizer="qwen3_8b", comparisons=279,
                             differences=150, details={"subject": "fastokens"}, oracle="reference")
    assert "cut.normalization_equation:property test" in declare(dict(undeclared, details={}))["details"]["obligations"]
    assert _status([undeclared])["cut.normalization_equation"]["qwen3_8b"]["status"] == OPEN
    assert _status([_rec("exhaustive", "anchor_predicate_tables", "qwen3_8b")])["cut.normalization_equation"][
        "qwen3_8b"]["mechanisms"][EXHAUSTIVE] == DISCHARGED


def test_a_failed_cell_says_where_it_first_differed() -> None:
    """status_from_ledger spells a failed cell with its first difference (check, count, where)."""
    failing = _rec("battery", "battery.cut", "qwen3_8b", differences=2, first={"case": 7, "position": 3})
    cell = status_from_ledger([failing], **REGISTRY)["cut.special_token_guard"]["qwen3_8b"]
    assert cell.startswith("failed (first difference: battery.cut: 2 differences, first {'case': 7")


def test_a_record_applies_to_the_tokenizers_it_covers() -> None:
    """A per-code-point record run on one tokenizer for every tokenizer with the same Split stages
    (`details.covers`) discharges its mechanism for each of them, and for no other tokenizer."""
    glm = {**REGISTRY, "provisioned": ["qwen3_8b", "llama_3_1_8b", "glm_5_2"]}
    alone = _rec("exhaustive", "end_of_input_llama3", "llama_3_1_8b")
    covering = _rec("exhaustive", "end_of_input_llama3", "llama_3_1_8b", covers=["llama_3_1_8b", "glm_5_2"])
    before = status_details([alone], **glm)["cut.end_of_input"]
    after = status_details([covering], **glm)["cut.end_of_input"]
    assert before["glm_5_2"]["mechanisms"][EXHAUSTIVE] == OPEN
    assert after["glm_5_2"]["mechanisms"][EXHAUSTIVE] == DISCHARGED
    assert after["llama_3_1_8b"]["mechanisms"][EXHAUSTIVE] == DISCHARGED
    assert after["qwen3_8b"]["mechanisms"][EXHAUSTIVE] == OPEN


def test_without_a_provisioned_list_the_tokenizers_with_records_of_their_own_count() -> None:
    """When no provisioned list is given, a tokenizer counts as provisioned exactly when a record of its own (not
    a pattern-level one) names it: a tokenizer premise of a tokenizer named only by pattern-level records, or by
    none, stays "not provisioned"."""
    records = [_rec("proof", "proofs.transitions_z3.pattern_only", "glm_5_2", status="not provisioned",
                    family="llama3"),
               _rec("proof", "proofs.transitions_z3", "qwen3_8b")]
    table = status_details(records, tokenizers=TOKS, families=FAMILIES, normalizing=["qwen3_8b"])
    assert table["repair.match_key"]["glm_5_2"]["status"] == NOT_PROVISIONED
    assert table["repair.match_key"]["llama_3_1_8b"]["status"] == NOT_PROVISIONED
    assert table["repair.match_key"]["qwen3_8b"]["status"] != NOT_PROVISIONED


def test_pattern_proofs_state_the_pairs_proved_and_the_pipelines_verdict_in_words() -> None:
    """A pattern's row lists the accepted pairs its proof record proved; the pipeline verdict says proved (to which
    length), an encoding that differs from the reference, or which side was refuted."""
    proof = _rec("proof", PATTERN_PROOF_CHECK, None, family="qwen2", accepted_pairs_proved={"N->L": 4, "L->N": 4})
    (row,) = pattern_proofs([proof])
    assert row["pattern"] == "qwen2" and row["accepted_proved"] == ["L->N", "N->L"]
    assert pipeline_verdict(None) == "not recorded"
    assert pipeline_verdict({"holds": True, "bound": 4, "faithfulness_strings": 9}).startswith("proved to length 4")
    unfaithful = {"holds": False, "faithful": False, "faithfulness_mismatches": ["ab"]}
    assert pipeline_verdict(unfaithful) == "FAILED: encoding differs from the reference (ab)"
    refuted = {"holds": False, "faithful": True, "sides": {"right": {"counterexample": "a1"}, "end": {}},
               "accepted_counterexample": "a1"}
    assert pipeline_verdict(refuted) == "FAILED: right refuted (a1)"
