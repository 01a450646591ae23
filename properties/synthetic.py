"""Small tokenizer.json files the tests write: a byte-level BPE over the 256-byte alphabet, and broken variants.

The base is admissible (BPE, ByteLevel without regex after one Isolated Split with the Qwen2 pattern, no
normalizer); each `variant` changes exactly one thing that admission must refuse.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

from frozen.loader import byte_decoder
from spec.patterns import QWEN2


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
