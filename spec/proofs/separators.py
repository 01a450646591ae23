"""The piece-local premises S2 and S3 (`spec.piece_local`) per code point against the reference, for one stage at a
time or for one file's own stages.

- `normal_form_check(stage, candidates)`: for a stage that composes or reorders (NFC, NFD, NFKC, NFKD, a Bert
  normalizer that strips accents), and each candidate s the stage maps to one character s', whether
  N(c + s) == N(c) + s' and N(s + c) == s' + N(c) for every code point c (one text holding every code point between
  two s, normalized whole by the reference, against the concatenation of each code point's own image), compared
  with what the premise (`normalized_separator` on that stage alone) claims: they must agree on every candidate.
- `character_stage_check(stage)`: a character stage (Lowercase, Nmt, StripAccents, a Bert normalizer that keeps
  accents) on all code points at once, and with a space, a tab, a newline and a full stop after each, equals the
  concatenation of its outputs one by one.
- `hard_stage_check(stage, separators)`: the pre-tokenizer stage splits before each separator after every code
  point (the pieces of the text holding every "c + s" are each c's pieces then s's).
- `file_checks(tok)`: the three above for an admitted piece-local file's own normalizer stages and the hard stage
  of each of its separators, as ledger-ready summaries (`SeparatorCheck`).
Each check runs in seconds per stage and candidate (about 2.2 million characters through the reference).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache

from delta_suite.frozen.loader import FrozenTokenizer, loaded_stages
from delta_suite.spec.piece_local import (
    CANDIDATES,
    NORMALIZATION_FORMS,
    first_hard_stage,
    normalized_separator,
    normalizer_stages,
    piece_local_rules,
    stage_image,
)
from tokenizers import Tokenizer

CODE_POINTS = tuple(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
CHARACTER_PROBES = " \t\n."
NORMALIZER_CHECK, PRE_TOKENIZER_CHECK = "piece_local.normalizer_code_points", "piece_local.pre_tokenizer_code_points"


@dataclass
class SeparatorCheck:
    """One check's summary: what it compared (code point and candidate pairs), what disagreed, and its details."""

    check: str
    stage: str
    comparisons: int = 0
    disagree: list[str] = field(default_factory=list)
    details: dict = field(default_factory=dict)

    @property
    def holds(self) -> bool:
        return self.comparisons > 0 and not self.disagree


def _shell(section: str, stage: dict) -> Tokenizer:
    return Tokenizer.from_str(json.dumps({"version": "1.0", "model": {"type": "WordLevel", "vocab": {},
                                                                      "unk_token": "[UNK]"}, section: stage}))


@lru_cache(maxsize=16)
def _singles(stage_json: str) -> tuple[str, ...]:
    normalizer = _shell("normalizer", json.loads(stage_json)).normalizer
    return tuple(normalizer.normalize_str(c) for c in CODE_POINTS)


def is_character_stage(stage: dict) -> bool:
    """A stage that acts character by character (Lowercase, Nmt, StripAccents, a Bert normalizer keeping accents);
    the others admitted compose or reorder (`normal_form_check`), or are a String Replace (no per-code-point
    question: a match holding s' is the only one that could span a cut)."""
    kind = stage.get("type")
    if kind == "BertNormalizer":
        strip = stage.get("strip_accents")
        return not (strip or (strip is None and stage.get("lowercase", True)))
    return kind in ("Lowercase", "Nmt", "StripAccents")


def normal_form_check(stage: dict, candidates: str = CANDIDATES) -> SeparatorCheck:
    """See the module docstring; candidates that the stage maps to more or less than one character are skipped
    (the premise refuses them before this question)."""
    key = json.dumps(stage, sort_keys=True)
    normalizer = _shell("normalizer", stage).normalizer
    singles = _singles(key)
    out = SeparatorCheck(NORMALIZER_CHECK, str(stage.get("type")))
    kept = 0
    for s in candidates:
        image = stage_image(stage, s)
        if len(image) != 1:
            continue
        holds = normalizer.normalize_str(s.join(CODE_POINTS) + s) == image.join(singles) + image
        claimed = normalized_separator(stage, s)[0] is not None
        kept += claimed
        out.comparisons += len(CODE_POINTS)
        if holds != claimed:
            out.disagree.append(f"U+{ord(s):04X}:{'holds' if holds else 'fails'}")
    out.details = {"stage": stage, "candidates": len(candidates), "kept": kept}
    return out


def character_stage_check(stage: dict) -> SeparatorCheck:
    """See the module docstring."""
    normalizer = _shell("normalizer", stage).normalizer
    singles = _singles(json.dumps(stage, sort_keys=True))
    out = SeparatorCheck(NORMALIZER_CHECK, str(stage.get("type")))
    checks = {"alone": normalizer.normalize_str("".join(CODE_POINTS)) == "".join(singles)}
    for s in CHARACTER_PROBES:
        checks[repr(s)] = normalizer.normalize_str(s.join(CODE_POINTS)) == stage_image(stage, s).join(singles)
    out.comparisons = len(checks) * len(CODE_POINTS)
    out.disagree = [k for k, ok in checks.items() if not ok]
    out.details = {"stage": stage, "character_stage": True}
    return out


def hard_stage_check(stage: dict, separators: str) -> SeparatorCheck:
    """See the module docstring. A Metaspace (hard for the space it turns into U+2581 with split on) is checked on
    every code point after a space and a letter: each piece is U+2581 + "x" + c."""
    pre = _shell("pre_tokenizer", stage).pre_tokenizer
    out = SeparatorCheck(PRE_TOKENIZER_CHECK, str(stage.get("type")))
    if stage.get("type") == "Metaspace":
        replacement = str(stage.get("replacement", "\u2581"))
        others = [c for c in CODE_POINTS if c not in (" ", replacement)]
        got = [p for p, _ in pre.pre_tokenize_str("x" + " x".join(others))]
        out.comparisons = len(others)
        out.disagree = [] if got == [replacement + "x" + c for c in others] else ["U+0020"]
        out.details = {"stage": stage, "separators": [" "]}
        return out
    singles = [[p for p, _ in pre.pre_tokenize_str(c)] for c in CODE_POINTS]
    for s in separators:
        tail = [p for p, _ in pre.pre_tokenize_str(s + "x")][:-1]  # the pieces s alone makes before a letter
        want = [p for pieces in singles for p in (*pieces, *tail)]
        out.comparisons += len(CODE_POINTS)
        if [p for p, _ in pre.pre_tokenize_str(s.join(CODE_POINTS) + s)] != want:
            out.disagree.append(f"U+{ord(s):04X}")
    out.details = {"stage": stage, "separators": list(separators)}
    return out


def file_checks(tok: FrozenTokenizer) -> list[SeparatorCheck]:
    """The checks of an admitted piece-local file's own stages: each normalizer stage that composes, reorders or
    acts per character, and, per hard stage, the separators it is the first to split before."""
    inputs = tok.admission_inputs
    normalizer, pre_tokenizer = loaded_stages(inputs.normalizer, inputs.pre_tokenizer)
    out: list[SeparatorCheck] = []
    for stage in normalizer_stages(normalizer):
        if is_character_stage(stage):
            out.append(character_stage_check(stage))
        elif stage.get("type") in NORMALIZATION_FORMS or stage.get("type") == "BertNormalizer":
            out.append(normal_form_check(stage))
    by_stage: dict[str, tuple[dict, list[str]]] = {}
    for s in sorted(piece_local_rules(tok).separators):
        t = normalized_separator(normalizer, s)[0]
        stage = first_hard_stage(pre_tokenizer, t) if t is not None else None
        if stage is not None:
            key = json.dumps(stage, sort_keys=True)
            by_stage.setdefault(key, (stage, []))[1].append(t)
    for stage, separators in by_stage.values():
        out.append(hard_stage_check(stage, "".join(sorted(set(separators)))))
    return out
