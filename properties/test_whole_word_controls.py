"""The controls on a whole-word (SentencePiece-style) tokenizer: which apply, and that each one that applies is
killed by the kill matrix or proven redundant, on Llama 2's public file (`properties.whole_word_files`, prefix scheme
"per_stretch"; skipped with npm's reason when the package cannot be fetched).

A whole-word tokenizer is cut by the guard, the special-token rule and the free-pair rule (`spec.free_pair_cut`) and
repaired from one accepted cut (`spec.whole_word_repair`), so the controls of classes, transitions, carve-outs,
pattern pairs, NFC and repair windows are "not applicable" there (`controls.registry._byte_level`), and four controls
break the whole-word code itself: cut.free_pair_forgets_first_merge, cut.free_pair_one_off,
cut.prefix_on_later_chunks (killed by the chunked encode, which the matrix runs for it) and repair.free_cut_one_off.
On Llama 2 the guard controls survive by proof: every interior pair of "<s>", "</s>" and "<unk>" is joined in the
vocabulary (`controls.proofs.special_interiors_joined`), and the guard over selected occurrences only is the
scan-locality proof's (`selected_occurrences_match_reference`). Gemma 3 (scheme "none") shows the premises failing
and holding the other way round, without a matrix (its battery is slow): its "<image_soft_token>" has a free interior
pair, so cut.no_guard must be killed there; its first merge joins newlines and "\\n\\n" is an added token, so the
forgotten-pair control is redundant; and its chunk encoder is the tokenizer itself.

Plants: `applies=_byte_level` dropped from cut.add_S_L -> test_the_matrix_on_llama2 fails ("survived" without a
proof); `_compares_chunked` returning `control is None` -> cut.prefix_on_later_chunks survives, and the same test
fails naming it; `premise=_interiors_joined` replaced by `_always` on cut.no_guard -> the Gemma 3 test fails.
"""

from __future__ import annotations

import pytest
from delta_suite.checks.battery import BatteryCase, battery
from delta_suite.checks.differential import check_cut_case, check_repair_case
from delta_suite.controls import get, names
from delta_suite.controls import proofs as P
from delta_suite.controls.kill_matrix import KillRow, run_matrix
from delta_suite.frozen.loader import FrozenTokenizer
from delta_suite.spec.admission import admission_of
from delta_suite.spec.cut import explain_cut

from properties.test_kill_matrix import (
    control_problems,
    open_finding_problems,
    record_rows,
    survival_problems,
    unbroken_problems,
)
from properties.whole_word_files import npm_whole_word

WHOLE_WORD_CONTROLS = ("cut.free_pair_forgets_first_merge", "cut.free_pair_one_off", "cut.prefix_on_later_chunks",
                       "repair.free_cut_one_off")
# what the guard, special-token, seam and harness controls do on Llama 2 (no overlapping added tokens; every
# interior pair of its three added tokens joined, the last one included); every other control is byte-level only
LLAMA2_STATUS = {
    "cut.no_guard": "survives-by-proof",
    "cut.guard_selected_only": "survives-by-proof",
    "cut.special_any_occurrence": "not applicable",
    "cut.vector_guard_misses_last_interior": "not applicable",
    "cut.special_ignores_strip": "killed",  # on Llama 2 with lstrip/rstrip set on its markers
    "repair.unchecked_reuse": "killed",
    **{name: "killed" for name in WHOLE_WORD_CONTROLS},
    **{name: "killed" for name in names("harness")},
}


@pytest.fixture(scope="module")
def llama2() -> FrozenTokenizer:
    return npm_whole_word("llama2")


@pytest.fixture(scope="module")
def matrix(llama2: FrozenTokenizer) -> dict[str, KillRow]:
    """Llama 2's ci kill matrix, every control (about 25 s on 2 cores: the byte-level ones are not run)."""
    return {r.control: r for r in run_matrix(llama2, names(), "ci", 0)}


def test_the_matrix_on_llama2(llama2: FrozenTokenizer, matrix: dict[str, KillRow], ledger) -> None:
    """The kill matrix's own checks (those of test_kill_matrix) pass on Llama 2's file: the unbroken paths are clean
    and served by the fast path, each control is killed, proven redundant or not applicable, and none survives
    without a proof; each row is recorded as test_kill_matrix records it."""
    assert admission_of(llama2).whole_word
    record_rows(ledger, llama2, matrix)
    problems = (unbroken_problems(matrix) + control_problems(llama2, matrix) + survival_problems(llama2, matrix)
                + open_finding_problems(llama2, matrix))
    assert not problems, "\n".join(problems)


def test_which_controls_apply_to_llama2(llama2: FrozenTokenizer, matrix: dict[str, KillRow], ledger) -> None:
    """Every control has the status `LLAMA2_STATUS` gives it, every other one is byte-level only: "not applicable",
    not run, and its `applies` says so. The four whole-word controls are killed on IDs (a whole-word cut compares
    no units), cut.prefix_on_later_chunks by the chunked encode (no single cut or partition reads its knob)."""
    want = {n: LLAMA2_STATUS.get(n, "not applicable") for n in names()}
    got = {n: matrix[n].status for n in names()}
    wrong = {n: (got[n], want[n]) for n in names() if got[n] != want[n]}
    ledger.record("harness", "whole_word.control_statuses", llama2, comparisons=len(want), differences=len(wrong),
                  unit="controls", oracle="none",
                  details={"wrong": wrong, "applicable": sorted(n for n in names() if get(n).applies(llama2)),
                           "kills": {n: {"failing": matrix[n].failing, "strings": matrix[n].strings,
                                         "strings_to_first_kill": matrix[n].strings_to_first_kill,
                                         "where": (matrix[n].first or {}).get("where")}
                                     for n in WHOLE_WORD_CONTROLS}})
    assert not wrong, wrong
    for name in names():
        row = matrix[name]
        assert get(name).applies(llama2) == (row.status != "not applicable"), name
        if row.status == "not applicable":
            assert row.strings == 0, name
    for name in WHOLE_WORD_CONTROLS:
        row = matrix[name]
        assert row.killed_by == "ids" and row.failing > 0 and row.unit_failing == 0, (name, row.first)
    assert matrix["cut.prefix_on_later_chunks"].first["where"].startswith("encode_chunked")
    assert all(matrix[n].unit_failing == 0 for n in ("unbroken.cut", "cut.no_guard", "cut.guard_selected_only"))


# A short text on which each whole-word cut control accepts a cut the specification refuses: " t" is the pair the
# first merge of Llama 2 joins (U+2581 + "t"), "ea" a pair some token joins before the free "a " one character on.
WORKED = "Read the tea and the sea. " * 12  # 312 characters: the planner cuts it into 4 chunks


def test_the_check_functions_catch_each_whole_word_control(llama2: FrozenTokenizer, ledger) -> None:
    """On one worked text, every offset a candidate cut: the specification's rules show no difference, and each
    whole-word cut control's rules (checked by `check_cut_case`, which the matrix runs) and the repair control's
    parameters (`check_repair_case`, splits at every offset) do; each cut control also accepts some offset that the
    specification refuses, by the verdict the control breaks."""
    offsets = tuple(range(1, len(WORKED)))
    case = BatteryCase(0, "worked", WORKED, offsets, offsets[::7])
    spec_cut, spec_repair = check_cut_case(llama2, case), check_repair_case(llama2, case)
    found = {}
    for name in WHOLE_WORD_CONTROLS:
        control = get(name)
        if control.path == "cut":
            result = check_cut_case(llama2, case, control.rules, chunked=True)
            refused_by_spec = [b for b in offsets if not explain_cut(llama2, WORKED, b).startswith("accepted")]
            extra = [b for b in refused_by_spec if explain_cut(llama2, WORKED, b, control.rules).startswith("accepted")]
        else:
            result = check_repair_case(llama2, case, control.params)
            extra = []
        found[name] = {"differences": result.differences, "comparisons": result.comparisons, "extra_cuts": len(extra),
                       "first": result.first.as_json()["where"] if result.first else None}
    ledger.record("harness", "whole_word.control_worked_example", llama2,
                  comparisons=len(found) + spec_cut.comparisons + spec_repair.comparisons,
                  differences=sum(f["differences"] == 0 for f in found.values()) + spec_cut.differences
                  + spec_repair.differences, unit="controls and comparisons", oracle="reference",
                  details={"controls": found, "spec_cut_comparisons": spec_cut.comparisons,
                           "spec_repair_comparisons": spec_repair.comparisons})
    assert spec_cut.differences == 0 and spec_repair.differences == 0
    assert spec_repair.fast_path > 0  # the specification repaired from a free cut somewhere
    assert all(f["differences"] > 0 for f in found.values()), found
    assert found["cut.free_pair_forgets_first_merge"]["extra_cuts"] > 0
    assert found["cut.free_pair_one_off"]["extra_cuts"] > 0
    assert found["cut.prefix_on_later_chunks"]["extra_cuts"] == 0  # the same cuts: only the chunk encoder differs


def _record_proof(ledger, tok: FrozenTokenizer, check: P.ProofCheck, claimed: bool) -> None:
    """As test_control_proofs records a proof: counterexamples are differences only where the premise is claimed."""
    found = len(check.counterexamples)
    ledger.record("proof", f"proof.{check.name}", tok, comparisons=check.checked,
                  differences=found if claimed else int(found == 0), unit="premises", oracle="premise",
                  details={"counterexamples": check.counterexamples[:5], "premise_claimed": claimed,
                           "counterexamples_found": found, "not_applicable": check.not_applicable})


def test_the_whole_word_proofs_on_llama2(llama2: FrozenTokenizer, ledger) -> None:
    """The proofs behind Llama 2's survivals hold (its added tokens' interior pairs are all joined; the guard's
    selection is the reference's on the battery's special-token texts), and the two that are not claimed there
    find their counterexamples (U+2581 + "t" and " t" are no added tokens; the scheme is "per_stretch"). The
    proofs about pre-tokens or repair windows say "not applicable" rather than fail."""
    checks = {
        "cut.no_guard": P.special_interiors_joined(llama2),
        "cut.guard_selected_only": P.selected_occurrences_match_reference(
            llama2, [c.text for c in battery(llama2, "ci") if c.hazard.startswith("special_")]),
        "cut.free_pair_forgets_first_merge": P.forgotten_pair_guarded(llama2),
        "cut.prefix_on_later_chunks": P.chunk_encoder_is_tokenizer(llama2),
    }
    for name, check in checks.items():
        _record_proof(ledger, llama2, check, get(name).redundant_on(llama2))
    assert checks["cut.no_guard"].holds and checks["cut.no_guard"].checked >= 3 + 4 + 2
    assert checks["cut.guard_selected_only"].holds
    assert get("cut.no_guard").redundant_on(llama2) and get("cut.guard_selected_only").redundant_on(llama2)
    for name in ("cut.free_pair_forgets_first_merge", "cut.prefix_on_later_chunks"):
        assert checks[name].counterexamples and not get(name).redundant_on(llama2), name
    inapplicable = [P.single_digit_pretokens(llama2), P.letter_runs_stop_before_apostrophe(llama2, 97),
                    P.marks_end_before_other(llama2, 13), P.one_token_runs_rejected(llama2, [WORKED]),
                    P.accepted_runs_resynchronize(llama2, [], get("repair.margin_0").params)]
    assert all(c.not_applicable and not c.holds and c.checked == 0 for c in inapplicable)


def test_the_whole_word_premises_on_gemma3(ledger) -> None:
    """Gemma 3 (scheme "none"): "<image_soft_token>" has a free interior pair, so cut.no_guard is not proven there
    (a survival would be a finding); its first merge's junction pair is "\\n\\n", an added token, so the
    forgotten-pair control survives by proof; its chunk encoder is the tokenizer itself, so keeping the prefix on
    later chunks is its specification; and the guard fault of the array evaluation finds no free last pair."""
    tok = npm_whole_word("gemma3")
    interiors, forgotten = P.special_interiors_joined(tok), P.forgotten_pair_guarded(tok)
    encoder = P.chunk_encoder_is_tokenizer(tok, ["a b\n\n c<start_of_turn>user\nhi there", "x  y<eos>z w"])
    for name, check in (("cut.no_guard", interiors), ("cut.free_pair_forgets_first_merge", forgotten),
                        ("cut.prefix_on_later_chunks", encoder)):
        _record_proof(ledger, tok, check, get(name).redundant_on(tok))
    assert {c["special"] for c in interiors.counterexamples} == {"<image_soft_token>"}
    assert get("cut.no_guard").status_if_survives(tok) == "survived"
    text = "x<image_soft_token>y"  # the guard is needed: without it a cut inside the added token is accepted
    case = BatteryCase(0, "worked", text, tuple(range(1, len(text))), ())
    assert check_cut_case(tok, case).differences == 0
    assert check_cut_case(tok, case, get("cut.no_guard").rules).differences > 0
    assert forgotten.holds and get("cut.free_pair_forgets_first_merge").redundant_on(tok)
    assert encoder.holds and encoder.checked > 1 and get("cut.prefix_on_later_chunks").redundant_on(tok)
    assert get("cut.special_any_occurrence").applies(tok)  # "\n" inside "\n\n": overlapping added tokens
    assert not get("cut.vector_guard_misses_last_interior").applies(tok)
