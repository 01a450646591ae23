"""The cut proposition: whether a cut at offset b of a text is safe, which rule accepts it, or what refuses it.

Two rules accept cuts; both require the guard (1). A cut at code-point offset b of text S (0 < b < len(S)) of an
admitted tokenizer is accepted
- by the special-token rule (`spec.special_cut`, verdict "accepted:special_token") iff (1) holds and b is the
  start or the end of a special-token occurrence that the reference's scan selects; or else
- by the transition rule (verdict "accepted:transition") iff
1. (spec.guard) b lies strictly inside no occurrence of any special-token string, overlapping ones included;
2. (spec.transitions) (class(S[b-1]), class(S[b])) is an accepted pair with no carve-out applying to S[b],
   classes from the reference's own regex engine (spec.classes);
3. (spec.normalization, NFC tokenizers only) anchors a < b < c exist within 256 code points, no special-token
   occurrence touches S[a:c], NFC(S[a:c]) == NFC(S[a:b]) + NFC(S[b:c]), and the normalized pair at b is again an
   accepted transition.
Then ref(S[:b]) + ref(S[b:]) == ref(S), and any set of accepted cuts of either rule concatenates exactly.

A whole-word tokenizer (`spec.whole_word`: the SentencePiece style, no splitting pre-tokenizer) has no class
transitions: after the guard and the special-token rule, its cuts are judged by the free-pair rule
(`spec.free_pair_cut`, verdict "accepted:free_pair"), and its chunks are encoded by that module's chunk encoder.

`CutRules` holds the knobs; its defaults are the correct specification, and every other value is a broken
variant that the controls use to show the properties can fail.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, replace
from functools import lru_cache

from delta_suite.frozen.loader import FrozenTokenizer
from delta_suite.spec.admission import PIECE_LOCAL, STRIP_REFUSAL, WHOLE_WORD, admission_of
from delta_suite.spec.classes import CLASS_NAMES, L, M, N, O, S, class_table
from delta_suite.spec.families import is_apostrophe_free, is_crlf_free, is_family, pairs_of
from delta_suite.spec.free_pair_cut import ACCEPTED_FREE_PAIR, CHUNK_PREFIXES, FREE_PAIR_TABLES, free_pair_verdict
from delta_suite.spec.guard import GUARD_MODES, cut_inside_special, special_touches
from delta_suite.spec.normalization import anchors_around, nfc_split
from delta_suite.spec.piece_local import ACCEPTED_SEPARATOR, SEPARATOR_SETS, piece_local_rules, separator_verdict
from delta_suite.spec.special_cut import SPECIAL_RULE_MODES, at_selected_edge, premises_hold
from delta_suite.spec.transitions import ACCEPTED_PAIRS, APOSTROPHE, CR_LF

CLASS_SOURCES = ("engine", "python")
ACCEPTED_TRANSITION = "accepted:transition"
ACCEPTED_SPECIAL = "accepted:special_token"
ACCEPTED_VERDICTS = (ACCEPTED_TRANSITION, ACCEPTED_SPECIAL, ACCEPTED_FREE_PAIR, ACCEPTED_SEPARATOR)
ACCEPTED = ACCEPTED_TRANSITION  # the transition rule's verdict (pair_verdict's "no objection")


@dataclass(frozen=True)
class CutRules:
    """The knobs of the cut proposition; the defaults are the specification, anything else a broken variant."""

    pairs: frozenset = ACCEPTED_PAIRS
    cr_lf_carveout: bool = True
    apostrophe_carveout: bool = True
    guard: str = "all"  # "all" | "selected" | "off"
    check_normalization: bool = True
    anchor_reorder_probes: bool = True
    anchor_hangul_probes: bool = True
    class_source: str = "engine"  # "engine" | "python"
    special_rule: str = "selected"  # "selected" | "any_occurrence" | "off"
    check_premises: bool = True  # False: strip/single_word tokens neither refuse admission nor the special rule
    nfc_window_specials: bool = True  # False: a special-token occurrence may touch the NFC window S[a:c]
    nfc_equation: bool = True  # False: the NFC equation is not required (the window need not split at b)
    nfc_recheck: bool = True  # False: the normalized pair at b is not checked again
    nfc_anchor_search: bool = True  # False: no search for anchors; the NFC window is the pair S[b-1:b+1]
    pattern_pairs: str = "own"  # "own": the floor plus the tokenizer's pattern's proved pairs (spec.transitions);
    # "floor": the floor alone (conservative, correct); a family name: that pattern's pairs for every tokenizer
    free_pair_table: str = "vocabulary"  # whole-word: "forgets_first_merge" misses the first merge's pair
    free_pair_offset: int = 0  # whole-word: 1 judges the pair one character to the right of the cut
    chunk_prefix: str = "scheme"  # whole-word: "full" encodes every later chunk by the tokenizer itself
    separators: str = "proved"  # piece-local: "ignore_normalizer" / "ignore_pre_tokenizer" skip premise S2 / S3
    piece_special_edges: bool = True  # piece-local: False takes special-token edges even under Metaspace "first"

    def __post_init__(self) -> None:
        if self.free_pair_table not in FREE_PAIR_TABLES:
            raise ValueError(f"free_pair_table must be one of {FREE_PAIR_TABLES}, not {self.free_pair_table!r}")
        if self.separators not in SEPARATOR_SETS:
            raise ValueError(f"separators must be one of {SEPARATOR_SETS}, not {self.separators!r}")
        if self.chunk_prefix not in CHUNK_PREFIXES:
            raise ValueError(f"chunk_prefix must be one of {CHUNK_PREFIXES}, not {self.chunk_prefix!r}")
        if self.special_rule not in SPECIAL_RULE_MODES:
            raise ValueError(f"special_rule must be one of {SPECIAL_RULE_MODES}, not {self.special_rule!r}")
        if self.guard not in GUARD_MODES:
            raise ValueError(f"guard must be one of {GUARD_MODES}, not {self.guard!r}")
        if self.pattern_pairs not in ("own", "floor") and not is_family(self.pattern_pairs):
            raise ValueError(f"pattern_pairs must be 'own', 'floor' or a family, not {self.pattern_pairs!r}")
        if self.class_source not in CLASS_SOURCES:
            raise ValueError(f"class_source must be one of {CLASS_SOURCES}, not {self.class_source!r}")


DEFAULT_CUT_RULES = CutRules()


@lru_cache(maxsize=1)
def python_class_table() -> bytes:
    """The class table Python's own `unicodedata` would give (str.isspace, then the major general category).

    This is the mistake the engine table exists to avoid: Python's Unicode version is not the reference's, and
    str.isspace also counts U+001C..U+001F. Used only by the class_source="python" broken variant.
    """
    table = bytearray(0x110000)
    major = {"L": L, "N": N, "M": M}
    for cp in range(0x110000):
        ch = chr(cp)
        if ch.isspace():
            table[cp] = S
        else:
            table[cp] = major.get(unicodedata.category(ch)[0], O)
    return bytes(table)


def rules_table(rules: CutRules) -> bytes:
    """The class table the rules name: the reference engine's, or Python's for the broken variant."""
    return class_table() if rules.class_source == "engine" else python_class_table()


@lru_cache(maxsize=256)
def rules_for(tok: FrozenTokenizer, rules: CutRules = DEFAULT_CUT_RULES) -> CutRules:
    """The rules as they apply to `tok`: with pattern_pairs "own", its admitted pattern's proved pairs join the
    floor and, for an apostrophe-free pattern, the apostrophe carve-out is dropped (spec.transitions); the
    result names "floor" so applying it again changes nothing."""
    family = admission_of(tok).pattern if rules.pattern_pairs == "own" else rules.pattern_pairs
    return rules_for_family(family, rules)


def rules_for_family(family: str | None, rules: CutRules = DEFAULT_CUT_RULES) -> CutRules:
    """`rules_for` by pattern family, known or derived (`spec.families`; None or "floor": the floor)."""
    if rules.pattern_pairs != "own" and family != rules.pattern_pairs:
        family = rules.pattern_pairs
    if family is None or family == "floor":
        return replace(rules, pattern_pairs="floor")
    return replace(rules, pairs=rules.pairs | pairs_of(family), pattern_pairs="floor",
                   apostrophe_carveout=rules.apostrophe_carveout and not is_apostrophe_free(family),
                   cr_lf_carveout=rules.cr_lf_carveout and not is_crlf_free(family))


def pair_verdict(left: str, right: str, table: bytes, rules: CutRules) -> str:
    """The class-transition condition for one character pair: ACCEPTED, or the refusing reason code."""
    lcls, rcls = table[ord(left)], table[ord(right)]
    if (lcls, rcls) not in rules.pairs:
        return f"transition_refused:{CLASS_NAMES[lcls]}{CLASS_NAMES[rcls]}"
    if rules.cr_lf_carveout and (lcls, rcls) == (O, S) and right in CR_LF:
        return "carveout_cr_lf"
    if rules.apostrophe_carveout and (lcls, rcls) == (L, O) and right == APOSTROPHE:
        return "carveout_apostrophe"
    return ACCEPTED


def refused_only_for_strip(tok: FrozenTokenizer) -> bool:
    """Admission refused `tok` for a token that strips whitespace or matches single words (premise P2 of
    `spec.special_cut`) and for nothing else that it checks first (the broken variant check_premises=False)."""
    return admission_of(tok).reason.startswith(STRIP_REFUSAL)


def explain_cut(tok: FrozenTokenizer, text: str, b: int, rules: CutRules = DEFAULT_CUT_RULES) -> str:
    """Which rule accepts the cut at b ("accepted:special_token" or "accepted:transition"), or the first failing
    condition's reason code. The special-token rule is tried first: a role marker's edge needs no transition.

    Reason codes: out_of_range, not_admitted, inside_special, transition_refused:XY, carveout_cr_lf,
    carveout_apostrophe, nfc_no_left_anchor, nfc_no_right_anchor, nfc_window_touches_special, nfc_not_split,
    nfc_transition_refused:XY, nfc_carveout_cr_lf, nfc_carveout_apostrophe.
    """
    if not 0 < b < len(text):
        return "out_of_range"
    admission = admission_of(tok)
    if not admission.admitted and (rules.check_premises or not refused_only_for_strip(tok)):
        return "not_admitted"
    if admission.kind == WHOLE_WORD:  # admitted, or refused only for a stripping token (a control's variant)
        return _whole_word_verdict(tok, text, b, rules)
    if admission.kind == PIECE_LOCAL:
        return _piece_local_verdict(tok, text, b, rules)
    rules = rules_for(tok, rules)
    if cut_inside_special(tok, text, b, rules.guard) is not None:
        return "inside_special"
    premises = premises_hold(tok) or not rules.check_premises
    if premises and at_selected_edge(tok, text, b, rules.special_rule) is not None:
        return ACCEPTED_SPECIAL
    table = rules_table(rules)
    verdict = pair_verdict(text[b - 1], text[b], table, rules)
    if verdict != ACCEPTED:
        return verdict
    if tok.is_nfc and rules.check_normalization:
        return _normalization_verdict(tok, text, b, table, rules)
    return ACCEPTED


def _whole_word_verdict(tok: FrozenTokenizer, text: str, b: int, rules: CutRules) -> str:
    """`explain_cut` for a whole-word tokenizer: the guard, the special-token rule, then the free-pair rule."""
    if cut_inside_special(tok, text, b, rules.guard) is not None:
        return "inside_special"
    premises = premises_hold(tok) or not rules.check_premises
    if premises and at_selected_edge(tok, text, b, rules.special_rule) is not None:
        return ACCEPTED_SPECIAL
    return free_pair_verdict(tok, text, b, rules.free_pair_table, rules.free_pair_offset)


def _piece_local_verdict(tok: FrozenTokenizer, text: str, b: int, rules: CutRules) -> str:
    """`explain_cut` for a piece-local tokenizer: the guard, the special-token rule where its edges are exact
    (`PieceLocalRules.special_edges`), then the separator rule (`spec.piece_local`)."""
    if cut_inside_special(tok, text, b, rules.guard) is not None:
        return "inside_special"
    premises = premises_hold(tok) or not rules.check_premises
    edges_exact = piece_local_rules(tok).special_edges or not rules.piece_special_edges
    if premises and edges_exact and at_selected_edge(tok, text, b, rules.special_rule) is not None:
        return ACCEPTED_SPECIAL
    return separator_verdict(tok, text, b, rules.separators)


def _normalization_verdict(tok: FrozenTokenizer, text: str, b: int, table: bytes, rules: CutRules) -> str:
    """Condition 3 for an NFC tokenizer: anchors, no special-token occurrence in the window, the NFC equation,
    and the normalized pair at b again an accepted transition."""
    if rules.nfc_anchor_search:
        a, c = anchors_around(text, b, table, rules.anchor_reorder_probes, rules.anchor_hangul_probes,
                              form=tok.normal_form)
    else:
        a, c = b - 1, b + 1
    if a is None:
        return "nfc_no_left_anchor"
    if c is None:
        return "nfc_no_right_anchor"
    if rules.nfc_window_specials and special_touches(tok, text, a, c, rules.guard) is not None:
        return "nfc_window_touches_special"
    split = nfc_split(text, a, b, c, tok.normal_form)
    if split is None:
        return "nfc_not_split" if rules.nfc_equation else ACCEPTED
    before, after = split
    verdict = pair_verdict(before[-1], after[0], table, rules) if rules.nfc_recheck else ACCEPTED
    if verdict != ACCEPTED:
        return "nfc_" + verdict
    return ACCEPTED


def is_safe_cut(tok: FrozenTokenizer, text: str, b: int, rules: CutRules = DEFAULT_CUT_RULES) -> bool:
    """The cut proposition: True iff one of the two rules accepts the cut at b (see the module docstring)."""
    return explain_cut(tok, text, b, rules) in ACCEPTED_VERDICTS


def accepted_cuts(tok: FrozenTokenizer, text: str, rules: CutRules = DEFAULT_CUT_RULES) -> list[int]:
    """Every offset 0 < b < len(text) that the rules accept."""
    return [b for b in range(1, len(text)) if is_safe_cut(tok, text, b, rules)]
