"""Admission: which tokenizer configurations the cut and repair propositions may be applied to.

A configuration is admitted only if (1) its model is BPE without dropout, (2) it is byte-level (a ByteLevel
pre-tokenizer stage with use_regex=false and add_prefix_space=false after Split stages whose regexes are one of the
six known split patterns, each Isolated and not inverted, or Removed and inverted over a pattern whose matches
tile every text (`TOTAL_STAGES`, proved by `spec.proofs.coverage`): such a stage keeps exactly the Isolated
pieces), (3) its normalizer is none, the empty Sequence, or NFC,
(4) no added token sets lstrip, rstrip or single_word, and (5) no added token is matched after normalization
unless the normalizer is the identity. Everything else is refused with a named reason code, and callers fall
back to the reference encode; a SentencePiece-style configuration (Metaspace, or a normalizer writing U+2581) is
named as such first (`sentencepiece_style:STAGE`), and `spec.refusals.refusal_message` says in words which stage
breaks which premise. Reason codes are stable strings; consumers must tolerate unknown ones.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

from frozen.loader import FrozenTokenizer, normalizer_kind
from spec.patterns import TOTAL_STAGES, identify
from spec.refusals import sentencepiece_stage

IDENTITY_NORMALIZERS = ("none", "empty_sequence")
ADMITTED_NORMALIZERS = ("none", "empty_sequence", "nfc")
STRIP_REFUSAL = "added_token_strip_or_single_word"


@dataclass(frozen=True)
class Admission:
    """The decision: `admitted`, the reason code when refused, and the split-pattern family when known."""

    admitted: bool
    reason: str
    pattern: str | None = None

    def __bool__(self) -> bool:
        return self.admitted


def split_stages(pre_tokenizer: dict | None) -> tuple[tuple[str, ...], str | None]:
    """The Split regexes in order, and a refusal detail when the pre-tokenizer is not Split* then ByteLevel."""
    if pre_tokenizer is None:
        return (), "no pre-tokenizer"
    stages = pre_tokenizer.get("pretokenizers") if pre_tokenizer.get("type") == "Sequence" else [pre_tokenizer]
    stages = stages or []
    if not stages or stages[-1].get("type") != "ByteLevel":
        return (), "last pre-tokenizer stage is not ByteLevel"
    last = stages[-1]
    if last.get("use_regex", True) or last.get("add_prefix_space", True):
        return (), "ByteLevel stage has use_regex or add_prefix_space set"
    regexes = []
    for stage in stages[:-1]:
        if stage.get("type") != "Split":
            return (), f"stage {stage.get('type')} is not Split"
        pattern = stage.get("pattern", {})
        if "Regex" not in pattern:
            return (), "Split stage matches a string, not a regex"
        form = (stage.get("behavior"), bool(stage.get("invert")))
        if form == ("Removed", True) and pattern["Regex"] not in TOTAL_STAGES:
            return (), "split_removed_inverted_not_total"
        if form not in (("Isolated", False), ("Removed", True)):
            return (), "Split stage is neither Isolated nor Removed and inverted"
        regexes.append(pattern["Regex"])
    return tuple(regexes), None


def admit(config: dict, added_tokens: list[dict]) -> Admission:
    """Decide admission for a parsed tokenizer.json and the full list of added tokens of the loaded configuration."""
    model = config.get("model") or {}
    if model.get("type") != "BPE":
        return Admission(False, f"model_not_bpe:{model.get('type')}")
    if model.get("dropout") not in (None, 0, 0.0):
        return Admission(False, "bpe_dropout")
    sentencepiece = sentencepiece_stage(config)
    if sentencepiece is not None:  # named before the pre-tokenizer's shape: the stage a user would have to change
        return Admission(False, f"sentencepiece_style:{sentencepiece}")
    stages, problem = split_stages(config.get("pre_tokenizer"))
    if problem is not None:
        return Admission(False, f"not_byte_level:{problem}")
    kind = normalizer_kind(config.get("normalizer"))
    if kind not in ADMITTED_NORMALIZERS:
        return Admission(False, f"normalizer_not_supported:{kind}")
    for tok in added_tokens:
        if tok.get("lstrip") or tok.get("rstrip") or tok.get("single_word"):
            return Admission(False, f"{STRIP_REFUSAL}:{tok.get('content')}")
        if tok.get("normalized") and kind not in IDENTITY_NORMALIZERS:
            return Admission(False, f"normalized_added_token_under_normalizer:{tok.get('content')}")
    family = identify(stages)
    if family is None:
        return Admission(False, "split_pattern_unknown")
    return Admission(True, "admitted", family)


_DECIDED: weakref.WeakKeyDictionary[FrozenTokenizer, Admission] = weakref.WeakKeyDictionary()


def admission_of(tok: FrozenTokenizer) -> Admission:
    """The admission of a loaded tokenizer, decided once per object from its `admission_inputs`."""
    decided = _DECIDED.get(tok)
    if decided is None:
        inputs = tok.admission_inputs
        config = {"model": {"type": inputs.model_type, "dropout": inputs.dropout,
                            "byte_fallback": inputs.byte_fallback},
                  "normalizer": inputs.normalizer, "pre_tokenizer": inputs.pre_tokenizer}
        decided = _DECIDED[tok] = admit(config, list(inputs.added_tokens))
    return decided
