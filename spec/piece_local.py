"""The piece-local family: tokenizers whose model encodes each pre-token alone, cut at separator characters.

Every model the reference ships (BPE, WordPiece, Unigram, WordLevel) is applied to one pre-token at a time: the
library calls the model's `tokenize` once per piece, and no model carries anything from one piece to the next
(WordPiece's greedy longest match, its continuing-subword prefix and its `max_input_chars_per_word` limit are per
word; Unigram's Viterbi lattice and byte fallback are per piece; BPE's merges, end-of-word suffix and
continuing-subword prefix are per word). So a cut is exact wherever the stages before the model are proved to cut
the text into the same pieces as the two sides do. This module names the characters at which that is proved.

Proposition (separator cut). Let T be an admitted piece-local tokenizer and s one of its separators
(`PieceLocalRules.separators`). For a text S and 0 < b < len(S) with S[b] == s and b strictly inside no
occurrence of an added-token string (the guard, `spec.guard`):
    ref(S) == ref(S[:b]) + ref(S[b:])        (ref: the reference's encode, no post-processing)
and so for any increasing set of such cuts, with the special-token rule's cuts (`spec.special_cut`, where the
premise `special_edges` holds) among them, the chunks encoded by T itself concatenate to the whole encode.

Premises, each a predicate on the file's stages (`judge`, `separator_reason`); a candidate that fails one is not a
separator, and a file with no separator is refused (`piece_local_no_separator:<first reason>`). Each has a broken
variant that skips it (`SEPARATOR_SETS`, the controls cut.separator_ignores_normalizer,
cut.separator_ignores_pre_tokenizer and cut.piece_special_edges_ignored):
- (the guard, condition 1) b strictly inside no occurrence of an added-token string: then no occurrence spans b,
  and the reference's scan of S[b:] selects exactly S's occurrences after b (scan locality, `spec.special_cut`);
  added tokens matched after normalization are refused under a normalizer that changes text.
- S2 normalizer: each stage maps s to one ASCII character s' and cannot join anything across it:
  - NFC, NFD, NFKC, NFKD: s' is ASCII, a starter that no Unicode composition takes as its second element and
    that canonical reordering never crosses; checked per code point against the reference for every candidate
    (`properties/test_piece_local_exhaustive.py`: for all c, N(c + s) == N(c) + N(s));
  - Lowercase, Nmt, StripAccents, BertNormalizer: character by character in the reference (clean_text,
    handle_chinese_chars and lowercase per character; strip_accents is NFD, as above, then a per-character
    filter); the same per-code-point check, and the final-sigma context (the reference lowercases U+03A3 to
    U+03C3 wherever it stands) is tested;
  - Replace with a String pattern p: s' not in p (a match holding s' is the only one that could span b);
  - refused as a stage (`piece_local_normalizer:<stage>`): Precompiled (SentencePiece's charsmap works on
    grapheme clusters by longest match: not parsed here), Replace with a Regex, Strip (it acts at the chunk's
    ends), Prepend (each chunk would get a prefix), ByteLevel.
- S3 pre-tokenizer: some stage k splits before s' whatever precedes it ("hard"): WhitespaceSplit, Whitespace
  (s' whitespace, removed), BertPreTokenizer (whitespace removed, punctuation isolated), Punctuation with
  behaviour isolated / removed / merged_with_next, CharDelimiterSplit on s', Split on the String s' (not
  inverted; isolated / removed / merged_with_next), Metaspace with split on when s' is a space; every stage
  before k decides its splits from single characters or from String matches that cannot hold s' (Whitespace,
  WhitespaceSplit, BertPreTokenizer, Punctuation, Digits, CharDelimiterSplit, Split on a String without s'),
  and keeps s' as it is; after k any stage may follow (the library applies it to each piece alone), except a
  Metaspace with prepend_scheme "first" when stage k keeps s' in a piece (that piece would start a chunk at
  offset 0 and get a prefix the whole does not give it).
- S4 model: BPE (no dropout; any suffix or prefix), WordPiece, Unigram or WordLevel, whose encodes are not
  vacuous (`spec.vacuity`).
- special_edges: the special-token rule's cuts are exact here unless a Metaspace has prepend_scheme "first"
  (the stretch after an added token would start a chunk at offset 0 and get the prefix).

Argument. (1) By the guard the added-token scan of S[b:] selects exactly S's occurrences after b, and those before b
are S[:b]'s: the stretches of S are those of the sides with the stretch holding b cut at b. (2) By S2 the
normalized stretch is N(Z1) + N(Z2), with N(Z2) starting with s'. (3) By S3 stage k puts a piece boundary before
s' in the whole stretch, as the chunk's start is one; the stages before k decide every other boundary from the
same characters on both sides, so the pieces of the whole stretch are the pieces of the two sides. (4) By S4 each
piece is encoded alone. (5) Post-processing (with the file's truncation and padding, in the reference's order) is
applied once to the assembled sequence (`spec.reference.post_process`).
"""

from __future__ import annotations

import hashlib
import json
import string
from dataclasses import dataclass
from functools import lru_cache

from delta_suite.frozen.loader import FrozenTokenizer, loaded_stages
from tokenizers import Tokenizer

KIND = "piece_local"
FAMILY_PREFIX = "piece-local:"
ACCEPTED_SEPARATOR = "accepted:separator"
MODELS = ("BPE", "WordPiece", "Unigram", "WordLevel")
WHITESPACE = " \t\n\r\x0b\x0c"
PUNCTUATION = string.punctuation
CANDIDATES = WHITESPACE + PUNCTUATION  # ASCII: stable in every Unicode version (no decomposition, ccc 0)
NORMALIZATION_FORMS = ("NFC", "NFD", "NFKC", "NFKD")
COMPOSING = ("NFC", "NFKC")
# the ASCII candidates that begin a canonical composition: "<", "=" and ">" with U+0338 make U+226E, U+2260 and
# U+226F, so under NFC or NFKC a chunk starting "=\u0338" would start with a character the pre-tokenizer does not
# split before (`properties/test_piece_local.py` measures that this is every such candidate, per code point)
COMPOSES_WITH_NEXT = frozenset("<=>")
CHARACTER_STAGES = ("Lowercase", "Nmt", "StripAccents", "BertNormalizer")
REFUSED_NORMALIZERS = ("Precompiled", "Strip", "Prepend", "ByteLevel")
SPLITTING = ("isolated", "removed", "mergedwithnext")
NORMALIZER, PRE_TOKENIZER, BOTH = "normalizer", "pre_tokenizer", "both"  # the premises a refused candidate fails
SEPARATOR_SETS = ("proved", "ignore_normalizer", "ignore_pre_tokenizer")  # all but the first: broken variants


@dataclass(frozen=True)
class PieceLocalRules:
    """What the separator rule reads for one admitted file: its separators (raw characters), each refused
    candidate with the premise it fails (`NORMALIZER` or `PRE_TOKENIZER`) and why, whether the special-token
    rule's cuts are exact (`special_edges`), and the family name."""

    separators: frozenset[str]
    refused: tuple[tuple[str, str, str], ...]
    special_edges: bool
    family: str
    model: str

    def chosen(self, which: str = "proved") -> frozenset[str]:
        """The characters a cut may stand before: the separators, plus, under a broken variant
        ("ignore_normalizer", "ignore_pre_tokenizer"), the candidates refused only by that premise."""
        if which == "proved":
            return self.separators
        skipped = NORMALIZER if which == "ignore_normalizer" else PRE_TOKENIZER
        return self.separators | {s for s, premise, _ in self.refused if premise == skipped}

    def is_separator(self, ch: str, which: str = "proved") -> bool:
        """Whether a cut before `ch` is accepted (`chosen`)."""
        return ch in self.chosen(which)


def _flatten(section: dict | None, key: str) -> list[dict]:
    if section is None:
        return []
    if section.get("type") == "Sequence":
        return [s for inner in section.get(key) or [] for s in _flatten(inner, key)]
    return [section]


def is_piece_local_candidate(config: dict) -> bool:
    """A file the family may judge: a model of `MODELS`, no ByteLevel stage anywhere (that is the byte-level
    family's)."""
    model = (config.get("model") or {}).get("type")
    stages = _flatten(config.get("normalizer"), "normalizers") + _flatten(config.get("pre_tokenizer"),
                                                                           "pretokenizers")
    return model in MODELS and not any(s.get("type") == "ByteLevel" for s in stages)


def _pattern(stage: dict) -> tuple[str, str]:
    pattern = stage.get("pattern") or {}
    if "String" in pattern:
        return "String", str(pattern["String"])
    return "Regex", str(pattern.get("Regex", ""))


def normalizer_refusal(normalizer: dict | None) -> str | None:
    """The first normalizer stage the family does not admit (`piece_local_normalizer:<stage>`), else None."""
    for stage in _flatten(normalizer, "normalizers"):
        kind = stage.get("type")
        if kind == "Replace" and _pattern(stage)[0] == "Regex":
            return "piece_local_normalizer:Replace(Regex)"
        if kind in NORMALIZATION_FORMS or kind in CHARACTER_STAGES or kind == "Replace":
            continue
        return f"piece_local_normalizer:{kind}"
    return None


@lru_cache(maxsize=256)
def _stage_object(stage_json: str) -> Tokenizer:
    """A shell tokenizer whose normalizer is one stage (the reference's own object)."""
    return Tokenizer.from_str(json.dumps({"version": "1.0", "model": {"type": "WordLevel", "vocab": {},
                                                                      "unk_token": "[UNK]"},
                                          "normalizer": json.loads(stage_json)}))


def stage_image(stage: dict, text: str) -> str:
    """The reference's output of one normalizer stage on `text`."""
    return _stage_object(json.dumps(stage, sort_keys=True)).normalizer.normalize_str(text)


def normalized_separator(normalizer: dict | None, s: str) -> tuple[str | None, str]:
    """S2 for candidate `s`: (s', "") with s' its image through every stage, or (None, reason)."""
    current = s
    for stage in _flatten(normalizer, "normalizers"):
        if stage.get("type") == "Replace" and current in _pattern(stage)[1]:
            return None, f"replace_pattern_holds:{_name(current)}"
        if stage.get("type") in COMPOSING and current in COMPOSES_WITH_NEXT:
            return None, f"composes_with_next:{_name(current)}:{stage.get('type')}"
        image = stage_image(stage, current)
        if len(image) != 1 or not image.isascii():
            return None, f"normalizer_changes:{_name(current)}->{image!r}:{stage.get('type')}"
        current = image
    return current, ""


def _name(ch: str) -> str:
    return f"U+{ord(ch):04X}"


def _behaviour(stage: dict) -> str:
    return str(stage.get("behavior", "isolated")).lower().replace("_", "")


def _hard(stage: dict, t: str) -> tuple[bool, bool] | None:
    """Whether the stage splits before `t` whatever precedes it: (hard, removes t), or None when the stage is not
    local with respect to `t` (it could decide a split from characters on both sides of it, or change it)."""
    kind = stage.get("type")
    if kind in ("WhitespaceSplit", "Whitespace"):
        return (True, True) if t in WHITESPACE else (False, False)
    if kind == "BertPreTokenizer":
        if t in WHITESPACE:
            return True, True
        return (True, False) if t in PUNCTUATION else (False, False)
    if kind == "Punctuation":
        if t in PUNCTUATION and _behaviour(stage) in SPLITTING:
            return True, _behaviour(stage) == "removed"
        return False, False
    if kind == "Digits":
        return False, False
    if kind == "CharDelimiterSplit":
        return (True, True) if stage.get("delimiter") == t else (False, False)
    if kind == "Split":
        which, pattern = _pattern(stage)
        if which != "String":
            return None
        if t not in pattern:
            return False, False
        if pattern == t and not stage.get("invert") and _behaviour(stage) in SPLITTING:
            return True, _behaviour(stage) == "removed"
        return None
    if kind == "Metaspace":
        if t == " " and stage.get("split", True):
            return True, False
        return None
    return None


def first_hard_stage(pre_tokenizer: dict | None, t: str) -> dict | None:
    """The stage of S3 for the normalized separator `t`: the first that splits before it whatever precedes it."""
    for stage in _flatten(pre_tokenizer, "pretokenizers"):
        decided = _hard(stage, t)
        if decided is None:
            return None
        if decided[0]:
            return stage
    return None


def normalizer_stages(normalizer: dict | None) -> list[dict]:
    """The normalizer's stages in order, Sequences flattened."""
    return _flatten(normalizer, "normalizers")


def pre_tokenizer_reason(pre_tokenizer: dict | None, t: str) -> str:
    """S3 for the normalized separator `t`: "" when it holds, else the reason."""
    stages = _flatten(pre_tokenizer, "pretokenizers")
    for k, stage in enumerate(stages):
        decided = _hard(stage, t)
        if decided is None:
            return f"stage_not_local:{stage.get('type')}:{_name(t)}"
        hard, removes = decided
        if not hard:
            continue
        for later in stages[k + 1:]:
            if later.get("type") == "Metaspace" and later.get("prepend_scheme") == "first" and not removes:
                return f"metaspace_first_after_kept_separator:{_name(t)}"
        return ""
    return f"no_stage_splits_at:{_name(t)}"


def separator_reason(normalizer: dict | None, pre_tokenizer: dict | None, s: str) -> tuple[str, str]:
    """Why candidate `s` is not a separator, as (premise, reason): S2 (`NORMALIZER`, or `BOTH` when S3 would fail
    for s unchanged too) then S3 (`PRE_TOKENIZER`); ("", "") when it is one."""
    t, reason = normalized_separator(normalizer, s)
    if t is None:  # S2 fails; the premise named is S2 alone only when S3 would hold for s as it is
        return (NORMALIZER if not pre_tokenizer_reason(pre_tokenizer, s) else BOTH), reason
    reason = pre_tokenizer_reason(pre_tokenizer, t)
    return (PRE_TOKENIZER, reason) if reason else ("", "")


def special_edges(pre_tokenizer: dict | None) -> bool:
    """Whether the special-token rule's cuts are exact: no Metaspace with prepend_scheme "first"."""
    return not any(s.get("type") == "Metaspace" and s.get("prepend_scheme") == "first"
                   for s in _flatten(pre_tokenizer, "pretokenizers"))


def family_name(model: str, normalizer: dict | None, pre_tokenizer: dict | None, separators: frozenset[str]) -> str:
    """`piece-local:<model>:<12 hex>`, the hex a digest of the stages and the separators."""
    blob = json.dumps([normalizer, pre_tokenizer, sorted(separators)], sort_keys=True).encode()
    return f"{FAMILY_PREFIX}{model.lower()}:{hashlib.sha256(blob).hexdigest()[:12]}"


def judge(config: dict, added_tokens: list[dict]) -> tuple[str | None, PieceLocalRules | None]:
    """(refusal, None) or (None, rules) for a candidate file (`is_piece_local_candidate`), its sections as the
    reference loads them."""
    model = config.get("model") or {}
    if model.get("type") == "BPE" and model.get("dropout") not in (None, 0, 0.0):
        return "bpe_dropout", None
    normalizer, pre_tokenizer = loaded_stages(config.get("normalizer"), config.get("pre_tokenizer"))
    refused = normalizer_refusal(normalizer)
    if refused is not None:
        return refused, None
    if normalizer is not None and _flatten(normalizer, "normalizers"):
        for tok in added_tokens:
            if tok.get("normalized"):
                return f"normalized_added_token_under_normalizer:{tok.get('content')}", None
    reasons = [(s, *separator_reason(normalizer, pre_tokenizer, s)) for s in CANDIDATES]
    separators = frozenset(s for s, premise, _ in reasons if not premise)
    refused_candidates = tuple(r for r in reasons if r[1])
    if not separators:
        return f"piece_local_no_separator:{refused_candidates[0][2]}", None
    name = family_name(str(model.get("type")), normalizer, pre_tokenizer, separators)
    return None, PieceLocalRules(separators, refused_candidates, special_edges(pre_tokenizer), name,
                                 str(model.get("type")))


@lru_cache(maxsize=64)
def piece_local_rules(tok: FrozenTokenizer) -> PieceLocalRules:
    """The rules of an admitted piece-local tokenizer (ValueError for any other)."""
    inputs = tok.admission_inputs
    config = {"model": {**inputs.model, "type": inputs.model_type, "dropout": inputs.dropout},
              "normalizer": inputs.normalizer, "pre_tokenizer": inputs.pre_tokenizer}
    refused, rules = judge(config, list(inputs.added_tokens))
    if rules is None:
        raise ValueError(f"{tok.name} is not a piece-local tokenizer: {refused}")
    return rules


def separator_verdict(tok: FrozenTokenizer, text: str, b: int, which: str = "proved") -> str:
    """The separator condition at b: ACCEPTED_SEPARATOR, or `separator_refused:U+XXXX` (the character at b).
    `which` other than "proved" is a broken variant for the controls (`PieceLocalRules.chosen`)."""
    ch = text[b]
    if piece_local_rules(tok).is_separator(ch, which):
        return ACCEPTED_SEPARATOR
    return f"separator_refused:{_name(ch)}"
