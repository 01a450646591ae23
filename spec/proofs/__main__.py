"""Print, per pattern family, the abstract alphabet, the proved pairs, the refuted pairs with how deep each
counterexample reaches on the family's provisioned tokenizers (pieces, units or reference IDs, with the IDs), and
the solver time, then the pipeline-level proof: every Split stage in order with the byte-level stage, a cut at an
accepted transition proved to leave the pieces unchanged (end of input and right side) for every string up to a
length bound (`python -m delta_suite.spec.proofs [--bounded] [--pipeline-bound N] [FAMILY...]`). Exit 0 when every
claimed proof
holds, 1 when one fails (an accepted pair refuted, an exclusion neither proved nor confirmed, a coverage claim
wrong, the pipeline encoding disagreeing with the reference), 2 on a usage error.

`python -m delta_suite.spec.proofs --tokenizer PATH` shows the decision for one tokenizer.json (or a folder holding
one): its
Split stages (a ByteLevel stage with use_regex read as the GPT-2 pattern's stage), the known family they are, or
the derivation of a derived family (`spec.proofs.derive`: cached or proved now, with the pairs adopted, the
counterexamples of the excluded pairs confirmed on the reference, the pipeline and re-synchronization proofs, the
seconds it took and the versions it was made with). Exit 0 when admitted, 1 when the proof refutes the stages
(`split_pattern_unproved`), 2 when the file is refused before any proof (not byte-level, a construct the proofs do
not model) or cannot be loaded.

`python -m delta_suite.spec.proofs --merge-locality [--tokenizer PATH [--name NAME]] [--ledger FILE]` runs the
merge-locality lemma's checks of the gate (`spec.proofs.merge_locality`, as properties/test_merge_locality.py runs
them): the exhaustive check and the abstraction against the reference under each mode, the z3 proof for every merge
table up to `Z3_GATE_LENGTH` symbols, and the controls (each premise's planted violation, a wrong abstraction, the z3
query with a premise dropped), each recorded under the gate's check name (about 45 s on two cores). The lemma is
about every merge table, so these records name no tokenizer. With `--tokenizer`, a whole-word file's own premises
are recorded too (`admission.whole_word`: the family's judgement, `spec.whole_word.judge`, no added token that
strips or matches as a single word, and each premise of the lemma on its model, `merge_locality.premises_of`), so a
run that checks only that file (the main job's `--only`) holds every record its whole-word premises read. Exit 0
when everything holds, 1 when a check fails, 2 for a file that is not whole-word or cannot be loaded.

`python -m delta_suite.spec.proofs --separators --tokenizer PATH [--name NAME] [--ledger FILE]` does the same for a
piece-local file (`spec.piece_local`): its own premises (`admission.piece_local`: its family and separators) and
the per-code-point checks of its own stages (`spec.proofs.separators.file_checks`: each normalizer stage, and the
hard pre-tokenizer stage of each separator, against the reference on every code point; a minute or two for a Bert
pipeline on two cores). Exit 0 when every check holds, 1 when one fails, 2 for a file that is not piece-local."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from delta_suite.frozen.errors import SuiteError
from delta_suite.frozen.loader import FrozenTokenizer, load_tokenizer_file
from delta_suite.frozen.registry import TOKENIZER_FILE
from delta_suite.frozen.user_files import resolve_tokenizer
from delta_suite.ledger.records import append_records, make_record
from delta_suite.spec.families import is_total, removed_inverted_regexes, split_stages, stages_of
from delta_suite.spec.patterns import RECONSTRUCTED, SPLIT_PATTERNS, TOTAL_STAGES, identify
from delta_suite.spec.piece_local import is_piece_local_candidate
from delta_suite.spec.piece_local import judge as judge_piece_local
from delta_suite.spec.proofs.alphabet import family_alphabet
from delta_suite.spec.proofs.bounded import bounded_check, default_lengths
from delta_suite.spec.proofs.coverage import family_coverage
from delta_suite.spec.proofs.derive import UNPROVED, cache_path, derive, prove_total
from delta_suite.spec.proofs.merge_locality import (
    GATE_BOUND,
    MODES,
    PLANTS,
    Z3_CONTROLS,
    Z3_GATE_LENGTH,
    Merge,
    abstraction_check,
    exhaustive_check,
    planted_variant,
    premises_of,
    prove_locality,
)
from delta_suite.spec.proofs.obligations import WHOLE_WORD, WHOLE_WORD_ADMISSION_CHECK, declare
from delta_suite.spec.proofs.pieces import family_pieces
from delta_suite.spec.proofs.pipeline_proof import DEFAULT_BOUND, family_resync, prove_family_pipeline
from delta_suite.spec.proofs.prove import examine_family
from delta_suite.spec.proofs.separators import NORMALIZER_CHECK, file_checks
from delta_suite.spec.whole_word import is_whole_word_candidate, judge


def _ids(effect: dict) -> str:
    if effect.get("skipped"):
        return f"not consulted ({effect['skipped']})"
    return f"{effect['depth'] or 'equal'}: {effect['whole']} vs {effect['left']} + {effect['right']}"


def exclusion_lines(exclusion: dict | None) -> list[str]:
    """The verdict of one refuted pair, the first counterexample's IDs per tokenizer and, when the search went
    further, the witness it kept with its IDs."""
    if exclusion is None:
        return []
    first, witness = exclusion["first"], exclusion["witness"]
    lines = [exclusion["verdict"]]
    lines += [f"first counterexample on {tok}: {_ids(e)}" for tok, e in first["ids"].items()]
    if (witness["text"], witness["cut"]) != (first["text"], first["cut"]):
        lines.append(f"witness ({witness['source']}): {' '.join(witness['codepoints'])} "
                     f"{json.dumps(witness['text'], ensure_ascii=False)} cut {witness['cut']}")
        lines += [f"  on {tok}: {_ids(e)}" for tok, e in witness["ids"].items()]
    elif exclusion["depth"] != "ids" and exclusion["tokenizers"]:
        searched = exclusion["searched"]
        lines.append(f"no ID-changing witness: {searched['first_word_texts']} texts of the first word, "
                     f"{searched['vocabulary_texts']} vocabulary texts, {searched['z3_models']} z3 models "
                     f"({searched['model_texts']} texts)")
    return lines


def pipeline_lines(s: dict) -> list[str]:
    """The pipeline-level proof of one family: the claim with its bound, both sides, the encoding's agreement
    with the reference, and per excluded pair sound to the bound or its confirmed counterexample."""
    sides = ", ".join(
        f"{side.replace('_', ' ')} " + (f"proved to {r['proved_to']}" if r["counterexample"] is None else
                                        f"REFUTED at length {len(r['counterexample'])}") + f" ({r['seconds']}s)"
        for side, r in s["sides"].items())
    lines = [f"pipeline ({s['stages']} Split stage(s) in order, then byte level; every string of 2 to {s['bound']} "
             f"of the {s['symbols']} symbols, {s['strings_covered']:,} strings, every cut at an accepted transition): "
             f"{sides}; encoding {'agrees' if s['faithful'] else 'DISAGREES'} with the reference on "
             f"{s['faithfulness_strings']} strings"
             + ("" if s["faithful"] else f": {s['faithfulness_mismatches'][:2]}")]
    if s["accepted_counterexample"]:
        cx = s["accepted_counterexample"]
        lines.append(f"pipeline FAILED: accepted cut {' '.join(cx['codepoints'])} at {cx['cut']}: {cx['pieces_whole']} "
                     f"vs {cx['pieces_split']} ({cx['side']}, {'confirmed' if cx['confirmed'] else 'NOT confirmed'})")
    lines.append(f"pipeline: excluded pairs sound to length {s['bound']}: {s['excluded_sound_to_bound']}")
    for label, cx in s["excluded_refuted"].items():
        verdict = "confirmed on the reference" if cx["confirmed"] else "NOT confirmed"
        lines.append(f"pipeline: {label} refuted: {' '.join(cx['codepoints'])} cut {cx['cut']}: "
                     f"{cx['pieces_whole']} vs {cx['pieces_split']} ({cx['side']}; {verdict})")
    return lines


GROUPS_DIGITS = r"\p{N}{1,3}"
# a punctuation piece that takes the newlines after it, and a whitespace piece up to the last newline of a blank run
NEWLINE_TAIL = re.compile(r"\]\+\[(?:\\r\\n|\r\n)")
NEWLINE_RUN = re.compile(r"\\s\*\[(?:\\r\\n|\r\n)\]\+")
# a punctuation class that takes marks, beside a letter alternative that takes them too
PUNCT_WITH_MARKS = "[^\\s\\p{L}\\p{N}]+"


def witness_mechanisms(family: str) -> tuple[str, ...]:
    """The known inputs that a repair without its sync witness gets wrong, by what the family's pattern has:
    "digit_phase" (digits grouped by up to three: vocabulary-independent, given digits no token joins) and
    "newline_tail" (a punctuation piece taking the newlines after it beside `\\s*[\\r\\n]+`: wrong IDs only where
    the vocabulary joins a newline with the blank after it, spec.repair.newline_joins_whitespace) and "mark_tail"
    (a letter alternative taking marks beside a punctuation class that takes them too: wrong IDs only where the
    vocabulary joins a mark with the punctuation after it, spec.repair.mark_joins_punctuation)."""
    stages = stages_of(family)
    found = []
    if any(GROUPS_DIGITS in stage for stage in stages):
        found.append("digit_phase")
    if any(NEWLINE_TAIL.search(stage) and NEWLINE_RUN.search(stage) for stage in stages):
        found.append("newline_tail")
    if any(PUNCT_WITH_MARKS in stage and "\\p{M}" in stage for stage in stages):
        found.append("mark_tail")
    return tuple(found)


def witness_verdict(family: str) -> str:
    """What is known of the repair's sync witness for one pattern family: necessary where the pattern groups digits
    by up to three; otherwise necessary wherever the vocabulary has the token one of the pattern's other known
    inputs needs (newline tail, mark tail); open elsewhere. The counterexamples are shown on reference IDs by the
    tests named."""
    mechanisms = witness_mechanisms(family)
    if "digit_phase" in mechanisms:
        return ("NECESSARY: the pattern groups digits by up to three, so a window starting inside a digit run that "
                "no token joins groups it in another phase than the whole text while both streams agree token for "
                "token; ASCII digits appended then join other groups (confirmed on reference IDs: "
                "properties/test_repair_knobs.py, the kill matrix's digit_phase cases)")
    needs = []
    if "newline_tail" in mechanisms:
        needs.append("a newline with the blank after it (\"\\n \\n\"; newline tail: the whole text keeps a "
                     "punctuation character and the newline run after it in one piece, a window starting inside the "
                     "run takes the run, the blanks and the next newline in one, and its last newline joins the "
                     "blanks while both streams chunk the run alike)")
    if "mark_tail" in mechanisms:
        needs.append("a mark with the punctuation after it (mark tail: the whole text reads two punctuation "
                     "characters, a run of marks and a punctuation character as one piece, a window starting among the "
                     "marks reads them as a letter piece, and the whole text's last mark joins the punctuation's first "
                     "bytes while both streams agree mark for mark)")
    if needs:
        return ("NECESSARY wherever the vocabulary joins " + ", or ".join(needs) + " (confirmed on reference IDs: "
                "properties/test_repair_knobs.py, the kill matrix's newline_tail and mark_tail cases). On a "
                "vocabulary with neither token: not proved implied, no counterexample known; the lemma above takes "
                "over once the window and the whole text share a piece boundary, and that an equal-key run forces "
                "one is not encoded. The controls' status per tokenizer: controls/findings.py")
    return ("not proved implied, no counterexample known. The lemma above takes over once the window and the whole "
            "text share a piece boundary; that an equal-key run of two or more tokens forces one is not encoded. "
            "The controls' status per tokenizer: controls/findings.py")


def tokenizer_main(path: Path) -> int:
    """Print the decision on one tokenizer file's split stages (module docstring) and return the exit status."""
    file = path / TOKENIZER_FILE if path.is_dir() else path
    try:
        tok = load_tokenizer_file(file)
    except SuiteError as exc:
        print(f"error: {file}: {exc}", file=sys.stderr)
        return 2
    pre_tokenizer = tok.admission_inputs.pre_tokenizer
    print(f"{file} (sha256 {tok.sha256})")
    for regex in removed_inverted_regexes(pre_tokenizer):
        print(f"  Removed + inverted stage {regex!r}: " + ("total" if is_total(regex) or prove_total(regex) else
                                                          "NOT total (its gaps would be dropped)"))
    stages, problem = split_stages(pre_tokenizer)
    if problem is not None:
        print(f"  refused before any proof: not_byte_level:{problem}")
        return 2
    for i, stage in enumerate(stages):
        print(f"  stage {i}: {stage}")
    family = identify(stages)
    if family is not None:
        print(f"  known family {family}: its proof is `python -m delta_suite.spec.proofs {family}`")
        return 0
    d = derive(stages)
    details = d.details
    source = f"cached: {cache_path(stages)}" if d.cached else f"proved now, cached at {cache_path(stages)}"
    print(f"  derived family {d.name} ({source}; {details.get('seconds')} s; versions {details.get('versions')})")
    print(f"  decision: {'ADMITTED' if d.admitted else 'REFUSED'} ({d.reason})")
    if "error" in details:
        print(f"  {details['error']}")
    if "symbols" in details:
        print(f"  {details['symbols']} symbols; accepted pairs proved (separating stage): "
              f"{details['accepted_pairs_proved']}")
        apostrophe = "dropped (L→' sound)" if d.apostrophe_free else "kept"
        crlf = "dropped (O→CR/LF sound)" if d.crlf_free else "kept"
        print(f"  outside the floor, sound: {details['excluded_sound']}; adopted: {d.as_dict()['pairs']}, "
              f"apostrophe carve-out {apostrophe}, CR/LF carve-out {crlf}")
        for label, cx in details["counterexamples"].items():
            print(f"  {label} excluded: {json.dumps(cx['text'], ensure_ascii=False)} cut {cx['cut']} "
                  f"({cx['obligation']}; confirmed on the reference pre-tokenizer)")
        if details.get("unresolved_exclusions"):
            print(f"  excluded, neither proved nor confirmed (conservative): {details['unresolved_exclusions']}")
    if "pipeline" in details:
        pl = details["pipeline"]
        print(f"  pipeline to {details['bound']} symbols: encoding {'agrees' if pl['faithful'] else 'DISAGREES'} "
              f"with the reference on {pl['faithfulness_strings']} strings; accepted set "
              f"{'proved' if pl['accepted_proved'] else 'REFUTED'} ({pl['sides']}); excluded pairs sound to the "
              f"bound: {pl['excluded_sound_to_bound']}")
    if "resync" in details:
        r = details["resync"]
        print(f"  re-synchronization: {'proved' if r['holds'] else 'REFUTED'} to length {r['proved_to']}"
              + ("" if r["holds"] else f": {r['counterexample']!r}, window start {r['window_start']}, common "
                                       f"boundary {r['common_boundary']}"))
    if d.admitted:
        return 0
    return 1 if d.reason.startswith(UNPROVED) else 2


# --- merge locality: the gate's checks of the lemma, and a whole-word file's own premises, as ledger records ------

MERGE_LOCALITY_KIND = "proofs"  # the records' kind: written by this command (the gate's are kind "gate")


def _bound_details() -> dict:
    return {"alphabet": GATE_BOUND.alphabet, "outside": GATE_BOUND.outside, "max_merges": GATE_BOUND.max_merges,
            "max_length": GATE_BOUND.max_length}


def _leftmost_first(symbols: list[str], merges: list[Merge]) -> list[str]:
    """A wrong abstraction (the control of the abstraction check): the leftmost mergeable pair first, whatever its
    rank."""
    rank = {pair: i for i, pair in enumerate(merges)}
    symbols = list(symbols)
    while mergeable := [i for i, pair in enumerate(zip(symbols, symbols[1:], strict=False)) if pair in rank]:
        i = mergeable[0]
        symbols[i:i + 2] = [symbols[i] + symbols[i + 1]]
    return symbols


def _record(level: str, check: str, *, comparisons: int, differences: int, unit: str, oracle: str, details: dict,
            tok: FrozenTokenizer | None = None) -> dict:
    return declare(make_record(MERGE_LOCALITY_KIND, level, check, tokenizer=tok.name if tok is not None else None,
                               tokenizer_sha256=tok.sha256 if tok is not None else None, comparisons=comparisons,
                               differences=differences, unit=unit, oracle=oracle, details=details))


def merge_locality_checks():
    """Each check of the lemma as (what it shows, its record, whether it holds), one at a time (they take seconds
    each): the same checks, check names, units and oracles as properties/test_merge_locality.py."""
    for mode in MODES:
        out = exhaustive_check(GATE_BOUND, mode)
        yield (f"exhaustive [{mode}]: {out.cuts:,} free cuts of {out.words:,} words under {out.vocabularies} merge "
               f"lists, {out.failures} differ"), _record(
            "proof", f"merge_locality.exhaustive:{mode}", comparisons=out.cuts, differences=out.failures,
            unit="cuts", oracle="reference", details={"vocabularies": out.vocabularies, "words": out.words,
                                                      "first": repr(out.first), "bound": _bound_details()}), \
            out.failures == 0 and out.cuts > 0
    for mode in MODES:
        agreement = abstraction_check(GATE_BOUND, mode)
        yield (f"abstraction [{mode}]: {agreement.encodes:,} encodes, {agreement.differences} differ from the "
               "reference"), _record(
            "proof", f"merge_locality.abstraction:{mode}", comparisons=agreement.encodes,
            differences=agreement.differences, unit="encodes", oracle="reference",
            details={"vocabularies": agreement.vocabularies, "first": repr(agreement.first),
                     "bound": _bound_details()}), agreement.differences == 0 and agreement.encodes > 0
    proof = prove_locality(Z3_GATE_LENGTH)
    unproved = [f"{n}:{k}={a}" for (n, k), a in proof.answers.items() if a != "unsat"]
    yield (f"z3, every merge table, words of 2 to {Z3_GATE_LENGTH} symbols: {len(proof.answers)} cuts, "
           f"{len(unproved)} not proved"), _record(
        "proof", "merge_locality.z3_all_tables", comparisons=len(proof.answers), differences=len(unproved),
        unit="cuts", oracle="proof", details={"max_length": proof.max_length, "seconds": proof.seconds,
                                              "unproved": unproved}), proof.proved
    for plant in PLANTS:
        out = planted_variant(plant)
        yield f"control {plant}: {out.failures:,} of {out.cuts:,} cuts differ", _record(
            "control", f"merge_locality.planted:{plant}", comparisons=1, differences=int(out.failures > 0),
            unit="controls", oracle="reference", details={"killed": out.failures > 0, "failing_cuts": out.failures,
                                                          "cuts": out.cuts, "first": repr(out.first)}), \
            out.failures > 0
    wrong = abstraction_check(GATE_BOUND, "unk", abstraction=_leftmost_first)
    yield f"control leftmost_first abstraction: {wrong.differences:,} encodes differ", _record(
        "control", "merge_locality.abstraction_planted:leftmost_first", comparisons=1,
        differences=int(wrong.differences > 0), unit="controls", oracle="reference",
        details={"killed": wrong.differences > 0, "differing_encodes": wrong.differences, "encodes": wrong.encodes,
                 "first": repr(wrong.first)}), wrong.differences > 0
    for control in Z3_CONTROLS:
        out = prove_locality(4, control, min_length=3)
        killed = len(out.answers) > 0 and len(out.refuted) == len(out.answers)
        yield f"control z3 {control}: {len(out.refuted)} of {len(out.answers)} cuts refuted", _record(
            "control", f"merge_locality.z3_control:{control}", comparisons=1, differences=int(killed),
            unit="controls", oracle="proof",
            details={"killed": killed, "refuted_cuts": len(out.refuted), "cuts": len(out.answers),
                     "answers": {f"{n}:{k}": a for (n, k), a in out.answers.items()}}), killed


def whole_word_premises(tok: FrozenTokenizer) -> tuple[str, dict, bool] | None:
    """A whole-word file's own premises as (what they show, its `admission.whole_word` record, whether all hold),
    or None for a file that is not whole-word (its premises are its split family's): the family's judgement
    (`spec.whole_word.judge`: its stages, M1-M4, no normalized added token), no added token that strips
    whitespace or matches as a single word (the guard's condition), and each premise of the lemma on its model
    (`merge_locality.premises_of`)."""
    inputs = tok.admission_inputs
    config = {"model": inputs.model, "normalizer": inputs.normalizer, "pre_tokenizer": inputs.pre_tokenizer}
    if not is_whole_word_candidate(config):
        return None
    refused, family = judge(config, list(inputs.added_tokens), inputs.vocabulary)
    model = {}
    if tok.source_path:
        model = json.loads(Path(tok.source_path).read_bytes()).get("model") or {}
    stripping = [str(t.get("content")) for t in inputs.added_tokens
                 if t.get("lstrip") or t.get("rstrip") or t.get("single_word")]
    held = {"whole_word_family": refused is None, "no_strip_or_single_word": not stripping}
    held.update(premises_of(model) if model else {"model_read": False})
    failing = [k for k, ok in held.items() if not ok]
    record = _record("harness", WHOLE_WORD_ADMISSION_CHECK, comparisons=len(held), differences=len(failing),
                     unit="premises", oracle="premise", tok=tok,
                     details={"kind": WHOLE_WORD, "family": family or None, "normalizer": tok.normalizer,
                              "refusal": refused, "premises": held, "stripping_added_tokens": stripping[:10]})
    said = (f"{tok.name}: whole-word family {family}, every premise holds ({', '.join(held)})" if not failing else
            f"{tok.name}: premises FAILED: {', '.join(failing)}" + (f" ({refused})" if refused else ""))
    return said, record, not failing


def separators_main(tokenizer: str, name: str | None, ledger: Path | None) -> int:
    """`--separators --tokenizer PATH` (module docstring): a piece-local file's own premises (`admission.piece_local`)
    and the per-code-point checks of its own stages (`spec.proofs.separators.file_checks`), each printed and
    recorded; exit 0 when every one holds, 1 when one does not, 2 for a file that is not piece-local."""
    try:
        tok = resolve_tokenizer(tokenizer, name)
    except SuiteError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    inputs = tok.admission_inputs
    config = {"model": {**inputs.model, "type": inputs.model_type, "dropout": inputs.dropout},
              "normalizer": inputs.normalizer, "pre_tokenizer": inputs.pre_tokenizer}
    stripping = [str(t.get("content")) for t in inputs.added_tokens
                 if t.get("lstrip") or t.get("rstrip") or t.get("single_word")]
    if not is_piece_local_candidate(config):
        print(f"error: {tok.name} is not a piece-local file (its model or a ByteLevel stage: see its admission)",
              file=sys.stderr)
        return 2
    refused, rules = judge_piece_local(config, list(inputs.added_tokens))
    held = {"piece_local_family": rules is not None, "no_strip_or_single_word": not stripping}
    failing = [k for k, ok in held.items() if not ok]
    records = [_record("harness", "admission.piece_local", comparisons=len(held), differences=len(failing),
                       unit="premises", oracle="premise", tok=tok,
                       details={"kind": "piece_local", "family": rules.family if rules else None, "premises": held,
                                "refusal": refused, "stripping_added_tokens": stripping[:10],
                                "separators": sorted(rules.separators) if rules else [],
                                "special_edges": rules.special_edges if rules else None,
                                "refused_candidates": [list(r) for r in rules.refused] if rules else []})]
    if rules is None or failing:
        print(f"separator premises of {tok.name}: FAILED: {', '.join(failing)}" + (f" ({refused})" if refused else ""))
        if ledger is not None:
            append_records(ledger, records)
        return 1
    print(f"separator premises of {tok.name}: {rules.family}, {len(rules.separators)} separators")
    failed = False
    for check in file_checks(tok):
        print(f"  {check.check} [{check.stage}]: {check.comparisons:,} compared"
              + ("" if check.holds else f" -- FAILED: {', '.join(check.disagree) or 'nothing compared'}"))
        counts = {"comparisons": check.comparisons, "differences": len(check.disagree),
                  "unit": "code point and candidate", "oracle": "reference", "tok": tok,
                  "details": {**check.details, "disagree": check.disagree}}
        if check.check == NORMALIZER_CHECK:
            records.append(_record("exhaustive", "piece_local.normalizer_code_points", **counts))
        else:
            records.append(_record("exhaustive", "piece_local.pre_tokenizer_code_points", **counts))
        failed |= not check.holds
    if ledger is not None:
        append_records(ledger, records)
    return 1 if failed else 0


def merge_locality_main(tokenizer: str | None, name: str | None, ledger: Path | None) -> int:
    """`--merge-locality` (module docstring): print each check, append its record to `ledger`, exit 0/1/2."""
    failed = False
    if tokenizer is not None:
        try:
            tok = resolve_tokenizer(tokenizer, name)
        except SuiteError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        own = whole_word_premises(tok)
        if own is None:
            print(f"error: {tok.name} is not a whole-word file (a ByteLevel stage: its premises are its split "
                  "family's)", file=sys.stderr)
            return 2
        said, record, held = own
        print(f"merge locality premises of {said}")
        if ledger is not None:
            append_records(ledger, [record])
        failed |= not held
    for said, record, held in merge_locality_checks():
        print(f"merge locality {said}{'' if held else ' -- FAILED'}")
        if ledger is not None:
            append_records(ledger, [record])
        failed |= not held
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m delta_suite.spec.proofs", description=__doc__)
    parser.add_argument("families", nargs="*", help=f"pattern families (default: all of {', '.join(SPLIT_PATTERNS)})")
    parser.add_argument("--bounded", action="store_true", help="also run the default bounded enumeration")
    parser.add_argument("--pipeline-bound", type=int, default=DEFAULT_BOUND, metavar="N",
                        help=f"string length of the pipeline-level proof (default {DEFAULT_BOUND}; 0 skips it)")
    parser.add_argument("--tokenizer", metavar="PATH", type=Path,
                        help="decide one tokenizer.json (or a folder holding one): its family, or its derivation; "
                        "with --merge-locality: a whole-word file whose own premises are recorded too")
    parser.add_argument("--merge-locality", action="store_true",
                        help="run the merge-locality lemma's checks (and, with --tokenizer, a whole-word file's "
                        "premises) and record them (--ledger)")
    parser.add_argument("--separators", action="store_true",
                        help="with --tokenizer: a piece-local file's premises and the per-code-point checks of its "
                        "own stages, recorded (--ledger)")
    parser.add_argument("--name", help="with --merge-locality or --separators and --tokenizer: the file's name in "
                        "the records (default: its folder's name, or its stem)")
    parser.add_argument("--ledger", type=Path, metavar="FILE",
                        help="with --merge-locality or --separators: append the records here")
    args = parser.parse_args(argv)
    if args.separators:
        if args.tokenizer is None or args.families or args.bounded or args.merge_locality:
            parser.error("--separators takes --tokenizer and no family arguments, --bounded or --merge-locality")
        return separators_main(str(args.tokenizer), args.name, args.ledger)
    if args.merge_locality:
        if args.families or args.bounded:
            parser.error("--merge-locality takes no family arguments and no --bounded")
        return merge_locality_main(str(args.tokenizer) if args.tokenizer is not None else None, args.name,
                                   args.ledger)
    if args.name is not None or args.ledger is not None:
        parser.error("--name and --ledger go with --merge-locality or --separators")
    if args.tokenizer is not None:
        if args.families:
            parser.error("--tokenizer takes no family arguments")
        return tokenizer_main(args.tokenizer)
    unknown = [f for f in args.families if f not in SPLIT_PATTERNS]
    if unknown:
        parser.error(f"unknown pattern family: {', '.join(unknown)}")
    if not 0 <= args.pipeline_bound <= 12:
        parser.error("--pipeline-bound must be between 0 and 12")

    failed = False
    for family in args.families or list(SPLIT_PATTERNS):
        proof = examine_family(family)
        s = proof.summary()
        origin = f" (reconstruction: {RECONSTRUCTED[family]})" if family in RECONSTRUCTED else " (confirmed: file)"
        print(f"{family}{origin}: {s['symbols']} symbols, {s['stages']} stage(s), "
              f"{s['obligations_proved']}/{s['obligations_total']} obligations proved, solver {s['solver_seconds']}s")
        print(f"  accepted pairs proved (separating stage): {s['accepted_pairs_proved']}")
        print(f"  accepted pairs FAILED: {s['accepted_pairs_failed']}")
        print(f"  outside the floor but sound, adopted for this pattern (delta_suite.spec.transitions): "
              f"{s['excluded_sound_conservative']}")
        depths, bound = s["exclusion_depths"], s["witness_search"]
        checked = f"tokenizers: {', '.join(s['ids_checked_on'])}" if s["ids_checked_on"] else s["ids_note"]
        print(f"  refuted pairs by deepest stage ({checked}): {depths['ids']} IDs, {depths['units']} units only, "
              f"{depths['pieces']} pieces only; {depths['conservative']} excluded, conservative (search bound: "
              f"first word x {bound['first_word_contexts']} contexts, {bound['vocabulary_texts_per_tokenizer']} "
              f"vocabulary texts per tokenizer, {bound['z3_models']} z3 models x {bound['contexts_per_model']} "
              "contexts)")
        for label, cx in s["counterexamples"].items():
            print(f"  {label}: {' '.join(cx['codepoints'])} cut {cx['cut']} ({cx['obligation']}, stage "
                  f"{cx['stage']}): {cx['pieces_whole']} vs {cx['pieces_split']}")
            for line in exclusion_lines(s["exclusions"].get(label)):
                print(f"    {line}")
        if s["unresolved_exclusions"]:
            print(f"  excluded pairs with neither proof nor confirmed counterexample: {s['unresolved_exclusions']}")
        failed |= bool(s["accepted_pairs_failed"] or s["unresolved_exclusions"])
        for cov in family_coverage(family):
            claimed = SPLIT_PATTERNS[family][cov.stage] in TOTAL_STAGES
            verdict = "total (matches tile every text)" if cov.total else (
                "matches the empty string" if cov.empty_match else f"not total: {cov.witness!r} starts no match")
            print(f"  coverage of stage {cov.stage}: {verdict}; may run Removed + inverted: {claimed}")
            failed |= cov.total != claimed
        if args.pipeline_bound:
            pipeline = prove_family_pipeline(family, args.pipeline_bound)
            for line in pipeline_lines(pipeline.summary()):
                print(f"  {line}")
            failed |= not pipeline.holds
            resync = family_resync(family, args.pipeline_bound)
            r = resync.as_dict(family_alphabet(family))
            verdict = (f"proved to length {r['proved_to']} ({r['seconds']}s)" if r["holds"] else
                       f"REFUTED: {r['counterexample']!r}, window start {r['window_start']}, common boundary "
                       f"{r['common_boundary']}")
            print(f"  re-synchronization (a piece boundary shared by the whole text and a window: every later piece "
                  f"agrees): {verdict}")
            failed |= not r["holds"]
            print(f"  witness (repair without a class-transition witness): {witness_verdict(family)}")
        if args.bounded:
            alphabet = family_alphabet(family)
            for r in bounded_check(family_pieces(family), alphabet, *default_lengths(alphabet, False)):
                print(f"  bounded [{r.label}] {len(r.representatives)} symbols to length {r.max_length}: "
                      f"{r.enumerated} strings, {r.transitions} cuts, {len(r.differences)} differences, "
                      f"{r.seconds:.1f}s")
                failed |= bool(r.differences)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
