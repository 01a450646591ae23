"""Tokenizers derived from a provisioned one for a control whose broken condition no provisioned tokenizer has.

Every provisioned tokenizer satisfies the special-token rule's premises (`spec.special_cut`), so a control that
drops a premise check has nothing to break on them. `stripping_markers(tok)` is the same configuration with
lstrip and rstrip set on every added token (what some configurations do for their markers): admission refuses
it, and the control that ignores that refusal must be caught cutting next to a marker whose match swallows
the whitespace beside it. The derived file is built in memory from the reference's own serialization of
`tok`, named after it ("<name>+stripping_markers"), and never enters the registry or the cache.

Byte-level tokenizers only: for a whole-word one (`spec.whole_word`) admission refuses the derived file with the
strip reason and the default (byte-level) kind, before any whole-word judgement, so the control's broken admission
would judge it by the byte-level rules (class transitions, halves encoded apart) and "kill" it for reasons that are
not the strip premise (on Llama 2's file: 204 of 216 ci strings, with unit differences); `controls.registry` does
not apply cut.special_ignores_strip there.
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
