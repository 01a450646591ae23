"""How deep the refutation of each excluded class pair reaches (spec.proofs.depth), checked against the reference.

A refuted pair's counterexample changes the split pieces at its cut by construction; whether it also changes the
byte-level units (IDs grouped per pre-token) or the reference IDs is what decides if the exclusion matters to a
chunked encode. Checked here: the classifier on hand-made cases (a synthetic byte-level BPE whose merges "a b" and
"b c" make the IDs of "abc" depend on the cut, so nothing rests on which tokenizers are provisioned); the bounded
z3 model enumeration and the vocabulary helpers; every refuted pair of every pattern family has a depth, and
every claim (the depth, the IDs shown, "confirmed on IDs (tokenizer: ...)") is recomputed with
`spec.reference.reference_encode`; two deliberately wrong classifiers are caught (tests of the tests); and the
report says the depth of each refuted pair and marks a reconstructed pattern.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from itertools import product
from pathlib import Path

import pytest
from delta_suite.frozen.loader import FrozenTokenizer, load_tokenizer_file
from delta_suite.ledger.records import make_record
from delta_suite.reports.glance import RECONSTRUCTION_MARK, obligation_grid
from delta_suite.reports.render_md import render_markdown
from delta_suite.reports.table3 import build_table3
from delta_suite.spec.patterns import RECONSTRUCTED, SPLIT_PATTERNS
from delta_suite.spec.proofs.depth import (
    DEPTHS,
    MODEL_BOUND,
    NO_TOKENIZER,
    CutEffect,
    Exclusion,
    _added_token_in,
    completion_range,
    cut_effect,
    deepest,
    entry_text,
    family_tokenizers,
)
from delta_suite.spec.proofs.obligations import declare, pattern_proofs
from delta_suite.spec.proofs.pieces import Pieces, cut_changes_pieces, family_pieces, pieces_of, stages_pre_tokenizer
from delta_suite.spec.proofs.prove import examine_family, examine_ids, prove_family, prove_stages
from delta_suite.spec.reference import reference_encode, reference_encode_units

from properties.synthetic import base_config, write

FAMILIES = list(SPLIT_PATTERNS)
QWEN2_PIECES = family_pieces("qwen2")  # the synthetic tokenizer runs the Qwen2 pattern


@pytest.fixture(scope="module")
def synth(tmp_path_factory: pytest.TempPathFactory) -> FrozenTokenizer:
    """The synthetic byte-level BPE (Qwen2 pattern, merges "t h", "th e") plus "a b" -> 259 and "b c" -> 260:
    "abc" encodes [ab, c] whole and [a] + [bc] cut after "a", two IDs either way."""
    cfg = base_config()
    cfg["model"]["vocab"].update({"ab": 259, "bc": 260})
    cfg["model"]["merges"] += [["a", "b"], ["b", "c"]]
    path, _ = write(tmp_path_factory.mktemp("depth"), cfg, name="depth_synth")
    return load_tokenizer_file(path, name="depth_synth")


def _split_ids(tok: FrozenTokenizer, text: str, cut: int) -> tuple[list[int], list[int]]:
    return reference_encode(tok, text), reference_encode(tok, text[:cut]) + reference_encode(tok, text[cut:])


def test_deepest_orders_the_stages() -> None:
    """deepest: IDs before units before pieces; nothing differs -> None."""
    assert deepest(True, True, True) == "ids"
    assert deepest(True, True, False) == "units"
    assert deepest(True, False, False) == "pieces"
    assert deepest(False, False, False) is None
    assert DEPTHS == ("pieces", "units", "ids")


def test_hand_made_cuts_are_classified_at_their_depth(synth: FrozenTokenizer) -> None:
    """"abc" cut 1 changes the IDs ([ab, c] vs [a] + [bc]); "xy" cut 1 changes the pieces and the units but not the
    IDs; "a b" cut 1 under a pattern that keeps a word with the space after it changes only the pieces (the
    tokenizer's own pieces "a", " b" are the same either way); "a b" under Qwen2 changes nothing; a text holding
    the added token is not consulted."""
    ids = cut_effect(synth, QWEN2_PIECES, "abc", 1)
    whole, split = _split_ids(synth, "abc", 1)
    assert ids.depth == "ids" and whole != split and len(whole) == len(split) == 2
    assert list(ids.ids_whole) == whole and list(ids.ids_left + ids.ids_right) == split

    units = cut_effect(synth, QWEN2_PIECES, "xy", 1)
    assert units.depth == "units" and units.ids_whole == units.ids_left + units.ids_right

    word_and_space: Pieces = pieces_of(stages_pre_tokenizer((r"\S+\s?",)))
    pieces = cut_effect(synth, word_and_space, "a b", 1)
    assert cut_changes_pieces(word_and_space, "a b", 1)
    assert pieces.depth == "pieces" and pieces.ids_whole == pieces.ids_left + pieces.ids_right

    assert cut_effect(synth, QWEN2_PIECES, "a b", 1).depth is None
    skipped = cut_effect(synth, QWEN2_PIECES, "ab<|end|>", 1)
    assert skipped.depth is None and "added-token" in (skipped.skipped or "")


@dataclass(frozen=True, eq=False)
class _AddedTokens:
    """What `_added_token_in` reads of a tokenizer: its added-token strings, in order."""

    special_strings: tuple[str, ...]


def test_added_token_search_finds_the_first_string_in_order() -> None:
    """Invariant: the indexed search for an added-token string returns what scanning the strings in order returns
    (the first that occurs in the text), on every text of up to four characters over "<ab>" and on seeded random
    longer ones, for strings that overlap, share their first two characters, are one character long or empty.
    Plants it failed on: the leftmost occurrence instead of the first string in order; the one-character strings
    left out; the last two characters of the text not tried (range(len(text) - 2))."""
    specials = ("<a>", "ab", "", "b", "<ab>", "<a", "a>", "ba<", ">")
    tokens = _AddedTokens(specials)
    texts = ["".join(t) for n in range(5) for t in product("<ab>", repeat=n)]
    rng = random.Random(0)
    texts += ["".join(rng.choice("<ab>x") for _ in range(rng.randint(5, 12))) for _ in range(300)]
    for text in texts:
        assert _added_token_in(tokens, text) == next((s for s in specials if s and s in text), None), text


def _length_only_depth(tok: FrozenTokenizer, pieces: Pieces, text: str, cut: int) -> str | None:
    """A deliberately wrong classifier: compares only how many IDs and units there are."""
    ids, units = reference_encode_units(tok, text)
    ids_l, units_l = reference_encode_units(tok, text[:cut])
    ids_r, units_r = reference_encode_units(tok, text[cut:])
    return deepest(cut_changes_pieces(pieces, text, cut), len(units) != len(units_l) + len(units_r),
                   len(ids) != len(ids_l) + len(ids_r))


def test_a_length_only_classifier_misses_the_id_change(synth: FrozenTokenizer) -> None:
    """Test of the test: on "abc" cut 1 the IDs differ at equal length, so a classifier that compares lengths says
    "units" where `cut_effect` (and the recomputed IDs) say "ids"."""
    assert _length_only_depth(synth, QWEN2_PIECES, "abc", 1) == "units"
    assert cut_effect(synth, QWEN2_PIECES, "abc", 1).depth == "ids"


def _claim_problems(ex: Exclusion, tokenizers: dict[str, FrozenTokenizer], pieces: Pieces) -> list[str]:
    """Everything an exclusion claims, recomputed: the witness changes the pieces; each consulted tokenizer's IDs
    are the reference's and its depth is "ids" exactly when they differ; the verdict names the tokenizers whose
    IDs differ, or says "excluded, conservative" when none does."""
    problems = []
    if ex.depth not in DEPTHS:
        problems.append(f"{ex.label}: depth {ex.depth!r}")
    if not cut_changes_pieces(pieces, ex.witness_text, ex.witness_cut):
        problems.append(f"{ex.label}: the witness does not change the pieces")
    for text, cut, effects in ((ex.first_text, ex.first_cut, ex.first_effects),
                               (ex.witness_text, ex.witness_cut, ex.witness_effects)):
        for e in effects:
            if e.skipped:
                continue
            whole, split = _split_ids(tokenizers[e.tokenizer], text, cut)
            if [list(e.ids_whole), list(e.ids_left + e.ids_right)] != [whole, split]:
                problems.append(f"{ex.label} on {e.tokenizer}: IDs shown are not the reference's")
            if (e.depth == "ids") != (whole != split):
                problems.append(f"{ex.label} on {e.tokenizer}: depth {e.depth} but IDs {whole} vs {split}")
    differ = [e.tokenizer for e in ex.witness_effects if e.depth == "ids"]
    if differ:
        if ex.verdict != f"confirmed on IDs (tokenizer: {', '.join(differ)})":
            problems.append(f"{ex.label}: verdict {ex.verdict!r} with IDs differing on {differ}")
    elif not ex.verdict.startswith("excluded, conservative: confirmed on "):
        problems.append(f"{ex.label}: verdict {ex.verdict!r} without an ID-changing witness")
    return problems


def test_the_claim_check_rejects_a_units_change_called_ids(synth: FrozenTokenizer) -> None:
    """Test of the test: a wrong classifier that reads a unit change as an ID change would call "xy" cut 1
    "confirmed on IDs"; the recomputation used on every family rejects that claim, and accepts the true one."""
    true = cut_effect(synth, QWEN2_PIECES, "xy", 1)
    wrong = CutEffect(true.tokenizer, "ids", true.ids_whole, true.ids_left, true.ids_right)
    claim = Exclusion("L→L", (synth.name,), "xy", 1, (wrong,), "xy", 1, "first counterexample", (wrong,))
    assert claim.verdict == f"confirmed on IDs (tokenizer: {synth.name})"
    assert _claim_problems(claim, {synth.name: synth}, QWEN2_PIECES)
    honest = Exclusion("L→L", (synth.name,), "xy", 1, (true,), "xy", 1, "first counterexample", (true,))
    assert honest.verdict == "excluded, conservative: confirmed on units only"
    assert not _claim_problems(honest, {synth.name: synth}, QWEN2_PIECES)


@pytest.mark.parametrize("family", FAMILIES)
def test_every_refuted_pair_has_a_depth_and_its_claims_hold(family: str) -> None:
    """Each refuted pair of the family carries its depth on the family's provisioned tokenizers, every claim holds
    on the reference (`_claim_problems`), the summary counts them by depth, and a family without a provisioned
    tokenizer says its IDs were not checked."""
    proof = examine_family(family)
    tokenizers = {t.name: t for t in family_tokenizers(family)}
    pieces = family_pieces(family)
    refuted = [r for r in proof.excluded() if not r.sound]
    assert refuted and all(r.exclusion is not None for r in refuted)
    summary = proof.summary()
    counts = summary["exclusion_depths"]
    assert counts["ids"] + counts["units"] + counts["pieces"] == len(refuted)
    assert set(summary["exclusions"]) == {r.pair.label for r in refuted}
    if not tokenizers:
        assert summary["ids_note"] == NO_TOKENIZER and summary["ids_checked_on"] == []
        assert all(r.exclusion.verdict == f"confirmed on pieces only; {NO_TOKENIZER}" for r in refuted)
        return
    assert summary["ids_checked_on"] == list(tokenizers)
    assert counts["conservative"] == counts["units"] + counts["pieces"]
    problems = [p for r in refuted for p in _claim_problems(r.exclusion, tokenizers, pieces)]
    assert not problems, problems
    for r in refuted:
        if r.exclusion.depth != "ids":  # the search ran to its bound
            assert r.exclusion.searched["z3_models"] <= MODEL_BOUND
        print(f"{family} {r.pair.label}: {r.exclusion.verdict}; witness {r.exclusion.witness_text!r} cut "
              f"{r.exclusion.witness_cut} ({r.exclusion.witness_source})")


def test_z3_models_are_distinct_blocked_witnesses() -> None:
    """Each obligation's enumeration yields at most `limit` distinct witnesses, each of the failing obligation:
    no_straddle words hold x·y at the cut (qwen2 M→M), gap_free pairs are one x and one y (a pattern that leaves
    N and O unmatched), lookahead_end words end in X before a symbol of Y (qwen2 S→N)."""
    qwen2 = prove_family("qwen2")
    for label, obligation in (("M→M", "no_straddle"), ("S→N", "lookahead_end")):
        r = next(r for r in qwen2.excluded() if r.pair.label == label)
        assert r.witness is not None and r.witness.name == obligation
        models = list(qwen2.provers[r.witness.stage].models(obligation, r.pair, 12))
        assert len(models) == 12 and len({(w, c) for w, c, _ in models}) == 12
        assert all(w[c - 1] in r.pair.left and w[c] in r.pair.right for w, c, _ in models)
        assert [s for _, _, s in models][:2] == [f"z3 model 1 of {obligation}", f"z3 model 2 of {obligation}"]
    gaps = prove_stages("broken_gaps", (r"\p{L}+|\s+",))
    r = next(r for r in gaps.accepted_failures() if r.pair.label == "N→O")
    models = list(gaps.provers[0].models("gap_free", r.pair, 1000))
    assert len(models) == len(r.pair.left) * len(r.pair.right)  # every (x, y), each once, then unsat
    assert all(len(w) == 2 and c == 1 and w[0] in r.pair.left and w[1] in r.pair.right for w, c, _ in models)


def test_vocabulary_entries_are_read_as_text_and_a_trailing_partial_character() -> None:
    """entry_text keeps the complete characters and the bytes of a trailing incomplete one (leading continuation
    bytes dropped); completion_range gives the code points such bytes can begin."""
    ka = "\u0915".encode()
    assert entry_text(b"ab") == ("ab", b"")
    assert entry_text(b"a" + ka[:2]) == ("a", ka[:2])
    assert entry_text(ka[1:] + b"x") == ("x", b"")
    assert completion_range(ka[:2]) == (0x900, 0x940)
    assert completion_range(b"\xc3") == (0xC0, 0x100)
    assert completion_range(b"a") is None and completion_range(ka) is None


def test_the_report_says_each_depth_and_marks_the_reconstruction(synth: FrozenTokenizer, tmp_path: Path) -> None:
    """From pattern-level proof records only: the Qwen2 proof examined on the synthetic tokenizer (which runs that
    pattern) gives "confirmed on IDs (tokenizer: depth_synth)" for L→L (its vocabulary entry "th") and a
    conservative verdict for S→M (no merge of the synthetic vocabulary crosses a space and a mark); the
    reconstructed qwen3_5 pattern is named a reconstruction, with what it was reconstructed from, in the pattern
    table and in the obligation grid's header."""
    qwen2 = prove_family("qwen2")
    kept = [r for r in qwen2.pairs if r.pair.accepted or r.pair.label in ("L→L", "S→M")]  # two searches suffice
    examined = examine_ids(replace(qwen2, pairs=kept), (synth,))
    verdicts = {r.pair.label: r.exclusion.verdict for r in examined.excluded() if r.exclusion is not None}
    assert verdicts["L→L"] == "confirmed on IDs (tokenizer: depth_synth)"
    assert any(v.startswith("excluded, conservative") for v in verdicts.values())
    records = []
    for proof, tokenizers in ((examined, ["qwen3_8b"]), (examine_family("qwen3_5"), ["qwen3_5_08b"])):
        details = {**proof.summary(), "pattern_confirmed_against_file": proof.family not in RECONSTRUCTED,
                   "tokenizers": tokenizers}
        records.append(declare(make_record("gate", "proof", "proofs.transitions_z3.pattern",
                                           comparisons=proof.obligations_proved, unit="obligations",
                                           details=details, oracle="proof")))
    patterns = {p["pattern"]: p for p in pattern_proofs(records)}
    assert patterns["qwen3_5"]["reconstructed"] and RECONSTRUCTED["qwen3_5"] in patterns["qwen3_5"]["origin"]
    assert not patterns["qwen2"]["reconstructed"] and patterns["qwen2"]["origin"] == "file"
    model = build_table3(records, provisioning=[])
    text = render_markdown(model)
    assert "confirmed on IDs (tokenizer: depth_synth)" in text
    assert "excluded, conservative: confirmed on units only" in text
    assert f"qwen3_5, a reconstruction: {RECONSTRUCTED['qwen3_5'][:40]}" in text
    assert NO_TOKENIZER in text
    header = obligation_grid(model)[0]
    assert any(h.endswith(RECONSTRUCTION_MARK) for h in header)
