"""The proof-obligation table: every premise of the cut and repair propositions, what discharges it, and its status per
tokenizer from the recorded runs.

Each premise names one or more mechanisms (z3 proof, exhaustive per-code-point test, bounded enumeration, property
test, control kill, admission check), and each mechanism names the ledger `check` names (shell-style patterns,
case-insensitive) whose recorded runs discharge it. A premise is *discharged* for a tokenizer when every mechanism
has a passing record that applies to it, *partial* when only some have, *failed* when any applicable record failed,
and *open* when none exists. A premise holds for the kinds of family it names (`kinds`: byte-level, the split
families of `spec.admission`; whole-word, `spec.whole_word`) and is "not applicable" to a tokenizer of another kind:
the pattern proofs, the NFC anchors and the repair window's premises are about byte-level families only, and the
whole-word family has premises of its own (merge locality, its chunk encoder, its one-cut repair); the registry's
rows are all byte-level, a user's file is of the kind its admission decided. A record applies to a tokenizer when it
names the tokenizer or lists it in
`details.covers` (a check run on one tokenizer for every tokenizer with the same configuration of what it checks,
e.g. the per-code-point tests on one tokenizer per set of Split stages), or it names none and is pattern-level (its
details name the tokenizer's pattern family, or list the tokenizer) or global (its details name no family, or the
common alphabet "all"). A tokenizer that is not provisioned shows "pattern only" for a premise about its split
pattern (scope "pattern") that pattern-level records discharge, and "not provisioned" for everything else.

Passing means: the run compared something (comparisons > 0), found no difference, and its test did not fail;
for a control record (level "control") it means the broken variant was killed (details.status "killed", or
details.killed true: a kill is never inferred from a difference count) or proved redundant for that tokenizer
(status "survives-by-proof"); a control record that did not kill (killed false: one check's inputs need not reach
every control), or does not say, is no evidence, "not applicable" and "not provisioned" are none either, and it
fails only when it says the control survives (status "survived"), unless the survival is a stated open finding
(details.open_finding), which leaves the mechanism open. Control records count
only for the "control kill" mechanism.
"""

from __future__ import annotations

from collections.abc import Iterable
from fnmatch import fnmatch

from delta_suite.frozen.registry import rows
from delta_suite.ledger.gate import did_not_pass

Z3 = "z3 proof"
EXHAUSTIVE = "exhaustive per-code-point test"
BOUNDED = "bounded enumeration"
PROPERTY = "property test"
CONTROL = "control kill"
ADMISSION = "admission check"

DISCHARGED, PARTIAL, FAILED, OPEN = "discharged", "partial", "failed", "open"
# a normalization premise for a tokenizer whose normalizer is the identity, or a premise of another kind of family
NOT_APPLICABLE = "not applicable"
NOT_PROVISIONED, PATTERN_ONLY = "not provisioned", "pattern only"

# the kinds of family (`spec.admission.KINDS`, which this module may not import: spec.admission imports spec.proofs)
BYTE_LEVEL, WHOLE_WORD, PIECE_LOCAL = "byte_level", "whole_word", "piece_local"
KINDS = (BYTE_LEVEL, WHOLE_WORD, PIECE_LOCAL)
# the per-file admission record of a whole-word file (`python -m delta_suite.spec.proofs --merge-locality --tokenizer`)
WHOLE_WORD_ADMISSION_CHECK = "admission.whole_word"


def _m(mechanism: str, *checks: str, level: str | None = None, exclude: tuple[str, ...] = ()) -> dict:
    """A mechanism: the checks (shell-style patterns) whose records discharge it, of `level` when given, less the
    checks matching a pattern of `exclude` (a name that matches by accident, e.g. "...:byte_fallback")."""
    return {"mechanism": mechanism, "checks": list(checks), "level": level,
            **({"exclude": list(exclude)} if exclude else {})}


_OBLIGATIONS: tuple[dict, ...] = (
    {
        "proposition": "cut",
        "premise": "special_token_guard",
        "statement": "No cut lies strictly inside any occurrence of any added-token string (overlapping occurrences "
        "included), and no admitted added token strips whitespace, matches as a single word, or is matched after a "
        "normalizer.",
        "discharge": [
            _m(ADMISSION, "admission*"),
            _m(PROPERTY, "*guard*", "*special_token*", "battery.cut", "proof.selected_occurrences_match_reference"),
            _m(CONTROL, "*guard*", level="control"),
        ],
    },
    {
        "proposition": "cut",
        "premise": "normalization_equation",
        "kinds": [BYTE_LEVEL],
        "applies_to": "normalizing",
        "statement": "For a normalizing tokenizer, anchors a < b < c exist within 256 code points, no added-token "
        "occurrence touches S[a:c], N(S[a:c]) = N(S[a:b]) + N(S[b:c]), and the normalized characters at b form an "
        "accepted transition; the anchor predicate holds per code point against the reference normalizer.",
        "discharge": [
            _m(EXHAUSTIVE, "anchor_predicate_tables", "reference_nfc_version", "proof.hangul_probes_class_preserving",
               "proof.reorder_probes_implied", "*anchor*"),
            _m(PROPERTY, "*normaliz*", "*nfc*", "u0958*", "battery.cut"),
            _m(CONTROL, "*normaliz*", "*anchor*", "*nfc*", "*hangul*", "*reorder*", level="control"),
        ],
    },
    {
        "proposition": "cut",
        "premise": "class_table",
        "kinds": [BYTE_LEVEL],
        "scope": "pattern",
        "statement": "The class table (O, S, L, N, M) equals the reference engine's class membership on every code "
        "point, and the abstract alphabets of the patterns partition the code points exactly.",
        "discharge": [
            _m(EXHAUSTIVE, "classes_*", "*class_table*", "python_class_disagreement", "proofs.alphabet_partition",
               "proofs.atom_parse"),
            _m(CONTROL, "*class_source*", "*python_class*", "*class_table*", level="control"),
        ],
    },
    {
        "proposition": "cut",
        "premise": "transition_soundness",
        "kinds": [BYTE_LEVEL],
        "scope": "pattern",
        "statement": "Under the tokenizer's split pattern every accepted class transition (with its carve-outs) ends "
        "one piece and starts the next whatever text precedes it; for a sequence of splits, stage by stage.",
        "discharge": [
            _m(Z3, "proofs.transitions_z3", "proofs.transitions_z3.pattern", "proofs.transitions_z3.pattern_only",
               "proofs.pipeline_z3.pattern", level="proof"),
            _m(BOUNDED, "proofs.bounded_enumeration", "proofs.bounded_enumeration.pattern_only"),
            _m(EXHAUSTIVE, "proofs.contraction_folding", "proofs.representatives", "transition_boundaries_*"),
            _m(CONTROL, "*accept_every_cut*", "*.add_*", "knob_pairs*", "*carveout*", level="control"),
        ],
    },
    {
        "proposition": "cut",
        "premise": "special_token_cut",
        "statement": "A cut at the start or end of a special-token occurrence that the reference's two-stage scan "
        "selects (raw-text strings over the whole text, then normalized ones per stretch) splits the reference "
        "exactly: the reference splits there before normalizing and pre-tokenizing, its markers neither strip "
        "whitespace nor match as single words, and normalized markers take part only under an identity normalizer; "
        "markers are all added tokens whatever their special flag (the scan reads it only under the reference's "
        "encode_special_tokens, when the special ones are text).",
        "discharge": [
            _m(PROPERTY, "special_cut.*", "battery.cut"),
            _m(CONTROL, "*special_any_occurrence*", "*special_ignores_strip*", level="control"),
        ],
    },
    {
        "proposition": "cut",
        "premise": "end_of_input",
        "kinds": [BYTE_LEVEL],
        "scope": "pattern",
        "statement": "The piece left of an accepted transition closes at the end of a chunk exactly as at the "
        "transition: no lookahead is evaluated there, and no letter, digit or punctuation run reads past it.",
        "discharge": [
            _m(Z3, "proofs.transitions_z3", "proofs.transitions_z3.pattern", "proofs.transitions_z3.pattern_only",
               "proofs.pipeline_z3.pattern", level="proof"),
            _m(BOUNDED, "proofs.bounded_enumeration", "proofs.bounded_enumeration.pattern_only"),
            _m(EXHAUSTIVE, "end_of_input_*"),
        ],
    },
    {
        "proposition": "cut",
        "premise": "per_piece_bpe",
        "kinds": [BYTE_LEVEL],
        "statement": "The model encodes each pre-tokenizer piece independently and deterministically, so the encode "
        "of a chunk concatenation is the concatenation of the chunk encodes.",
        "discharge": [
            _m(PROPERTY, "*chunked*", "battery.cut", "*cut*concat*"),
        ],
    },
    {
        "proposition": "cut",
        "premise": "post_processing_once",
        "statement": "Sequence-level post-processing is applied once, to the assembled IDs, as the reference "
        "applies it once to the whole text.",
        "discharge": [
            _m(PROPERTY, "*post_process*", "*postprocess*"),
        ],
    },
    {
        "proposition": "repair",
        "premise": "margin",
        "kinds": [BYTE_LEVEL],
        "statement": "The match search leaves out the first `margin` characters of the window, margin at least the "
        "longest added-token string (and at least 8), so no literal split by the window start reaches the match.",
        "discharge": [
            _m(ADMISSION, "margin_premise"),
            _m(CONTROL, "*margin*", level="control"),
        ],
    },
    {
        "proposition": "repair",
        "premise": "bound",
        "kinds": [BYTE_LEVEL],
        "statement": "An accepted match covers more (normalized) characters than the longest text one token decodes "
        "to.",
        "discharge": [
            _m(ADMISSION, "bound_premise", "*wide_bound*"),
            _m(CONTROL, "*no_bound*", "*require_bound*", level="control"),
        ],
    },
    {
        "proposition": "repair",
        "premise": "match_key",
        "kinds": [BYTE_LEVEL],
        "statement": "Matched tokens agree in start, end, ordinal within a shared span, and ID, not in IDs or spans "
        "alone.",
        "discharge": [
            _m(PROPERTY, "session_*", "*session_replay*", "chat_replay*", "battery.repair"),
            _m(CONTROL, "*match_key*", "*match_ids_only*", "*match_spans_only*", level="control"),
        ],
    },
    {
        "proposition": "repair",
        "premise": "sync_witness",
        "kinds": [BYTE_LEVEL],
        "statement": "Some internal boundary of the matched run is an accepted class transition read on the input "
        "characters; once the whole text and the window share a piece boundary (the witness gives one), every later "
        "piece agrees (the re-synchronization lemma, z3 over the whole pre-tokenizer, bounded). Necessary: without "
        "it, a digit run grouped by three off phase is repaired wrongly (battery hazard digit_phase), and so is a "
        "newline run after punctuation whose last newline the window joins with the blanks after it, where the "
        "vocabulary has such a token (battery hazard newline_tail), and a run of marks between punctuation read as "
        "one punctuation piece by the whole text and as letters by the window, where the vocabulary joins the last "
        "mark with the punctuation (battery hazard mark_tail).",
        "discharge": [
            _m(Z3, "proofs.resync_z3.pattern", level="proof"),
            _m(PROPERTY, "session_*", "*session_replay*", "chat_replay*", "battery.repair"),
            _m(CONTROL, "*witness*", level="control"),
        ],
    },
    {
        "proposition": "repair",
        "premise": "nfc_window_start",
        "kinds": [BYTE_LEVEL],
        "applies_to": "normalizing",
        "statement": "For a normalizing tokenizer the window text is stable under the reference normalizer at its "
        "start (NFC cannot reach across the window start into the matched run).",
        "discharge": [
            _m(PROPERTY, "*repair*nfc*", "*window*nfc*", "*nfc*window*", "*repair*normaliz*"),
            _m(CONTROL, "*repair*nfc*", "*window*nfc*", "*repair*normaliz*", level="control"),
        ],
    },
    {
        "proposition": "repair",
        "premise": "fallback",
        "statement": "Whenever no window is accepted (or the engine refuses), the result is a full reference encode "
        "of the whole text.",
        "discharge": [
            _m(PROPERTY, "*fallback*", "window_covers_all", "battery.repair", exclude=("merge_locality.*",)),
            _m(CONTROL, "*check_seam*", "*unchecked*", level="control"),
        ],
    },
    {
        "proposition": "cut",
        "premise": "free_pair_locality",
        "kinds": [WHOLE_WORD],
        "statement": "For a whole-word file whose model has no subword affix, no merge taking or making a "
        "byte-fallback or unknown token, every character its own symbols (byte fallback complete, or an unknown "
        "token) and ignore_merges off (M1-M4 of spec.whole_word), BPE over one word never merges across a pair of "
        "characters that no vocabulary token holds next to each other (nor, under fuse_unk without byte fallback, "
        "two unknown characters): the word's encode is its two sides' encodes concatenated (the merge-locality "
        "lemma, spec.proofs.merge_locality: a statement about every merge table, so its proofs name no vocabulary).",
        "discharge": [
            _m(Z3, "merge_locality.z3_all_tables", level="proof"),
            _m(BOUNDED, "merge_locality.exhaustive:*", "merge_locality.abstraction:*"),
            _m(CONTROL, "merge_locality.planted:*", "merge_locality.z3_control:*",
               "merge_locality.abstraction_planted:*", "*free_pair_forgets_first_merge*", level="control"),
            _m(ADMISSION, WHOLE_WORD_ADMISSION_CHECK, "whole_word.admission"),
        ],
    },
    {
        "proposition": "cut",
        "premise": "whole_word_chunk_encoder",
        "kinds": [WHOLE_WORD],
        "statement": "For a whole-word file, chunks cut at offsets the free-pair or the special-token rule accepts, "
        "each encoded from its own start by the family's chunk encoder (no second prefix on a later chunk, the "
        "prefix kept for the stretches after its added tokens, by the file's prefix scheme), concatenate to the "
        "whole encode (spec.free_pair_cut).",
        "discharge": [
            _m(PROPERTY, "fuzz.cut", "corpus.chunked_encode", "battery.cut", "whole_word.random_cuts",
               "whole_word.chunked_long_text", "whole_word.metaspace_forms", "whole_word.small_file",
               "whole_word.code_points"),
            _m(CONTROL, "*free_pair_forgets_first_merge*", "*free_pair_one_off*", "*prefix_on_later_chunks*",
               level="control"),
        ],
    },
    {
        "proposition": "repair",
        "premise": "whole_word_free_cut",
        "kinds": [WHOLE_WORD],
        "statement": "For a whole-word file, a text S with stored IDs T extended to S + D is repaired from the "
        "highest offset c (within the scan budget) where the cut proposition accepts a cut both in S and in S + D "
        "(or at the end of S, in S + D): the tokens of T that start before c, then the chunk encode of S + D from "
        "c, are the whole encode of S + D; with no such c the new text is encoded whole (spec.whole_word_repair: "
        "no window, no match, no bound, no sync witness).",
        "discharge": [
            _m(PROPERTY, "fuzz.repair", "*session_replay*", "battery.repair", "whole_word.session_repair"),
            _m(CONTROL, "*free_cut_one_off*", level="control"),
        ],
    },
    {
        "proposition": "cut",
        "premise": "separator_normalizer",
        "kinds": [PIECE_LOCAL],
        "statement": "For a piece-local file, each normalizer stage maps a separator to one ASCII character and joins "
        "nothing across it (S2 of spec.piece_local): NFC/NFD/NFKC/NFKD leave an ASCII starter where it is after any "
        "code point, and under NFC and NFKC nothing composes after it (\"<\", \"=\", \">\" are refused: U+0338); "
        "Lowercase, Nmt, StripAccents and the Bert normalizer act character by character.",
        "discharge": [
            _m(EXHAUSTIVE, "piece_local.normalizer_code_points", "piece_local.lowercase_context"),
            _m(CONTROL, "*separator_ignores_normalizer*", level="control"),
            _m(ADMISSION, "admission.piece_local", "piece_local.built_against"),
        ],
    },
    {
        "proposition": "cut",
        "premise": "separator_pre_tokenizer",
        "kinds": [PIECE_LOCAL],
        "statement": "For a piece-local file, some pre-tokenizer stage splits before the normalized separator "
        "whatever precedes it, every stage before it decides its splits from single characters or String matches "
        "without it, and no later Metaspace with prepend \"first\" meets a kept separator (S3 of "
        "spec.piece_local); every model then encodes each piece alone.",
        "discharge": [
            _m(EXHAUSTIVE, "piece_local.pre_tokenizer_code_points"),
            _m(CONTROL, "*separator_ignores_pre_tokenizer*", "*piece_special_edges_ignored*", level="control"),
            _m(ADMISSION, "admission.piece_local", "piece_local.built_against"),
        ],
    },
    {
        "proposition": "cut",
        "premise": "piece_local_chunks",
        "kinds": [PIECE_LOCAL],
        "statement": "For a piece-local file, chunks cut before separators (and at exact special-token edges), each "
        "encoded by the tokenizer itself, concatenate to the whole encode, post-processing applied once.",
        "discharge": [
            _m(PROPERTY, "fuzz.cut", "corpus.chunked_encode", "battery.cut", "piece_local.random_cuts",
               "piece_local.battery", "piece_local.chunked_long_text"),
            _m(CONTROL, "*separator_ignores_*", "*no_guard*", level="control"),
        ],
    },
    {
        "proposition": "repair",
        "premise": "piece_local_one_cut",
        "kinds": [PIECE_LOCAL],
        "statement": "For a piece-local file, a text S extended to S + D is repaired from the highest separator cut "
        "accepted both in S and in S + D, as for the whole-word family (spec.whole_word_repair).",
        "discharge": [
            _m(PROPERTY, "fuzz.repair", "battery.repair", "piece_local.session_repair", "piece_local.battery"),
            _m(CONTROL, "*unchecked_reuse*", level="control"),
        ],
    },
)


def obligations() -> list[dict]:
    """Every premise of the two propositions with its statement and the mechanisms that discharge it."""
    return [
        {
            "applies_to": "all",
            "scope": "tokenizer",
            "kinds": list(KINDS),
            **o,
            "id": f"{o['proposition']}.{o['premise']}",
            "discharge": [dict(m) for m in o["discharge"]],
        }
        for o in _OBLIGATIONS
    ]


def declared(check: str, level: str) -> list[str]:
    """What a record of this check and level is evidence for, as "obligation id:mechanism" entries: the
    declaration the suite's own writers carry in every record (`details.obligations`, see `declare`). The table
    is matched here once, when a record is written; reading a ledger matches declarations only, never check names,
    so a record that declares nothing (a third-party subject's) discharges and fails nothing."""
    probe = {"check": check, "level": level}
    return sorted({f"{ob['id']}:{m['mechanism']}" for ob in obligations() for m in ob["discharge"]
                   if _matches(probe, m)})


def declare(record: dict) -> dict:
    """Add the record's declaration (`details.obligations`) and return it; for the suite's own writers only."""
    record.setdefault("details", {})["obligations"] = declared(str(record.get("check", "")), str(record.get("level")))
    return record


def _declares(record: dict, obligation: str, mechanism: dict) -> bool:
    """Whether the record declares itself evidence for this obligation by this mechanism."""
    return f"{obligation}:{mechanism['mechanism']}" in ((record.get("details") or {}).get("obligations") or ())


def _matches(record: dict, mechanism: dict) -> bool:
    if mechanism["level"] is not None and record.get("level") != mechanism["level"]:
        return False
    if (record.get("level") == "control") != (mechanism["mechanism"] == CONTROL):
        return False  # a broken variant's run is evidence only for a control kill, and only it is
    check = str(record.get("check", "")).lower()
    if any(fnmatch(check, pattern.lower()) for pattern in mechanism.get("exclude") or ()):
        return False
    return any(fnmatch(check, pattern.lower()) for pattern in mechanism["checks"])


def record_passed(record: dict) -> bool | None:
    """True if the record discharges, False if it failed, None if it compared nothing."""
    details = record.get("details") or {}
    if did_not_pass(details.get("outcome")):
        return False
    comparisons = record.get("comparisons") or 0
    differences = record.get("differences") or 0
    if record.get("level") == "control":
        status = details.get("status")
        if status in ("killed", "survives-by-proof"):  # the kill matrix's own verdicts
            return True
        if status == "survived":
            # a listed open finding (controls.findings) is neither a discharge nor a failure of the suite: open
            return None if details.get("open_finding") else False
        if status in ("not applicable", NOT_PROVISIONED):
            return None
        return True if details.get("killed") is True else None
    if differences > 0:
        return False
    return True if comparisons > 0 else None


def _applies(record: dict, tokenizer: str, family: str | None) -> bool:
    named = record.get("tokenizer")
    details = record.get("details") or {}
    if named is not None:
        return named == tokenizer or tokenizer in (details.get("covers") or [])
    if tokenizer in (details.get("tokenizers") or []):
        return True
    record_family = details.get("family")
    return record_family in (None, "all") or record_family == family


def _pattern_level(record: dict) -> bool:
    return record.get("tokenizer") is None or str(record.get("check", "")).endswith(".pattern_only") or (
        (record.get("details") or {}).get("status") == NOT_PROVISIONED
    )


def _registry() -> tuple[list[str], dict[str, str], set[str]]:

    table = rows()
    normalizing = {r.name for r in table if r.normalizer not in ("none", "empty_sequence")}
    return [r.name for r in table], {r.name: r.split_pattern for r in table}, normalizing


def with_user_columns(users: dict[str, dict]) -> dict:
    """The keyword arguments of `status_details` for the registry's columns followed by user files' (name ->
    {"kind": a kind of `KINDS` or None when not known, "family": its family, "normalizing": whether its normalizer
    is NFC}), each user column with the premises of its kind."""
    names, families, normalizing = _registry()
    return {
        "tokenizers": names + [u for u in users if u not in names],
        "families": {**families, **{u: facts.get("family") for u, facts in users.items()}},
        "normalizing": normalizing | {u for u, facts in users.items() if facts.get("normalizing")},
        "kinds": {u: facts.get("kind") for u, facts in users.items()},
    }


def status_details(
    records: Iterable[dict],
    tokenizers: list[str] | None = None,
    families: dict[str, str] | None = None,
    provisioned: Iterable[str] | None = None,
    normalizing: Iterable[str] | None = None,
    kinds: dict[str, str | None] | None = None,
) -> dict[str, dict[str, dict]]:
    """{premise id: {tokenizer: {"status", "mechanisms": {mechanism: status}, "checks": [check names]}}}.

    `tokenizers`, `families` (name -> pattern family, or a whole-word file's `bpe-whole-word:` family) and
    `normalizing` (names with a non-identity normalizer) default to the registry; `provisioned` (names whose files
    were present when the records were made) defaults to every tokenizer named by a record that is not
    pattern-level; `kinds` (name -> kind of family, `KINDS`) defaults to byte-level for every name it does not
    give (the registry's rows are all byte-level), and a kind of None (a user file whose kind is not known) takes
    the premises of every kind. A premise about normalization is "not applicable" to a tokenizer without a
    normalizer, and a premise of one kind of family to a tokenizer of another.
    """
    records = list(records)
    if tokenizers is None or families is None or normalizing is None:
        names, fams, norm = _registry()
        tokenizers = tokenizers if tokenizers is not None else names
        families = families if families is not None else fams
        normalizing = normalizing if normalizing is not None else norm
    normalizing = set(normalizing)
    kinds = dict(kinds or {})
    if provisioned is None:
        provisioned = {r["tokenizer"] for r in records if r.get("tokenizer") and not _pattern_level(r)}
    provisioned = set(provisioned)
    table: dict[str, dict[str, dict]] = {}
    for ob in obligations():
        row: dict[str, dict] = {}
        for tok in tokenizers:
            kind = kinds.get(tok, BYTE_LEVEL)
            if (ob["applies_to"] == "normalizing" and tok not in normalizing) or (
                    kind is not None and kind not in ob["kinds"]):
                row[tok] = {"status": NOT_APPLICABLE, "mechanisms": {}, "checks": []}
                continue
            mech_status: dict[str, str] = {}
            checks: set[str] = set()
            first: str | None = None  # the first failing record's check and first difference
            pattern_only = True
            for mech in ob["discharge"]:
                verdicts = []
                for rec in records:
                    if _declares(rec, ob["id"], mech) and _applies(rec, tok, families.get(tok)):
                        verdict = record_passed(rec)
                        if verdict is None:
                            continue
                        verdicts.append(verdict)
                        checks.add(str(rec.get("check")))
                        if verdict is False and first is None:
                            first = first_difference_text(rec)
                        pattern_only = pattern_only and _pattern_level(rec)
                if not verdicts:
                    mech_status[mech["mechanism"]] = OPEN
                else:
                    mech_status[mech["mechanism"]] = DISCHARGED if all(verdicts) else FAILED
            values = list(mech_status.values())
            if FAILED in values:
                status = FAILED
            elif all(v == DISCHARGED for v in values):
                status = DISCHARGED
            elif DISCHARGED in values:
                status = PARTIAL
            else:
                status = OPEN
            if tok not in provisioned and status != FAILED:
                pattern_level = ob["scope"] == "pattern" and DISCHARGED in values and pattern_only
                status = PATTERN_ONLY if pattern_level else NOT_PROVISIONED
            row[tok] = {"status": status, "mechanisms": mech_status, "checks": sorted(checks)}
            if status == FAILED and first:
                row[tok]["first_difference"] = first
        table[ob["id"]] = row
    return table


def first_difference_text(record: dict) -> str:
    """The failing record's check and, where it recorded one, where it first differed."""
    details = record.get("details") or {}
    where = next((details[k] for k in ("first", "first_difference", "minimal_counterexample", "counterexample",
                                       "pointers") if details.get(k)), None)
    text = f"{record.get('check')}: {record.get('differences') or 0} differences"
    if did_not_pass(details.get("outcome")):
        text += f", test {details.get('outcome')}"
    return f"{text}, first {str(where)[:120]}" if where is not None else text


def status_from_ledger(records: Iterable[dict], **registry) -> dict[str, dict[str, str]]:
    """{premise id: {tokenizer: status}}: the table's cells (`status_details` says which mechanisms and checks);
    a failed cell reads "failed (first difference: ...)"."""
    return {
        premise: {tok: (f"{cell['status']} (first difference: {cell['first_difference']})"
                        if cell.get("first_difference") else cell["status"]) for tok, cell in row.items()}
        for premise, row in status_details(records, **registry).items()
    }


PIPELINE_PROOF_CHECK = "proofs.pipeline_z3.pattern"
PATTERN_PROOF_CHECK = "proofs.transitions_z3.pattern"  # one record per split pattern (properties/test_proofs.py)


def _refuted_pairs(details: dict) -> list[dict]:
    """Each refuted pair of one pattern-level proof record: its verdict on IDs, the witness kept and its IDs per
    tokenizer. A record written before the depths were examined says "confirmed on pieces (depth not recorded)"."""
    exclusions = details.get("exclusions") or {}
    out = []
    for label, ex in exclusions.items():
        witness = ex.get("witness") or {}
        out.append({"pair": label, "verdict": ex.get("verdict"), "depth": ex.get("depth"),
                    "text": witness.get("text"), "cut": witness.get("cut"), "source": witness.get("source"),
                    "ids": witness.get("ids") or {}})
    for label, cx in (details.get("counterexamples") or {}).items():
        if label not in exclusions:
            out.append({"pair": label, "verdict": "confirmed on pieces (depth not recorded)", "depth": None,
                        "text": cx.get("text"), "cut": cx.get("cut"), "source": "first counterexample", "ids": {}})
    return out


def pattern_proofs(records: Iterable[dict]) -> list[dict]:
    """Per split pattern, from the last pattern-level proof record of each family (`PATTERN_PROOF_CHECK`): where
    its string comes from ("file", or "reconstruction: FROM WHAT" while it is not confirmed against a file), the
    registry tokenizers of that pattern, the accepted pairs proved and failed, the excluded pairs proved sound, and
    per refuted pair how deep its counterexample reaches ("confirmed on IDs (tokenizer: ...)", "excluded,
    conservative: confirmed on units only" or "... pieces only", or "confirmed on pieces only; IDs not checked: no
    provisioned tokenizer of this pattern") with the witness and its IDs."""
    latest: dict[str, dict] = {}
    pipeline: dict[str, dict] = {}
    for rec in records:
        details = rec.get("details") or {}
        if rec.get("check") == PATTERN_PROOF_CHECK and details.get("family"):
            latest[str(details["family"])] = details
        if rec.get("check") == PIPELINE_PROOF_CHECK and details.get("family"):
            pipeline[str(details["family"])] = details
    out = []
    for family in sorted(latest):
        d = latest[family]
        if d.get("reconstruction"):
            origin = f"reconstruction: {d['reconstruction']}"
        else:
            origin = "file" if d.get("pattern_confirmed_against_file") else "not confirmed against a file"
        out.append({
            "pattern": family,
            "origin": origin,
            "reconstructed": bool(d.get("reconstruction")),
            "tokenizers": list(d.get("tokenizers") or []),
            "ids_checked_on": list(d.get("ids_checked_on") or []),
            "ids_note": d.get("ids_note"),
            "accepted_proved": sorted(d.get("accepted_pairs_proved") or {}),
            "accepted_failed": list(d.get("accepted_pairs_failed") or []),
            "excluded_sound": sorted(d.get("excluded_sound_conservative") or {}),
            "depths": dict(d.get("exclusion_depths") or {}),
            "witness_search": d.get("witness_search"),
            "refuted": _refuted_pairs(d),
            "pipeline": pipeline_verdict(pipeline.get(family)),
        })
    return out


def pipeline_verdict(d: dict | None) -> str:
    """The pipeline-level proof of one pattern in words: proved to which length on both sides, with how many
    strings the encoding was checked against the reference, or how it failed; "not recorded" without a record."""
    if not d:
        return "not recorded"
    sides = d.get("sides") or {}
    if d.get("holds"):
        return (f"proved to length {d.get('bound')} (end of input and right side; "
                f"encoding = reference on {d.get('faithfulness_strings')} strings)")
    if not d.get("faithful"):
        return f"FAILED: encoding differs from the reference ({(d.get('faithfulness_mismatches') or [{}])[0]})"
    refuted = [side for side, r in sides.items() if r.get("counterexample") is not None]
    return f"FAILED: {', '.join(refuted) or 'an exclusion'} refuted ({d.get('accepted_counterexample')})"
