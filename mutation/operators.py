"""The mutation operators the profile keeps: cosmic-ray's core operators minus the ones that mostly make noise.

cosmic-ray replaces every binary operator by each of ten others and every comparison by each of seven others; most
of those variants are crashes or absurdities that any test kills (a `+` on strings turned into `**`). The profile
keeps the variants a reviewer would write by hand (the off-by-one, the flipped test, the dropped `not`, the number
changed by one, the swapped boolean, the loop that never runs, the `and`/`or` swap, the removed decorator) and
excludes the rest by cosmic-ray's own operators filter. The patterns are regular expressions over operator names.
"""

from __future__ import annotations

import re

KEPT_BINARY = ("Add_Sub", "Sub_Add", "Mul_FloorDiv", "FloorDiv_Mul", "BitAnd_BitOr", "BitOr_BitAnd")
KEPT_COMPARISON = ("Lt_LtE", "LtE_Lt", "Gt_GtE", "GtE_Gt", "Eq_NotEq", "NotEq_Eq", "Is_IsNot", "IsNot_Is",
                   "Lt_GtE", "GtE_Lt", "Gt_LtE", "LtE_Gt")
KEPT_UNARY = ("Delete_Not", "USub_UAdd")

EXCLUDED_OPERATORS: tuple[str, ...] = (
    r"core/ReplaceBinaryOperator_(?!(?:" + "|".join(KEPT_BINARY) + r")$)",
    r"core/ReplaceComparisonOperator_(?!(?:" + "|".join(KEPT_COMPARISON) + r")$)",
    r"core/ReplaceUnaryOperator_(?!(?:" + "|".join(KEPT_UNARY) + r")$)",
    r"core/VariableInserter",  # inserts an unrelated name into an expression: almost always a crash
    r"core/VariableReplacer",  # replaces a name by a random one: same
    r"core/ExceptionReplacer",  # replaces caught exceptions by a fresh class: tested by the error tests anyway
)


def is_excluded(operator: str) -> bool:
    """Whether the profile drops `operator` (cosmic-ray applies the same patterns with `re.match`)."""
    return any(re.match(p, operator) for p in EXCLUDED_OPERATORS)


def operator_kind(operator: str) -> str:
    """The operator without its last two `_`-separated parts (`core/ReplaceComparisonOperator_Lt_LtE` ->
    `core/ReplaceComparisonOperator`); a name with fewer than two `_` is its own kind (`core/NumberReplacer`). A
    sample draws one kind after another, a change's mutants prefer distinct kinds on a line."""
    parts = operator.rsplit("_", 2)
    return parts[0] if len(parts) == 3 else operator
