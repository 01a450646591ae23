"""The free-pair cut: where a whole-word BPE tokenizer (`spec.whole_word`) can be cut, and how the later chunks
must be encoded so that the chunks' IDs, concatenated, are the whole encode's.

Proposition. Let T be an admitted whole-word tokenizer, S a text, and 0 < b < len(S) with
1. (the guard, `spec.guard`) no occurrence of any added-token string strictly contains b;
2. b is not an edge of a selected occurrence (those are the special-token rule's, `spec.special_cut`);
3. the normalized pair (m(S[b-1]), m(S[b])), where m turns a space into the family's replacement character, stands
   next to each other inside no vocabulary token (`WholeWordRules.inner_pairs`: byte-fallback tokens left out);
4. and, when the model fuses unknown characters without byte fallback, not both characters are unknown.
Then, with `encode_from(T, S, lo, hi)` the chunk encoder defined below,
  encode_from(T, S, 0, n) == encode_from(T, S, 0, b) + encode_from(T, S, b, n),
and for any increasing set of cuts each accepted by this rule or the special-token rule, the chunks encoded by
`encode_from` from their own start concatenate to the whole encode (`chunked_ids`). encode_from(T, S, 0, n) is the
reference's whole encode of S (no post-processing), so this is the cut contract.

The chunk encoder. A chunk that starts the text is encoded by T itself ("full"). A later chunk must not be given
a second prefix, and must still give the stretches after its added tokens the prefix they get in the whole:
- scheme "none": full (nothing is prefixed anywhere);
- scheme "first": the copy of T with Metaspace's prepend_scheme "never" ("mid"), for every later chunk, including
  one that starts at an added token's edge (the whole encode prefixes only the stretch at offset 0);
- scheme "per_stretch": full when the chunk starts at an edge of a selected occurrence (a stretch starts there);
  otherwise mid up to the end of the chunk's first selected occurrence and full after it (`chunk_pieces`),
  since every later stretch starts after an added token and gets its own prefix. mid is T with the Prepend
  normalizer removed, or with Metaspace's prepend_scheme "never"; every other stage is kept as it is
  (`chunk_encoder`).
Measured before this module was written (llama2's file, 1,783 cuts on random texts with added tokens): encoding
every later chunk with mid alone, as a copy "without the Prepend" would, differs on 989; with full alone on every
free cut.

Argument.
1. Scan locality (`spec.special_cut`, clear positions): by 1 and 2 the stretches of S[lo:hi] for accepted cuts lo
   and hi are those of S inside [lo, hi), except that a stretch holding a free cut is cut there in two.
2. Normalization acts character by character (Replace " " -> R) plus the prefix at a stretch's start. A stretch Z
   cut at b into Z1 and Z2 keeps Z's prefix decision in Z1: it is made at Z's start (Prepend: always;
   Metaspace "always": whether Z starts with R; "first": whether Z starts at offset 0, and only the first chunk
   holds offset 0). Z2 gets no prefix from mid, as in the whole. So the normalized Z is the normalized Z1 followed
   by m(Z2), and whole stretches inside a chunk are normalized as in the whole (mid only where the whole gives no
   prefix: scheme "first" after offset 0, or the head of a per-stretch chunk before its first stretch start).
3. Pre-tokenization: with no pre-tokenizer or an inert Split there is one word per stretch; with Metaspace split,
   the pieces of Z are those of Z1 and Z2 with the piece holding b cut at b (if m(S[b]) is R, b is already a
   piece boundary).
4. The merge-locality lemma (`spec.proofs.merge_locality`, proved under the premises M1-M4 of `spec.whole_word`)
   applied to the word holding b at b, by 3 and 4: its BPE is the BPE of the two sides, concatenated.
5. The post-processor's tokens (BOS) are not part of any chunk: `spec.reference.post_process` adds them once to
   the assembled sequence.
"""

from __future__ import annotations

import json
import pickle
import weakref
from itertools import chain

from delta_suite.frozen.loader import FrozenTokenizer, loaded_stages
from delta_suite.spec.admission import WHOLE_WORD, admission_of
from delta_suite.spec.reference import library_ids_batch
from delta_suite.spec.special_cut import at_selected_edge, two_stage_scan
from delta_suite.spec.whole_word import WholeWordRules, whole_word_rules
from tokenizers import Tokenizer

ACCEPTED_FREE_PAIR = "accepted:free_pair"
FREE_PAIR_TABLES = ("vocabulary", "forgets_first_merge")  # the second: a broken variant (controls only)
CHUNK_PREFIXES = ("scheme", "full")  # "full": every chunk encoded by T itself, a broken variant (controls only)
FULL, MID = "full", "mid"


def free_pair_verdict(tok: FrozenTokenizer, text: str, b: int, table: str = "vocabulary", offset: int = 0) -> str:
    """Conditions 3 and 4 at b: ACCEPTED_FREE_PAIR, or the refusing reason (`WholeWordRules.pair_refusal`).
    `table` and `offset` are the specification at their defaults; "forgets_first_merge" (the table misses the
    pair the first merge joins) and offset 1 (the pair one character to the right is judged) are broken
    variants for the controls."""
    rules = whole_word_rules(tok)
    at = b + offset
    if at >= len(text):
        return "out_of_range"
    refusal = rules.pair_refusal(text[at - 1], text[at])
    if refusal is not None and table == "forgets_first_merge" and refusal == forgotten_pair(rules):
        return ACCEPTED_FREE_PAIR
    return refusal or ACCEPTED_FREE_PAIR


def forgotten_pair(rules: WholeWordRules) -> str | None:
    """The refusal the "forgets_first_merge" broken table drops: the first merge's junction pair."""
    first = rules.first_merge
    if first is None:
        return None
    left, right = first
    return f"pair_joined:U+{ord(left[-1]):04X},U+{ord(right[0]):04X}"


_ENCODERS: weakref.WeakKeyDictionary[FrozenTokenizer, Tokenizer] = weakref.WeakKeyDictionary()


def mid_sections(normalizer: dict | None, pre_tokenizer: dict | None) -> tuple[dict | None, dict | None]:
    """The loaded sections with the prefix stage changed and nothing else: a Prepend normalizer removed, a
    Metaspace's prepend_scheme set to "never" (its replacement and split kept)."""
    def drop_prepend(section: dict | None) -> dict | None:
        if section is None or section.get("type") == "Prepend":
            return None
        if section.get("type") == "Sequence":
            return {**section, "normalizers": [s for s in section["normalizers"] if s.get("type") != "Prepend"]}
        return section

    def never(section: dict | None) -> dict | None:
        if section is None:
            return None
        if section.get("type") == "Metaspace":
            return {**section, "prepend_scheme": "never"}
        if section.get("type") == "Sequence":
            return {**section, "pretokenizers": [never(s) for s in section["pretokenizers"]]}
        return section

    return drop_prepend(normalizer), never(pre_tokenizer)


def chunk_encoder(tok: FrozenTokenizer) -> Tokenizer:
    """mid: a copy of the reference object with `mid_sections` as its normalizer and pre-tokenizer (the reference
    object itself for scheme "none"), built once per tokenizer; the reference object is left unchanged."""
    if whole_word_rules(tok).shape.prefix == "none":
        return tok.tokenizer
    built = _ENCODERS.get(tok)
    if built is None:
        inputs = tok.admission_inputs
        normalizer, pre_tokenizer = mid_sections(*loaded_stages(inputs.normalizer, inputs.pre_tokenizer))
        shell = Tokenizer.from_str(json.dumps({"version": "1.0", "model": {"type": "BPE", "vocab": {}, "merges": []},
                                               "normalizer": normalizer, "pre_tokenizer": pre_tokenizer}))
        built = pickle.loads(pickle.dumps(tok.tokenizer))
        built.normalizer = shell.normalizer
        built.pre_tokenizer = shell.pre_tokenizer
        built.encode_special_tokens = tok.tokenizer.encode_special_tokens
        _ENCODERS[tok] = built
    return built


def chunk_pieces(tok: FrozenTokenizer, text: str, lo: int, hi: int,
                 prefix: str = "scheme") -> list[tuple[str, int, int]]:
    """How `encode_from` encodes text[lo:hi] (lo 0 or an accepted cut, hi an accepted cut or len(text)): a list
    of (FULL or MID, start, end) pieces covering [lo, hi) in order. `prefix` "full" is a broken variant.
    A piece-local tokenizer (`spec.piece_local`) encodes every chunk by itself: one FULL piece."""
    if admission_of(tok).kind != WHOLE_WORD:
        return [(FULL, lo, hi)]
    scheme = whole_word_rules(tok).shape.prefix
    if lo == 0 or scheme == "none" or prefix == "full":
        return [(FULL, lo, hi)]
    if scheme == "first":
        return [(MID, lo, hi)]
    if at_selected_edge(tok, text, lo) is not None:
        return [(FULL, lo, hi)]
    selected = two_stage_scan(tok, text[lo:hi])  # lo is clear, so this is the whole text's selection there
    if not selected:
        return [(MID, lo, hi)]
    first_end = lo + selected[0][1]
    return [(MID, lo, first_end)] + ([(FULL, first_end, hi)] if first_end < hi else [])


def pieces_ids(tok: FrozenTokenizer, text: str, pieces: list[tuple[str, int, int]],
               strings: list[str] | None = None) -> list[list[int]]:
    """The IDs of each piece (text[start:end], or strings[i] when given), full pieces in one batch of the reference
    object, mid pieces in one batch of the chunk encoder (each batch parallel in the library)."""
    out: list[list[int]] = [[] for _ in pieces]
    for which, encoder in ((FULL, lambda: tok.tokenizer), (MID, lambda: chunk_encoder(tok))):
        idx = [i for i, p in enumerate(pieces) if p[0] == which]
        if idx:
            rows = library_ids_batch(encoder(), [strings[i] if strings is not None else
                                                 text[pieces[i][1]:pieces[i][2]] for i in idx])
            for i, row in zip(idx, rows, strict=True):
                out[i] = row
    return out


def encode_from(tok: FrozenTokenizer, text: str, lo: int, hi: int, prefix: str = "scheme") -> list[int]:
    """The IDs of text[lo:hi] as a chunk of `text` (see the module docstring)."""
    return list(chain.from_iterable(pieces_ids(tok, text, chunk_pieces(tok, text, lo, hi, prefix))))


def chunked_ids(tok: FrozenTokenizer, text: str, cuts: list[int], prefix: str = "scheme") -> list[int]:
    """The chunks between `cuts` (increasing, each accepted), each encoded by `encode_from`, concatenated."""
    bounds = [0, *cuts, len(text)]
    pieces = list(chain.from_iterable(chunk_pieces(tok, text, lo, hi, prefix)
                                      for lo, hi in zip(bounds, bounds[1:], strict=False) if hi > lo))
    return list(chain.from_iterable(pieces_ids(tok, text, pieces)))


def chunked_ids_many(tok: FrozenTokenizer, jobs: list[tuple[str, list[int]]],
                     prefix: str = "scheme") -> list[list[int]]:
    """`chunked_ids` of each (text, cuts) job, with every piece of every job in one batch per encoder."""
    pieces: list[tuple[str, int, int]] = []  # (encoder, 0, 0): the strings are given apart
    strings: list[str] = []
    owner: list[int] = []
    for i, (text, cuts) in enumerate(jobs):
        bounds = [0, *cuts, len(text)]
        for lo, hi in zip(bounds, bounds[1:], strict=False):
            for which, a, z in chunk_pieces(tok, text, lo, hi, prefix) if hi > lo else ():
                pieces.append((which, 0, 0))
                strings.append(text[a:z])
                owner.append(i)
    rows = pieces_ids(tok, "", pieces, strings)
    out: list[list[int]] = [[] for _ in jobs]
    for i, row in zip(owner, rows, strict=True):
        out[i].extend(row)
    return out
