"""How deep a refuted pair's counterexample reaches: the split pieces, the byte-level units, or the reference IDs.

A counterexample of an excluded class pair is a text S and a cut b at which the pattern's pieces of S differ from
the pieces of S[:b] followed by those of S[b:] (`spec.proofs.prove` confirms that much). On a tokenizer T whose
split pattern it is, the cut *reaches*

- "ids" if ref(S) != ref(S[:b]) + ref(S[b:]) (`spec.reference.reference_encode`, no special tokens),
- else "units" if the units differ (the same IDs grouped per pre-token, `spec.reference.reference_encode_units`),
- else "pieces" if only the pieces differ,

so "ids" is what a chunked encode would get wrong, "units" changes only how equal IDs are grouped, and "pieces"
changes neither. A tokenizer is consulted only where its normalizer leaves S and both halves unchanged and no
added-token string occurs in S: otherwise a difference could come from normalization or from the added-token scan
rather than from the split pattern.

When the first counterexample does not reach the IDs on any provisioned tokenizer of the pattern, a bounded search
looks for one that does. A z3 witness (an abstract word) is concretized with the block representatives and with
each tokenizer's most frequent single-character entries of each block, and put in small contexts. Tried in order:
(1) the first witness's word in its first `FIRST_CONTEXT_BOUND` contexts; (2) texts of the tokenizers' own
vocabulary entries that contain a transition of the pair (a trailing incomplete UTF-8 character completed by a
member of the block it can begin), lowest IDs first (`VOCABULARY_BOUND` per tokenizer); (3) further z3 models of
the same failing obligation, each found model blocked (`MODEL_BOUND`), in their first `CONTEXT_BOUND` contexts.
(1) and (2) are deterministic; which models z3 returns in (3) can change with the solver's internal state (it
differs between processes and between fresh contexts), so (3) comes last. Every candidate must change the pieces at
its cut and is kept only if the reference IDs differ. A pair with no such witness is "excluded, conservative": the
bounded search found no text on which the exclusion changes the IDs, which is not a proof that none exists.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache, lru_cache
from itertools import islice

from delta_suite.frozen.errors import NotProvisioned
from delta_suite.frozen.loader import FrozenTokenizer, byte_level_bytes, load_tokenizer
from delta_suite.frozen.registry import rows
from delta_suite.spec.proofs.alphabet import Alphabet
from delta_suite.spec.proofs.pieces import Pieces, cut_changes_pieces
from delta_suite.spec.reference import reference_encode_units

DEPTHS = ("pieces", "units", "ids")  # shallowest first
MODEL_BOUND = 40  # z3 models of the failing obligation enumerated per pair (each found model blocked)
CONTEXT_BOUND = 12  # contexts tried around each concretized z3 model
FIRST_CONTEXT_BOUND = 1024  # contexts tried around the first witness's word, in `contexts` order
COMMON_MEMBERS = 2  # single-character vocabulary entries per block used to concretize a model, per tokenizer
PER_TRANSITION = 4  # vocabulary entries kept per (left block, right block)
VOCABULARY_BOUND = 64  # vocabulary candidate texts tried per pair and tokenizer
NO_TOKENIZER = "IDs not checked: no provisioned tokenizer of this pattern"

Model = tuple[tuple[int, ...], int, str]  # (abstract symbols, cut, where it came from)
Candidate = tuple[str, int, str]  # (text, cut, where it came from)


def deepest(pieces_differ: bool, units_differ: bool, ids_differ: bool) -> str | None:
    """The deepest stage at which a text and its two halves disagree: "ids" if the reference IDs differ, else
    "units" if the units (IDs per pre-token) differ, else "pieces" if the split pieces differ, else None."""
    if ids_differ:
        return "ids"
    if units_differ:
        return "units"
    return "pieces" if pieces_differ else None


def depth_rank(depth: str | None) -> int:
    """-1 for no difference, then the index in DEPTHS (pieces 0, units 1, ids 2)."""
    return -1 if depth is None else DEPTHS.index(depth)


@dataclass(frozen=True)
class CutEffect:
    """What a cut does on one tokenizer: the depth it reaches and the IDs of the whole text and of each half
    (`skipped` says why the tokenizer was not consulted; its depth is then None)."""

    tokenizer: str
    depth: str | None
    ids_whole: tuple[int, ...] = ()
    ids_left: tuple[int, ...] = ()
    ids_right: tuple[int, ...] = ()
    skipped: str | None = None

    def as_dict(self) -> dict:
        """{"depth", "whole", "left", "right"} (IDs), or {"depth": None, "skipped": why} when not consulted."""
        if self.skipped:
            return {"depth": None, "skipped": self.skipped}
        return {"depth": self.depth, "whole": list(self.ids_whole), "left": list(self.ids_left),
                "right": list(self.ids_right)}


# The witness search judges many texts that share a half (one word in several contexts, several cuts of one
# text): what the reference says of one text on one tokenizer is computed once per process (the entries are small).
TEXT_MEMO = 1 << 15


@lru_cache(maxsize=16)
def _added_tokens_by_start(tok: FrozenTokenizer) -> tuple[dict[str, list[tuple[int, str]]], list[tuple[int, str]]]:
    """`tok`'s non-empty added-token strings with their place in its order: those of two or more characters by
    their first two characters, and those of one character."""
    by_start: dict[str, list[tuple[int, str]]] = {}
    single: list[tuple[int, str]] = []
    for k, s in enumerate(tok.special_strings):
        if len(s) == 1:
            single.append((k, s))
        elif s:
            by_start.setdefault(s[:2], []).append((k, s))
    return by_start, single


@lru_cache(maxsize=TEXT_MEMO)
def _added_token_in(tok: FrozenTokenizer, text: str) -> str | None:
    """The first added-token string of `tok` (in its order) that occurs in `text`, or None. Only the strings whose
    first two characters occur together in `text` (or of one character) can occur, so only those are tried."""
    by_start, single = _added_tokens_by_start(tok)
    found = [(k, s) for k, s in single if s in text]
    for i in range(len(text) - 1):
        found += [(k, s) for k, s in by_start.get(text[i : i + 2], ()) if s in text]
    return min(found)[1] if found else None


@lru_cache(maxsize=TEXT_MEMO)
def _cut_changes_pieces(pieces: Pieces, text: str, cut: int) -> bool:
    return cut_changes_pieces(pieces, text, cut)


@lru_cache(maxsize=TEXT_MEMO)
def _normalizer_changes(tok: FrozenTokenizer, text: str) -> bool:
    normalizer = tok.tokenizer.normalizer
    return normalizer is not None and normalizer.normalize_str(text) != text


@lru_cache(maxsize=TEXT_MEMO)
def _units(tok: FrozenTokenizer, text: str) -> tuple[tuple[int, ...], tuple[tuple[int, ...], ...]]:
    """`reference_encode_units` of `text`, as tuples."""
    ids, units = reference_encode_units(tok, text)
    return tuple(ids), tuple(units)


def confounder(tok: FrozenTokenizer, text: str, cut: int) -> str | None:
    """Why `tok` cannot judge the cut on the split pattern alone (an added-token string occurs in the text, or the
    normalizer changes the text or a half), or None."""
    found = _added_token_in(tok, text)
    if found is not None:
        return f"contains the added-token string {found!r}"
    if any(_normalizer_changes(tok, t) for t in (text, text[:cut], text[cut:])):
        return "the normalizer changes the text or a half"
    return None


def cut_effect(tok: FrozenTokenizer, pieces: Pieces, text: str, cut: int) -> CutEffect:
    """The depth the cut at `cut` reaches on `tok` (`deepest` of the piece, unit and ID comparisons of the whole
    text against its halves), with the IDs; `reference_encode_units` returns the IDs of `reference_encode` (the
    same encode, no special tokens) with their grouping per pre-token."""
    why = confounder(tok, text, cut)
    if why is not None:
        return CutEffect(tok.name, None, skipped=why)
    ids, units = _units(tok, text)
    ids_left, units_left = _units(tok, text[:cut])
    ids_right, units_right = _units(tok, text[cut:])
    depth = deepest(_cut_changes_pieces(pieces, text, cut), units != units_left + units_right,
                    ids != ids_left + ids_right)
    return CutEffect(tok.name, depth, tuple(ids), tuple(ids_left), tuple(ids_right))


def effects_depth(effects: Iterable[CutEffect]) -> str:
    """The deepest depth over the consulted tokenizers of a confirmed counterexample ("pieces" at least: its pieces
    differ by construction)."""
    best = "pieces"
    for e in effects:
        if e.depth is not None and depth_rank(e.depth) > depth_rank(best):
            best = e.depth
    return best


@cache
def family_tokenizers(family: str) -> tuple[FrozenTokenizer, ...]:
    """The provisioned registry tokenizers whose split pattern is `family` (registry order): the registry's
    `split_pattern`, which properties/test_admission.py checks equals the admitted pattern of every provisioned
    row (read from the registry so that nothing in spec.proofs imports spec.admission, which imports the
    derivation of unseen patterns, `spec.proofs.derive`). A derived family has no registry row: none."""
    out = []
    for row in rows():
        if row.split_pattern != family:
            continue
        try:
            out.append(load_tokenizer(row.name))
        except NotProvisioned:
            continue
    return tuple(out)


# ---- the tokenizers' vocabularies as candidate texts ----------------------------------------------------------


@dataclass(frozen=True)
class VocabularyIndex:
    """One tokenizer's model vocabulary read over one abstract alphabet.

    `common`: block -> its members that are single-character entries, lowest ID first (up to COMMON_MEMBERS;
    control and other unprintable characters left out: a vocabulary's first IDs are often its raw bytes);
    `transitions`: (left block, right block) -> (ID, text, cut) of entries with that transition at the cut, lowest
    IDs first (up to PER_TRANSITION)."""

    common: dict[int, tuple[str, ...]]
    transitions: dict[tuple[int, int], tuple[tuple[int, str, int], ...]]


@cache
def vocabulary_bytes(tok: FrozenTokenizer) -> tuple[tuple[int, bytes], ...]:
    """The model's vocabulary entries (added tokens left out) as (ID, bytes), ascending ID; entries with a character
    outside the byte-level alphabet are left out."""
    vocab = tok.tokenizer.get_vocab(with_added_tokens=False).items()
    return tuple(sorted((token_id, raw) for token, token_id in vocab if (raw := byte_level_bytes(token)) is not None))


def entry_text(data: bytes) -> tuple[str, bytes] | None:
    """An entry's complete characters (leading continuation bytes dropped) and the bytes of its trailing
    incomplete character (empty if none); None if the bytes are not UTF-8 otherwise."""
    try:
        return data.decode("utf-8"), b""
    except UnicodeDecodeError:
        pass
    start = 0
    while start < len(data) and 0x80 <= data[start] < 0xC0:
        start += 1
    data = data[start:]
    for end in range(len(data), max(len(data) - 4, -1), -1):
        try:
            return data[:end].decode("utf-8"), data[end:]
        except UnicodeDecodeError:
            continue
    return None


def completion_range(tail: bytes) -> tuple[int, int] | None:
    """The code points [lo, hi) whose UTF-8 encoding could begin with `tail` (a lead byte and fewer continuation
    bytes than it announces), before checking the encoding itself; None if `tail` begins no character."""
    if not tail:
        return None
    lead = tail[0]
    n = 2 if 0xC2 <= lead < 0xE0 else 3 if 0xE0 <= lead < 0xF0 else 4 if 0xF0 <= lead < 0xF5 else 0
    if not n or len(tail) >= n or any(not 0x80 <= b < 0xC0 for b in tail[1:]):
        return None
    value = lead & (0x7F >> n)
    for b in tail[1:]:
        value = value << 6 | (b & 0x3F)
    free = 6 * (n - len(tail))
    return value << free, (value + 1) << free


class _Symbols(dict):
    """Character -> abstract symbol by bisection over the alphabet's ranges (memoized: `symbols[ch]`)."""

    def __init__(self, alphabet: Alphabet) -> None:
        super().__init__()
        self.table = sorted((lo, hi, b.index) for b in alphabet.blocks for lo, hi in b.ranges)
        self.starts = [lo for lo, _, _ in self.table]

    def __missing__(self, ch: str) -> int:
        sym = self[ch] = self.table[bisect.bisect_right(self.starts, ord(ch)) - 1][2]
        return sym

    def completions(self, tail: bytes, preferred: list[tuple[int, int]]) -> list[tuple[int, str]]:
        """(block, member) for each block with members whose encoding begins with `tail`: the lowest-ID one of
        `preferred` ((code point, ID) ascending by code point: the single-character entries) and the lowest."""
        span = completion_range(tail)
        if span is None:
            return []
        lo, hi = span
        frequent: dict[int, tuple[int, str]] = {}
        for cp, token_id in preferred[bisect.bisect_left(preferred, (lo, -1)):bisect.bisect_left(preferred, (hi, -1))]:
            ch = chr(cp)
            if ch.encode("utf-8").startswith(tail) and token_id < frequent.get(self[ch], (1 << 62, ""))[0]:
                frequent[self[ch]] = (token_id, ch)
        out = [(block, ch) for block, (_, ch) in frequent.items()]
        k = max(0, bisect.bisect_right(self.starts, lo) - 1)
        lowest: set[int] = set()
        while k < len(self.table) and self.table[k][0] < hi:
            rlo, rhi, block = self.table[k]
            cp = max(lo, rlo)
            if cp < min(hi, rhi) and block not in lowest and chr(cp).encode("utf-8").startswith(tail):
                lowest.add(block)
                if frequent.get(block, (0, ""))[1] != chr(cp):
                    out.append((block, chr(cp)))
            k += 1
        return out


_INDEXES: dict[tuple[str, str, str], VocabularyIndex] = {}


def vocabulary_index(tok: FrozenTokenizer, alphabet: Alphabet) -> VocabularyIndex:
    """The `VocabularyIndex` of `tok` over `alphabet` (built once per tokenizer and alphabet name). A trailing
    incomplete character is completed, per block it can begin, by the lowest-ID single-character entry of that
    block that it begins and by the block's lowest such code point."""
    key = (tok.name, tok.sha256, alphabet.name)
    if key in _INDEXES:
        return _INDEXES[key]
    symbols = _Symbols(alphabet)
    entries = [(token_id, parsed) for token_id, data in vocabulary_bytes(tok)
               if (parsed := entry_text(data)) is not None and parsed[0]]
    singles = sorted((ord(text), token_id) for token_id, (text, tail) in entries if len(text) == 1 and not tail)
    tails: dict[bytes, list[tuple[int, str]]] = {}
    common: dict[int, list[str]] = {}
    transitions: dict[tuple[int, int], list[tuple[int, str, int]]] = {}
    full: set[tuple[int, int]] = set()

    def add(pair: tuple[int, int], item: tuple[int, str, int]) -> None:
        kept = transitions.setdefault(pair, [])
        kept.append(item)
        if len(kept) == PER_TRANSITION:
            full.add(pair)

    for token_id, (text, tail) in entries:
        syms = list(map(symbols.__getitem__, text))
        if (len(text) == 1 and not tail and (text.isprintable() or text.isspace())
                and len(common.setdefault(syms[0], [])) < COMMON_MEMBERS):
            common[syms[0]].append(text)
        for k, pair in enumerate(zip(syms, syms[1:], strict=False), 1):
            if pair not in full:
                add(pair, (token_id, text, k))
        if tail:
            if tail not in tails:
                tails[tail] = symbols.completions(tail, singles)
            for block, ch in tails[tail]:
                if (syms[-1], block) not in full:
                    add((syms[-1], block), (token_id, text + ch, len(text)))
    index = VocabularyIndex({b: tuple(m) for b, m in common.items()},
                            {p: tuple(v) for p, v in transitions.items()})
    _INDEXES[key] = index
    return index


# ---- candidates and the search ------------------------------------------------------------------------------


def contexts(alphabet: Alphabet, left: frozenset[int], right: frozenset[int]) -> Iterator[tuple[str, str]]:
    """Contexts (before, after) to put around a witness, smallest first: none, one symbol, then two before."""
    reps = [alphabet.representative(b.index) for b in alphabet.blocks]
    x = alphabet.representative(min(left))
    y = alphabet.representative(min(right))
    afters = ["", y, y * 2, *reps]
    for before in ["", x, x * 2, x * 3, *reps]:
        for after in afters:
            yield before, after
    for first in reps:
        for second in reps:
            for after in afters:
                yield first + second, after


def concretizations(word: tuple[int, ...], alphabet: Alphabet, tokenizers: Iterable[FrozenTokenizer]) -> list[str]:
    """Real strings for an abstract word: the block representatives, then per tokenizer and k < COMMON_MEMBERS
    each block's k-th most frequent single-character entry (the representative where the block has none)."""
    out = [alphabet.concretize(word)]
    for tok in tokenizers:
        common = vocabulary_index(tok, alphabet).common
        for k in range(COMMON_MEMBERS):
            out.append("".join(common[s][k] if len(common.get(s, ())) > k else alphabet.representative(s)
                               for s in word))
    return list(dict.fromkeys(out))


def model_candidates(models: Iterable[Model], alphabet: Alphabet, tokenizers: tuple[FrozenTokenizer, ...],
                     left: frozenset[int], right: frozenset[int], context_bound: int) -> Iterator[Candidate]:
    """Each model, concretized (`concretizations`) and put in the first `context_bound` contexts."""
    for word, cut, source in models:
        for core in concretizations(word, alphabet, tokenizers):
            for before, after in islice(contexts(alphabet, left, right), context_bound):
                yield before + core + after, len(before) + cut, source


def vocabulary_candidates(tok: FrozenTokenizer, alphabet: Alphabet, left: frozenset[int],
                          right: frozenset[int]) -> list[Candidate]:
    """Texts of `tok`'s vocabulary entries with an x·y transition of the pair (x in `left`, y in `right`) at the
    cut, lowest IDs first, at most VOCABULARY_BOUND."""
    transitions = vocabulary_index(tok, alphabet).transitions
    found = sorted((item for x in sorted(left) for y in sorted(right) for item in transitions.get((x, y), ())),
                   key=lambda item: item[0])  # stable: an entry's frequent completion before its lowest one
    return [(text, cut, f"vocabulary entry {token_id} of {tok.name}")
            for token_id, text, cut in found[:VOCABULARY_BOUND]]


@dataclass
class Exclusion:
    """The evidence for excluding one refuted pair: the first counterexample's effect on each provisioned tokenizer
    of the pattern, and the deepest witness the bounded search found (the first one when nothing went deeper)."""

    label: str
    tokenizers: tuple[str, ...]
    first_text: str
    first_cut: int
    first_effects: tuple[CutEffect, ...]
    witness_text: str
    witness_cut: int
    witness_source: str
    witness_effects: tuple[CutEffect, ...]
    searched: dict[str, int] = field(default_factory=dict)

    @property
    def depth(self) -> str:
        """The deepest stage the witness reaches on some consulted tokenizer ("pieces" when none was)."""
        return effects_depth(self.witness_effects)

    @property
    def first_depth(self) -> str:
        return effects_depth(self.first_effects)

    @property
    def id_tokenizers(self) -> list[str]:
        """The tokenizers on which the witness changes the IDs."""
        return [e.tokenizer for e in self.witness_effects if e.depth == "ids"]

    @property
    def verdict(self) -> str:
        """"confirmed on IDs (tokenizer: ...)", "excluded, conservative: confirmed on units only" (or pieces only),
        or "confirmed on pieces only; IDs not checked: ..." when no tokenizer of the pattern is provisioned."""
        if not self.tokenizers:
            return f"confirmed on pieces only; {NO_TOKENIZER}"
        if self.depth == "ids":
            return f"confirmed on IDs (tokenizer: {', '.join(self.id_tokenizers)})"
        return f"excluded, conservative: confirmed on {self.depth} only"

    def as_dict(self) -> dict:
        return {
            "verdict": self.verdict,
            "depth": self.depth,
            "tokenizers": list(self.tokenizers),
            "first": {"text": self.first_text, "cut": self.first_cut, "depth": self.first_depth,
                      "ids": {e.tokenizer: e.as_dict() for e in self.first_effects}},
            "witness": {"text": self.witness_text, "codepoints": [f"U+{ord(c):04X}" for c in self.witness_text],
                        "cut": self.witness_cut, "source": self.witness_source,
                        "ids": {e.tokenizer: e.as_dict() for e in self.witness_effects}},
            "searched": dict(self.searched),
        }


def find_witness(label: str, tokenizers: tuple[FrozenTokenizer, ...], pieces: Pieces, alphabet: Alphabet,
                 left: frozenset[int], right: frozenset[int], first_text: str, first_cut: int,
                 first_model: Model | None, models: Callable[[], Iterable[Model]]) -> Exclusion:
    """The first counterexample's effects and, unless it already changes the IDs on some tokenizer, the first
    candidate that changes the pieces and the IDs, tried in this order: the first witness's abstract word
    concretized in its first FIRST_CONTEXT_BOUND contexts, the tokenizers' vocabulary entries (both deterministic),
    then further z3 models (`models()`, at most MODEL_BOUND: which models z3 picks can vary with the solver's
    state, so they come last); failing that, the deepest candidate seen (the first counterexample on ties)."""
    first = tuple(cut_effect(t, pieces, first_text, first_cut) for t in tokenizers)
    best: tuple[str, int, str, tuple[CutEffect, ...]] = (first_text, first_cut, "first counterexample", first)
    searched = {"first_word_texts": 0, "vocabulary_texts": 0, "z3_models": 0, "model_texts": 0}
    if tokenizers and effects_depth(first) != "ids":
        def counted_models() -> Iterator[Model]:
            for model in models():
                searched["z3_models"] += 1
                yield model

        def vocabulary() -> Iterator[Candidate]:
            for tok in tokenizers:
                yield from vocabulary_candidates(tok, alphabet, left, right)

        first_word = [first_model] if first_model is not None else []
        streams = [
            ("first_word_texts", model_candidates(first_word, alphabet, tokenizers, left, right, FIRST_CONTEXT_BOUND)),
            ("vocabulary_texts", vocabulary()),
            ("model_texts", model_candidates(counted_models(), alphabet, tokenizers, left, right, CONTEXT_BOUND)),
        ]
        for kind, stream in streams:
            for text, cut, source in stream:
                searched[kind] += 1
                if (text, cut) == (first_text, first_cut) or not _cut_changes_pieces(pieces, text, cut):
                    continue
                found = tuple(cut_effect(t, pieces, text, cut) for t in tokenizers)
                if depth_rank(effects_depth(found)) > depth_rank(effects_depth(best[3])):
                    best = (text, cut, source, found)
                if effects_depth(found) == "ids":
                    break
            if effects_depth(best[3]) == "ids":
                break
    return Exclusion(label, tuple(t.name for t in tokenizers), first_text, first_cut, first, *best, searched)
