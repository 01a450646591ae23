"""Tokenizers derived from a provisioned one for a control whose broken condition no provisioned tokenizer has.

Every provisioned tokenizer satisfies the special-token rule's premises (`spec.special_cut`), so a control that
drops a premise check has nothing to break on them. `stripping_markers(tok)` is the same configuration with
lstrip and rstrip set on every added token (what some configurations do for their markers): admission refuses
it, and the control that ignores that refusal must be caught cutting next to a marker whose match swallows
the whitespace beside it. The derived file is built in memory from the reference's own serialization of
`tok`, named after it ("<name>+stripping_markers"), and never enters the registry or the cache.

Whole-word tokenizers (`spec.whole_word`) too: admission refuses the derived file with the strip reason and the
whole-word kind, so the control's broken admission judges it by the whole-word rules (free pairs, the chunk
encoder), and what kills it is the strip premise itself (on Llama 2's file: "\t<unk>\n\n<s>\n" cut at 1, where the
marker's lstrip swallows the tab; 18 of 216 ci strings).
"""

from __future__ import annotations

import json
from functools import lru_cache

from delta_suite.frozen.loader import FrozenTokenizer, build
from delta_suite.spec.admission import admission_of

LETTER_MARKER = "zqxmark"  # the marker a piece-local derivation adds: letters at both edges, never a separator


@lru_cache(maxsize=16)
def stripping_markers(tok: FrozenTokenizer) -> FrozenTokenizer:
    """`tok` with lstrip and rstrip set on every added token of its tokenizer.json. For a piece-local tokenizer
    (`spec.piece_local`), also single_word, and one more such marker, `LETTER_MARKER`: its files' markers are
    bracketed by punctuation that a Bert or Whitespace pre-tokenizer splits at, and they drop whitespace, so lstrip
    and rstrip change no ID there; single_word on a marker that begins and ends with letters does (the reference
    leaves "a" + marker unmatched, the broken special-token rule cuts there)."""
    config = json.loads(tok.tokenizer.to_str())
    piece_local = admission_of(tok).piece_local
    for token in config.get("added_tokens", []):
        token["lstrip"] = token["rstrip"] = True
        token["single_word"] = token["single_word"] or piece_local
    if piece_local:
        ids = [t["id"] for t in config.get("added_tokens", [])] + [tok.tokenizer.get_vocab_size(True) - 1]
        config.setdefault("added_tokens", []).append(
            {"id": max(ids) + 1, "content": LETTER_MARKER, "single_word": True, "lstrip": True, "rstrip": True,
             "normalized": False, "special": True})
    return build(f"{tok.name}+stripping_markers", json.dumps(config).encode("utf-8"), None, provenance="file")


DERIVATIONS = {"stripping_markers": stripping_markers}
