"""The redundancy proofs behind every "survives-by-proof" cell of the kill matrix hold against the reference.

Each test checks the premise of one proof in `controls.proofs` on the tokenizers where the registry claims the
redundancy, and, where a tokenizer of another pattern is provisioned, that the same check finds counterexamples
there (so the check can fail). Per-code-point scans run over the BMP by default and over every scalar value
under the `exhaustive` marker.
"""

from __future__ import annotations

import itertools

import pytest
from delta_suite.checks.battery import BatteryCase, battery, overlapping_pairs
from delta_suite.controls import get
from delta_suite.controls import proofs as P
from delta_suite.frozen.loader import load_tokenizer
from delta_suite.spec.guard import LiteralTrie
from delta_suite.spec.reference import reference_encode, reference_encode_with_offsets
from delta_suite.spec.repair import RepairParams, repair
from tokenizers import Regex, Tokenizer, models, pre_tokenizers

from properties.conftest import ADMITTED


def _record(ledger, tok, check: P.ProofCheck, expect_counterexamples: bool = False,
            sample: tuple[str, str] | None = None) -> None:
    """Counterexamples are differences only where the premise is claimed; elsewhere they are the expected
    evidence that the check can fail, recorded in details, and the difference is finding none. A run over part of
    the premise's domain (`sample`: (name suffix, how it sampled)) records under its own check name and says how it
    sampled (`details.sampled`), so it never reads as, nor declares itself evidence like, the full run."""
    found = len(check.counterexamples)
    suffix, note = sample or ("", None)
    ledger.record("proof", f"proof.{check.name}{suffix}", tok, comparisons=check.checked,
                  differences=int(found == 0) if expect_counterexamples else found, unit="premises", oracle="premise",
                  details={"counterexamples": check.counterexamples[:5], "premise_claimed": not expect_counterexamples,
                           "counterexamples_found": found, **({"sampled": note} if note else {})})


def _every(stride: int, what: str) -> tuple[str, str] | None:
    """The sample of a strided variant: every `stride`-th member of `what`, or None for the full run."""
    return None if stride == 1 else (f":every_{stride}th", f"every {stride}th {what} (the full run: stride 1)")


def _below(limit: int) -> tuple[str, str] | None:
    """The sample of a limited variant: the code points below `limit`, or None for all scalar values."""
    if limit >= 0x110000:
        return None
    return f":below_U+{limit:04X}", f"code points below U+{limit:04X} only (the full run: every scalar value)"


def _claimed(control: str, tok) -> bool:
    return get(control).redundant_on(tok) and get(control).applies(tok)


def test_single_digit_pretokens(tok, ledger) -> None:
    """Where cut.add_N_N is claimed redundant, every N character is a pre-token of its own; elsewhere (digit
    groups) the check finds counterexamples."""
    check = P.single_digit_pretokens(tok)
    _record(ledger, tok, check, expect_counterexamples=not _claimed("cut.add_N_N", tok))
    if _claimed("cut.add_N_N", tok):
        assert check.holds, check.counterexamples[:5]
    else:
        assert check.counterexamples, f"{tok.name} groups digits, yet every digit was its own pre-token"


@pytest.mark.parametrize("stride", [pytest.param(1, marks=pytest.mark.exhaustive), 97])
def test_letter_runs_stop_before_apostrophe(tok, ledger, stride: int) -> None:
    """Where cut.no_apostrophe_carveout is claimed redundant, a pre-token starts at every apostrophe after a
    letter; under o200k's contraction suffix the check finds counterexamples."""
    check = P.letter_runs_stop_before_apostrophe(tok, stride)
    _record(ledger, tok, check, expect_counterexamples=not _claimed("cut.no_apostrophe_carveout", tok),
            sample=_every(stride, "letter of the class pool"))
    if _claimed("cut.no_apostrophe_carveout", tok):
        assert check.holds, check.counterexamples[:5]
    else:
        assert check.counterexamples


@pytest.mark.parametrize("stride", [pytest.param(1, marks=pytest.mark.exhaustive), 13])
def test_marks_end_before_other(tok, ledger, stride: int) -> None:
    """Where cut.add_M_O is claimed redundant, a pre-token starts at every O character after a mark; under
    patterns whose punctuation runs take marks (qwen2, llama3) or whose letter runs take a contraction after a
    mark (o200k) the check finds counterexamples."""
    check = P.marks_end_before_other(tok, stride)
    _record(ledger, tok, check, expect_counterexamples=not _claimed("cut.add_M_O", tok),
            sample=_every(stride, f"mark and every {stride}th O character"))
    if _claimed("cut.add_M_O", tok):
        assert check.holds, check.counterexamples[:5]
    else:
        assert check.counterexamples


def test_guard_selection_is_the_reference_selection(tok, ledger) -> None:
    """cut.guard_selected_only: the guard's leftmost-longest selection is where the reference puts its special
    tokens, on every special-token string of the ci battery and on chains of overlapping occurrences."""
    texts = [c.text for c in battery(tok, "ci") if c.hazard.startswith("special_")]
    for a, b, k in overlapping_pairs(tok)[:50]:
        texts += [a + b[k:], "x" + a + b[k:] + b[k:], a[:-k] + a + b[k:]]
    check = P.selected_occurrences_match_reference(tok, texts)
    _record(ledger, tok, check)
    assert check.holds, check.counterexamples[:3]


def _nfc_tokenizers():
    return [n for n in ADMITTED if load_tokenizer(n).is_nfc]


@pytest.mark.parametrize("limit", [pytest.param(0x110000, marks=pytest.mark.exhaustive), 0x10000])
def test_reorder_probes_implied(ledger, limit: int) -> None:
    """cut.anchor_no_reorder: no non-mark character that NFC leaves alone is changed by the reordering probes."""
    names = _nfc_tokenizers()
    if not names:
        pytest.fail("no NFC tokenizer is provisioned; the anchor proofs cannot be checked")
    tok = load_tokenizer(names[0])
    check = P.reorder_probes_implied(tok, limit)
    _record(ledger, tok, check, sample=_below(limit))
    assert check.holds, check.counterexamples[:5]


@pytest.mark.parametrize("limit", [pytest.param(0x110000, marks=pytest.mark.exhaustive), 0x10000])
def test_hangul_probes_class_preserving(ledger, limit: int) -> None:
    """cut.anchor_no_hangul: every character only the Hangul probes refuse is a letter composing into letters."""
    names = _nfc_tokenizers()
    if not names:
        pytest.fail("no NFC tokenizer is provisioned; the anchor proofs cannot be checked")
    tok = load_tokenizer(names[0])
    check = P.hangul_probes_class_preserving(tok, limit)
    _record(ledger, tok, check, sample=_below(limit))
    assert check.holds, check.counterexamples[:5]
    assert check.checked >= 2 * (0x1175 - 0x1161 + 1)  # at least the V jamo after U+1100 (and T after U+AC00)


def test_one_token_runs_rejected(tok, ledger) -> None:
    """repair.one_token_match: a one-token run is never accepted while the witness is required."""
    texts = [c.text for c in battery(tok, "ci")[:60] if len(c.text) < 2000]
    check = P.one_token_runs_rejected(tok, texts)
    _record(ledger, tok, check)
    assert check.holds, check.counterexamples[:3]


def _overlap_chains(tok) -> list[BatteryCase]:
    """Chains of overlapping special strings straddling the first window (S ends inside the chain), one per
    overlapping pair: where the overlapped tail has an accepted transition, a run there has a witness."""
    cases = []
    for z, o, k in P.overlapping_specials(tok.special_strings)[:4]:
        unit = o[: len(o) - k] if z == o else z[: len(z) - k] + o[: len(o) - k]
        old = "ok " + unit * (700 // len(unit) + 1)
        cases.append(BatteryCase(len(cases), f"overlap_chain:{z}", old + o[:k], (), (len(old),)))
    return cases


@pytest.mark.parametrize("control", ["repair.no_bound", "repair.margin_0", "repair.nfc_window_start_unanchored"])
def test_accepted_runs_resynchronize(tok, ledger, control: str) -> None:
    """repair.no_bound, repair.margin_0 and repair.nfc_window_start_unanchored: for every splice the control accepts
    on the ci battery and on chains of overlapping special strings, the whole text's special-token selection has
    nothing across the run's start and agrees with the window's from there, and under NFC both texts normalize alike
    from the witness on, on every tokenizer where the redundancy is claimed (and where the control changes nothing:
    the window start of an identity normalizer); where the tokenizer-level premise fails (no_bound on olmo_3_7b),
    the check finds the runs that make the bound necessary."""
    cases = [c for c in battery(tok, "ci") if c.splits and c.window is None][:48] + _overlap_chains(tok)
    check = P.accepted_runs_resynchronize(tok, cases, get(control).params)
    claimed = _claimed(control, tok) or not get(control).applies(tok)
    _record(ledger, tok, check, expect_counterexamples=not claimed)
    if claimed:
        assert check.holds, check.counterexamples[:3]
    else:
        assert check.counterexamples, f"{control} is not claimed redundant on {tok.name}, yet no counterexample"


def test_resynchronization_check_fails_without_its_premise(ledger) -> None:
    """The check of accepted_runs_resynchronize can fail: with margin 0 and a bound below the longest special
    string (so `bound_covers_margin` fails), a run at the end of S, which ends with "<|im_end" (D = "|>"), is
    accepted in a window starting inside that head (six characters), where the whole text selects the occurrence
    that D completes across the run's start; the repair is wrong there."""
    name = "qwen3_8b"
    if name not in ADMITTED:
        pytest.skip(f"{name} is not provisioned")
    tok = load_tokenizer(name)
    params = RepairParams(margin=0, bound=2, first_window=6, max_doublings=0)
    weak = type("Weak", (), {"special_strings": tok.special_strings, "is_nfc": tok.is_nfc, "bound": 2})()
    old = "word " * 120 + "<|im_end"
    check = P.accepted_runs_resynchronize(tok, [BatteryCase(0, "head_of_special", old + "|>", (), (len(old),))],
                                          params)
    ids, spans = reference_encode_with_offsets(tok, old)
    wrong = repair(tok, old, ids, spans, "|>", params).ids != reference_encode(tok, old + "|>")
    # the check's verdict against what the repair did: a counterexample exactly where the repair is wrong
    ledger.record("proof", "proof.accepted_runs_resynchronize:weak_bound", tok, comparisons=check.checked,
                  differences=int(bool(check.counterexamples) != wrong), unit="premises",
                  details={"counterexamples": check.counterexamples[:3], "repair_wrong": wrong}, oracle="premise")
    assert wrong
    assert P.bound_covers_margin(tok) and not P.bound_covers_margin(weak)
    assert check.checked == 1 and check.counterexamples


def test_premises_are_facts_about_the_special_strings(tok) -> None:
    """The no_bound premise fails only where special strings overlap with an accepted transition strictly inside the
    overlapping one (olmo_3_7b's PII markers); the margin_0 premise holds on every provisioned tokenizer; NFD takes
    one character to at most four (U+1F82: alpha, psili, varia, ypogegrammeni), which bounds NFC's expansion."""
    if not P.overlapping_specials(tok.special_strings):
        assert P.overlap_interiors_without_witness(tok)
    assert P.bound_covers_margin(tok)
    assert P.nfd_expansion() == 4


def test_nfc_specials_edged_by_anchors(tok, ledger) -> None:
    """Where cut.nfc_window_ignores_specials is claimed equivalent (an NFC tokenizer), every special string begins
    and ends with an anchor; the check fails on a string edged by a combining mark (so it can fail)."""
    check = P.nfc_specials_edged_by_anchors(tok)
    claimed = _claimed("cut.nfc_window_ignores_specials", tok)
    _record(ledger, tok, check, expect_counterexamples=False)
    if claimed:
        assert check.holds, check.counterexamples[:5]
    marked = type("Marked", (), {"name": "marked", "special_strings": ["<x>\u0301"], "normal_form": "nfc"})()
    assert P.nfc_specials_edged_by_anchors(marked).counterexamples


def test_pattern_pairs_equal_proof(tok, ledger) -> None:
    """cut.pattern_pairs_of_qwen2 gives a qwen2-pattern tokenizer the specification's own rules, and any other
    tokenizer different ones."""
    check = P.pattern_pairs_equal(tok)
    claimed = _claimed("cut.pattern_pairs_of_qwen2", tok)
    _record(ledger, tok, check, expect_counterexamples=not claimed)
    assert check.holds == claimed, check.counterexamples


SCAN_SPECIALS = ("ab", "aba", "bab", "ca", "abcab", "bb")  # nested, self-overlapping, overlapping each other


def _reference_selection(texts: list[str]) -> list[list[tuple[int, int]]]:
    """The special-token occurrences the reference's added-token scan selects in each text (a tokenizer whose
    every other character is a token of its own, with SCAN_SPECIALS added as special tokens)."""
    ref = Tokenizer(models.WordLevel({"a": 0, "b": 1, "c": 2, "[UNK]": 3}, unk_token="[UNK]"))
    ref.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    ref.add_special_tokens(list(SCAN_SPECIALS))
    return [[span for i, span in zip(e.ids, e.offsets, strict=True) if i > 3]
            for e in ref.encode_batch(texts, add_special_tokens=False)]


def test_scan_lemmas_on_every_short_text(ledger) -> None:
    """The two facts of the special-token scan that accepted_runs_resynchronize rests on, on every text of up to 8
    characters over {a, b, c} with nested, self-overlapping and mutually overlapping specials, every split and
    every pair of scan start and point (spec.guard's leftmost-longest model, equal to the reference's selection on
    each text): (S1) the scan of x + y selects every occurrence of the scan of x up to the first one it does not,
    which ends past len(x), and nothing within x after it; (S2) two scans of one text, from 0 and from w, that
    select nothing across a point select the same occurrences from there on. A leftmost-shortest scan differs from
    the reference (so the comparison with the reference can fail)."""
    trie = LiteralTrie(SCAN_SPECIALS)
    texts = ["".join(t) for n in range(1, 9) for t in itertools.product("abc", repeat=n)]
    reference = _reference_selection(texts)
    model_wrong = checked = lemma_wrong = shortest_differs = 0
    for text, ref_sel in zip(texts, reference, strict=True):
        whole = trie.selected(text)
        model_wrong += whole != ref_sel
        shortest_differs += _leftmost_shortest(trie, text) != ref_sel
        for k in range(len(text) + 1):
            prefix = trie.selected(text[:k])
            common = next((i for i, o in enumerate(whole) if i >= len(prefix) or prefix[i] != o), len(whole))
            checked += 1
            lemma_wrong += whole[:common] != prefix[:common] or (
                common < len(whole) and (whole[common][1] <= k or any(o[1] <= k for o in whole[common + 1 :])))
        for w in range(1, len(text)):
            window = [(a + w, c + w) for a, c in trie.selected(text[w:])]
            for x in range(w, len(text) + 1):
                if any(a < x < c for a, c in whole + window):
                    continue
                checked += 1
                lemma_wrong += [o for o in whole if o[0] >= x] != [o for o in window if o[0] >= x]
    ledger.record("proof", "proof.scan_lemmas", None, comparisons=checked + len(texts),
                  differences=model_wrong + lemma_wrong, unit="premises",
                  details={"texts": len(texts), "specials": list(SCAN_SPECIALS), "shortest_differs": shortest_differs},
                  oracle="premise")
    assert model_wrong == 0 and lemma_wrong == 0 and checked > len(texts)
    assert shortest_differs > 0


def _leftmost_shortest(trie: LiteralTrie, text: str) -> list[tuple[int, int]]:
    """A broken scan: the shortest occurrence at the leftmost position."""
    out, i = [], 0
    while i < len(text):
        lengths = trie.lengths_at(text, i)
        if lengths:
            out.append((i, i + lengths[0]))
            i += lengths[0]
        else:
            i += 1
    return out
