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


@lru_cache(maxsize=16)
def stripping_markers(tok: FrozenTokenizer) -> FrozenTokenizer:
    """`tok` with lstrip and rstrip set on every added token of its tokenizer.json."""
    config = json.loads(tok.tokenizer.to_str())
    for token in config.get("added_tokens", []):
        token["lstrip"] = token["rstrip"] = True
    return build(f"{tok.name}+stripping_markers", json.dumps(config).encode("utf-8"), None, provenance="file")


DERIVATIONS = {"stripping_markers": stripping_markers}
