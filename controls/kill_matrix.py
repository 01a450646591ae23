"""The kill matrix: the battery against every control on every provisioned tokenizer, and against the real thing.

For each (control, tokenizer) the battery's cases are checked with the control's broken rules, parameters or
planted fault. A control is killed when at least one string shows a difference; the row records how many
strings were checked before the first kill (`strings_to_first_kill`, 1-based) and the share of strings that
fail. The unbroken implementation, checked on the same cases, must show no difference at all. A control whose
broken condition does not exist for a tokenizer is "not applicable" there (not run, never counted as killed);
a control that survives where its condition is proven redundant (`controls.proofs`) is "survives-by-proof";
any other survival is "survived", a finding.

Run from the command line for one profile, tokenizer and control (or all), e.g. the full profile on Qwen3 with
the normalization condition removed:
    python -m delta_suite.controls.kill_matrix --profile full --tokenizer qwen3_8b --control cut.no_normalization
Progress lines (strings done, failing, rate) go to stderr; the final rows are JSON lines on stdout and, with
--ledger, ledger records.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from delta_suite.checks.battery import BATTERY_VERSION, BatteryCase, battery_digest, get_profile, iter_battery
from delta_suite.checks.differential import (
    CHUNKED_PIECES,
    CheckResult,
    Difference,
    ReferenceMemo,
    check_cut_case,
    check_repair_case,
    first_difference,
)
from delta_suite.checks.palette import derived_seed
from delta_suite.controls.findings import open_finding
from delta_suite.controls.registry import Control, get, names
from delta_suite.frozen.errors import SuiteError
from delta_suite.frozen.loader import FrozenTokenizer
from delta_suite.frozen.user_files import resolve_tokenizer
from delta_suite.ledger.records import append_records, make_record
from delta_suite.spec.admission import admission_of
from delta_suite.spec.cut import DEFAULT_CUT_RULES
from delta_suite.spec.proofs.obligations import declare
from delta_suite.spec.refusals import refusal_message
from delta_suite.subjects.protocol import SubjectFault, SubjectUnavailable
from delta_suite.subjects.records import subject_record, unavailable_record
from delta_suite.subjects.wiring import PATHS, check_on_subject, open_subject, supports

UNBROKEN = {"cut": "unbroken.cut", "repair": "unbroken.repair"}


class UnknownControlName(SuiteError):
    """A control name the registry does not know."""


@dataclass
class KillRow:
    """One (subject, tokenizer) cell of the matrix: a control, or the unbroken implementation of a path."""
    control: str
    path: str
    tokenizer: str
    tokenizer_sha256: str
    status: str  # killed | survived | survives-by-proof | not applicable | clean | dirty
    strings: int = 0  # battery strings checked
    failing: int = 0  # strings with at least one ID difference
    unit_failing: int = 0  # strings with at least one unit difference (IDs grouped per pre-token)
    strings_to_first_kill: int | None = None  # 1-based: strings checked up to the first ID difference
    strings_to_first_unit_kill: int | None = None  # 1-based: up to the first unit difference
    killed_by: str | None = None  # "ids" | "units" | None
    comparisons: int = 0
    differences: int = 0
    fast_path: int = 0
    fallbacks: int = 0
    not_plantable: int = 0  # harness controls: strings where the fault could not be planted
    first_case: int | None = None
    first: dict | None = None
    first_text: str | None = None
    first_unit_case: int | None = None
    first_unit: dict | None = None
    seconds: float = 0.0
    battery: dict = field(default_factory=dict)

    @property
    def killed(self) -> bool:
        return self.failing > 0 or self.unit_failing > 0

    @property
    def failing_share(self) -> float:
        """Share of strings with an ID difference."""
        return self.failing / self.strings if self.strings else 0.0

    @property
    def unit_failing_share(self) -> float:
        """Share of strings with a unit difference."""
        return self.unit_failing / self.strings if self.strings else 0.0

    def finish(self, control: Control | None, tok: FrozenTokenizer) -> KillRow:
        """Set the status from what was found."""
        self.killed_by = "ids" if self.failing else "units" if self.unit_failing else None
        if control is None:
            self.status = "dirty" if self.killed else "clean"
        elif self.status != "not applicable":
            self.status = "killed" if self.killed else control.status_if_survives(tok)
        return self

    def as_json(self) -> dict:
        out = asdict(self)
        out["killed"] = self.killed
        out["failing_share"] = round(self.failing_share, 6)
        out["unit_failing_share"] = round(self.unit_failing_share, 6)
        return out


class _Cell:
    """Accumulates one row while the cases stream past."""

    def __init__(self, row: KillRow) -> None:
        self.row = row
        self.t = 0.0

    def add(self, case: BatteryCase, r: CheckResult) -> None:
        row = self.row
        row.strings += 1
        row.comparisons += r.comparisons
        row.differences += r.differences
        row.fast_path += r.fast_path
        row.fallbacks += r.fallbacks
        if r.differences:
            row.failing += 1
        if r.unit_differences:
            row.unit_failing += 1
        if r.differences and row.strings_to_first_kill is None:
            row.strings_to_first_kill = row.strings
            row.first_case = case.index
            row.first = r.first.as_json() if r.first else None
            row.first_text = case.text if len(case.text) <= 400 else None
        if r.unit_differences and row.strings_to_first_unit_kill is None:
            row.strings_to_first_unit_kill = row.strings
            row.first_unit = r.first_unit.as_json() if r.first_unit else None
            row.first_unit_case = case.index


def harness_check(tok: FrozenTokenizer, control: Control, case: BatteryCase, memo: ReferenceMemo,
                  seed: int) -> tuple[int, int, Difference | None] | None:
    """Plant the control's fault in the correct IDs of the case; (1, undetected, difference) or None if not plantable.

    Proposition checked: `first_difference(correct, faulty)` is not None for every planted fault; a planted
    sequence that equals the correct one would not be a fault and is refused here as a planter defect."""
    assert control.fault is not None
    expected = memo.ids(case.text)
    rng = random.Random(derived_seed("harness", control.name, seed, case.index))
    faulty = control.fault(tok, list(expected), rng)
    if faulty is None:
        return None
    if tuple(faulty) == tuple(expected):
        raise AssertionError(f"{control.name} planted no fault in case {case.index}")
    diff = first_difference(expected, faulty)
    return 1, 0 if diff is not None else 1, diff


def _compares_chunked(control: Control | None) -> bool:
    """Whether the cut check of `control` (None: the unbroken rules) runs the chunked encoder: for the unbroken
    rules, and for a control that breaks the chunk encoder itself (no single cut or partition reads it)."""
    return control is None or (control.rules is not None
                                and control.rules.chunk_prefix != DEFAULT_CUT_RULES.chunk_prefix)


def run_matrix(
    tok: FrozenTokenizer,
    control_names: list[str],
    profile: str = "ci",
    seed: int = 0,
    include_unbroken: bool = True,
    start: int = 0,
    stop: int | None = None,
    progress=None,
) -> list[KillRow]:
    """Check the battery's cases [start, stop) for every named control (and the unbroken paths) on `tok`.

    Every applicable control sees every case; a harness control's `differences` counts detected faults, and a
    planted fault the comparison misses is recorded in `fallbacks` as an escape (which the tests forbid). The
    chunked encoder is compared for the unbroken cut rules, and for a control whose rules change the chunk encoder
    of a whole-word tokenizer (`CutRules.chunk_prefix`, which only the chunked encode reads); the other controls'
    rules are exercised by every single cut and the partition (the planner adds cost, not coverage). A whole-word
    tokenizer's cuts are compared on IDs only (`checks.differential`: a free cut splits a pre-token by design), so
    its kills are ID kills.
    """
    controls = [get(n) for n in control_names]
    paths = sorted({c.path for c in controls if c.path in UNBROKEN})
    info = {"version": BATTERY_VERSION, "profile": profile, "seed": seed, "start": start, "stop": stop}
    if stop is None and start == 0:
        info["digest"] = battery_digest(tok, profile, seed)
    cells: dict[str, _Cell] = {}
    subjects: list[tuple[str, Control | None]] = []
    if include_unbroken:
        for path in paths:
            cells[UNBROKEN[path]] = _Cell(KillRow(UNBROKEN[path], path, tok.name, tok.sha256, "", battery=info))
            subjects.append((UNBROKEN[path], None))
    for c in controls:
        applicable = c.applies(tok) and admission_of(tok).admitted
        row = KillRow(c.name, c.path, tok.name, tok.sha256, "" if applicable else "not applicable", battery=info)
        cells[c.name] = _Cell(row)
        if applicable:
            subjects.append((c.name, c))
    done = 0
    t_start = time.perf_counter()
    for case in iter_battery(tok, profile, seed, start, stop):
        memo = ReferenceMemo(tok)
        derived_memos: dict[str, ReferenceMemo] = {}
        for name, control in subjects:
            cell = cells[name]
            t0 = time.perf_counter()
            path = control.path if control is not None else cell.row.path
            if path == "cut" and control is not None and control.derive is not None:
                dtok = control.subject_tokenizer(tok)  # the battery's strings, on the derived tokenizer
                dmemo = derived_memos.setdefault(dtok.name, ReferenceMemo(dtok))
                cell.add(case, check_cut_case(dtok, case, control.rules, dmemo, chunked=False))
            elif path == "cut":
                rules = control.rules if control else None
                fault = control.cut_fault if control else None
                cell.add(case, check_cut_case(tok, case, rules, memo, chunked=_compares_chunked(control), fault=fault))
            elif path == "repair":
                cell.add(case, check_repair_case(tok, case, control.params if control else None, memo))
            else:
                assert control is not None
                got = harness_check(tok, control, case, memo, seed)
                r = CheckResult(case.index, case.hazard)
                if got is None:
                    cell.row.not_plantable += 1
                else:
                    planted, escaped, diff = got
                    r.comparisons, r.differences, r.fallbacks, r.first = planted, planted - escaped, escaped, diff
                cell.add(case, r)
            cell.t += time.perf_counter() - t0
        done += 1
        if progress is not None:
            progress(done, cells, time.perf_counter() - t_start)
    rows = []
    for name, control in [(n, None) for n in UNBROKEN.values() if n in cells] + [(c.name, c) for c in controls]:
        cell = cells[name]
        cell.row.seconds = round(cell.t, 3)
        rows.append(cell.row.finish(control, tok))
    return rows


def ledger_records(rows: list[KillRow], kind: str = "controls") -> list[dict]:
    """One ledger record per row: level "control" for controls, "battery" for the unbroken implementation."""
    out = []
    for r in rows:
        unbroken = r.control in UNBROKEN.values()
        details = {
            "control": r.control,
            "path": r.path,
            "status": r.status,
            "open_finding": open_finding(r.control, r.tokenizer) if r.status == "survived" else None,
            "killed": r.killed,
            "killed_by": r.killed_by,
            "strings_to_first_kill": r.strings_to_first_kill,
            "strings_to_first_unit_kill": r.strings_to_first_unit_kill,
            "failing_share": round(r.failing_share, 6),
            "unit_failing_share": round(r.unit_failing_share, 6),
            "strings": r.strings,
            "failing": r.failing,
            "unit_failing": r.unit_failing,
            "not_plantable": r.not_plantable,
            "first_case": r.first_case,
            "first": r.first,
            "first_unit": r.first_unit,
            "battery": r.battery,
        }
        out.append(
            declare(make_record(
                kind,
                "battery" if unbroken else "control",
                f"battery.{r.path}" if unbroken else f"control.{r.control}",
                tokenizer=r.tokenizer,
                tokenizer_sha256=r.tokenizer_sha256,
                comparisons=r.comparisons,
                differences=r.differences,
                fast_path=r.fast_path,
                fallbacks=r.fallbacks,
                unit="battery strings" if r.path != "harness" else "planted faults",
                details=details,
                oracle="reference",
            ))
        )
    return out


def run_subject_battery(tok: FrozenTokenizer, spec: str, profile: str = "ci", seed: int = 0, start: int = 0,
                        stop: int | None = None) -> list[dict]:
    """The unbroken battery on a third-party subject: one kind "subject" record per path (encoder, chunked, repair).

    Per case and path: the subject's answer equals the reference (`subjects.wiring.check_on_subject`: whole encode;
    `encode_chunked` with the battery's chunk count; a new session given text[:s] then text for each battery split).
    A subject that raises on a case counts one difference there. A path the subject lacks, or a subject that cannot
    run at all, gets a "not installed" record (never a pass); the latter raises SubjectUnavailable after recording.
    """
    try:
        subject = open_subject(spec, tok)
    except SubjectUnavailable as exc:
        exc.records = [unavailable_record(spec, tok, "battery", f"battery.{p}", exc.reason) for p in PATHS]
        raise
    out = []
    cases = list(iter_battery(tok, profile, seed, start, stop))
    for path in PATHS:
        if not supports(subject, path):
            out.append(unavailable_record(spec, tok, "battery", f"battery.{path}", f"offers no {path} path"))
            continue
        comparisons = differences = 0
        example = None
        faults: dict[str, int] = {}
        for case in cases:
            try:
                n, d, bad = check_on_subject(subject, tok, case.text, path, splits=case.splits, chunks=CHUNKED_PIECES)
            except SubjectFault as fault:  # no IDs on this input: a finding of its own, never a pass nor a difference
                faults[fault.kind] = faults.get(fault.kind, 0) + 1
                n, d, bad = 0, 0, None
                if example is None:
                    example = {"text": case.text, "path": path, "error": str(fault), "case": case.index,
                               "hazard": case.hazard}
            except Exception as exc:  # the subject crashed on this input: a difference, never a pass
                n, d, bad = 1, 1, {"text": case.text, "path": path, "error": f"{type(exc).__name__}: {exc}"}
            comparisons, differences = comparisons + n, differences + d
            if d and example is None:
                example = {**bad, "case": case.index, "hazard": case.hazard}
        out.append(subject_record(subject, tok, "battery", f"battery.{path}", comparisons=comparisons,
                                  differences=differences, counterexample=example, profile=profile, seed=seed,
                                  cases=len(cases), battery_version=BATTERY_VERSION, faults=faults))
    return out


def _subject_main(args: argparse.Namespace) -> int:
    """`--subject`: the unbroken battery on that subject; exit 1 on a difference, 2 if it cannot run."""
    records: list[dict] = []
    try:
        get_profile(args.profile)
        for name in args.tokenizer:
            tok = resolve_tokenizer(name, args.name)
            try:
                records += run_subject_battery(tok, args.subject, args.profile, args.seed, args.start, args.stop)
            except SubjectUnavailable as exc:
                records += getattr(exc, "records", [])
                raise
    except SuiteError as exc:
        print(f"error: {exc}", file=sys.stderr)
        if args.ledger and records:
            append_records(args.ledger, records)
        return 2
    for r in records:
        print(json.dumps(r, ensure_ascii=False, sort_keys=True))
    if args.ledger:
        append_records(args.ledger, records)
    return 1 if any(r["differences"] or r["details"].get("faults") for r in records) else 0


def _progress_printer(every: int):
    def show(done: int, cells: dict[str, _Cell], elapsed: float) -> None:
        if done % every:
            return
        live = [(n, c.row) for n, c in cells.items() if c.row.status != "not applicable"]
        parts = [f"{n}: {r.failing}|{r.unit_failing}/{r.strings}" for n, r in live]
        rate = done / elapsed if elapsed else 0.0
        print(f"[{elapsed:8.1f}s] {done} strings ({rate:.1f}/s) " + "; ".join(parts), file=sys.stderr, flush=True)

    return show


def admitted_tokenizer(arg: str, name: str | None = None) -> FrozenTokenizer:
    """The tokenizer `arg` names (`frozen.resolve_tokenizer`), which the matrix needs admitted: a refused one has no
    cut or repair path for a control to break, so it is a usage error (exit 2) with the stage that refuses it."""
    tok = resolve_tokenizer(arg, name)
    decided = admission_of(tok)
    if not decided.admitted:
        raise SuiteError(f"tokenizer refused: {tok.name}: {refusal_message(decided.reason)}")
    return tok


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m delta_suite.controls.kill_matrix", description=__doc__.splitlines()[0])
    p.add_argument("--profile", default="ci", help="battery profile: ci or full")
    p.add_argument("--tokenizer", action="append", required=True, help="tokenizer name or alias, or a path to a "
                   "tokenizer.json or a folder holding one (a user file) (repeatable)")
    p.add_argument("--name", help="the name of a --tokenizer path (default: the folder's name, or the file's stem)")
    p.add_argument("--control", action="append", help="control name (repeatable; default: all)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--start", type=int, default=0, help="first case index")
    p.add_argument("--stop", type=int, default=None, help="stop before this case index")
    p.add_argument("--no-unbroken", action="store_true", help="do not also check the unbroken implementation")
    p.add_argument("--progress-every", type=int, default=1000)
    p.add_argument("--ledger", type=Path, help="append ledger records to this JSON-lines file")
    p.add_argument("--subject", metavar="NAME[==VERSION]|module:factory|exec:COMMAND",
                   help="run only the unbroken battery on this implementation of subjects/ (controls are variants of "
                   "the minimal one); exit 1 on a difference, 2 if it cannot run")
    args = p.parse_args(argv)
    if args.name is not None and len(args.tokenizer) > 1:
        print("error: --name names one --tokenizer path; give one --tokenizer with it", file=sys.stderr)
        return 2
    if args.subject is not None:
        if args.control:
            print("error: --control and --subject exclude each other (controls break the minimal implementation)",
                  file=sys.stderr)
            return 2
        return _subject_main(args)
    try:
        get_profile(args.profile)
        chosen = args.control or names()
        for n in chosen:
            try:
                get(n)
            except KeyError as exc:
                raise UnknownControlName(str(exc.args[0])) from None
        rows: list[KillRow] = []
        for name in args.tokenizer:
            tok = admitted_tokenizer(name, args.name)
            rows += run_matrix(tok, chosen, args.profile, args.seed, not args.no_unbroken, args.start, args.stop,
                               _progress_printer(max(1, args.progress_every)))
    except SuiteError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    for r in rows:
        print(json.dumps(r.as_json(), ensure_ascii=False))
    if args.ledger:
        append_records(args.ledger, ledger_records(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
