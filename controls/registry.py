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

A whole-word tokenizer (`spec.whole_word`, the SentencePiece style: `admission_of(tok).whole_word`) is cut by the
guard, the special-token rule and the free-pair rule, and repaired from one accepted cut (`spec.whole_word_repair`):
the knobs of classes, transition pairs, carve-outs, pattern pairs, NFC, the CR/LF array fault, and the repair's
windows, match keys, bound, witness, margin and anchor never reach its code, so those controls apply to byte-level
tokenizers only (`_byte_level`). The guard, special-token, strip-premise and seam controls reach both kinds; the
free-pair, chunk-prefix and free-cut controls apply to whole-word tokenizers only (`_whole_word`).
`WHOLE_WORD_FAMILIES` in `redundant_for` claims every whole-word family (each named `bpe-whole-word:<digest>`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from delta_suite.controls.derived import stripping_markers
from delta_suite.controls.faults import FAULTS, Planter
from delta_suite.controls.proofs import (
    bound_covers_margin,
    chunk_encoder_is_tokenizer,
    forgotten_pair_guarded,
    nfc_specials_edged_by_anchors,
    overlap_interiors_without_witness,
    overlapping_specials,
    piece_local_variant_is_spec,
    special_interiors_joined,
)
from delta_suite.frozen.loader import FrozenTokenizer
from delta_suite.spec.admission import admission_of
from delta_suite.spec.classes import L, M, N, O, S, class_table
from delta_suite.spec.cut import ACCEPTED_TRANSITION, DEFAULT_CUT_RULES, CutRules, pair_verdict, rules_for_family
from delta_suite.spec.families import is_derived
from delta_suite.spec.free_pair_cut import forgotten_pair
from delta_suite.spec.piece_local import FAMILY_PREFIX as PIECE_LOCAL_PREFIX
from delta_suite.spec.piece_local import piece_local_rules
from delta_suite.spec.repair import DEFAULT_REPAIR_PARAMS, RepairParams
from delta_suite.spec.transitions import ACCEPTED_PAIRS
from delta_suite.spec.whole_word import FAMILY_PREFIX, whole_word_rules

PATHS = ("cut", "repair", "harness")
ALL_FAMILIES = frozenset({"qwen2", "qwen3_5", "llama3", "o200k", "tekken", "deepseek"})
WHOLE_WORD_FAMILIES = FAMILY_PREFIX + "*"  # in `redundant_for`: every whole-word family (`bpe-whole-word:<digest>`)
PIECE_LOCAL_FAMILIES = PIECE_LOCAL_PREFIX + "*"  # every piece-local family (`piece-local:<model>:<digest>`)


def _always(tok: FrozenTokenizer) -> bool:
    return True


def _byte_level(tok: FrozenTokenizer) -> bool:
    """Not an admitted whole-word or piece-local tokenizer: the knob reaches only the byte-level code (classes,
    transitions, carve-outs, pattern pairs, NFC, repair windows), which those families' cuts and repairs never
    read."""
    return not admission_of(tok).own_rule


def _piece_local(tok: FrozenTokenizer) -> bool:
    """An admitted piece-local tokenizer (`spec.piece_local`)."""
    return admission_of(tok).piece_local


def _normalizer_variant_is_spec(tok: FrozenTokenizer) -> bool:
    """The premise of piece_local_variant_is_spec for cut.separator_ignores_normalizer: no candidate is refused by
    the normalizer premise (S2) alone, so the control's separators are the file's own."""
    return piece_local_variant_is_spec(tok, "ignore_normalizer").holds


def _pre_tokenizer_variant_is_spec(tok: FrozenTokenizer) -> bool:
    """The premise of piece_local_variant_is_spec for cut.separator_ignores_pre_tokenizer."""
    return piece_local_variant_is_spec(tok, "ignore_pre_tokenizer").holds


def _special_edges_exact(tok: FrozenTokenizer) -> bool:
    """The premise of piece_local_variant_is_spec for cut.piece_special_edges_ignored: the edges are exact."""
    return piece_local_variant_is_spec(tok, "special_edges").holds


def _whole_word(tok: FrozenTokenizer) -> bool:
    """An admitted whole-word tokenizer: the knob reaches only its code (the free-pair rule, its chunk encoder, its
    repair from one cut)."""
    return admission_of(tok).whole_word


def _byte_level_nfc(tok: FrozenTokenizer) -> bool:
    """The NFC conditions of the byte-level cut and repair (a whole-word file has no NFC stage either: its shape
    admits none)."""
    return _byte_level(tok) and _nfc_only(tok)


def _forgets_a_pair(tok: FrozenTokenizer) -> bool:
    """A whole-word tokenizer with a first merge: the broken "forgets_first_merge" table misses its junction pair."""
    return _whole_word(tok) and forgotten_pair(whole_word_rules(tok)) is not None


def _interiors_joined(tok: FrozenTokenizer) -> bool:
    """The premise of special_interiors_joined: no added-token string of a whole-word tokenizer has a free
    interior pair."""
    return special_interiors_joined(tok).holds


def _forgotten_pair_guarded(tok: FrozenTokenizer) -> bool:
    """The premise of forgotten_pair_guarded: every raw form of the forgotten pair is an added-token string."""
    return forgotten_pair_guarded(tok).holds


def _no_prefix(tok: FrozenTokenizer) -> bool:
    """The premise of chunk_encoder_is_tokenizer: the whole-word prefix scheme is "none"."""
    return chunk_encoder_is_tokenizer(tok).holds


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
    that offset changes no verdict. For a whole-word tokenizer the free-pair rule judges that offset: it can be a
    cut only for a string whose last two characters are a free pair (none of Llama 2's, Gemma 3's or Gemini's; a
    two-character string counts, its one interior offset being its last); the other offsets the fault frees are
    edges of selected occurrences inside unselected ones, which are safe (scan locality)."""
    if admission_of(tok).whole_word:
        rules = whole_word_rules(tok)
        return any(len(s) >= 2 and rules.pair_refusal(s[-2], s[-1]) is None for s in tok.special_strings)
    if admission_of(tok).piece_local:  # the separator rule reads the character at the offset: the last one's
        separators = piece_local_rules(tok).separators
        return any(len(s) >= 2 and s[-1] in separators for s in tok.special_strings)
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
        evaluation's CR/LF fault is a no-op where the family applies no CR/LF carve-out).
        A whole-word family (no pattern; `admission_of(tok).family`) is covered by a claim naming it or
        `WHOLE_WORD_FAMILIES`, and by the claims made for every family: of those only cut.guard_selected_only
        applies to it, and its proof (`selected_occurrences_match_reference`) is about the added-token scan alone,
        which the free-pair proposition shares (`spec.free_pair_cut`, step 1). A piece-local family likewise
        (`PIECE_LOCAL_FAMILIES`; the separator proposition shares the scan, `spec.piece_local`, step 1)."""
        admission = admission_of(tok)
        if admission.own_rule:
            own = WHOLE_WORD_FAMILIES if admission.whole_word else PIECE_LOCAL_FAMILIES
            claimed = (self.redundant_for == ALL_FAMILIES or own in self.redundant_for
                       or admission.family in self.redundant_for)
            return claimed and self.premise(tok)
        family = admission.pattern
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
         applies=_byte_level_nfc),
    _cut("cut.no_guard", "the special-token guard removed", CutRules(guard="off"),
         redundant_for=frozenset({WHOLE_WORD_FAMILIES, PIECE_LOCAL_FAMILIES}), proof="special_interiors_joined",
         premise=_interiors_joined),
    _cut("cut.nfc_window_ignores_specials", "the NFC window may touch a special-token occurrence",
         CutRules(nfc_window_specials=False), applies=_byte_level_nfc, redundant_for=ALL_FAMILIES,
         proof="nfc_specials_edged_by_anchors", premise=_specials_edged_by_anchors),
    _cut("cut.nfc_no_equation", "the NFC equation not required (the normalizer need not split the window at b)",
         CutRules(nfc_equation=False), applies=_byte_level_nfc),
    _cut("cut.nfc_no_recheck", "the normalized pair at b not checked again", CutRules(nfc_recheck=False),
         applies=_byte_level_nfc),
    _cut("cut.nfc_window_is_pair", "no anchor search: the NFC window is the pair S[b-1:b+1]",
         CutRules(nfc_anchor_search=False), applies=_byte_level_nfc),
    _cut("cut.guard_selected_only", "the guard checks only the selected, non-overlapping occurrences",
         CutRules(guard="selected"), redundant_for=ALL_FAMILIES, proof="selected_occurrences_match_reference"),
    _cut("cut.special_any_occurrence", "the special-token rule accepts the edge of any occurrence, selected or not",
         CutRules(special_rule="any_occurrence"), applies=_overlapping_specials),
    _cut("cut.special_ignores_strip", "the special-token rule and admission ignore markers that strip whitespace "
         "(checked on the tokenizer with lstrip and rstrip set on its markers)",
         CutRules(check_premises=False), derive=stripping_markers),
    _cut("cut.add_N_N", "N->N (number then number) added to the accepted transitions: a cut allowed between two digits",
         CutRules(pairs=_pairs_plus((N, N))), applies=_byte_level,
         redundant_for=frozenset({"qwen2", "tekken"}), proof="single_digit_pretokens"),
    _cut("cut.pattern_pairs_of_qwen2", "qwen2's proved pairs (single digits, marks, no apostrophe carve-out) "
         "applied to every tokenizer, whatever its pattern", CutRules(pattern_pairs="qwen2"), applies=_byte_level,
         redundant_for=frozenset({"qwen2"}), proof="pattern_pairs_equal"),
    _cut("cut.add_S_L", "S->L (whitespace then letter) added to the accepted transitions",
         CutRules(pairs=_pairs_plus((S, L))), applies=_byte_level),
    _cut("cut.add_O_L", "O->L (other, e.g. punctuation, then letter) added to the accepted transitions",
         CutRules(pairs=_pairs_plus((O, L))), applies=_byte_level),
    _cut("cut.add_M_O", "M->O (mark then other) added to the accepted transitions",
         CutRules(pairs=_pairs_plus((M, O))), applies=_byte_level,
         redundant_for=frozenset({"deepseek"}), proof="marks_end_before_other"),
    _cut("cut.no_crlf_carveout", "the CR/LF carve-out of O->S (other then whitespace) removed",
         CutRules(cr_lf_carveout=False), applies=_byte_level),
    _cut("cut.no_apostrophe_carveout", "the apostrophe carve-out of L->O (letter then other) removed",
         CutRules(apostrophe_carveout=False), applies=_byte_level,
         redundant_for=frozenset({"qwen2", "llama3", "tekken", "deepseek"}),
         proof="letter_runs_stop_before_apostrophe"),
    _cut("cut.anchor_no_hangul", "the anchor predicate without the Hangul probes",
         CutRules(anchor_hangul_probes=False), applies=_byte_level_nfc, redundant_for=ALL_FAMILIES,
         proof="hangul_probes_class_preserving"),
    _cut("cut.anchor_no_reorder", "the anchor predicate without the reordering probes",
         CutRules(anchor_reorder_probes=False), applies=_byte_level_nfc, redundant_for=ALL_FAMILIES,
         proof="reorder_probes_implied"),
    _cut("cut.vector_guard_misses_last_interior",
         "the array cut evaluation (delta_suite.delta.cut_map) forgets the last "
         "interior offset of each special-token occurrence (the specification itself unchanged; under NFC the "
         "normalization window refuses that offset too)", DEFAULT_CUT_RULES,
         cut_fault="guard_misses_last_interior", applies=_last_interior_is_transition),
    _cut("cut.vector_crlf_misses_cr",
         "the array cut evaluation (delta_suite.delta.cut_map) applies the CR/LF carve-out to LF "
         "only (the specification itself unchanged)", DEFAULT_CUT_RULES, cut_fault="crlf_carveout_misses_cr",
         applies=_byte_level),
    _cut("cut.python_class_table", "the class table from Python's unicodedata instead of the reference",
         CutRules(class_source="python"), applies=_byte_level),
    _cut("cut.free_pair_forgets_first_merge", "whole-word free-pair rule: the table of pairs joined inside "
         "vocabulary tokens misses the pair the first merge joins (a cut allowed where that merge would join)",
         CutRules(free_pair_table="forgets_first_merge"), applies=_forgets_a_pair,
         redundant_for=frozenset({WHOLE_WORD_FAMILIES}), proof="forgotten_pair_guarded",
         premise=_forgotten_pair_guarded),
    _cut("cut.free_pair_one_off", "whole-word free-pair rule: the pair one character to the right of the cut "
         "judged instead of the pair at the cut", CutRules(free_pair_offset=1), applies=_whole_word),
    _cut("cut.prefix_on_later_chunks", "whole-word chunk encoder: every later chunk encoded by the tokenizer "
         "itself, so a chunk cut mid-stretch gets a second prefix (U+2581) the whole encode does not have",
         CutRules(chunk_prefix="full"), applies=_whole_word, redundant_for=frozenset({WHOLE_WORD_FAMILIES}),
         proof="chunk_encoder_is_tokenizer", premise=_no_prefix),
    _cut("cut.separator_ignores_normalizer", "piece-local separator rule: candidates the normalizer changes or "
         "drops (premise S2) accepted as separators", CutRules(separators="ignore_normalizer"),
         applies=_piece_local, redundant_for=frozenset({PIECE_LOCAL_FAMILIES}), proof="piece_local_variant_is_spec",
         premise=_normalizer_variant_is_spec),
    _cut("cut.separator_ignores_pre_tokenizer", "piece-local separator rule: candidates no pre-tokenizer stage "
         "splits before, or that a stage may join across (premise S3), accepted as separators",
         CutRules(separators="ignore_pre_tokenizer"), applies=_piece_local,
         redundant_for=frozenset({PIECE_LOCAL_FAMILIES}), proof="piece_local_variant_is_spec",
         premise=_pre_tokenizer_variant_is_spec),
    _cut("cut.piece_special_edges_ignored", "piece-local: added-token edges taken as cuts under a Metaspace with "
         "prepend_scheme \"first\" (the chunk after the token gets a prefix)", CutRules(piece_special_edges=False),
         applies=_piece_local, redundant_for=frozenset({PIECE_LOCAL_FAMILIES}), proof="piece_local_variant_is_spec",
         premise=_special_edges_exact),
    _repair("repair.unchecked_reuse", "no seam check: stored IDs + the encode of D alone",
            RepairParams(check_seam=False)),
    _repair("repair.match_ids_only", "runs matched on IDs only", RepairParams(match_key="ids"), applies=_byte_level),
    _repair("repair.match_spans_only", "runs matched on spans only (LoPT's position matching)",
            RepairParams(match_key="spans"), applies=_byte_level),
    _repair("repair.no_bound", "no bound on the matched run's coverage", RepairParams(require_bound=False),
            applies=_byte_level, redundant_for=ALL_FAMILIES, proof="accepted_runs_resynchronize",
            premise=overlap_interiors_without_witness),
    _repair("repair.no_witness", "no sync witness inside the matched run", RepairParams(require_witness=False),
            applies=_byte_level),
    _repair("repair.margin_0", "margin 0: the overlap starts at the window start", RepairParams(margin=0),
            applies=_byte_level, redundant_for=ALL_FAMILIES, proof="accepted_runs_resynchronize",
            premise=bound_covers_margin),
    _repair("repair.nfc_window_start_unanchored", "the window start not moved to an NFC anchor (the window text "
            "may normalize unlike the whole text's suffix at its start)", RepairParams(anchor_window_start=False),
            applies=_byte_level_nfc, redundant_for=ALL_FAMILIES, proof="accepted_runs_resynchronize"),
    _repair("repair.one_token_match", "one-token matched runs accepted", RepairParams(min_match_tokens=1),
            applies=_byte_level, redundant_for=ALL_FAMILIES, proof="one_token_runs_rejected"),
    _repair("repair.free_cut_one_off", "whole-word repair: the cut it re-encodes from chosen by the free-pair rule "
            "judging the pair one character to the right of the cut", RepairParams(cut_rules=CutRules(
                free_pair_offset=1)), applies=_whole_word),
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
