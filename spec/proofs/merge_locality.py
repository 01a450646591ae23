"""Merge locality: BPE over one whole word never merges across a pair of characters that no merge joins.

This is the lemma the cut proposition for BPE without a splitting pre-tokenizer (the SentencePiece-style files:
Llama 2, Mistral v1, Gemma, Gemini) rests on. It is stated and checked here on the model alone; which files it
admits, and how the normalizers and added tokens around the model compose with it, is decided elsewhere.

Proposition. Let M be a BPE model with the reference's semantics and w a word (the normalized text of one
pre-token), and let J = {(a[-1], b[0]) : (a, b) a merge of M} be the merges' junction pairs. For every 0 < b < |w|
with (w[b-1], w[b]) not in J (and, under P4, not two characters that both become the unknown token):

    BPE_M(w) = BPE_M(w[:b]) + BPE_M(w[b:])

Premises (each a predicate of `premises_of`):
- P1 `no_dropout`: dropout absent or 0 (with dropout the merges are random).
- P2 `no_ignore_merges`: `ignore_merges` off. With it on, a side that is itself a vocabulary token is returned
  whole while the whole word is merged pair by pair (`planted_variant("ignore_merges")` finds such a word).
- P3 `merges_avoid_special_symbols`: no merge takes or yields a byte-fallback token (`<0xXX>`) or the unknown
  token. The symbols of a character outside the vocabulary then never merge, and J, computed from the merges'
  strings, names every pair of characters a merge can join.
- P4 `unknown_pairs_not_free` (a rule of the premise, not a refusal): with `fuse_unk` on, two adjacent characters
  that both become the unknown token fuse into one symbol, so such a pair is never free (`free_pairs` excludes it).
- P5 `byte_fallback_complete`: with `byte_fallback` on, all 256 byte tokens exist; otherwise the reference emits a
  pending unknown token after the next character's byte tokens, a reordering across the cut.
- P6 `no_affixes`: no `continuing_subword_prefix` and no `end_of_word_suffix` (they make a character's symbol
  depend on its place in the word).

Argument. The reference builds the initial symbols character by character (a vocabulary character, else its byte
tokens under byte fallback, else the unknown token), so under P4 and P5 the symbols of w are those of w[:b]
followed by those of w[b:]. It then repeatedly merges the adjacent pair of least (rank, position) that is a merge
until none is (the queue in `Word::merge_all` skips stale entries, so this is what it computes). Suppose some merge
joins a symbol ending at b-1 with one starting at b, and take the first: before it no merge crossed b, so the left
symbol's string ends with w[b-1] and the right one's starts with w[b] (P3: neither is a byte or unknown token),
and (w[b-1], w[b]) is in J, against the hypothesis. So the sequence stays L ++ R at every step. The candidates are
then those inside L and those inside R; the global least is the least of its own side, and a merge on one side
changes no pair of the other. By induction on the steps, the whole's merges restricted to each side are exactly
that side's own merges in its own order, and the whole stops when both sides stop. Hence the two encodings
concatenate. P1, P2 and P6 keep the model a function of the symbols alone.

Machine check (`exhaustive_check`), with the reference library as the oracle: every merge list of up to
`max_merges` merges over an alphabet (each merge an ordered pair of the tokens built so far, not yet a merge), and
every word of up to `max_length` characters over the alphabet and the characters outside it, each free cut
compared with the whole encode, under byte fallback, the plain unknown token and `fuse_unk`. The gate runs it over
{a, b} with "é" outside the vocabulary, up to 3 merges and 6 characters (`GATE_BOUND`), and shows that each
premise's planted violation (`planted_variant`) is caught. It reaches what it enumerates and no further; the
argument above covers the rest.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass, field

from tokenizers import Tokenizer

UNK = "<unk>"
BYTE_TOKENS = tuple(f"<0x{b:02X}>" for b in range(256))
MODES = ("byte_fallback", "unk", "fuse_unk")
PLANTS = ("junction_forgotten", "ignore_merges", "unknown_pair_free", "merge_takes_byte_tokens")

Merge = tuple[str, str]


@dataclass(frozen=True)
class Bound:
    """What one exhaustive run enumerates."""
    alphabet: tuple[str, ...] = ("a", "b")
    outside: tuple[str, ...] = ("é",)  # characters outside the vocabulary (two UTF-8 bytes each for "é")
    max_merges: int = 3
    max_length: int = 6


GATE_BOUND = Bound()


@dataclass
class Outcome:
    """What a run compared: vocabularies, free cuts checked, cuts whose halves did not concatenate to the whole,
    and the first such cut (merges, word, offset, whole, left, right)."""
    mode: str
    plant: str | None
    vocabularies: int = 0
    cuts: int = 0
    failures: int = 0
    first: tuple | None = None
    words: int = 0
    notes: list[str] = field(default_factory=list)


def junction_pairs(merges: list[Merge]) -> set[tuple[str, str]]:
    """J: the last character of each merge's left side with the first of its right side."""
    return {(a[-1], b[0]) for a, b in merges if a and b}


def inner_pairs(vocabulary: dict[str, int] | list[str]) -> set[tuple[str, str]]:
    """V: the adjacent character pairs inside some vocabulary token. Every merge's result is a vocabulary token
    (the reference refuses to build a model otherwise), so J is inside V: a cut free by V is free by J."""
    return {(t[i], t[i + 1]) for t in vocabulary for i in range(len(t) - 1)}


def free_pairs_rule(merges: list[Merge], unknown: set[str], fuse_unk: bool) -> set[tuple[str, str]]:
    """The pairs that are NOT free: J, and under `fuse_unk` every pair of two unknown characters (P4)."""
    joined = junction_pairs(merges)
    if fuse_unk:
        joined |= {(x, y) for x in unknown for y in unknown}
    return joined


def premises_of(model: dict) -> dict[str, bool]:
    """Each premise of the lemma on a tokenizer.json model section (a BPE model)."""
    vocab = model.get("vocab") or {}
    merges = [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) for m in model.get("merges") or []]
    special = {UNK if model.get("unk_token") is None else str(model["unk_token"]), *BYTE_TOKENS}
    return {
        "no_dropout": not model.get("dropout"),
        "no_ignore_merges": not model.get("ignore_merges", False),
        "merges_avoid_special_symbols": not any(a in special or b in special or a + b in special
                                                for a, b in merges),
        "byte_fallback_complete": not model.get("byte_fallback") or all(t in vocab for t in BYTE_TOKENS),
        "no_affixes": not model.get("continuing_subword_prefix") and not model.get("end_of_word_suffix"),
    }


def reference_model(alphabet: tuple[str, ...], merges: list[Merge], mode: str, *,
                    ignore_merges: bool = False) -> Tokenizer:
    """A reference tokenizer with no normalizer and no pre-tokenizer (the whole text is one word)."""
    vocab: dict[str, int] = {}
    if mode == "byte_fallback":
        for token in BYTE_TOKENS:
            vocab[token] = len(vocab)
    vocab[UNK] = len(vocab)
    for c in alphabet:
        vocab.setdefault(c, len(vocab))
    for a, b in merges:
        vocab.setdefault(a, len(vocab))
        vocab.setdefault(b, len(vocab))
        vocab.setdefault(a + b, len(vocab))
    model = {"type": "BPE", "dropout": None, "unk_token": UNK, "continuing_subword_prefix": None,
             "end_of_word_suffix": None, "fuse_unk": mode == "fuse_unk", "byte_fallback": mode == "byte_fallback",
             "ignore_merges": ignore_merges, "vocab": vocab, "merges": [[a, b] for a, b in merges]}
    return Tokenizer.from_str(json.dumps({"version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
                                          "normalizer": None, "pre_tokenizer": None, "post_processor": None,
                                          "decoder": None, "model": model}))


def merge_lists(alphabet: tuple[str, ...], most: int) -> Iterator[list[Merge]]:
    """Every merge list of up to `most` merges: each an ordered pair of tokens built so far, not yet a merge."""
    def grow(tokens: list[str], merges: list[Merge]) -> Iterator[list[Merge]]:
        yield merges
        if len(merges) == most:
            return
        for a in tokens:
            for b in tokens:
                if (a, b) not in merges:
                    yield from grow(tokens if a + b in tokens else [*tokens, a + b], [*merges, (a, b)])
    yield from grow(list(alphabet), [])


def _words(bound: Bound) -> list[str]:
    chars = [*bound.alphabet, *bound.outside]
    return ["".join(p) for n in range(1, bound.max_length + 1) for p in itertools.product(chars, repeat=n)]


def exhaustive_check(bound: Bound = GATE_BOUND, mode: str = "byte_fallback", plant: str | None = None) -> Outcome:
    """Every free cut of every word under every merge list of the bound, compared with the reference's whole
    encode. `plant` runs a violation of one premise instead (`planted_variant`): it must find failures."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}")
    words = _words(bound)
    out = Outcome(mode, plant, words=len(words))
    unknown = set(bound.outside)
    for merges in merge_lists(bound.alphabet, bound.max_merges):
        if merges and merges[0][0] != bound.alphabet[0] and len(bound.alphabet) == 2:
            continue  # the two letters are interchangeable: the first merge may start with the first letter
        used = list(merges)
        if plant == "merge_takes_byte_tokens":
            if mode != "byte_fallback" or not merges:
                continue
            last = "\u00e9".encode()[-1]
            used = [*merges, (f"<0x{last:02X}>", bound.alphabet[0])]  # "é"'s last byte joins a following letter
        tok = reference_model(bound.alphabet, used, mode, ignore_merges=plant == "ignore_merges")
        batch = tok.encode_batch_fast(words, add_special_tokens=False)
        encoded = {w: e.ids for w, e in zip(words, batch, strict=True)}
        not_free = free_pairs_rule(merges, unknown, fuse_unk=mode == "fuse_unk" and plant != "unknown_pair_free")
        if plant == "junction_forgotten" and merges:
            not_free -= junction_pairs(merges[-1:]) - junction_pairs(merges[:-1])
        out.vocabularies += 1
        for w in words:
            for b in range(1, len(w)):
                if (w[b - 1], w[b]) in not_free:
                    continue
                out.cuts += 1
                if encoded[w[:b]] + encoded[w[b:]] != encoded[w]:
                    out.failures += 1
                    if out.first is None:
                        out.first = (merges, w, b, encoded[w], encoded[w[:b]], encoded[w[b:]])
    return out


def planted_variant(plant: str, bound: Bound = GATE_BOUND) -> Outcome:
    """One premise broken, in the mode where it applies: J missing the last merge's junction, `ignore_merges` on,
    two unknown characters counted free under `fuse_unk`, a merge taking a byte-fallback token."""
    if plant not in PLANTS:
        raise ValueError(f"unknown plant {plant!r}")
    mode = {"unknown_pair_free": "fuse_unk", "merge_takes_byte_tokens": "byte_fallback"}.get(plant, "byte_fallback")
    return exhaustive_check(bound, mode, plant)
