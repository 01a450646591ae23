"""Admission: which tokenizer configurations the cut and repair propositions may be applied to.

A configuration is admitted only if (1) its model is BPE without dropout, (2) it is byte-level (a ByteLevel
pre-tokenizer stage with add_prefix_space=false after Split stages, each Isolated and not inverted, or Removed and
inverted over a pattern whose matches tile every text (`TOTAL_STAGES`, or any other regex `spec.proofs.coverage`
proves total at admission, `spec.proofs.derive.prove_total`): such a stage keeps exactly the Isolated pieces;
a ByteLevel stage with use_regex=true splits every piece it receives with the GPT-2 pattern, Isolated, before
mapping bytes, so it counts as that pattern's Split stage followed by a plain ByteLevel, `split_stages`), and its
stages are one of the six known split patterns or are admitted by proof under
a derived family (`spec.proofs.derive`: refused by name for a construct the proofs do not model or a transition
the proof refutes), (3) its normalizer is none, the empty Sequence, or NFC,
(4) no added token sets lstrip, rstrip or single_word, and (5) no added token is matched after normalization
unless the normalizer is the identity. Everything else is refused with a named reason code, and callers fall
back to the reference encode; a SentencePiece-style configuration (Metaspace, or a normalizer writing U+2581) is
named as such first (`sentencepiece_style:STAGE`), and `spec.refusals.refusal_message` says in words which stage
breaks which premise. Reason codes are stable strings; consumers must tolerate unknown ones.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

from delta_suite.frozen.loader import FrozenTokenizer, normalizer_kind
from delta_suite.spec.families import PREFIX_SPACE_REFUSAL, is_total, removed_inverted_regexes, split_stages
from delta_suite.spec.patterns import identify
from delta_suite.spec.proofs.derive import derive, prove_total
from delta_suite.spec.refusals import sentencepiece_stage

IDENTITY_NORMALIZERS = ("none", "empty_sequence")
ADMITTED_NORMALIZERS = ("none", "empty_sequence", "nfc")
STRIP_REFUSAL = "added_token_strip_or_single_word"
__all__ = ["PREFIX_SPACE_REFUSAL", "split_stages"]  # re-exported from spec.families, where they live


@dataclass(frozen=True)
class Admission:
    """The decision: `admitted`, the reason code when refused, and the split-pattern family when known."""

    admitted: bool
    reason: str
    pattern: str | None = None

    def __bool__(self) -> bool:
        return self.admitted


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
    for regex in removed_inverted_regexes(config.get("pre_tokenizer")):
        if not is_total(regex):
            prove_total(regex)  # a total one is registered; split_stages then admits its Removed + inverted form
    stages, problem = split_stages(config.get("pre_tokenizer"))
    if problem == PREFIX_SPACE_REFUSAL:
        return Admission(False, problem)
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
        derivation = derive(stages)
        if not derivation.admitted:
            return Admission(False, derivation.reason)
        family = derivation.name
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
