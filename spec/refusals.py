"""Why a tokenizer is refused, in words a user can act on: which stage of tokenizer.json, which premise fails.

`spec.admission.admit` returns stable reason codes ("CODE" or "CODE:DETAIL"); `refusal_message` turns one into a
sentence naming the stage and the property of the cut and repair propositions it breaks, and what the user can do
(nothing, usually: a refused tokenizer costs speed, never exactness, since callers fall back to the whole encode).
Unknown codes are shown as they are (consumers must tolerate new codes).

`sentencepiece_stage` recognises the SentencePiece-style configurations (a Metaspace pre-tokenizer, or a Prepend
or Replace normalizer that writes U+2581 for spaces, usually with byte fallback): their pieces are not byte-level
and depend on their position in the text, so the propositions' premise fails at the first stage it names.
"""

from __future__ import annotations

METASPACE = "\u2581"

# code -> (stage, why: the premise it breaks and what a user can do); DETAIL follows the stage in parentheses, or
# is the stage itself where the stage is left empty
MESSAGES: dict[str, tuple[str, str]] = {
    "model_not_bpe": (
        "model",
        "the model is not BPE (WordPiece and Unigram choose pieces by a different rule: a longest-match or a "
        "best-score search over the whole word, whose result the proved cut transitions do not bound)"),
    "bpe_dropout": (
        "model.dropout",
        "BPE dropout makes the encode random, so no cut can equal the whole encode every time; set dropout to "
        "null to be admitted"),
    "sentencepiece_style": (
        "",  # the detail names the stage
        "a SentencePiece-style configuration: the stage named rewrites the text before BPE sees it (spaces become "
        "U+2581; a Prepend, or a Metaspace prepend_scheme, adds U+2581 at the start), so the pieces are neither "
        "the raw text's characters nor split at its character-class transitions, and a piece's IDs can depend on "
        "whether it starts the text; byte_fallback, when named, spells characters outside the vocabulary as "
        "<0xNN> tokens instead of byte-level pieces. The premises of the cut and repair propositions (byte-level "
        "pieces split at class transitions of the raw text) fail: this family is refused, never approximated"),
    "not_byte_level": (
        "pre_tokenizer",
        "the pre-tokenizer is not Split stages followed by ByteLevel(use_regex=false, add_prefix_space=false), "
        "the only form whose splits the proofs cover"),
    "split_removed_inverted_not_total": (
        "pre_tokenizer Split",
        "a Removed+inverted Split stage over a pattern not proved to tile every text would drop characters"),
    "normalizer_not_supported": (
        "normalizer",
        "only none, the empty Sequence and NFC are admitted: any other normalizer (NFKC, Lowercase, Replace, "
        "Prepend, Strip...) may change the text across a cut, and no condition of the cut proposition covers it"),
    "added_token_strip_or_single_word": (
        "added_tokens",
        "an added token sets lstrip, rstrip or single_word, so whether it matches depends on the characters "
        "around it, beyond the special-token margin; clear those flags to be admitted"),
    "normalized_added_token_under_normalizer": (
        "added_tokens",
        "an added token is matched after normalization (normalized: true) under a normalizer that is not the "
        "identity, so its occurrences are not where the raw text shows them; set normalized to false"),
    "split_pattern_unsupported": (
        "pre_tokenizer Split",
        "the split regex uses a construct the proofs' regex encoding does not model (the detail names it: "
        "lookbehind, an anchor, a backreference, a lazy or possessive quantifier...), so its transitions cannot be "
        "proved; rewrite the stage without it, or accept the whole encode"),
    "split_pattern_unproved": (
        "pre_tokenizer Split",
        "the split regex is none of the six known families and the proof of its transitions failed (the detail "
        "names the transition or lemma refuted, with a counterexample confirmed on the reference): a cut there "
        "could change the pieces, so the stages are refused rather than admitted with fewer cuts"),
    "byte_level_add_prefix_space": (
        "pre_tokenizer ByteLevel",
        "add_prefix_space is true"),
    "split_pattern_unknown": (
        "pre_tokenizer Split",
        "the split regexes are none of the families whose transitions are proved"),
}


def sentencepiece_stage(config: dict) -> str | None:
    """The first stage that makes `config` SentencePiece-style ("pre_tokenizer Metaspace", "normalizer Prepend",
    "normalizer Replace ' ' -> U+2581"), with ", byte_fallback" when the model falls back to byte tokens; None
    when it is not SentencePiece-style."""
    found = _metaspace_stage(config.get("pre_tokenizer")) or _metaspace_normalizer(config.get("normalizer"))
    if found is None:
        return None
    fallback = ", byte_fallback" if (config.get("model") or {}).get("byte_fallback") else ""
    return found + fallback


def _stages(section: dict | None, key: str) -> list[dict]:
    if not section:
        return []
    if section.get("type") == "Sequence":
        return [s for s in section.get(key) or [] if isinstance(s, dict)]
    return [section]


def _metaspace_stage(pre_tokenizer: dict | None) -> str | None:
    for stage in _stages(pre_tokenizer, "pretokenizers"):
        if stage.get("type") == "Metaspace":
            return f"pre_tokenizer Metaspace (prepend_scheme {stage.get('prepend_scheme', 'always')})"
    return None


def _metaspace_normalizer(normalizer: dict | None) -> str | None:
    for stage in _stages(normalizer, "normalizers"):
        if stage.get("type") == "Prepend" and METASPACE in str(stage.get("prepend", "")):
            return "normalizer Prepend U+2581"
        if stage.get("type") == "Replace" and stage.get("content") == METASPACE:
            return "normalizer Replace ' ' -> U+2581"
    return None


def refusal_message(reason: str) -> str:
    """A sentence for an admission's reason code (`Admission.reason`): "refused at STAGE (DETAIL): WHY [code
    CODE]", or "admitted" for the admitted code."""
    if reason == "admitted":
        return "admitted"
    code, _, detail = reason.partition(":")
    if code == "not_byte_level" and detail in MESSAGES:  # a nested code (split_stages' own)
        code, detail = detail, ""
    if code not in MESSAGES:
        return f"refused: {reason}"
    stage, why = MESSAGES[code]
    where = (f"{stage} ({detail})" if stage else detail) if detail else stage
    return f"refused at {where}: {why} [code {reason}]"
