"""Admission: which tokenizer configurations the cut and repair propositions may be applied to.

A configuration is admitted only if (1) its model is BPE without dropout, (2) it is byte-level (a ByteLevel
pre-tokenizer stage with add_prefix_space=false after Split stages, each Isolated and not inverted, or Removed and
inverted over a pattern whose matches tile every text (`TOTAL_STAGES`, or any other regex `spec.proofs.coverage`
proves total at admission, `spec.proofs.derive.prove_total`): such a stage keeps exactly the Isolated pieces; a
ByteLevel stage with use_regex=true splits every piece it receives with the GPT-2 pattern, Isolated, before mapping
bytes, so it counts as that pattern's Split stage followed by a plain ByteLevel, `split_stages`), and its stages are
one of the six known split patterns or are admitted by proof under a derived family (`spec.proofs.derive`: refused
by name for a construct the proofs do not model or a transition the proof refutes), (3) its normalizer is none, the
empty Sequence, NFC or NFKC (the anchor argument of `spec.normalization`), (4) no added token sets lstrip, rstrip or
single_word, and (5) no added token is matched after normalization unless the normalizer is the identity. A BPE file
whose encodes are no evidence (an empty vocabulary, named first, or the built-in samples encoded to no IDs or to the
unknown token only) is refused as vacuous (`spec.vacuity`); a Split regex with a construct the proofs do not model
is refused naming the construct whether its stage is Isolated or Removed and inverted. Everything else is refused
with a named reason code, and callers fall back to the reference encode; a SentencePiece-style configuration
(Metaspace, or a normalizer writing U+2581) is named as such first (`sentencepiece_style:STAGE`), and
`spec.refusals.refusal_message` says in words which stage breaks which premise. Reason codes are stable strings;
consumers must tolerate unknown ones.

Two more kinds of family have their own premises: whole-word BPE (the SentencePiece style, `spec.whole_word`) and
piece-local files (`spec.piece_local`: BPE without a ByteLevel stage, WordPiece, Unigram or WordLevel whose
pre-tokenizer splits at characters, cut before proved separator characters). A file's truncation and padding act on the
assembled sequence and are applied once with the post-processor (`spec.reference.post_process`).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

from delta_suite.frozen.errors import CorruptTokenizerFile
from delta_suite.frozen.loader import FrozenTokenizer, loaded_stages, normalizer_kind
from delta_suite.frozen.user_table import USER_FILE
from delta_suite.frozen.vocabulary_facts import vocabulary_facts
from delta_suite.spec.families import (
    PREFIX_SPACE_REFUSAL,
    is_total,
    removed_inverted_regexes,
    split_regexes,
    split_stages,
)
from delta_suite.spec.patterns import identify
from delta_suite.spec.piece_local import KIND as PIECE_LOCAL
from delta_suite.spec.piece_local import MODELS, is_piece_local_candidate
from delta_suite.spec.piece_local import judge as judge_piece_local
from delta_suite.spec.proofs.derive import UNSUPPORTED, derive, prove_total, unsupported_construct
from delta_suite.spec.refusals import sentencepiece_stage
from delta_suite.spec.vacuity import named_first, vacuity, vacuous_model
from delta_suite.spec.whole_word import KIND as WHOLE_WORD
from delta_suite.spec.whole_word import is_whole_word_candidate, judge, whole_word_shape

IDENTITY_NORMALIZERS = ("none", "empty_sequence")
ADMITTED_NORMALIZERS = ("none", "empty_sequence", "nfc", "nfkc")
STRIP_REFUSAL = "added_token_strip_or_single_word"
NOT_TOTAL = "split_removed_inverted_not_total"
PROBED = ("file", USER_FILE)  # provenances whose reference object admission probes for vacuity (`spec.vacuity`)
__all__ = ["PREFIX_SPACE_REFUSAL", "split_stages"]  # re-exported from spec.families, where they live


BYTE_LEVEL = "byte_level"
KINDS = (BYTE_LEVEL, WHOLE_WORD, PIECE_LOCAL)


@dataclass(frozen=True)
class Admission:
    """The decision: `admitted`, the reason code when refused, the split-pattern family of an admitted byte-level
    tokenizer (`pattern`), the kind of family (`KINDS`: byte-level, or whole-word, `spec.whole_word`) and its
    name (`family`: the pattern family, or `bpe-whole-word:<digest>`)."""

    admitted: bool
    reason: str
    pattern: str | None = None
    kind: str = BYTE_LEVEL
    family: str | None = None

    @property
    def whole_word(self) -> bool:
        """Whether this is an admitted whole-word tokenizer (its cuts and repairs follow `spec.free_pair_cut`)."""
        return self.admitted and self.kind == WHOLE_WORD

    @property
    def piece_local(self) -> bool:
        """Whether this is an admitted piece-local tokenizer (its cuts follow `spec.piece_local`)."""
        return self.admitted and self.kind == PIECE_LOCAL

    @property
    def own_rule(self) -> bool:
        """Whether an admitted tokenizer is cut by its family's own rule rather than class transitions (whole-word
        or piece-local): its chunks are encoded by `spec.free_pair_cut.chunked_ids` and its repair re-encodes
        from one accepted cut (`spec.whole_word_repair`)."""
        return self.admitted and self.kind in (WHOLE_WORD, PIECE_LOCAL)

    def __bool__(self) -> bool:
        return self.admitted


def admit(config: dict, added_tokens: list[dict], vocabulary: dict | None = None) -> Admission:
    """Decide admission for a parsed tokenizer.json and the full list of added tokens of the loaded configuration.
    `vocabulary`: the file's `frozen.vocabulary_facts` (computed from `config`'s model when it is not given)."""
    model = config.get("model") or {}
    vacuous = vacuous_model(model)
    if vacuous is not None:  # comparisons of empty against empty are no evidence (`spec.vacuity`)
        return Admission(False, vacuous)
    if model.get("type") != "BPE":
        if is_piece_local_candidate(config):
            return _piece_local(config, added_tokens)
        return Admission(False, f"model_not_bpe:{model.get('type')}")
    if model.get("dropout") not in (None, 0, 0.0):
        return Admission(False, "bpe_dropout")
    if is_whole_word_candidate(config):
        decided = _whole_word(config, added_tokens, vocabulary)
        if decided is not None and (decided.admitted or not is_piece_local_candidate(config)):
            return decided
        pieces = _piece_local(config, added_tokens)
        return pieces if pieces.admitted or decided is None else decided
    sentencepiece = sentencepiece_stage(config)
    if sentencepiece is not None:  # named before the pre-tokenizer's shape: the stage a user would have to change
        return Admission(False, f"sentencepiece_style:{sentencepiece}")
    for regex in removed_inverted_regexes(config.get("pre_tokenizer")):
        if not is_total(regex):
            prove_total(regex)  # a total one is registered; split_stages then admits its Removed + inverted form
    stages, problem = split_stages(config.get("pre_tokenizer"))
    if problem == NOT_TOTAL:
        construct = first_unsupported_construct(config.get("pre_tokenizer"))
        if construct is not None:
            return Admission(False, f"{UNSUPPORTED}:{construct}")
    if problem == PREFIX_SPACE_REFUSAL:
        return Admission(False, problem)
    if problem is not None:
        return Admission(False, f"not_byte_level:{problem}")
    kind = normalizer_kind(config.get("normalizer"))
    if kind not in ADMITTED_NORMALIZERS:
        return Admission(False, f"normalizer_not_supported:{kind}")
    stripping = first_stripping_token(added_tokens)
    if stripping is not None:
        return Admission(False, f"{STRIP_REFUSAL}:{stripping}")
    for tok in added_tokens:
        if tok.get("normalized") and kind not in IDENTITY_NORMALIZERS:
            return Admission(False, f"normalized_added_token_under_normalizer:{tok.get('content')}")
    family = identify(stages)
    if family is None:
        derivation = derive(stages)
        if not derivation.admitted:
            return Admission(False, derivation.reason)
        family = derivation.name
    return Admission(True, "admitted", family, BYTE_LEVEL, family)


def first_stripping_token(added_tokens: list[dict]) -> str | None:
    """The content of the first added token that sets lstrip, rstrip or single_word (premise P2 of
    `spec.special_cut`), or None."""
    for tok in added_tokens:
        if tok.get("lstrip") or tok.get("rstrip") or tok.get("single_word"):
            return tok.get("content")
    return None


def first_unsupported_construct(pre_tokenizer: dict | None) -> str | None:
    """The construct the proofs do not model in the first Split regex (in stage order, Isolated or Removed and
    inverted alike) that has one, else None. A Removed+inverted stage over such a regex is never proved to tile
    every text, so its refusal names the construct, the first real cause, as an Isolated stage's does."""
    for regex in split_regexes(pre_tokenizer):
        construct = unsupported_construct(regex)
        if construct is not None:
            return construct
    return None


def _whole_word(config: dict, added_tokens: list[dict], vocabulary: dict | None) -> Admission | None:
    """The decision for a file without a ByteLevel stage: admitted as a whole-word family, refused with the
    first failing premise, or None (judge it as before) when its stages are not the family's and it is not
    SentencePiece-style either."""
    try:
        shape = whole_word_shape(*loaded_stages(config.get("normalizer"), config.get("pre_tokenizer")))
    except CorruptTokenizerFile:  # an unloadable section: judged (and refused) by the byte-level path as before
        return None
    if isinstance(shape, str) and sentencepiece_stage(config) is None:
        return None
    stripping = first_stripping_token(added_tokens)
    if stripping is not None:
        return Admission(False, f"{STRIP_REFUSAL}:{stripping}", kind=WHOLE_WORD)
    model = config.get("model") or {}
    if vocabulary is None and "vocab" in model:
        vocabulary = vocabulary_facts(model)
    refused, family = judge(config, added_tokens, vocabulary)
    if refused is not None:
        return Admission(False, refused, kind=WHOLE_WORD)
    return Admission(True, "admitted", None, WHOLE_WORD, family)


def _piece_local(config: dict, added_tokens: list[dict]) -> Admission:
    """The decision for a piece-local candidate (`spec.piece_local`): admitted with its family, or refused with
    the first failing premise."""
    stripping = first_stripping_token(added_tokens)
    if stripping is not None:
        return Admission(False, f"{STRIP_REFUSAL}:{stripping}", kind=PIECE_LOCAL)
    refused, rules = judge_piece_local(config, added_tokens)
    if rules is None:
        return Admission(False, str(refused), kind=PIECE_LOCAL)
    return Admission(True, "admitted", None, PIECE_LOCAL, rules.family)


_DECIDED: weakref.WeakKeyDictionary[FrozenTokenizer, Admission] = weakref.WeakKeyDictionary()


def admission_of(tok: FrozenTokenizer) -> Admission:
    """The admission of a loaded tokenizer, decided once per object from its `admission_inputs`; a user's or a
    test's file is probed for vacuity (`probed`)."""
    decided = _DECIDED.get(tok)
    if decided is None:
        inputs = tok.admission_inputs
        model = {**inputs.model, "type": inputs.model_type, "dropout": inputs.dropout,
                 "byte_fallback": inputs.byte_fallback}  # the named fields are the inputs' own word
        config = {"model": model, "normalizer": inputs.normalizer, "pre_tokenizer": inputs.pre_tokenizer}
        decided = _DECIDED[tok] = probed(tok, admit(config, list(inputs.added_tokens), inputs.vocabulary))
    return decided


def probed(tok: FrozenTokenizer, decided: Admission) -> Admission:
    """`decided`, or the vacuity refusal of a user's or a test's BPE file (`spec.vacuity`): an empty vocabulary
    and a reference that cannot encode the built-in samples are named before any other premise (the first real
    cause), and samples encoded to no IDs or to the unknown token only refuse a file the premises would admit (a
    file already refused cannot pass, vacuously or not)."""
    if tok.provenance not in PROBED or tok.admission_inputs.model_type not in MODELS:
        return decided
    vacuous = vacuity(tok.tokenizer)
    if vacuous is None or not (decided.admitted or named_first(vacuous)):
        return decided
    return Admission(False, vacuous, kind=decided.kind)
