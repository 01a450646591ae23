"""Small tokenizer.json files the tests write: a byte-level BPE over the 256-byte alphabet, and broken variants.

The base is admissible (BPE, ByteLevel without regex after one Isolated Split with the Qwen2 pattern, no
normalizer); each `variant` changes exactly one thing that admission must refuse.

`power_config(kind)` builds the admissible tokenizers that give the gate its power whichever frozen tokenizers are
provisioned (`POWER_KINDS`, issue 21): one shared vocabulary whose merges cross every boundary a wrong cut could
fall on (letter + apostrophe, a nukta's last byte + punctuation, space + word, punctuation + newline, digits), and
one feature each: a post-processor that adds a beginning-of-text token (`post_processor`), chat markers with
accepted class transitions inside them on a tokenizer without NFC (`specials_next_to_letters`), the o200k split
pattern whose letter runs carry a contraction suffix (`o200k_contractions`), and an NFC normalizer (`nfc`).
"""

from __future__ import annotations

import copy
import json
import string
from pathlib import Path

from delta_suite.frozen.loader import FrozenTokenizer, byte_decoder, load_tokenizer_file
from delta_suite.spec.patterns import LLAMA3, O200K, QWEN2


def _byte_alphabet() -> list[str]:
    """The 256 characters of byte-level BPE's alphabet, in byte order (from the loader's own table)."""
    return [ch for ch, _ in sorted(byte_decoder().items(), key=lambda kv: kv[1])]


def base_config() -> dict:
    """An admissible byte-level BPE: 256 byte tokens, the merges "t h" and "th e", one special token."""
    vocab = {ch: i for i, ch in enumerate(_byte_alphabet())}
    vocab["th"] = 256
    vocab["the"] = 257
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {"id": 258, "content": "<|end|>", "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": True},
        ],
        "normalizer": None,
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": QWEN2}, "behavior": "Isolated", "invert": False},
                {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
            ],
        },
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
        "model": {
            "type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
            "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
            "vocab": vocab, "merges": [["t", "h"], ["th", "e"]],
        },
    }


def variant(kind: str) -> dict:
    """The base configuration with one thing changed; `kind` names what admission must refuse."""
    cfg = copy.deepcopy(base_config())
    if kind == "admissible":
        pass
    elif kind == "wordpiece":
        vocab = {"[UNK]": 0, "the": 1, "##s": 2}
        cfg["model"] = {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                        "max_input_chars_per_word": 100, "vocab": vocab}
        cfg["added_tokens"] = []
    elif kind == "nfkc":
        cfg["normalizer"] = {"type": "NFKC"}
    elif kind == "nfd":  # a normal form that decomposes only: outside the byte-level family's normalizers
        cfg["normalizer"] = {"type": "NFD"}
    elif kind == "lstrip":
        cfg["added_tokens"][0]["lstrip"] = True
    elif kind == "normalized_under_nfc":
        cfg["normalizer"] = {"type": "NFC"}
        cfg["added_tokens"][0]["normalized"] = True
    elif kind == "normalized_under_identity":
        cfg["normalizer"] = {"type": "Sequence", "normalizers": []}
        cfg["added_tokens"][0]["normalized"] = True
    elif kind == "unknown_pattern":
        cfg["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = r"\w+|\s+"
    elif kind == "byte_level_with_regex":
        cfg["pre_tokenizer"]["pretokenizers"][1]["use_regex"] = True
    elif kind == "removed_inverted_total":  # olmo_3_7b's form over a pattern whose matches tile every text
        cfg["pre_tokenizer"]["pretokenizers"][0].update(behavior="Removed", invert=True)
    elif kind == "removed_inverted_not_total":  # the same form over DeepSeek's digit stage: gaps would be dropped
        cfg["pre_tokenizer"]["pretokenizers"][0].update(behavior="Removed", invert=True,
                                                        pattern={"Regex": r"\p{N}{1,3}"})
    elif kind == "removed_not_inverted":
        cfg["pre_tokenizer"]["pretokenizers"][0].update(behavior="Removed", invert=False)
    elif kind == "dropout":
        cfg["model"]["dropout"] = 0.1
    else:
        raise ValueError(kind)
    return cfg


def write(folder: Path, cfg: dict, tok_config: dict | None = None, name: str = "tokenizer") -> tuple[Path, Path | None]:
    """Write tokenizer.json (and tokenizer_config.json when given) into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    tok_path = folder / f"{name}.json"
    tok_path.write_text(json.dumps(cfg), encoding="utf-8")
    cfg_path = None
    if tok_config is not None:
        cfg_path = folder / f"{name}_config.json"
        cfg_path.write_text(json.dumps(tok_config), encoding="utf-8")
    return tok_path, cfg_path


# --- the synthetic tokenizers that make the gate's power independent of the provisioned ones (issue 21) --------

POWER_KINDS = ("post_processor", "specials_next_to_letters", "o200k_contractions", "nfc")
BOS = "<|begin_of_text|>"
END = "<|endoftext|>"
CHAT_MARKERS = ("<|im_start|>", "<|im_end|>", "<think>", "</think>", "[INST]", "[/INST]")
PATTERN_OF = {"post_processor": LLAMA3, "specials_next_to_letters": QWEN2, "o200k_contractions": O200K, "nfc": QWEN2}

_NUKTA_LAST_BYTE = 0xBC  # the last UTF-8 byte of the Indic nuktas (U+093C, U+09BC, U+0A3C, ...) and of U+05BC
_AFTER_NUKTA = "/.-,:;!?'(_@#\n"  # what follows a class-changing character in the battery's nfc_exclusion cores
# Tokens the shared vocabulary reaches by merges (each from the pieces the earlier merges leave, in this order,
# after the two groups of first merges below): words, words after a space, punctuation before letters, the
# contraction suffixes, punctuation runs with line breaks, digit groups, and a few multi-byte characters.
_TOKENS = (
    "the", "he", "in", "er", "an", "it", "is", "on", "at", "user", "assistant", "system", "think", "INST", "im",
    "end", "don", "that", "you", "can", "hello", "world", "text", "of", "and", "to",
    " the", " a", " is", " of", " and", " to", " in", " it", " that", " you", " x", " y", " hello", " world",
    " user", " can", " don", " think",
    ".com", "(self", "_id", "/api", ".py", "-based", ".html", "_start", "_end", "<|", "|>", "</",
    "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'T",
    ".\n", ".\n\n", "\n\n", ",\n", ":\n", "\r\n", " \n", "  ", "   ", "!\n", "?\n",
    "00", "10", "12", "123", "42", "99", "100", "2024", "1234",
    "\u0915", "\u093c", "\u0915\u093c", "\u0958", "\u00e9", "\u0301", "e\u0301", "\u4e2d", "\u4e2d\u6587",
)


def _byte_encoder() -> dict[int, str]:
    """Byte -> its character in byte-level BPE's alphabet (the inverse of the loader's table)."""
    return {b: ch for ch, b in byte_decoder().items()}


def to_alphabet(text: str) -> str:
    """`text`'s UTF-8 bytes written in byte-level BPE's alphabet (how the vocabulary spells tokens)."""
    enc = _byte_encoder()
    return "".join(enc[b] for b in text.encode("utf-8"))


def _bpe(spelled: str, ranks: dict[tuple[str, str], int]) -> list[str]:
    """`spelled` (in the byte alphabet) split by the merges `ranks` as BPE applies them: always the lowest-ranked
    adjacent pair first, until none is a merge."""
    parts = list(spelled)
    while len(parts) > 1:
        pairs = [(ranks.get((a, b)), i) for i, (a, b) in enumerate(zip(parts, parts[1:], strict=False))]
        rank, i = min(((r, i) for r, i in pairs if r is not None), default=(None, -1))
        if rank is None:
            break
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
    return parts


def _add_token(vocab: dict[str, int], merges: list[list[str]], spelled: str) -> None:
    """Make `spelled` (in the byte alphabet) one token: the pieces the merges so far leave, merged left to right
    by new merges ranked after all others (so that BPE reaches exactly `spelled`)."""
    ranks = {(a, b): r for r, (a, b) in enumerate(merges)}
    parts = _bpe(spelled, ranks)
    current = parts[0]
    for part in parts[1:]:
        merges.append([current, part])
        current += part
        vocab.setdefault(current, len(vocab))


def power_vocabulary() -> tuple[dict[str, int], list[list[str]]]:
    """The shared vocabulary and merges of the POWER_KINDS tokenizers.

    First merges (lowest ranks, so they win whatever else a pre-token holds): every ASCII letter + apostrophe
    ("it's" in one o200k pre-token becomes i, "t'", "s": never the pieces of "it" | "'s"), and a nukta's last byte
    + each punctuation that can follow it (NFC turns U+0958 "/" into KA, NUKTA "/", with NUKTA and "/" in one
    pre-token). Then every token of `_TOKENS`, each reached from the pieces the earlier merges leave."""
    vocab = {ch: i for i, ch in enumerate(_byte_alphabet())}
    merges: list[list[str]] = []
    for letter in string.ascii_letters:
        _add_token(vocab, merges, to_alphabet(letter + "'"))
    nukta_byte = _byte_encoder()[_NUKTA_LAST_BYTE]
    for punct in _AFTER_NUKTA:
        _add_token(vocab, merges, nukta_byte + to_alphabet(punct))
    for token in _TOKENS:
        _add_token(vocab, merges, to_alphabet(token))
    return vocab, merges


def _added(content: str, token_id: int) -> dict:
    return {"id": token_id, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False, "special": True}


def _template(bos_id: int) -> dict:
    """A TemplateProcessing post-processor that puts BOS before each sequence (as Llama 3's does)."""
    bos = {"SpecialToken": {"id": BOS, "type_id": 0}}
    return {
        "type": "TemplateProcessing",
        "single": [bos, {"Sequence": {"id": "A", "type_id": 0}}],
        "pair": [bos, {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": BOS, "type_id": 1}},
                 {"Sequence": {"id": "B", "type_id": 1}}],
        "special_tokens": {BOS: {"id": BOS, "ids": [bos_id], "tokens": [BOS]}},
    }


def power_config(kind: str) -> dict:
    """The admissible synthetic tokenizer `kind` (one of POWER_KINDS): the shared vocabulary, the split pattern of
    `PATTERN_OF[kind]`, and its one feature (see the module docstring). Every kind carries `<|endoftext|>`;
    `specials_next_to_letters` and `nfc` carry the chat markers too (under NFC the normalization window refuses
    every cut next to them, which is what masks a missing guard there); `post_processor` carries BOS."""
    if kind not in POWER_KINDS:
        raise ValueError(f"unknown synthetic tokenizer {kind!r}; one of {POWER_KINDS}")
    cfg = base_config()
    vocab, merges = power_vocabulary()
    cfg["model"]["vocab"], cfg["model"]["merges"] = vocab, merges
    cfg["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = PATTERN_OF[kind]
    specials = [END]
    if kind in ("specials_next_to_letters", "nfc"):
        specials += CHAT_MARKERS
    if kind == "post_processor":
        specials.append(BOS)
    cfg["added_tokens"] = [_added(s, len(vocab) + i) for i, s in enumerate(specials)]
    if kind == "post_processor":
        cfg["post_processor"] = _template(len(vocab) + specials.index(BOS))
    if kind == "nfc":
        cfg["normalizer"] = {"type": "NFC"}
    return cfg


def power_tokenizer(kind: str, folder: Path) -> FrozenTokenizer:
    """Write `power_config(kind)` into `folder` and load it as `synthetic_<kind>` (provenance "file")."""
    name = f"synthetic_{kind}"
    path, _ = write(folder, power_config(kind), name=name)
    return load_tokenizer_file(path, name=name)


# --- tokenizers with split patterns none of the six families have (admission by proof, spec.proofs.derive) ------


def stages_config(regexes: tuple[str, ...], use_regex: bool = False, add_prefix_space: bool = False,
                  removed_inverted: bool = False) -> dict:
    """The shared power vocabulary (`power_vocabulary`: merges across letter + apostrophe, space + word,
    punctuation + newline, digit groups, ...) and `<|endoftext|>`, pre-tokenized by one Split stage per regex of
    `regexes` (Isolated, or Removed and inverted with `removed_inverted`), then a ByteLevel stage with `use_regex`
    and `add_prefix_space` as given."""
    cfg = base_config()
    vocab, merges = power_vocabulary()
    cfg["model"]["vocab"], cfg["model"]["merges"] = vocab, merges
    behavior, invert = ("Removed", True) if removed_inverted else ("Isolated", False)
    splits = [{"type": "Split", "pattern": {"Regex": r}, "behavior": behavior, "invert": invert} for r in regexes]
    byte_level = {"type": "ByteLevel", "add_prefix_space": add_prefix_space, "trim_offsets": False,
                  "use_regex": use_regex}
    cfg["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [*splits, byte_level]}
    cfg["added_tokens"] = [_added(END, len(vocab))]
    return cfg


def stages_tokenizer(name: str, folder: Path, regexes: tuple[str, ...], **byte_level: bool) -> FrozenTokenizer:
    """Write `stages_config(regexes, **byte_level)` into `folder` and load it as `name` (provenance "file")."""
    path, _ = write(folder, stages_config(regexes, **byte_level), name=name)
    return load_tokenizer_file(path, name=name)


# --- a vocabulary whose mark-tail token depends on the length of the mark run ------------------------------------

KANNADA_MARK, KANNADA_PUNCT = "\u0c82", "\u0c84"  # the first pair of spec.repair.MARK_TAIL_PAIRS


def mark_parity_config(regex: str) -> dict:
    """An admissible byte-level BPE, one Split stage with `regex`, whose merges are, in rank order: the two lead
    bytes E0 B2 that U+0C82 and U+0C84 share, then U+0C82 whole (M), then M M, then M + E0 B2.

    BPE pairs a run of marks from its left end before it reaches the last merge, so the last mark of an odd run
    is left alone and joins the first two bytes of a U+0C84 after it, while an even run ends in an M M token that
    no merge joins: whether a token crosses from the marks into the punctuation depends on the run's parity."""
    cfg = base_config()
    vocab = {ch: i for i, ch in enumerate(_byte_alphabet())}
    mark = to_alphabet(KANNADA_MARK)
    lead = mark[:2]
    merges = [[lead[0], lead[1]], [lead, mark[2]], [mark, mark], [mark, lead]]
    for left, right in merges:
        vocab.setdefault(left + right, len(vocab))
    cfg["model"]["vocab"], cfg["model"]["merges"] = vocab, merges
    cfg["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = regex
    cfg["added_tokens"] = [_added(END, len(vocab))]
    return cfg


def mark_parity_tokenizer(folder: Path, regex: str) -> FrozenTokenizer:
    """Write `mark_parity_config(regex)` into `folder` and load it as `synthetic_mark_parity` (provenance "file")."""
    name = "synthetic_mark_parity"
    path, _ = write(folder, mark_parity_config(regex), name=name)
    return load_tokenizer_file(path, name=name)
