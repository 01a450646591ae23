"""The controls by name: each is the minimal implementation with exactly one thing broken.

A cut control is a `CutRules` with one knob off the specification, a repair control a `RepairParams` with one
knob off, and a harness control a fault planted in a correct result that the comparison code must detect.
The battery must find at least one difference for each control (the kill) on some provisioned tokenizer, and
none for the unbroken implementation.

`applies(tok)` says whether the broken condition exists for a tokenizer at all (the normalization and anchor
conditions exist only for NFC tokenizers); elsewhere the control is "not applicable", never "killed".
`redundant_for` names the split-pattern families where the removed condition is proven redundant
(`controls.proofs`, each proof with its test); there a surviving control is "survives-by-proof", and a kill
would refute the proof.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from delta_suite.controls.derived import stripping_markers
from delta_suite.controls.faults import FAULTS, Planter
from delta_suite.controls.proofs import (
    bound_covers_margin,
    nfc_specials_edged_by_anchors,
    overlap_interiors_without_witness,
    overlapping_specials,
)
from delta_suite.frozen.loader import FrozenTokenizer
from delta_suite.spec.admission import admission_of
from delta_suite.spec.classes import L, M, N, O, S, class_table
from delta_suite.spec.cut import ACCEPTED_TRANSITION, DEFAULT_CUT_RULES, CutRules, pair_verdict, rules_for_family
from delta_suite.spec.families import is_derived
from delta_suite.spec.repair import DEFAULT_REPAIR_PARAMS, RepairParams
from delta_suite.spec.transitions import ACCEPTED_PAIRS

PATHS = ("cut", "repair", "harness")
ALL_FAMILIES = frozenset({"qwen2", "qwen3_5", "llama3", "o200k", "tekken", "deepseek"})


def _always(tok: FrozenTokenizer) -> bool:
    return True


def _overlapping_specials(tok: FrozenTokenizer) -> bool:
    """Some special-token strings overlap or contain one another: only then can an occurrence go unselected."""
    specials = tok.special_strings[:512]
    return bool(overlapping_specials(tok.special_strings)) or any(a != b and a in b for a in specials for b in specials)


def _nfc_only(tok: FrozenTokenizer) -> bool:
    """The normalization condition (and its anchor predicate) exists only for NFC tokenizers."""
    return tok.is_nfc


def _specials_edged_by_anchors(tok: FrozenTokenizer) -> bool:
    """The premise of nfc_specials_edged_by_anchors: every special string begins and ends with an anchor."""
    return nfc_specials_edged_by_anchors(tok).holds


def _last_interior_is_transition(tok: FrozenTokenizer) -> bool:
    """The offset before a special-token string's last character can be a cut only without NFC (the
    normalization window refuses every offset next to an occurrence) and only for a string whose last two
    characters are an accepted transition (`</think>`, `[/INST]`; not `<|end|>`): elsewhere a guard that forgets
    that offset changes no verdict."""
    table = class_table()
    return not tok.is_nfc and any(
        len(s) > 2 and pair_verdict(s[-2], s[-1], table, DEFAULT_CUT_RULES) == ACCEPTED_TRANSITION
        for s in tok.special_strings)


@dataclass(frozen=True)
class Control:
    """One broken variant: which path it breaks, what it breaks, and the knobs or fault that break it."""

    name: str
    path: str  # "cut" | "repair" | "harness"
    breaks: str  # the one condition removed or changed, in words: the control's description (`fuzz --list-controls`)
    rules: CutRules | None = None
    params: RepairParams | None = None
    fault: Planter | None = None
    cut_fault: str | None = None  # a broken variant of the minimal implementation's array cut evaluation
    applies: Callable[[FrozenTokenizer], bool] = _always
    redundant_for: frozenset[str] = field(default_factory=frozenset)  # pattern families with a redundancy proof
    proof: str = ""  # the controls.proofs function that proves it, when redundant_for is not empty
    premise: Callable[[FrozenTokenizer], bool] = _always  # a tokenizer-level premise of that proof, where it has one
    derive: Callable[[FrozenTokenizer], FrozenTokenizer] | None = None  # checked on a tokenizer derived from each

    def subject_tokenizer(self, tok: FrozenTokenizer) -> FrozenTokenizer:
        """The tokenizer the battery checks this control on: `tok`, or the one derived from it."""
        return self.derive(tok) if self.derive is not None else tok

    def redundant_on(self, tok: FrozenTokenizer) -> bool:
        """Whether the redundancy proof covers `tok`: its pattern family is claimed and its premise holds there.
        A derived family (admitted by proof, `spec.proofs.derive`) is covered by the claims made for every family
        (their arguments rest on the per-pattern proofs its derivation repeats), and by any cut control whose rules
        are, for that family, the specification's own rules (its derived pairs or apostrophe rule make the
        control's change a no-op: the equality is the proof, as `pattern_pairs_equal` is for qwen2; the array
        evaluation's CR/LF fault is a no-op where the family applies no CR/LF carve-out)."""
        family = admission_of(tok).pattern
        if is_derived(family):
            own = rules_for_family(family)
            fault_inert = self.cut_fault is None or (self.cut_fault == "crlf_carveout_misses_cr"
                                                     and not own.cr_lf_carveout)
            same_rules = self.rules is not None and fault_inert and rules_for_family(family, self.rules) == own
            return (self.redundant_for == ALL_FAMILIES or same_rules) and self.premise(tok)
        return family in self.redundant_for and self.premise(tok)

    def status_if_survives(self, tok: FrozenTokenizer) -> str:
        """What a survival on `tok` means: "survives-by-proof" where proven redundant, else "survived" (a finding)."""
        return "survives-by-proof" if self.redundant_on(tok) else "survived"


def _cut(name: str, breaks: str, rules: CutRules, **kw) -> Control:
    return Control(name, "cut", breaks, rules=rules, **kw)


def _repair(name: str, breaks: str, params: RepairParams, **kw) -> Control:
    return Control(name, "repair", breaks, params=params, **kw)


# What each planted fault (controls.faults.FAULTS) does to the correct IDs: the harness controls' `breaks`.
HARNESS_BREAKS: dict[str, str] = {
    "substitute_id": "one ID replaced by a different valid ID (same length, one wrong token)",
    "delete_id": "one ID removed (one token short)",
    "duplicate_id": "one ID repeated in place (one token too many)",
    "swap_ids": "two different neighbouring IDs exchanged (same multiset, wrong order)",
    "resplit_tail": "two tokens near the end re-split at another byte (same bytes and count, different IDs)",
}


def _pairs_plus(pair: tuple[int, int]) -> frozenset:
    return ACCEPTED_PAIRS | {pair}


_CONTROLS: tuple[Control, ...] = (
    _cut("cut.no_normalization", "the normalization condition removed", CutRules(check_normalization=False),
         applies=_nfc_only),
    _cut("cut.no_guard", "the special-token guard removed", CutRules(guard="off")),
    _cut("cut.nfc_window_ignores_specials", "the NFC window may touch a special-token occurrence",
         CutRules(nfc_window_specials=False), applies=_nfc_only, redundant_for=ALL_FAMILIES,
         proof="nfc_specials_edged_by_anchors", premise=_specials_edged_by_anchors),
    _cut("cut.nfc_no_equation", "the NFC equation not required (the normalizer need not split the window at b)",
         CutRules(nfc_equation=False), applies=_nfc_only),
    _cut("cut.nfc_no_recheck", "the normalized pair at b not checked again", CutRules(nfc_recheck=False),
         applies=_nfc_only),
    _cut("cut.nfc_window_is_pair", "no anchor search: the NFC window is the pair S[b-1:b+1]",
         CutRules(nfc_anchor_search=False), applies=_nfc_only),
    _cut("cut.guard_selected_only", "the guard checks only the selected, non-overlapping occurrences",
         CutRules(guard="selected"), redundant_for=ALL_FAMILIES, proof="selected_occurrences_match_reference"),
    _cut("cut.special_any_occurrence", "the special-token rule accepts the edge of any occurrence, selected or not",
         CutRules(special_rule="any_occurrence"), applies=_overlapping_specials),
    _cut("cut.special_ignores_strip", "the special-token rule and admission ignore markers that strip whitespace "
         "(checked on the tokenizer with lstrip and rstrip set on its markers)",
         CutRules(check_premises=False), derive=stripping_markers),
    _cut("cut.add_N_N", "N->N (number then number) added to the accepted transitions: a cut allowed between two digits",
         CutRules(pairs=_pairs_plus((N, N))),
         redundant_for=frozenset({"qwen2", "tekken"}), proof="single_digit_pretokens"),
    _cut("cut.pattern_pairs_of_qwen2", "qwen2's proved pairs (single digits, marks, no apostrophe carve-out) "
         "applied to every tokenizer, whatever its pattern", CutRules(pattern_pairs="qwen2"),
         redundant_for=frozenset({"qwen2"}), proof="pattern_pairs_equal"),
    _cut("cut.add_S_L", "S->L (whitespace then letter) added to the accepted transitions",
         CutRules(pairs=_pairs_plus((S, L)))),
    _cut("cut.add_O_L", "O->L (other, e.g. punctuation, then letter) added to the accepted transitions",
         CutRules(pairs=_pairs_plus((O, L)))),
    _cut("cut.add_M_O", "M->O (mark then other) added to the accepted transitions",
         CutRules(pairs=_pairs_plus((M, O))),
         redundant_for=frozenset({"deepseek"}), proof="marks_end_before_other"),
    _cut("cut.no_crlf_carveout", "the CR/LF carve-out of O->S (other then whitespace) removed",
         CutRules(cr_lf_carveout=False)),
    _cut("cut.no_apostrophe_carveout", "the apostrophe carve-out of L->O (letter then other) removed",
         CutRules(apostrophe_carveout=False), redundant_for=frozenset({"qwen2", "llama3", "tekken", "deepseek"}),
         proof="letter_runs_stop_before_apostrophe"),
    _cut("cut.anchor_no_hangul", "the anchor predicate without the Hangul probes",
         CutRules(anchor_hangul_probes=False), applies=_nfc_only, redundant_for=ALL_FAMILIES,
         proof="hangul_probes_class_preserving"),
    _cut("cut.anchor_no_reorder", "the anchor predicate without the reordering probes",
         CutRules(anchor_reorder_probes=False), applies=_nfc_only, redundant_for=ALL_FAMILIES,
         proof="reorder_probes_implied"),
    _cut("cut.vector_guard_misses_last_interior",
         "the array cut evaluation (delta_suite.delta.cut_map) forgets the last "
         "interior offset of each special-token occurrence (the specification itself unchanged; under NFC the "
         "normalization window refuses that offset too)", DEFAULT_CUT_RULES,
         cut_fault="guard_misses_last_interior", applies=_last_interior_is_transition),
    _cut("cut.vector_crlf_misses_cr",
         "the array cut evaluation (delta_suite.delta.cut_map) applies the CR/LF carve-out to LF "
         "only (the specification itself unchanged)", DEFAULT_CUT_RULES, cut_fault="crlf_carveout_misses_cr"),
    _cut("cut.python_class_table", "the class table from Python's unicodedata instead of the reference",
         CutRules(class_source="python")),
    _repair("repair.unchecked_reuse", "no seam check: stored IDs + the encode of D alone",
            RepairParams(check_seam=False)),
    _repair("repair.match_ids_only", "runs matched on IDs only", RepairParams(match_key="ids")),
    _repair("repair.match_spans_only", "runs matched on spans only (LoPT's position matching)",
            RepairParams(match_key="spans")),
    _repair("repair.no_bound", "no bound on the matched run's coverage", RepairParams(require_bound=False),
            redundant_for=ALL_FAMILIES, proof="accepted_runs_resynchronize",
            premise=overlap_interiors_without_witness),
    _repair("repair.no_witness", "no sync witness inside the matched run", RepairParams(require_witness=False)),
    _repair("repair.margin_0", "margin 0: the overlap starts at the window start", RepairParams(margin=0),
            redundant_for=ALL_FAMILIES, proof="accepted_runs_resynchronize", premise=bound_covers_margin),
    _repair("repair.nfc_window_start_unanchored", "the window start not moved to an NFC anchor (the window text "
            "may normalize unlike the whole text's suffix at its start)", RepairParams(anchor_window_start=False),
            applies=_nfc_only, redundant_for=ALL_FAMILIES, proof="accepted_runs_resynchronize"),
    _repair("repair.one_token_match", "one-token matched runs accepted", RepairParams(min_match_tokens=1),
            redundant_for=ALL_FAMILIES, proof="one_token_runs_rejected"),
    *(
        Control(f"harness.{name}", "harness", f"planted in a correct ID sequence: {HARNESS_BREAKS[name]}",
                fault=planter)
        for name, planter in FAULTS.items()
    ),
)  # fmt: skip

REGISTRY: dict[str, Control] = {c.name: c for c in _CONTROLS}


def names(path: str | None = None) -> list[str]:
    """Every control name, or those of one path, in registry order."""
    if path is not None and path not in PATHS:
        raise ValueError(f"unknown path {path!r}; one of {PATHS}")
    return [c.name for c in _CONTROLS if path is None or c.path == path]


def get(name: str) -> Control:
    """The named control; KeyError names the known ones."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown control {name!r}; known: {', '.join(REGISTRY)}") from None


def unbroken(path: str) -> CutRules | RepairParams:
    """The correct specification of a path (what every control must differ from in exactly one knob)."""
    return DEFAULT_CUT_RULES if path == "cut" else DEFAULT_REPAIR_PARAMS
