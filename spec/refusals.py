"""Why a tokenizer is refused, in words a user can act on: which stage of tokenizer.json, which premise fails.

`spec.admission.admit` returns stable reason codes ("CODE" or "CODE:DETAIL"); `refusal_message` turns one into a
sentence naming the stage and the property of the cut and repair propositions it breaks, and what the user can do
(nothing, usually: a refused tokenizer costs speed, never exactness, since callers fall back to the whole encode).
Unknown codes are shown as they are (consumers must tolerate new codes).

`sentencepiece_stage` recognises the SentencePiece-style configurations (a Metaspace pre-tokenizer, or a Prepend
or Replace normalizer that writes U+2581 for spaces, usually with byte fallback). Those whose stages are the
whole-word family's are judged by its premises (`spec.whole_word`, the codes from `whole_word_stage` on); the
code `sentencepiece_style` remains for such a stage beside a ByteLevel one, which neither family covers.
"""

from __future__ import annotations

METASPACE = "\u2581"

# code -> (stage, why: the premise it breaks and what a user can do); DETAIL follows the stage in parentheses, or
# is the stage itself where the stage is left empty
MESSAGES: dict[str, tuple[str, str]] = {
    "model_not_bpe": (
        "model",
        "the model is not BPE, and the file is not piece-local (its stages include a ByteLevel one, which only "
        "the byte-level family's BPE proofs cover)"),
    "vacuous_tokenizer": (
        "model",
        "the file gives the built-in sample texts no IDs, or the unknown token only (the detail says which), so "
        "every comparison with the reference would be empty against empty or unknown against unknown: no evidence "
        "that a cut or a repair is exact, and such a file is refused rather than passed; give the model its "
        "vocabulary and merges"),
    "reference_encode_fails": (
        "model",
        "the reference library loads the file but raises when it encodes the built-in sample texts (the detail is "
        "its error, e.g. an unknown token missing from the vocabulary), so there is no reference encode to compare "
        "with; fix the model section"),
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
    "whole_word_stage": (
        "",  # the detail names the stage
        "a file without a ByteLevel stage is admitted as whole-word BPE (the SentencePiece style) only when its "
        "normalizer is Replace(' ' -> R) and/or Prepend(R) and its pre-tokenizer Metaspace(R) and/or a Split on "
        "' ' that no space is left to match, with at most one source of the prefix; the stage named is outside "
        "that list, so the free-pair proposition does not cover what it does to the text"),
    "whole_word_stage_unloadable": (
        "normalizer or pre_tokenizer",
        "the reference library cannot load the section, so its effective settings cannot be read"),
    "vocabulary_duplicate_id": (
        "model.vocab",
        "two vocabulary tokens share one ID (the detail names the ID and both tokens), so IDs do not name tokens: "
        "the reference reads the ID back as one of the two (a token given the unknown token's ID is then read as "
        "unknown), while the free-pair premises read the vocabulary by token, and chunked encodes of such a file "
        "differ from the whole encode; give each token its own ID"),
    "bpe_subword_affix": (
        "model",
        "a continuing-subword prefix or an end-of-word suffix makes a character's symbol depend on its place in "
        "the word, so the two sides of a cut would not start from the whole word's symbols (the detail names the "
        "key)"),
    "ignore_merges": (
        "model.ignore_merges",
        "with ignore_merges a side of a cut that is itself a vocabulary token is taken whole, which the whole "
        "word is not (merge locality fails: merges (a,a), (a,b), (a,aa) and 'aaa' + an unknown character); set it "
        "to false to be admitted"),
    "byte_fallback_token_merged": (
        "model.merges",
        "a merge takes or makes a byte-fallback token (<0xNN>), so a character spelled in bytes could join its "
        "neighbour's bytes across a cut; the pair table leaves byte tokens out only when no merge names them (the "
        "detail names the first such merge)"),
    "unk_token_merged": (
        "model.merges",
        "a merge takes the unknown token, so an unknown character could join its neighbour across a cut"),
    "byte_fallback_incomplete": (
        "model.byte_fallback",
        "byte fallback is on but the vocabulary lacks byte tokens a character outside it may need (the detail "
        "names them); the reference then emits a pending unknown token after the next character's byte tokens, "
        "out of text order, so chunks would not concatenate; add the 256 <0xNN> tokens to be admitted"),
    "no_unknown_symbol": (
        "model.unk_token",
        "without byte fallback and without an unknown token in the vocabulary, the reference drops characters "
        "outside the vocabulary and their neighbours join across them, so a cut beside one could split a token "
        "the whole encode makes"),
    "normalized_added_token_under_whole_word": (
        "added_tokens",
        "an added token is matched after normalization (normalized: true) in a whole-word file, where the prefix "
        "and the space replacement decide where it matches; set normalized to false"),
    "piece_local_normalizer": (
        "normalizer",
        "a file whose model encodes each pre-token alone is admitted as piece-local when every normalizer stage is "
        "NFC, NFD, NFKC, NFKD, Lowercase, Nmt, StripAccents, BertNormalizer or a Replace of a String; the stage "
        "named is not (Precompiled: SentencePiece's charsmap rewrites grapheme clusters by longest match and is not "
        "parsed here; a Replace of a Regex may match across a cut; Strip acts at each chunk's ends; Prepend would "
        "give each chunk a prefix), so no separator cut is proved for it"),
    "piece_local_no_separator": (
        "pre_tokenizer",
        "no ASCII whitespace or punctuation character is a proved separator: the detail names why the first "
        "candidate fails (a normalizer stage changes or drops it, no pre-tokenizer stage splits before it whatever "
        "precedes it, or a stage before that one could join text across it), so no cut is proved and every text is "
        "encoded whole"),
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
