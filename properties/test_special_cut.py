"""The special-token cut (`spec.special_cut`): its premises checked against the reference, its edges on rendered
chats, and its place in `explain_cut` and the planner.

- P1: the two-stage scan selects exactly the occurrences the reference turns into added tokens (battery strings
  of every special-token hazard, every provisioned tokenizer; DeepSeek's normalized tokens under the empty
  Sequence included);
- P2 and P3 are necessary: on a tokenizer whose markers strip whitespace, and on one with a normalized token
  under NFC, a cut at a selected occurrence's edge changes the reference's IDs, and the spec refuses both;
- every role-marker edge of rendered chats (own templates, the generic one where a tokenizer ships none; clean
  and with one decomposed accent) that the reference confirms is accepted by the spec: refusals counted, zero;
- the planner cuts a rendered chat at its role markers and the chunked encode equals the reference.
"""

from __future__ import annotations

import copy
from collections import Counter

import pytest
from delta_suite.checks.battery import battery
from delta_suite.controls.derived import stripping_markers
from delta_suite.controls.registry import get
from delta_suite.corpora.transcripts import with_accent
from delta_suite.delta.chat import render
from delta_suite.delta.chat_samples import CHATS
from delta_suite.delta.cuts import encode_chunked, plan_cuts
from delta_suite.frozen.loader import load_tokenizer, load_tokenizer_file
from delta_suite.fuzz.strategies import seam_pieces
from delta_suite.spec.admission import admission_of
from delta_suite.spec.cut import ACCEPTED_SPECIAL, CutRules, explain_cut, is_safe_cut
from delta_suite.spec.reference import reference_encode, reference_encode_batch
from delta_suite.spec.special_cut import (
    clear_left,
    clear_right,
    no_strip_or_single_word,
    normalized_tokens_under_identity,
    reference_selection,
    selection_matches_reference,
    two_stage_scan,
)
from hypothesis import find, given, settings
from hypothesis import strategies as st

from properties.conftest import ADMITTED
from properties.synthetic import base_config, write

SPECIAL_HAZARDS = ("special_whole", "special_cut", "special_overlap", "special_adjacent", "role_marker")


def _tok(name: str):
    if name not in ADMITTED:
        pytest.fail(f"{name} is not provisioned/admitted; this test needs it")
    return load_tokenizer(name)


def _splits_exactly(tok, text: str, b: int) -> bool:
    left, right = reference_encode_batch(tok, [text[:b], text[b:]])
    return left + right == reference_encode(tok, text)


def test_premises_hold_on_every_admitted_tokenizer(tok) -> None:
    """P2 and P3 hold for every admitted tokenizer (admission refuses a configuration where either fails)."""
    assert no_strip_or_single_word(tok)
    assert normalized_tokens_under_identity(tok)


def test_two_stage_scan_matches_the_reference(tok, ledger) -> None:
    """P1: on every special-token battery string, the occurrences `two_stage_scan` selects are exactly those the
    reference encodes as added tokens."""
    stats: Counter = Counter()
    for case in battery(tok, "ci"):
        if case.hazard not in SPECIAL_HAZARDS:
            continue
        stats["comparisons"] += 1
        if not selection_matches_reference(tok, case.text):
            stats["differences"] += 1
            stats.setdefault("first", case.index)
    ledger.record("chunked", "special_cut.selection_matches_reference", tok, comparisons=stats["comparisons"],
                  differences=stats["differences"], unit="strings", oracle="reference")
    assert stats["comparisons"] > 0
    assert stats["differences"] == 0, f"first differing battery case: {stats.get('first')}"


def test_normalized_tokens_under_the_empty_sequence_take_part() -> None:
    """DeepSeek's normalized=true tokens (empty Sequence normalizer) are selected by the second scan, inside the
    stretches the first leaves, and a cut at their edges is exact."""
    tok = _tok("deepseek_v3")
    normalized = [t["content"] for t in tok.admission_inputs.added_tokens if t.get("normalized")]
    raw = [t["content"] for t in tok.admission_inputs.added_tokens if not t.get("normalized")]
    assert normalized and tok.normalizer == "empty_sequence"
    text = f"a{normalized[0]}b {raw[0]}{normalized[1]}\n{normalized[0]}{raw[1]}x"
    selected = two_stage_scan(tok, text)
    assert selected == reference_selection(tok, text) and len(selected) == 5
    for s, e in selected:
        for b in (s, e):
            if 0 < b < len(text):
                assert explain_cut(tok, text, b) == ACCEPTED_SPECIAL
                assert _splits_exactly(tok, text, b)


def test_stripping_markers_break_the_cut_and_are_refused() -> None:
    """P2 is necessary: with lstrip/rstrip on the markers, the reference's match takes the spaces beside a marker,
    so a cut at its edge changes the IDs; admission refuses that configuration and so does the spec, and only
    the broken variant (check_premises=False) accepts the cut."""
    base = _tok("qwen3_8b")
    tok = stripping_markers(base)
    text = "hello <|im_start|> world"
    b = text.index("<|im_start|>")
    assert not no_strip_or_single_word(tok) and not admission_of(tok).admitted
    assert not _splits_exactly(tok, text, b)
    assert explain_cut(tok, text, b) == "not_admitted"
    assert explain_cut(tok, text, b, CutRules(check_premises=False)) == ACCEPTED_SPECIAL
    assert _splits_exactly(base, text, b) and explain_cut(base, text, b) == ACCEPTED_SPECIAL


def test_normalized_token_under_nfc_breaks_the_cut(tmp_path) -> None:
    """P3 is necessary (decided from the reference's behaviour): under NFC a normalized=true token is matched
    on the normalized stretch, where "e" + U+0301 composes, so the raw occurrence of "\\u0301ab" is not selected;
    a cut before it would normalize the mark alone and let the token match. Admission refuses the tokenizer."""
    cfg = base_config()
    cfg["normalizer"] = {"type": "NFC"}
    cfg["added_tokens"] = [copy.deepcopy(cfg["added_tokens"][0]) | {"content": "\u0301ab", "normalized": True}]
    tok = load_tokenizer_file(write(tmp_path, cfg)[0], name="nfc_normalized_token")
    text = "xe\u0301ab"
    assert not normalized_tokens_under_identity(tok) and not admission_of(tok).admitted
    assert reference_selection(tok, text) == []  # the reference did not select the raw occurrence
    assert reference_selection(tok, text[2:]) == [(0, 3)]  # alone, the mark is not composed: it is selected
    assert not _splits_exactly(tok, text, 2)
    assert explain_cut(tok, text, 2) == "not_admitted"


def test_a_token_declared_without_its_normalized_flag_is_raw_as_the_reference_adds_it(tmp_path) -> None:
    """A token declared only in tokenizer_config.json without "normalized" is added to the reference as a raw
    (unnormalized) token, and the spec reads the missing flag the same way: under NFC, P3 holds and the token is
    selected on the raw text, as the reference selects it. Reading a missing flag as normalized would refuse P3
    for a configuration the reference treats as raw."""
    cfg = base_config()
    cfg["normalizer"] = {"type": "NFC"}
    path, cfg_path = write(tmp_path, cfg, {"added_tokens_decoder": {"259": {"content": "<|x|>", "special": True}}})
    tok = load_tokenizer_file(path, cfg_path, name="config_token_without_flag")
    assert tok.tokenizer.get_added_tokens_decoder()[259].normalized is False
    assert normalized_tokens_under_identity(tok)
    text = "ab<|x|>cd"
    assert two_stage_scan(tok, text) == reference_selection(tok, text) == [(2, 7)]


def test_the_clear_positions_are_the_nearest_ones(tmp_path) -> None:
    """clear_left and clear_right give the nearest position at or beside p that no special-token occurrence strictly
    contains: p itself when it is clear, else the edge of the occurrences around it (so the selection is computed
    on a window that grows with the stretch asked about, not with the text)."""
    tok = load_tokenizer_file(write(tmp_path, base_config())[0], name="clear_positions")
    text = "ab<|end|>cd<|end|>ef"  # occurrences [2, 9) and [11, 18)
    n = len(text)
    assert [clear_right(tok, text, p) for p in range(n + 1)] == \
        [0, 1, 2, *[9] * 7, 10, 11, *[18] * 7, 19, 20]
    assert [clear_left(tok, text, p) for p in range(n + 1)] == \
        [0, 1, 2, *[2] * 6, 9, 10, 11, *[11] * 6, 18, 19, 20]


def test_a_token_declared_without_its_special_flag_is_non_special_as_the_reference_adds_it(tmp_path) -> None:
    """A token declared only in tokenizer_config.json without "special" is added to the reference as non-special,
    so with `encode_special_tokens` on it is still matched while the special strings are text (P4); the spec's
    scan reads the missing flag the same way and selects what the reference selects."""
    path, cfg_path = write(tmp_path, base_config(), {"added_tokens_decoder": {"259": {"content": "<|x|>"}}})
    tok = load_tokenizer_file(path, cfg_path, name="config_token_without_special_flag")
    tok.tokenizer.encode_special_tokens = True
    assert tok.tokenizer.get_added_tokens_decoder()[259].special is False
    text = "a<|end|>b<|x|>c"
    assert two_stage_scan(tok, text) == reference_selection(tok, text) == [(9, 14)]


def _chat_texts(tok) -> list[tuple[str, str]]:
    """(name, rendered text) of every built-in chat, clean and with one decomposed accent in its first message."""
    out = []
    for name, messages in CHATS.items():
        out.append((name, render(tok, messages).text))
        out.append((f"{name}+accent", render(tok, with_accent(messages)).text))
    return out


def test_role_marker_edges_in_rendered_chats_are_accepted(tok, ledger) -> None:
    """Every edge of a selected special-token occurrence in a rendered chat that the reference confirms
    (ref(S[:b]) + ref(S[b:]) == ref(S)) is accepted by the spec, by the special-token rule: refusals are zero.
    Chats render through the tokenizer's own template, or the generic one where it ships none (whose role
    strings are not special tokens: there only the tokenizer's own markers, if any, are edges)."""
    stats: Counter = Counter()
    refused: list[tuple[str, int, str]] = []
    for name, text in _chat_texts(tok):
        edges = sorted({x for s, e in two_stage_scan(tok, text) for x in (s, e) if 0 < x < len(text)})
        for b in edges:
            if not _splits_exactly(tok, text, b):
                stats["unconfirmed"] += 1
                continue
            stats["comparisons"] += 1
            verdict = explain_cut(tok, text, b)
            if verdict != ACCEPTED_SPECIAL:
                stats["differences"] += 1
                refused.append((name, b, verdict))
    ledger.record("chunked", "special_cut.role_marker_edges", tok, comparisons=stats["comparisons"],
                  differences=stats["differences"], unit="cuts",
                  details={"unconfirmed_by_reference": stats["unconfirmed"], "template": tok.chat_template is not None},
                  oracle="spec")
    assert stats["unconfirmed"] == 0, "a selected occurrence's edge that the reference does not confirm"
    assert not refused, refused[:5]


def test_planner_cuts_a_rendered_chat_at_role_markers(tok, ledger) -> None:
    """A rendered chat with markers every few thousand characters is cut at markers only, and the chunked
    encode equals the reference for 2 to 16 chunks."""
    if tok.chat_template is None:  # the generic template's role strings are not this tokenizer's markers
        pytest.skip(f"{tok.name}: no chat template of its own, so no role markers to prefer")
    messages = [m for chat in CHATS.values() for m in chat if m["role"] != "system"] * 4
    text = render(tok, messages).text
    want = reference_encode(tok, text)
    stats: Counter = Counter()
    for k in (2, 4, 8, 16):
        cuts = plan_cuts(tok, text, k)
        stats["cuts"] += len(cuts)
        stats["special"] += sum(explain_cut(tok, text, b) == ACCEPTED_SPECIAL for b in cuts)
        stats["comparisons"] += 1
        stats["differences"] += encode_chunked(tok, text, chunks=k) != want
    ledger.record("chunked", "special_cut.planner_prefers_markers", tok, comparisons=stats["comparisons"],
                  differences=stats["differences"], unit="chunkings",
                  details={"cuts": stats["cuts"], "special_token_cuts": stats["special"]}, oracle="reference")
    assert stats["cuts"] > 0 and stats["special"] == stats["cuts"]
    assert stats["differences"] == 0


def _marker_texts(tok) -> st.SearchStrategy[str]:
    """Texts dense in role markers: markers of `tok` between seam pieces (CR/LF, marks, apostrophes, digits...)."""
    markers = st.sampled_from(list(tok.special_strings[:64]) or ["<|x|>"])
    return st.lists(st.one_of(markers, seam_pieces(tok)), min_size=2, max_size=14).map("".join)


def test_every_cut_of_either_rule_concatenates(tok, ledger) -> None:
    """Property: on marker-dense texts, every accepted cut (either rule) splits the reference exactly, and all
    of them together concatenate to it."""
    stats: Counter = Counter()

    @given(_marker_texts(tok))
    def run(text: str) -> None:
        cuts = [b for b in range(1, len(text)) if is_safe_cut(tok, text, b)]
        stats["examples"] += 1
        if not cuts:
            return
        whole = reference_encode(tok, text)
        bounds = [0, *cuts, len(text)]
        pieces = reference_encode_batch(tok, [text[a:z] for a, z in zip(bounds, bounds[1:], strict=False)])
        single = reference_encode_batch(tok, [text[:b] for b in cuts] + [text[b:] for b in cuts])
        bad = [b for i, b in enumerate(cuts) if single[i] + single[len(cuts) + i] != whole]
        stats["comparisons"] += len(cuts) + 1
        stats["special"] += sum(explain_cut(tok, text, b) == ACCEPTED_SPECIAL for b in cuts)
        stats["differences"] += len(bad) + (sum(pieces, []) != whole)
        assert not bad and sum(pieces, []) == whole, (text, bad)

    try:
        run()
    finally:
        ledger.record("chunked", "special_cut.any_set_concatenates", tok, comparisons=stats["comparisons"],
                      differences=stats["differences"], unit="cuts",
                      details={"examples": stats["examples"], "special_token_cuts": stats["special"]},
                      oracle="reference")
    assert stats["special"] > 0


def _first_bad_cut(tok, text: str, rules: CutRules) -> int | None:
    """The first cut that `rules` accept in `text` and that does not split the reference exactly, or None."""
    whole = reference_encode(tok, text)
    for b in range(1, len(text)):
        if is_safe_cut(tok, text, b, rules):
            left, right = reference_encode_batch(tok, [text[:b], text[b:]])
            if left + right != whole:
                return b
    return None


@pytest.mark.parametrize(("name", "control"), [("olmo_3_7b", "cut.special_any_occurrence"),
                                               ("qwen3_8b", "cut.special_ignores_strip")])
def test_the_property_fails_on_its_controls(name: str, control: str) -> None:
    """The marker-text property above finds a counterexample under each special-token control: its rules accept
    a cut that changes the reference's IDs (on the tokenizer the control is checked on)."""
    ctl = get(control)
    tok = ctl.subject_tokenizer(_tok(name))
    found = find(_marker_texts(tok), lambda text: _first_bad_cut(tok, text, ctl.rules) is not None,
                 settings=settings(max_examples=3000, database=None))
    assert _first_bad_cut(tok, found, ctl.rules) is not None
    assert _first_bad_cut(tok, found, CutRules()) is None  # the specification accepts no such cut
