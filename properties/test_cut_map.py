"""The minimal implementation's array cut evaluation (`delta.cut_map`) equals the per-offset oracle.

Proposition: for every provisioned tokenizer, every text and every offset b, the verdict of
`delta.cut_map.cut_map(tok, text, rules)` (special-token rule, transition rule, or refused) is the verdict of
`spec.cut.explain_cut(tok, text, b, rules)`; a map of a window lo..hi gives the same verdicts as the map of the
whole text. Checked on every offset of the `ci` battery, of the table of all 1,112,064 scalar values in code
point order (in sixteen ranges; by default every 16th in the unassigned planes 4-13, whose code points are all
alike, and every one with DELTA_EXHAUSTIVE=full), under the specification's rules and under every cut
control's rules; and shown able to fail: each broken variant of the array rules (`delta.cut_map.FAULTS`)
disagrees with the oracle on some offset of a tokenizer where it changes anything.
"""

from __future__ import annotations

import os  # noqa: F401  (used by the skipif condition string)
import random
from functools import lru_cache
from itertools import cycle

import pytest
from delta_suite.checks.battery import battery
from delta_suite.delta.cut_map import FAULTS, REFUSED, cut_map, occurrences, selected_occurrences
from delta_suite.frozen.loader import FrozenTokenizer, load_tokenizer, load_tokenizer_file
from delta_suite.spec.admission import admission_of
from delta_suite.spec.cut import ACCEPTED_VERDICTS, DEFAULT_CUT_RULES, CutRules, explain_cut
from delta_suite.spec.guard import literal_trie
from delta_suite.spec.special_cut import stage_tries, two_stage_scan

from delta_suite import controls
from properties.conftest import ADMITTED, PROVISIONED, checked_scalars, sampling_note
from properties.synthetic import base_config, variant, write

CODE_SPACE = 0x110000
RANGE_SIZE = 0x11000  # sixteen ranges of 69,632 code points: each a few seconds on one core
RANGES = tuple((lo, min(lo + RANGE_SIZE, CODE_SPACE)) for lo in range(0, CODE_SPACE, RANGE_SIZE))
TABLE_TOKENIZERS = PROVISIONED or [pytest.param(None, marks=pytest.mark.skip(reason="no tokenizer provisioned"))]
CONTROL_TEXT_CHARS = 1000
CUT_CONTROLS = [c for c in (controls.get(n) for n in controls.names()) if c.path == "cut" and c.derive is None]


def oracle(tok: FrozenTokenizer, text: str, rules: CutRules = DEFAULT_CUT_RULES) -> list[str | None]:
    """The spec's verdict at every offset 1..len-1 (the accepting rule's name, or None when refused)."""
    return [v if v in ACCEPTED_VERDICTS else None for v in (explain_cut(tok, text, b, rules) for b in
                                                            range(1, len(text)))]


def mapped(tok: FrozenTokenizer, text: str, rules: CutRules = DEFAULT_CUT_RULES, fault: str | None = None,
           ) -> list[str | None]:
    """The array evaluation's verdict at every offset 1..len-1."""
    cmap = cut_map(tok, text, rules, fault)
    return [cmap.name(b) for b in range(1, len(text))]


def disagreements(tok: FrozenTokenizer, texts, rules: CutRules = DEFAULT_CUT_RULES, fault: str | None = None,
                  wants=None) -> tuple[int, list[tuple[str, int, str | None, str | None]]]:
    """(offsets compared, the offsets where the array verdict differs from the oracle: (text, b, array, spec)).
    `wants`: the oracle's verdicts of the texts, when already computed (`battery_oracle`)."""
    compared, bad = 0, []
    for i, text in enumerate(texts):
        want = oracle(tok, text, rules) if wants is None else wants[i]
        got = mapped(tok, text, rules, fault)
        compared += len(want)
        bad += [(text, b + 1, g, w) for b, (g, w) in enumerate(zip(got, want, strict=True)) if g != w]
    return compared, bad


def battery_texts(tok: FrozenTokenizer) -> list[str]:
    """The texts of the `ci` battery's cases, in order (the cases generated once per process: `battery`)."""
    return [case.text for case in battery(tok, "ci")]


@lru_cache(maxsize=16)
def battery_oracle(tok: FrozenTokenizer) -> tuple[list[str | None], ...]:
    """`oracle` of every `battery_texts` text under the default rules, computed once per process: the battery
    test and each broken-rule test of a tokenizer compare the array verdicts with the same spec verdicts."""
    return tuple(oracle(tok, text) for text in battery_texts(tok))


@pytest.mark.parametrize("name", TABLE_TOKENIZERS)
def test_map_equals_oracle_on_the_battery(name: str, ledger) -> None:
    """Every offset of every `ci` battery string: the array verdict is the spec's, under the default rules."""
    tok = load_tokenizer(name)
    compared, bad = disagreements(tok, battery_texts(tok), wants=battery_oracle(tok))
    ledger.record("battery", "cut_map.battery", tok, comparisons=compared, differences=len(bad), unit="offsets",
                  oracle="spec")
    assert compared > 10_000
    assert not bad, f"{len(bad)} offsets differ, first: {bad[0]!r}"


@pytest.mark.exhaustive
@pytest.mark.skipif("os.environ.get('DELTA_EXHAUSTIVE') == '0'",
                    reason="exhaustive per-code-point tests switched off with DELTA_EXHAUSTIVE=0")
@pytest.mark.parametrize("lo,hi", RANGES, ids=[f"U+{lo:04X}" for lo, _ in RANGES])
@pytest.mark.parametrize("name", TABLE_TOKENIZERS)
def test_map_equals_oracle_on_every_code_point(name: str, lo: int, hi: int, ledger) -> None:
    """The text of every scalar value of [lo, hi) in code point order (surrogates left out): every offset's
    array verdict is the spec's. By default every 16th code point of the unassigned planes 4-13 (all alike:
    `test_unassigned_planes_are_alike`; DELTA_EXHAUSTIVE=full: every one); with DELTA_EXHAUSTIVE_STRIDE=k the text
    of every k-th scalar value (the multiples of k). The record says how it was sampled."""
    tok = load_tokenizer(name)
    text = "".join(map(chr, checked_scalars(lo, hi)))
    compared, bad = disagreements(tok, [text])
    note = sampling_note(lo, hi)
    ledger.record("exhaustive", f"cut_map.code_points.U+{lo:04X}-U+{hi - 1:04X}", tok, comparisons=compared,
                  differences=len(bad), unit="offsets", details={"sampled": note} if note else {}, oracle="spec")
    assert compared == len(text) - 1
    assert not bad, f"{len(bad)} offsets differ, first at {bad[0][1]}: array {bad[0][2]}, spec {bad[0][3]}"


@pytest.mark.parametrize("control", CUT_CONTROLS, ids=lambda c: c.name)
def test_map_equals_oracle_under_every_control_rule(control, ledger) -> None:
    """Under each cut control's rules (its knobs off the specification), the array verdicts still equal the
    spec's verdicts under those rules, on 60 battery strings (of up to 1,000 characters: the oracle of the guard
    mode "selected" scans the whole text per offset) of every admitted tokenizer: the campaigns and
    the kill matrix judge the controls through the array evaluation."""
    compared = differing = 0
    first = None
    for name in ADMITTED:
        tok = load_tokenizer(name)
        texts = [t for t in battery_texts(tok) if len(t) <= CONTROL_TEXT_CHARS][:60]
        n, bad = disagreements(tok, texts, control.rules)
        compared, differing = compared + n, differing + len(bad)
        first = first or (bad[0] if bad else None)
    # a parity check of the array evaluation with the oracle under a control's rules, not a run of the control
    ledger.record("battery", "cut_map.control_rules", None, comparisons=compared, differences=differing,
                  unit="offsets", details={"rules": control.name}, oracle="spec")
    if not ADMITTED:
        pytest.skip("no admitted tokenizer provisioned")
    assert differing == 0, f"{differing} offsets differ under {control.name}; first {first!r}"


def test_map_equals_oracle_with_the_special_rule_off(ledger) -> None:
    """With the special-token rule off (special_rule="off": a mode no control uses), the array verdicts still
    equal the spec's on the battery strings that hold a special-token string (20 per admitted tokenizer), and
    some edge the default rule accepts as a special-token edge is judged otherwise: the mode is seen to change
    something, so a map that kept the rule on would differ."""
    rules = CutRules(special_rule="off")
    compared = differing = changed = 0
    first = None
    for name in ADMITTED:
        tok = load_tokenizer(name)
        texts = [t for t in battery_texts(tok)
                 if len(t) <= CONTROL_TEXT_CHARS and any(s in t for s in tok.special_strings)][:20]
        n, bad = disagreements(tok, texts, rules)
        compared, differing = compared + n, differing + len(bad)
        first = first or (bad[0] if bad else None)
        for text in texts:
            on, off = cut_map(tok, text), cut_map(tok, text, rules)
            changed += sum(on.name(b) != off.name(b) for b in range(1, len(text)))
    ledger.record("battery", "cut_map.no_special_rule", None, comparisons=compared, differences=differing,
                  unit="offsets", details={"offsets_the_mode_changes": changed}, oracle="spec")
    if not ADMITTED:
        pytest.skip("no admitted tokenizer provisioned")
    assert changed > 0, "the special rule off changed no verdict: the texts hold no special-token edge"
    assert differing == 0, f"{differing} offsets differ with the special rule off; first {first!r}"


@pytest.mark.parametrize("name", ADMITTED or [pytest.param(None, marks=pytest.mark.skip(reason="none provisioned"))])
def test_window_maps_equal_the_whole_map(name: str, ledger) -> None:
    """A map of offsets lo..hi (what the planner builds per scan range) gives the whole map's verdicts there."""
    tok = load_tokenizer(name)
    rng = random.Random(7)
    compared = differing = 0
    for text in battery_texts(tok)[:80]:
        if len(text) < 3:
            continue
        whole = cut_map(tok, text)
        for _ in range(4):
            lo = rng.randrange(1, len(text) - 1)
            hi = rng.randrange(lo, len(text) - 1)
            window = cut_map(tok, text, lo=lo, hi=hi)
            for b in range(lo, hi + 1):
                compared += 1
                differing += window.name(b) != whole.name(b)
    ledger.record("battery", "cut_map.windows", tok, comparisons=compared, differences=differing, unit="offsets",
                  oracle="self")
    assert compared > 1000 and differing == 0


@pytest.fixture(scope="module")
def one_char_specials(tmp_path_factory: pytest.TempPathFactory) -> FrozenTokenizer:
    """An admitted synthetic tokenizer with an NFC normalizer whose only special-token string is one character
    ("§"): the longest special string is as short as it can be, and occurrences touch normalization windows."""
    cfg = base_config()
    cfg["added_tokens"][0]["content"] = "\u00a7"
    cfg["normalizer"] = {"type": "NFC"}
    tok = load_tokenizer_file(write(tmp_path_factory.mktemp("one_char"), cfg, name="one_char_specials")[0],
                              name="one_char_specials")
    assert admission_of(tok).admitted, admission_of(tok)
    return tok


@pytest.mark.parametrize("rules", [DEFAULT_CUT_RULES, CutRules(special_rule="off"),
                                   CutRules(guard="selected", special_rule="off")],
                         ids=["default", "special-rule-off", "guard-selected"])
def test_windows_that_end_or_start_at_a_special_string_equal_the_whole_map(
        rules: CutRules, one_char_specials: FrozenTokenizer, ledger) -> None:
    """A window map whose last offset is where a special-token string starts, or whose first offset is where one
    ends, gives the whole map's verdicts there (the occurrence scan must reach an occurrence that begins at the
    window's last offset, however long or short), under the default rules, the special-token rule off, and the
    guard on selected strings only (with the rule off, which would otherwise accept a selected string's edges
    outright); on the battery texts that hold a special-token string (20 per tokenizer) and each longest
    special-token string between two letters, on every admitted tokenizer and on one whose special strings are
    one character long."""
    compared = differing = edges = 0
    first = None
    for tok in [*(load_tokenizer(name) for name in ADMITTED), one_char_specials]:
        trie = literal_trie(tok)
        longest = [f"a{w}b" for w in tok.special_strings if len(w) == trie.longest]
        texts = [t for t in battery_texts(tok) if any(s in t for s in tok.special_strings)][:20] + longest
        for text in texts:
            n = len(text)
            whole = cut_map(tok, text, rules)
            for s, e in occurrences(trie, text):
                for lo, hi in ((s - 6, s), (s, s), (e, e + 6), (e, e)):
                    lo, hi = max(1, lo), min(n - 1, hi)
                    if lo > hi:
                        continue
                    edges += 1
                    window = cut_map(tok, text, rules, lo=lo, hi=hi)
                    for b in range(lo, hi + 1):
                        compared += 1
                        if window.name(b) != whole.name(b):
                            differing += 1
                            first = first or (tok.name, text, lo, hi, b, window.name(b), whole.name(b))
    ledger.record("battery", "cut_map.windows_at_specials", None, comparisons=compared, differences=differing,
                  unit="offsets", details={"windows": edges, "special_rule": rules.special_rule,
                                           "guard": rules.guard}, oracle="self")
    assert edges > 100 and differing == 0, f"{differing} offsets differ; first {first!r}"


def test_an_empty_range_is_an_empty_map() -> None:
    """A range with no offset (the empty text, one character, hi below lo by any amount) gives a map that
    accepts nothing and names no offset, without an error."""
    tok = load_tokenizer(ADMITTED[0])
    for text, lo, hi in (("", 1, None), ("a", 1, None), ("hello world", 8, 3), ("hello world", 5, 4)):
        m = cut_map(tok, text, lo=lo, hi=hi)
        assert m.accepted() == [] and m.specials() == [] and len(m.verdicts) == 0
        assert all(m.name(b) is None for b in range(len(text) + 1))


def test_a_range_past_the_text_is_clamped_to_its_last_offset() -> None:
    """A hi at or past len(text) gives the map of lo..len(text) - 1, and a lo of 0 or below the map of 1..hi: the
    same accepted offsets, special-token cuts and verdicts as the whole map, on texts that end with a special
    string (whose end is len(text), never a cut)."""
    tok = load_tokenizer(ADMITTED[0])
    special = tok.special_strings[0]
    for text in ("hello world" + special, special + "x" + special, "plain text, no marker"):
        whole = cut_map(tok, text)
        for hi in (len(text) - 1, len(text), len(text) + 3):
            m = cut_map(tok, text, hi=hi)
            assert m.hi == len(text) - 1 and m.specials() == whole.specials()
            assert m.accepted() == whole.accepted()
        for lo in (0, -3):
            m = cut_map(tok, text, lo=lo)
            assert (m.lo, m.hi) == (1, len(text) - 1) and m.specials() == whole.specials()
            assert m.accepted() == whole.accepted()


def test_candidates_are_the_unrefused_offsets_of_the_range_asked() -> None:
    """`CutMap.candidates(lo, hi)` is every offset of [lo, hi] within the map's range whose verdict is not refused
    outright, for ranges inside, across and outside the range of a whole map and of a window map (the planner asks
    for a window map's whole range only), among them ranges that end just before or start just after such an
    offset."""
    if not ADMITTED:
        pytest.skip("no admitted tokenizer provisioned")
    tok = load_tokenizer(ADMITTED[0])
    text = "Hello, world! <|x|> 12 cafés, then\r\nmore text; and x = y + 1.\n" * 3
    for cmap in (cut_map(tok, text), cut_map(tok, text, lo=20, hi=90)):
        unrefused = [b for b in range(cmap.lo, cmap.hi + 1) if cmap.verdicts[b - cmap.lo] != REFUSED]
        # (5, 59) and (25, 44) end just before an unrefused offset (60 and 45), (21, 40) starts just after one (20)
        assert {20, 45, 60} <= set(unrefused), "the offsets the last three ranges sit beside are refused"
        for lo, hi in ((1, 10), (5, 60), (25, 40), (cmap.lo, cmap.hi), (0, len(text) + 5), (80, 200), (95, 99),
                       (5, 59), (25, 44), (21, 40)):
            assert cmap.candidates(lo, hi) == [b for b in unrefused if lo <= b <= hi], (cmap.lo, lo, hi)


@pytest.mark.parametrize("name", TABLE_TOKENIZERS)
def test_the_array_selection_is_the_two_stage_scan(name: str, ledger) -> None:
    """The array evaluation's own selection of special-token occurrences (`delta.cut_map.selected_occurrences`,
    whose edges are the special-token cuts) equals the specification's two-stage scan (`spec.special_cut`, premise
    P1) on every `ci` battery text, on the texts joining the tokenizer's strings of either stage and on texts that
    start with each added token, so no occurrence is added, lost or moved: an empty one at the end of the text
    included, one of the second stage at offset 0 too."""
    tok = load_tokenizer(name)
    raw, normalized = stage_tries(tok)
    joined = [f"a{s} {t}b" for s, t in zip(sorted(tok.special_strings)[:40], sorted(tok.special_strings)[1:41],
                                                strict=False)]
    contents = sorted({t["content"] for t in tok.admission_inputs.added_tokens})
    leading = [f"{c} x" for c in contents[:200]]
    whole = [c for c in contents if c]
    second_only = [c for c in whole if normalized.selected(c) == [(0, len(c))] and raw.selected(c) != [(0, len(c))]]
    first_only = [c for c in whole if raw.selected(c) == [(0, len(c))]]
    abutting = [f"a{n}{r}b" for n, r in zip(second_only[:40], cycle(first_only))]  # each joined to a first-stage one
    compared = differing = second_stage = second_at_start = second_before_first = 0
    for text in [*battery_texts(tok), *joined, *leading, *abutting]:
        spec = two_stage_scan(tok, text)
        compared += 1
        differing += selected_occurrences(tok, text) != spec
        first = raw.selected(text)
        second_stage += len(spec) > len(first)
        second_at_start += bool(spec) and spec[0][0] == 0 and all(start > 0 for start, _ in first)
        first_starts = {start for start, _ in first}
        second_before_first += any(end in first_starts for start, end in spec if (start, end) not in first)
    ledger.record("battery", "cut_map.selection", tok, comparisons=compared, differences=differing, unit="texts",
                  details={"texts_with_a_second_stage_selection": second_stage,
                           "texts_starting_with_a_second_stage_selection": second_at_start,
                           "texts_with_a_second_stage_selection_ending_where_a_first_starts": second_before_first},
                  oracle="spec")
    assert compared > 100 and differing == 0
    assert second_stage > 0 or not normalized.root, "the normalized stage was never exercised"
    assert second_at_start > 0 or not normalized.root, "no normalized-stage occurrence at the text's start"
    assert second_before_first > 0 or not (normalized.root and raw.root), \
        "no normalized-stage occurrence ends where a first-stage one starts"


def test_a_window_sees_a_one_character_special_token_at_its_end(tmp_path) -> None:
    """A window's map reads the selection far enough past its last offset to see an occurrence starting there,
    also when the longest special-token string is one character: with "§" as the only special token, the window
    1..k ending where "§" starts gives the spec's verdict at k (a special-token cut), as the whole map does."""
    cfg = base_config()
    cfg["added_tokens"][0]["content"] = "\u00a7"
    tok = load_tokenizer_file(write(tmp_path, cfg)[0], name="one_character_special")
    text = "ab \u00a7 cd \u00a7"
    for k in (3, 8):
        assert text[k] == "\u00a7" and explain_cut(tok, text, k) == "accepted:special_token"
        assert cut_map(tok, text, lo=1, hi=k).name(k) == cut_map(tok, text).name(k) == "accepted:special_token"


@pytest.mark.parametrize("special_rule", ["selected", "any_occurrence"])
def test_a_window_ending_where_the_longest_special_string_starts_sees_it(special_rule: str) -> None:
    """Under either special-token rule (the spec's selected occurrences, and the control rule's every occurrence),
    the map of a window 1..k ending where an occurrence of the longest special string starts reads far enough past
    k to see all of it: its verdict at k is the whole map's and the spec's (a special-token cut)."""
    tok = load_tokenizer(ADMITTED[0])
    rules = CutRules(special_rule=special_rule)
    longest = max(tok.special_strings, key=len)
    text = "ab " + longest + " cd " + longest
    for k in (3, len(text) - len(longest)):
        assert text.startswith(longest, k)
        want = explain_cut(tok, text, k, rules)
        assert want == "accepted:special_token"
        assert cut_map(tok, text, rules, lo=1, hi=k).name(k) == cut_map(tok, text, rules).name(k) == want


@pytest.mark.parametrize("special_rule", ["selected", "any_occurrence"])
def test_a_window_starting_where_the_longest_special_string_ends_sees_it(special_rule: str) -> None:
    """The mirror case: the map of a window k..k + 2 starting where an occurrence of the longest special string
    ends reads far enough before k to see all of it: its verdict at k is the whole map's and the spec's (a
    special-token cut)."""
    tok = load_tokenizer(ADMITTED[0])
    rules = CutRules(special_rule=special_rule)
    longest = max(tok.special_strings, key=len)
    text = longest + " ab " + longest + " cd"
    for k in (len(longest), len(text) - 3):
        assert text.endswith(longest, 0, k)
        want = explain_cut(tok, text, k, rules)
        assert want == "accepted:special_token"
        assert cut_map(tok, text, rules, lo=k, hi=k + 2).name(k) == cut_map(tok, text, rules).name(k) == want


def test_the_selection_skips_every_occurrence_inside_a_selected_one(tmp_path) -> None:
    """Overlapping special strings ("<a|", "|b" and "|b>"): in "<a|b> then <a|" the scan selects "<a|" at 0, skips
    both occurrences starting inside it (at 2, one of each length) and goes on to select "<a|" at 11, as the
    specification's scan does. No provisioned tokenizer has special strings that overlap so."""
    cfg = base_config()
    cfg["added_tokens"] += [{**cfg["added_tokens"][0], "id": 259 + k, "content": c}
                            for k, c in enumerate(("<a|", "|b", "|b>"))]
    tok = load_tokenizer_file(write(tmp_path, cfg)[0], name="overlapping_specials")
    text = "<a|b> then <a|"
    assert selected_occurrences(tok, text) == two_stage_scan(tok, text) == [(0, 3), (11, 14)]
    assert mapped(tok, text) == oracle(tok, text)


def test_the_nfc_window_rule_refuses_the_edge_of_an_occurrence_left_unselected(tmp_path) -> None:
    """An NFC tokenizer whose special strings overlap ("<a|" and "|b>"): in "ab <a|b> cd" the scan selects "<a|",
    so the end of "|b>" (offset 8) is no special-token cut, and the NFC window [7, 9) touches that occurrence: the
    spec refuses the cut there (nfc_window_touches_special) and so does the map, at every offset as the spec does.
    The provisioned NFC tokenizers have no overlapping special strings, so only a tokenizer like this one reaches
    the rule on the map."""
    cfg = base_config()
    cfg["normalizer"] = {"type": "NFC"}
    cfg["added_tokens"] += [{**cfg["added_tokens"][0], "id": 259, "content": "<a|"},
                            {**cfg["added_tokens"][0], "id": 260, "content": "|b>"}]
    tok = load_tokenizer_file(write(tmp_path, cfg)[0], name="nfc_overlapping_specials")
    for text in ("ab <a|b> cd", "ab <a|b>1"):
        assert explain_cut(tok, text, 8) == "nfc_window_touches_special"
        m = cut_map(tok, text)
        assert [m.name(b) for b in range(1, len(text))] == [
            v if v in ACCEPTED_VERDICTS else None for v in (explain_cut(tok, text, b) for b in range(1, len(text)))]


@pytest.mark.parametrize("kind,premises_off_maps", [("nfd", False), ("lstrip", True)])
def test_a_refused_tokenizer_has_a_map_that_accepts_nothing(tmp_path, kind: str, premises_off_maps: bool) -> None:
    """A tokenizer admission refuses (an NFKC normalizer; a special token that strips whitespace) gets a map whose
    every offset is refused, as the spec says (not_admitted): no accepted offset, no candidate, no name. With the
    premise check off (check_premises=False, a control's rules) the map of the tokenizer refused only for the
    strip is computed, and the other one's stays empty; at every offset as the spec says."""
    tok = load_tokenizer_file(write(tmp_path, variant(kind))[0], name=f"refused_{kind}")
    text = "hello world, again <|end|> and more"
    assert explain_cut(tok, text, 5) == "not_admitted"
    m = cut_map(tok, text)
    assert m.accepted() == [] and m.candidates(1, len(text)) == [] and m.specials() == []
    assert all(m.name(b) is None for b in range(len(text) + 1))
    rules = CutRules(check_premises=False)
    off = cut_map(tok, text, rules)
    assert bool(off.accepted()) == premises_off_maps
    assert mapped(tok, text, rules) == oracle(tok, text, rules)


@pytest.mark.parametrize("name", [n for n in PROVISIONED if load_tokenizer(n).is_nfc] or [
    pytest.param(None, marks=pytest.mark.skip(reason="no NFC tokenizer provisioned"))])
def test_the_map_reads_the_character_after_each_of_the_last_offsets(name: str) -> None:
    """NFC condition on the map's last offsets: where the character after b is not an anchor (a combining mark),
    the map does not accept b outright but as the spec does, for the last few offsets of a text and of a window
    (a window whose last offsets are followed by more marks than the anchor scan reaches)."""
    tok = load_tokenizer(name)
    compared = 0
    for mark in ("\u0301", "\u0316", "\u05b4"):
        for text in (f"ab cd e{mark}", f"ab, c{mark}d", f"x y{mark}", f"go to a{mark}{mark}b"):
            whole = cut_map(tok, text)
            for b in range(1, len(text)):
                want = explain_cut(tok, text, b)
                assert whole.name(b) == (want if want in ACCEPTED_VERDICTS else None), (text, b, want)
                compared += 1
    assert compared > 50
    # a window ending just after b, where the marks after b run past the anchor scan: the spec finds no right
    # anchor and refuses b; the window's map reads the character after b too and agrees with the whole map
    text = "ab " + "\u0301" * 300 + " end"
    assert explain_cut(tok, text, 2) == "nfc_no_right_anchor"
    for hi in range(2, 7):
        assert cut_map(tok, text, lo=1, hi=hi).name(2) is None and cut_map(tok, text).name(2) is None


def _applies(fault: str, tok: FrozenTokenizer) -> bool:
    control = next(c for c in CUT_CONTROLS if c.cut_fault == fault)
    return control.applies(tok)


@pytest.mark.parametrize("fault", FAULTS)
def test_each_broken_array_rule_is_seen(fault: str, ledger) -> None:
    """Test of the test: each broken variant of the array rules disagrees with the oracle on some battery offset
    of every admitted tokenizer where its control applies (and is a control the registry runs)."""
    assert any(c.cut_fault == fault for c in CUT_CONTROLS), f"no control plants {fault}"
    seen = {}
    for name in ADMITTED:
        tok = load_tokenizer(name)
        if not _applies(fault, tok):
            continue
        _, bad = disagreements(tok, battery_texts(tok), fault=fault, wants=battery_oracle(tok))
        seen[name] = len(bad)
    ledger.record("control", f"cut_map.fault.{fault}", None, comparisons=len(seen),
                  differences=sum(1 for v in seen.values() if v), unit="tokenizers",
                  details={"killed": any(seen.values()), "offsets_seen": seen}, oracle="spec")
    if not seen:
        pytest.skip(f"no provisioned tokenizer where {fault} changes a verdict")
    assert all(seen.values()), f"{fault} went unseen on {[n for n, v in seen.items() if not v]}"


def _fault_offsets(fault: str, tok: FrozenTokenizer, text: str) -> set[int]:
    """The offsets a broken array rule is meant to misjudge in `text`: the last interior offset e - 1 of each
    special-token occurrence [s, e) longer than one character, or each offset before a carriage return."""
    if fault == "guard_misses_last_interior":
        return {e - 1 for s, e in occurrences(literal_trie(tok), text) if e - 1 > s}
    return {b for b in range(1, len(text)) if text[b] == "\r"}


@pytest.mark.parametrize("fault", FAULTS)
def test_each_broken_array_rule_changes_only_its_offsets(fault: str) -> None:
    """Each broken variant is the error it names and no other: on the battery of every admitted tokenizer, its map
    differs from the correct map only at the offsets that error reaches (`_fault_offsets`), and at some of them."""
    changed = 0
    for name in ADMITTED:
        tok = load_tokenizer(name)
        for text in battery_texts(tok):
            right, broken = cut_map(tok, text), cut_map(tok, text, fault=fault)
            differs = {b for b in range(1, len(text)) if right.name(b) != broken.name(b)}
            assert differs <= _fault_offsets(fault, tok, text), (name, fault, sorted(differs)[:5], text[:80])
            changed += len(differs)
    if not ADMITTED:
        pytest.skip("no admitted tokenizer provisioned")
    assert changed > 0
