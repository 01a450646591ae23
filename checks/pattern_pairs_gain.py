"""How many more cuts the per-pattern transition sets accept than the floor alone, on given texts.

Invariant measured, per text: the accepted cuts under the floor (`CutRules(pattern_pairs="floor")`) are a subset
of those under the tokenizer's own pattern pairs (the default rules), and every cut gained is at a pair of its
pattern's set (or an apostrophe after a letter where the pattern drops that carve-out). Each gained cut is also
checked against the reference (ref(text[:b]) + ref(text[b:]) == ref(text)) when `verify` is set.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from delta_suite.delta.cut_map import cut_map
from delta_suite.frozen.loader import FrozenTokenizer
from delta_suite.spec.classes import CLASS_NAMES, L, O, class_table
from delta_suite.spec.cut import DEFAULT_CUT_RULES, CutRules
from delta_suite.spec.reference import reference_ids_batch
from delta_suite.spec.transitions import APOSTROPHE

FLOOR = CutRules(pattern_pairs="floor")


@dataclass
class Gain:
    """Accepted cuts under the floor and under the pattern's own set, the gained ones by class pair, and what a
    check of the gained cuts against the reference found."""

    tokenizer: str
    texts: int = 0
    characters: int = 0
    floor_cuts: int = 0
    own_cuts: int = 0
    lost: int = 0  # cuts the floor accepts and the own set does not (must stay 0)
    by_pair: Counter = field(default_factory=Counter)
    verified: int = 0
    differences: list[dict] = field(default_factory=list)

    @property
    def gained(self) -> int:
        return self.own_cuts - self.floor_cuts

    def as_dict(self) -> dict:
        return {"tokenizer": self.tokenizer, "texts": self.texts, "characters": self.characters,
                "floor_cuts": self.floor_cuts, "own_cuts": self.own_cuts, "gained": self.gained,
                "gained_share": round(self.gained / self.floor_cuts, 4) if self.floor_cuts else None,
                "lost": self.lost, "gained_by_pair": dict(self.by_pair.most_common()), "verified": self.verified,
                "differences": self.differences[:5]}


def pattern_pairs_gain(tok: FrozenTokenizer, texts: Iterable[str], verify: int = 0) -> Gain:
    """Count the accepted cuts of every text under both rule sets; check up to `verify` gained cuts on the
    reference (every text's gained cuts in order until the budget is spent)."""
    out = Gain(tok.name)
    table = class_table()
    for text in texts:
        out.texts += 1
        out.characters += len(text)
        floor = set(cut_map(tok, text, FLOOR).accepted())
        own = set(cut_map(tok, text, DEFAULT_CUT_RULES).accepted())
        out.floor_cuts += len(floor)
        out.own_cuts += len(own)
        out.lost += len(floor - own)
        gained = sorted(own - floor)
        for b in gained:
            x, y = table[ord(text[b - 1])], table[ord(text[b])]
            apostrophe = (x, y) == (L, O) and text[b] == APOSTROPHE  # the carve-out the pattern may drop
            out.by_pair[f"{CLASS_NAMES[x]}→{APOSTROPHE if apostrophe else CLASS_NAMES[y]}"] += 1
        take = gained[: max(0, verify - out.verified)]
        if take:
            pieces = [text, *(text[:b] for b in take), *(text[b:] for b in take)]
            ids = reference_ids_batch(tok, pieces)
            whole, lefts, rights = ids[0], ids[1 : 1 + len(take)], ids[1 + len(take) :]
            for b, left, right in zip(take, lefts, rights, strict=True):
                out.verified += 1
                if left + right != whole:
                    out.differences.append({"text": text[max(0, b - 20) : b + 20], "cut": b})
    return out
