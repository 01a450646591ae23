"""The whole-word BPE family (the SentencePiece style of Llama 2, Mistral v1, Gemma and Gemini): its shape, its
premises, and the pair table its cut rule reads (`spec.free_pair_cut` states the proposition).

In this family nothing splits the text before BPE: each stretch between added tokens is normalized (spaces become
a replacement character R, usually U+2581, and a prefix R may be put in front) and BPE merges over it as one word.
A file belongs to the family when its stages are these and no others (`whole_word_shape`):
- normalizer: none, the empty Sequence, Replace(String " " -> R), Prepend(R), or a Sequence of them (at most one
  of each, one R);
- pre-tokenizer: none, Metaspace(R, prepend_scheme, split) as the reference loads it, a Split on the String " "
  (invert false) placed where no space is left to match (after the normalizer's Replace, or after a Metaspace),
  or a Sequence of them with at most one Metaspace;
- at most one source of a prefix: a Prepend normalizer, or a Metaspace whose prepend_scheme is not "never".

Its prefix scheme (`PREFIXES`) says which stretches of a whole encode get the prefix:
- "none": none (no Prepend; Metaspace "never");
- "per_stretch": every stretch (the Prepend normalizer; Metaspace "always", unless the stretch starts with R);
- "first": only the stretch at offset 0 of the text (Metaspace "first": the reference tests the stretch's
  offset in the original text).

The model's premises, each a predicate on the file's own facts (`frozen.vocabulary_facts`), named by the code a
refusal carries (`model_premises`):
- M1 no subword affix (`bpe_subword_affix`): a continuing-subword prefix or an end-of-word suffix makes a
  character's symbol depend on its place in the word;
- M2 no merge takes or makes a byte-fallback token, none takes the unknown token (`byte_fallback_token_merged`,
  `unk_token_merged`): then byte and unknown symbols are never merged, and a token that merges build holds only
  text, so the pair table may leave the byte tokens out;
- M3 every character becomes symbols of its own: byte fallback complete for every byte a character outside the
  vocabulary can have (`byte_fallback_incomplete`: otherwise the reference emits a pending unknown token after
  the next character's byte tokens, out of order), or, without byte fallback, an unknown token in the vocabulary
  (`no_unknown_symbol`: otherwise unknown characters are dropped and their neighbours join);
- M4 `ignore_merges` off (`ignore_merges`: a side that is itself a vocabulary token is taken whole, which the
  whole word would not be);
- and dropout off, checked before the family (`bpe_dropout`).
Under M1-M4 the merge-locality lemma (`spec.proofs.merge_locality`) holds at every pair of characters that no
vocabulary token holds next to each other (`WholeWordRules.inner_pairs`), except, with `fuse_unk` and no byte
fallback, a pair of two unknown characters (`fuses_unknowns`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache

from delta_suite.frozen.errors import CorruptTokenizerFile
from delta_suite.frozen.loader import FrozenTokenizer, loaded_stages
from delta_suite.frozen.vocabulary_facts import PAIR_SHIFT

PREFIXES = ("none", "per_stretch", "first")
KIND = "whole_word"
FAMILY_PREFIX = "bpe-whole-word:"
UTF8_CONTINUATION = range(0x80, 0xC0)
UTF8_LEADS = range(0xC2, 0xF5)  # 0xC0, 0xC1 and 0xF5..0xFF never occur in UTF-8


@dataclass(frozen=True)
class WholeWordShape:
    """What the normalizer and pre-tokenizer of a whole-word file do: `space` is what ' ' becomes before BPE
    (None: it stays a space), `prefix` the prefix scheme (`PREFIXES`), `prefix_stage` the stage that adds it
    (None for "none"), `split` whether a Metaspace splits the stretch at each R (each piece then a word)."""

    space: str | None
    prefix: str
    prefix_stage: str | None
    split: bool


@dataclass(frozen=True)
class WholeWordRules:
    """What the free-pair rule reads for one admitted file: its shape, the pairs joined inside vocabulary tokens
    (as `frozen.vocabulary_facts.pair_key` integers), the single-character tokens, whether two unknown
    characters fuse into one unknown token, and the family name."""

    shape: WholeWordShape
    inner_pairs: frozenset[int]
    single_chars: frozenset[int]
    fuses_unknowns: bool
    family: str
    first_merge: tuple[str, str] | None = None  # read only by a broken variant (`spec.free_pair_cut`)

    def normalized(self, ch: str) -> str:
        """The character BPE sees for a raw character of a stretch (a space becomes `shape.space`)."""
        return self.shape.space if ch == " " and self.shape.space is not None else ch

    def pair_refusal(self, left: str, right: str) -> str | None:
        """Why the raw pair (left, right) is not free: `pair_joined:U+XXXX,U+YYYY` when a vocabulary token holds
        the normalized pair next to each other, `unknown_pair_fused` when both are unknown and fuse; None when
        it is free."""
        a, b = self.normalized(left), self.normalized(right)
        if (ord(a) << PAIR_SHIFT) | ord(b) in self.inner_pairs:
            return f"pair_joined:U+{ord(a):04X},U+{ord(b):04X}"
        if self.fuses_unknowns and ord(a) not in self.single_chars and ord(b) not in self.single_chars:
            return "unknown_pair_fused"
        return None


def _stages(section: dict | None, key: str) -> list[dict]:
    if section is None:
        return []
    if section.get("type") == "Sequence":
        return list(section.get(key) or [])
    return [section]


def _is_space_replace(stage: dict) -> bool:
    pattern = stage.get("pattern") or {}
    content = stage.get("content")
    return pattern == {"String": " "} and isinstance(content, str) and len(content) == 1 and content != " "


def _normalizer_shape(normalizer: dict | None) -> tuple[str | None, str | None] | str:
    """(Replace content or None, Prepend string or None), or the refusal detail."""
    replace: str | None = None
    prepend: str | None = None
    for stage in _stages(normalizer, "normalizers"):
        kind = stage.get("type")
        if kind == "Replace" and _is_space_replace(stage) and replace is None:
            replace = stage["content"]
        elif kind == "Prepend" and prepend is None and isinstance(stage.get("prepend"), str) \
                and len(stage["prepend"]) == 1 and stage["prepend"] != " ":
            prepend = stage["prepend"]
        else:
            return f"normalizer {kind} {json.dumps({k: v for k, v in stage.items() if k != 'type'})}"
    if replace is not None and prepend is not None and replace != prepend:
        return "normalizer Prepend and Replace write different characters"
    return replace, prepend


def whole_word_shape(normalizer: dict | None, pre_tokenizer: dict | None) -> WholeWordShape | str:
    """The shape of a file whose stages are the family's (see the module docstring), or the refusal detail
    naming the first stage outside it. `normalizer` and `pre_tokenizer` are the sections as the reference
    loads them (`frozen.loader.loaded_stages`), so a Metaspace's prepend_scheme and split are its effective ones."""
    found = _normalizer_shape(normalizer)
    if isinstance(found, str):
        return found
    replace, prepend = found
    space = replace
    metaspace: dict | None = None
    for stage in _stages(pre_tokenizer, "pretokenizers"):
        kind = stage.get("type")
        if kind == "Metaspace" and metaspace is None:
            metaspace = stage
            if space is not None and stage.get("replacement") != space:
                return "pre_tokenizer Metaspace replacement differs from the normalizer's"
            space = stage.get("replacement")
        elif kind == "Split" and stage.get("pattern") == {"String": " "} and not stage.get("invert") \
                and space is not None:
            continue  # no space is left for it to match: a no-op
        else:
            return f"pre_tokenizer {kind} {json.dumps({k: v for k, v in stage.items() if k != 'type'})}"
    if not isinstance(space, str | None) or (isinstance(space, str) and (len(space) != 1 or space == " ")):
        return "pre_tokenizer Metaspace replacement is not one character other than a space"
    scheme = (metaspace or {}).get("prepend_scheme", "never")
    if prepend is not None and scheme != "never":
        return "two prefixes: a Prepend normalizer and a Metaspace prepend_scheme"
    if prepend is not None:
        return WholeWordShape(space, "per_stretch", "normalizer Prepend", False)
    split = bool((metaspace or {}).get("split", False))
    prefix = {"always": "per_stretch", "first": "first", "never": "none"}.get(str(scheme))
    if prefix is None:
        return f"pre_tokenizer Metaspace prepend_scheme {scheme}"
    return WholeWordShape(space, prefix, None if prefix == "none" else "pre_tokenizer Metaspace", split)


def is_whole_word_candidate(config: dict) -> bool:
    """Whether a BPE configuration is to be judged as a whole-word file: it names no ByteLevel stage."""
    return '"ByteLevel"' not in json.dumps([config.get("normalizer"), config.get("pre_tokenizer")])


def model_premises(model: dict, vocabulary: dict) -> str | None:
    """M1-M4 on the model section's keys and the file's vocabulary facts: the refusal code of the first that
    fails, or None when all hold. A vocabulary whose tokens share an ID is refused first: the reference reads the ID
    back as one of them, so IDs do not name the tokens the premises read."""
    if vocabulary.get("duplicate_id"):
        return f"vocabulary_duplicate_id:{vocabulary['duplicate_id']}"
    for affix in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(affix):
            return f"bpe_subword_affix:{affix}"
    if model.get("ignore_merges"):
        return "ignore_merges"
    for fact in ("merge_taking_byte_token", "merge_making_byte_token"):
        if vocabulary.get(fact):
            return f"byte_fallback_token_merged:{vocabulary[fact]}"
    if vocabulary.get("merge_taking_unk"):
        return f"unk_token_merged:{vocabulary['merge_taking_unk']}"
    if model.get("byte_fallback"):
        missing = missing_fallback_bytes(vocabulary)
        if missing:
            return "byte_fallback_incomplete:" + ",".join(f"<0x{b:02X}>" for b in missing[:8]) + \
                (f" and {len(missing) - 8} more" if len(missing) > 8 else "")
    elif not vocabulary.get("unk_in_vocab"):
        return "no_unknown_symbol"
    return None


def missing_fallback_bytes(vocabulary: dict) -> list[int]:
    """The byte values a character outside the vocabulary may need whose fallback token is missing: every UTF-8
    lead and continuation byte, and each ASCII byte whose character is not a vocabulary token itself."""
    have = set(vocabulary.get("byte_tokens") or ())
    singles = set(vocabulary.get("single_chars") or ())
    needed = [b for b in range(0x80) if b not in singles] + list(UTF8_CONTINUATION) + list(UTF8_LEADS)
    return [b for b in needed if b not in have]


def family_name(shape: WholeWordShape, vocabulary: dict, fuses_unknowns: bool) -> str:
    """`bpe-whole-word:` and 12 hex digits of a digest of everything the family's rules read."""
    h = hashlib.sha256(json.dumps([shape.__dict__, vocabulary.get("inner_pairs"), fuses_unknowns,
                                   vocabulary.get("single_chars") if fuses_unknowns else None]).encode())
    return FAMILY_PREFIX + h.hexdigest()[:12]


def judge(config: dict, added_tokens: list[dict], vocabulary: dict | None) -> tuple[str | None, str]:
    """(None, family name) for a whole-word file whose premises hold, else (refusal code, ""). `config`: the
    file's model, normalizer and pre-tokenizer sections; `vocabulary`: its `frozen.vocabulary_facts`."""
    rules = _rules(config, added_tokens, vocabulary)
    return (rules, "") if isinstance(rules, str) else (None, rules.family)


def _rules(config: dict, added_tokens: list[dict], vocabulary: dict | None) -> WholeWordRules | str:
    try:
        normalizer, pre_tokenizer = loaded_stages(config.get("normalizer"), config.get("pre_tokenizer"))
    except CorruptTokenizerFile as exc:
        return f"whole_word_stage_unloadable:{exc}"
    shape = whole_word_shape(normalizer, pre_tokenizer)
    if isinstance(shape, str):
        return f"whole_word_stage:{shape}"
    if vocabulary is None:
        return "whole_word_stage:no vocabulary facts"
    model = config.get("model") or {}
    refused = model_premises(model, vocabulary)
    if refused is not None:
        return refused
    for token in added_tokens:
        if token.get("normalized"):
            return f"normalized_added_token_under_whole_word:{token.get('content')}"
    fuses = bool(model.get("fuse_unk")) and not model.get("byte_fallback")
    first = vocabulary.get("first_merge")
    return WholeWordRules(shape, frozenset(vocabulary["inner_pairs"]), frozenset(vocabulary["single_chars"]),
                          fuses, family_name(shape, vocabulary, fuses), tuple(first) if first else None)


@lru_cache(maxsize=64)
def whole_word_rules(tok: FrozenTokenizer) -> WholeWordRules:
    """The rules of an admitted whole-word tokenizer (ValueError for any other: callers dispatch on the kind)."""
    inputs = tok.admission_inputs
    config = {"model": inputs.model, "normalizer": inputs.normalizer, "pre_tokenizer": inputs.pre_tokenizer}
    rules = _rules(config, list(inputs.added_tokens), inputs.vocabulary)
    if isinstance(rules, str):
        raise ValueError(f"{tok.name} is not an admitted whole-word tokenizer: {rules}")
    return rules
