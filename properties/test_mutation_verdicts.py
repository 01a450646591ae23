"""The premises of the "equivalent" verdicts in mutation/verdicts.toml that a test can check, one test each.

A verdict names its test here; if the premise stops holding, the test fails and the verdict must be revisited.
"""

from __future__ import annotations

import re
import time
from itertools import product
from pathlib import Path

import pytest
from delta_suite.checks.battery import iter_battery
from delta_suite.delta.cut_map import occurrences as cut_map_occurrences
from delta_suite.frozen import registry
from delta_suite.frozen.loader import FrozenTokenizer, load_tokenizer, load_tokenizer_file
from delta_suite.spec.classes import class_table
from delta_suite.spec.cut import python_class_table
from delta_suite.spec.guard import LiteralTrie, cut_inside_special, literal_trie, occurrences_near, special_touches
from delta_suite.spec.normalization import is_anchor
from delta_suite.spec.patterns import SPLIT_PATTERNS
from delta_suite.spec.proofs.alphabet import family_alphabet
from delta_suite.spec.proofs.coverage import regex_coverage, stage_coverage
from delta_suite.spec.proofs.pieces import pieces_of
from delta_suite.spec.proofs.regex import Cat, Rep, Sym, parse
from delta_suite.spec.reference import reference_encode_batch, reference_ids_batch
from delta_suite.spec.unicode_version import _canonical_decomposition, _hangul_second_elements
from tokenizers import Regex
from tokenizers.pre_tokenizers import Sequence, Split

from mutation.verdicts import read_verdicts, set_grounds
from properties.conftest import ADMITTED
from properties.synthetic import POWER_KINDS, base_config, power_tokenizer, write
from properties.test_pipeline_proof import SYNTHETIC_PATTERNS

SAMPLE_TOKENIZER = "qwen3_8b"


@pytest.mark.parametrize("family", sorted(SPLIT_PATTERNS))
def test_isolated_split_ignores_invert(family: str, ledger) -> None:
    """spec/proofs/pieces.py, invert=False -> True: with behavior "isolated" both matched and unmatched stretches
    become pieces, so inverting the pattern changes no piece. Checked on the ci battery's texts (and a few edge
    texts) for every pattern; the check can fail: a "removed" split does change the pieces."""
    if SAMPLE_TOKENIZER not in ADMITTED:
        pytest.skip(f"{SAMPLE_TOKENIZER} is not provisioned: the battery's texts are built from it")
    stages = SPLIT_PATTERNS[family]
    plain = pieces_of(Sequence([Split(Regex(s), behavior="isolated", invert=False) for s in stages]))
    inverted = pieces_of(Sequence([Split(Regex(s), behavior="isolated", invert=True) for s in stages]))
    removed = pieces_of(Sequence([Split(Regex(s), behavior="removed", invert=False) for s in stages]))
    texts = ["", " ", "a", "  x\n\n 12345 it's", "\u00e9\u0301!"]
    texts += [case.text for case in iter_battery(load_tokenizer(SAMPLE_TOKENIZER), "ci")]
    differ = [t for t in texts if plain(t) != inverted(t)]
    ledger.record("harness", "mutation.verdict.isolated_split_ignores_invert", None, comparisons=len(texts),
                  differences=len(differ), unit="texts", details={"family": family, "first": differ[:1]},
                  oracle="premise")
    assert differ == []
    assert any(plain(t) != removed(t) for t in texts)


# --- spec/guard.py: the scan window and the checks that repeat it ------------------------------------------------

OVERLAPPING = ("ab", "abc", "bc", "c", "cab")  # literals that overlap, nest and share prefixes and suffixes


def _every_text(alphabet: str, longest: int) -> list[str]:
    return [""] + [t for n in range(1, longest + 1) for t in map("".join, product(alphabet, repeat=n))]


def _all_occurrences(text: str, literals: tuple[str, ...]) -> list[tuple[int, int]]:
    """Every (start, end) with text[start:end] a literal, by start then end: the definition, by brute force."""
    return sorted((s, s + len(lit)) for s in range(len(text)) for lit in literals if text.startswith(lit, s))


def _leftmost_longest(text: str, literals: tuple[str, ...]) -> list[tuple[int, int]]:
    """The occurrences a left-to-right scan keeps: at each position the longest literal there, then past it."""
    out, i = [], 0
    while i < len(text):
        ends = [e for s, e in _all_occurrences(text, literals) if s == i]
        if ends:
            out.append((i, max(ends)))
            i = max(ends)
        else:
            i += 1
    return out


def _first(found: list[tuple[int, int]]) -> tuple[int, int] | None:
    return found[0] if found else None


def _overlapping_tokenizer(folder: Path) -> FrozenTokenizer:
    cfg = base_config()
    cfg["added_tokens"] = [{"id": 300 + i, "content": lit, "single_word": False, "lstrip": False, "rstrip": False,
                            "normalized": False, "special": True} for i, lit in enumerate(OVERLAPPING)]
    path, _ = write(folder, cfg, name="overlapping")
    return load_tokenizer_file(path, name="synthetic_overlapping")


def test_guard_occurrences_are_exactly_those_meeting_the_window(tmp_path: Path, ledger) -> None:
    """spec/guard.py, the survivors in the scan window (`first = max(0, lo - longest + 1)` -> `+ 0`, the default
    `lo = 0` -> `-1`) and in the checks after it (`b + 1` -> `b + 0`, `start < b < end` -> `<=`, `start < hi and
    end > lo` -> `or` / `>=`): `occurrences_near(lo, hi)` returns exactly the occurrences with start < hi and end > lo,
    in scan order (an occurrence starting at lo - longest or before ends at lo or before, and with lo <= 0 every
    occurrence ends after lo), so the checks after it see only occurrences they accept, and the refusing occurrence
    of a cut at b starts before b. Checked against the definition by brute force on every text of up to 6 characters
    over "abc" with overlapping literals, every window, both guard modes; the check can fail: a window narrowed by
    one position misses occurrences."""
    tok = _overlapping_tokenizer(tmp_path)
    trie = literal_trie(tok)
    assert trie.longest == 3
    texts = _every_text("abc", 6)
    compared = differ = 0
    for text in texts:
        n = len(text)
        expected = {"all": _all_occurrences(text, OVERLAPPING), "selected": _leftmost_longest(text, OVERLAPPING)}
        differ += trie.occurrences(text) != expected["all"]
        for mode, occ in expected.items():
            for lo in range(-1, n + 1):
                for hi in range(lo, n + 2):
                    meeting = [(s, e) for s, e in occ if s < hi and e > lo]
                    differ += occurrences_near(tok, text, lo, hi, mode) != meeting
                    differ += special_touches(tok, text, lo, hi, mode) != _first(meeting)
                    compared += 2
            for b in range(n + 1):
                differ += cut_inside_special(tok, text, b, mode) != _first([(s, e) for s, e in occ if s < b < e])
                compared += 1
    ledger.record("harness", "mutation.verdict.guard_window", None, comparisons=compared, differences=differ,
                  unit="windows", details={"texts": len(texts), "literals": list(OVERLAPPING)}, oracle="spec")
    assert differ == 0 and compared > 100_000
    # the comparison sees a scan that misses occurrences: a window narrowed by one position on the left
    assert any(trie.occurrences(t, lo + 1) != [(s, e) for s, e in _all_occurrences(t, OVERLAPPING) if e > lo]
               for t in texts for lo in range(len(t) + 1))


def test_an_empty_trie_finds_nothing_whatever_its_longest() -> None:
    """spec/guard.py, `max(..., default=0)` -> 1 or -1: the default is `longest` only for a configuration without
    special-token strings, whose trie is empty; it then finds no occurrence wherever its scan starts or ends, nor
    does delta/cut_map's search over windows sized by `longest`."""
    texts = _every_text("ab<", 4)
    for longest in (-1, 0, 1):
        trie = LiteralTrie(())
        trie.longest = longest
        for text in texts:
            assert trie.selected(text) == [] and cut_map_occurrences(trie, text) == []
            assert all(trie.occurrences(text, lo, hi) == [] for lo in range(-1, len(text) + 1)
                       for hi in range(lo, len(text) + 2))
    assert LiteralTrie(()).longest == 0


def test_an_empty_literal_is_skipped_and_the_others_kept() -> None:
    """spec/guard.py, `if not lit: continue`: an empty special-token string occurs nowhere and is left out of the
    trie; the literals after it are still in it (`continue` -> `break` would drop them). So the scan of an empty
    stretch selects nothing (spec/special_cut.py, `if start > at` -> `>=` in the two-stage scan)."""
    trie = LiteralTrie(("", "ab", "", "b"))
    assert trie.longest == 2 and trie.selected("") == [] and trie.occurrences("") == []
    assert trie.occurrences("xab") == [(1, 3), (2, 3)] and trie.selected("xab") == [(1, 3)]


# --- spec/reference.py ---------------------------------------------------------------------------------------------

def test_an_encoding_has_one_word_index_per_id(tmp_path: Path, ledger) -> None:
    """spec/reference.py, `zip(enc.ids, enc.word_ids, strict=True)` -> `strict=False`: the reference library gives
    one word index per ID, so strict zipping never raises. Checked on the ci battery's texts with every synthetic
    power tokenizer (a post-processor, special tokens, NFC) and on every provisioned frozen tokenizer."""
    toks = [power_tokenizer(kind, tmp_path) for kind in POWER_KINDS]
    toks += [load_tokenizer(name) for name in ADMITTED]
    compared = differ = 0
    for tok in toks:
        for case in iter_battery(tok, "ci"):
            for special in (False, True):
                enc = tok.tokenizer.encode(case.text, add_special_tokens=special)
                differ += len(enc.ids) != len(enc.word_ids)
                compared += 1
    ledger.record("harness", "mutation.verdict.word_ids_align", None, comparisons=compared, differences=differ,
                  unit="encodings", details={"tokenizers": [t.name for t in toks]}, oracle="premise")
    assert differ == 0 and compared > 0


def test_the_ids_only_batch_path_gives_the_batch_ids(tmp_path: Path, ledger) -> None:
    """spec/reference.py, `if fast is None` -> `is not None` (or `not`): the IDs-only batch path and the batch path
    with offsets give the same IDs, so which one `reference_ids_batch` takes changes no ID while the installed
    library has both. Checked on the ci battery with the synthetic power tokenizers and every provisioned one."""
    toks = [power_tokenizer(kind, tmp_path) for kind in POWER_KINDS]
    toks += [load_tokenizer(name) for name in ADMITTED]
    compared = differ = 0
    for tok in toks:
        assert getattr(tok.tokenizer, "encode_batch_fast", None) is not None
        texts = [case.text for case in iter_battery(tok, "ci")]
        differ += sum(a != b for a, b in zip(reference_ids_batch(tok, texts), reference_encode_batch(tok, texts),
                                             strict=True))
        compared += len(texts)
    ledger.record("harness", "mutation.verdict.ids_only_batch_path", None, comparisons=compared,
                  differences=differ, unit="texts", details={"tokenizers": [t.name for t in toks]}, oracle="self")
    assert differ == 0 and compared > 0


def test_every_uncovered_symbol_of_a_refuted_stage_is_a_witness(ledger) -> None:
    """spec/proofs/coverage.py, `uncovered[0]` -> `uncovered[-1]`: the witness is a representative of an uncovered
    symbol, and which one z3 enumerates first is not specified; the premise that any of them serves is checked
    here: for every stage the prover refutes, the representative of every uncovered symbol, alone, is dropped by
    the reference's Removed + inverted Split (as the witness is in test_coverage)."""
    compared = differ = 0
    for family, stages in SPLIT_PATTERNS.items():
        alphabet = family_alphabet(family)
        for stage, regex in enumerate(stages):
            verdict = stage_coverage(family, stage)
            split = Split(Regex(regex), behavior="removed", invert=True)
            for symbol in verdict.uncovered:
                differ += split.pre_tokenize_str(alphabet.representative(symbol)) != []
                compared += 1
    ledger.record("harness", "mutation.verdict.every_uncovered_symbol_a_witness", None, comparisons=compared,
                  differences=differ, unit="uncovered symbols", details={"families": sorted(SPLIT_PATTERNS)},
                  oracle="proof")
    assert differ == 0 and compared > 0


def test_a_coverage_verdict_times_its_own_queries() -> None:
    """spec/proofs/coverage.py, `perf_counter() - start` -> `+ start`: a verdict's `seconds` is the time of its z3
    queries, so it lies within the time of the whole call (rounded to the millisecond), never a sum of clock
    readings."""
    t0 = time.perf_counter()
    verdict = regex_coverage(r"\s+", "llama3")
    elapsed = time.perf_counter() - t0
    assert 0 <= verdict.seconds <= elapsed + 0.0005


def test_a_stage_with_one_uncovered_symbol_has_it_as_witness() -> None:
    """spec/proofs/coverage.py, `uncovered[0]` -> `uncovered[1]`: a pattern leaving exactly one symbol of the
    llama3 alphabet uncovered (a tab: neither `\\S`, nor a line break, nor a space) is refuted with that symbol's
    representative as the witness, which the reference's Removed + inverted Split drops."""
    regex = r"\S|[\r\n]+| "
    verdict = regex_coverage(regex, "llama3")
    assert not verdict.total and not verdict.empty_match and len(verdict.uncovered) == 1
    assert verdict.witness == family_alphabet("llama3").representative(verdict.uncovered[0])
    assert Split(Regex(regex), behavior="removed", invert=True).pre_tokenize_str(verdict.witness) == []


# --- spec/proofs/pipeline.py: the match memo's key --------------------------------------------------------------


def node_visits(node) -> dict[int, int]:
    """How many times each node object of an AST is reached from its root (by id)."""
    seen: dict[int, int] = {}

    def walk(n) -> None:
        seen[id(n)] = seen.get(id(n), 0) + 1
        for child in getattr(n, "items", ()) or ((n.item,) if hasattr(n, "item") else ()):
            walk(child)

    walk(node)
    return seen


def test_a_parsed_pattern_reaches_each_node_once() -> None:
    """spec/proofs/pipeline.py `_key`, `id(k[1])` -> `id(k[0])`: a continuation frame's object (the Cat's items or
    the Rep) and a sequence frame's index are fixed by the node being run, because the frames are the node's
    ancestors and the parser builds a fresh object for every node, so no node has two parents: the memo key
    (id(node), position, frames, start) already tells the frames apart, and only a Rep frame's count varies
    (spec/proofs/pipeline.py's `_key` keeps it: test_encoding_is_the_reference_on_synthetic_patterns kills the
    mutants that drop it). Checked: every node of every family's stages and of the synthetic patterns is reached
    once; the check can fail on an AST that shares a node."""
    patterns = [s for stages in SPLIT_PATTERNS.values() for s in stages] + list(SYNTHETIC_PATTERNS)
    for pattern in patterns:
        visits = node_visits(parse(pattern))
        assert set(visits.values()) == {1}, pattern
    shared = Sym(parse("a").atom)
    assert max(node_visits(Cat((Rep(shared, 0, 1), shared))).values()) == 2


def test_the_tables_pair_a_probe_only_as_the_first_jamo_and_a_v_jamo(ledger) -> None:
    """spec.unicode_version's second elements after the probes come twice: from a loop over the tables' canonical
    decompositions and from the Hangul algorithm's V jamo (after U+1100) and T jamo (after U+AC00). Premise of the
    "equivalent" verdicts on mutants of that loop (its bounds, its skip, its `continue`), of the V jamo set and of
    the loop for the first elements before U+0335: over every scalar value, the only two-character canonical
    decompositions that start with a probe (U+0301, U+1100, U+AC00) are U+1100 + each V jamo (unicodedata2 gives
    the LV syllables' decompositions by the Hangul algorithm), and none ends in U+0335. So the loop adds the V jamo
    the Hangul set adds too, a loop cut short adds a part of them, a loop taking newer code points adds nothing
    more, and the first elements before U+0335 are none."""
    probes = {"\u0301", "\u1100", "\uac00"}
    after_probe: set[tuple[str, str]] = set()
    before_stroke: set[str] = set()
    checked = 0
    for cp in range(0x110000):
        if 0xD800 <= cp < 0xE000:
            continue
        d = _canonical_decomposition(chr(cp))
        checked += 1
        if len(d) == 2 and d[0] in probes:
            after_probe.add((d[0], d[1]))
        if len(d) == 2 and d[1] == "\u0335":
            before_stroke.add(d[0])
    v_jamo = {c for c in _hangul_second_elements() if c < "\u11a8"}
    expected = {("\u1100", v) for v in v_jamo}
    ledger.record("harness", "mutation.verdict.probe_pairs_in_the_tables", None, comparisons=checked,
                  differences=len(after_probe ^ expected) + len(before_stroke), unit="code point", oracle="premise")
    assert len(v_jamo) == 21 and after_probe == expected
    assert before_stroke == set()


@pytest.mark.parametrize("text", ["", "a", "ba", "xab", "<|end|>a"])
def test_a_search_from_a_negative_position_starts_at_zero(text: str) -> None:
    """`re`'s search clamps a negative start position to 0: LiteralTrie.selected scanning from -1 finds what it
    finds from 0 (the premise of the equivalent survivor `i = -1` there)."""
    starts = re.compile("a|<\\|end\\|>")
    at_zero, at_minus_one = starts.search(text, 0), starts.search(text, -1)
    assert (at_zero and at_zero.span()) == (at_minus_one and at_minus_one.span())


# --- the reasons themselves: an equivalence holds for every admissible tokenizer -----------------------------------


def registry_names() -> list[str]:
    """The provisioned tokenizers' names and aliases, as a reason would cite one."""
    return [n for row in registry.rows() for n in (row.name, row.alias)]


def test_no_equivalent_verdict_rests_on_the_tokenizers_at_hand() -> None:
    """Any tokenizer file can be admitted, so an "equivalent" verdict argues for every tokenizer admission can
    accept: its reason neither cites the provisioned (frozen) set or a measurement (mutation.verdicts.set_grounds,
    which read_verdicts enforces) nor names a provisioned tokenizer. A premise checked on those tokenizers is a
    check of an argument, never the argument."""
    bad = {(v.module, v.line, v.mutant): grounds for v in read_verdicts().values()
           if v.verdict == "equivalent" and (grounds := set_grounds(v.reason, registry_names()))}
    assert bad == {}


@pytest.mark.parametrize(("reason", "grounds"), [
    ("on every provisioned vocabulary the answer is the same (measured)", ["provisioned", "measured"]),
    ("the frozen tokenizers never join them", ["frozen tokenizers"]),
    ("the same on the eight frozen vocabularies", ["the eight", "frozen vocabularies"]),
    ("qwen3_8b's vocabulary has no such token", ["qwen3_8b"]),
    ("olmo3's markers do not overlap", ["olmo3"]),
    ("a frozen dataclass is never assigned; the qwen3_5 and llama3 patterns agree", []),
    ("checked by properties/test_x.py::test_y over every scalar value", []),
])
def test_set_grounds_finds_the_tokenizers_at_hand(reason: str, grounds: list[str]) -> None:
    """The rule names the set, a measurement or a provisioned tokenizer, and leaves a pattern family's name or a
    frozen dataclass alone."""
    assert set_grounds(reason, registry_names()) == grounds


def test_u0080_is_an_anchor_under_every_probe_setting() -> None:
    """delta/cut_map.py, `anchor = codes < 0x80` -> `<= 0x80` or `< 129`: the one code point the mutants add to the
    ASCII shortcut, U+0080, has class 0 (O) under both class sources and is an anchor under every probe setting,
    so the shortcut says what the predicate says. Neither depends on a tokenizer."""
    for table in (class_table(), python_class_table()):
        assert table[0x80] == 0
        assert all(is_anchor("\x80", table[0x80], reorder, hangul)
                   for reorder, hangul in product((False, True), repeat=2))
