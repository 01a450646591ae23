"""`fuzz`: seeded, resumable fuzzing campaigns of the cut and repair paths against the reference.

Exit status: 0 clean (or a control that survived, or a finished campaign resumed: nothing to do), 1 a difference
was found (against a control: it was killed; a third-party subject that crashed, hung or returned no IDs on some
input counts as a finding too), 2 a usage or input error (unknown or refused tokenizer, a --tokenizer path that is
not a tokenizer file (3 when it cannot be read), bad budget, unknown control (`fuzz --list-controls` lists them) or
subject, a tokenizer of `--tokenizer all` that could not be loaded and was skipped, the folder in use by another
process), 3 an environment or I/O error (an unwritable or full output folder: the path and the OS error are
printed), 130 interrupted (Ctrl-C or SIGTERM: every finished batch is on disk; the summary says how to resume).
When several apply: 130, then 1, then 3, then 2.
"""

from __future__ import annotations

import argparse
import re
import signal
import sys
from dataclasses import dataclass
from pathlib import Path

from delta_suite.frozen.errors import NotProvisioned, SuiteError, os_error_message
from delta_suite.frozen.loader import load_tokenizer
from delta_suite.frozen.registry import lookup, rows
from delta_suite.frozen.user_files import is_path_argument, resolve_tokenizer
from delta_suite.frozen.user_table import user_entry
from delta_suite.fuzz.campaign import (
    CampaignError,
    CampaignResult,
    CampaignSpec,
    latest_campaign,
    new_campaign_id,
    run_campaign,
)
from delta_suite.fuzz.checker import (
    SubjectChecker,
    control_applies,
    control_path,
    is_default_subject,
    opened_subject,
)
from delta_suite.fuzz.control_list import control_lines, loadable_tokenizers, render_json, render_table
from delta_suite.fuzz.generate import PROFILES, generator_digest
from delta_suite.fuzz.ledger_writer import KIND
from delta_suite.fuzz.progress import Progress
from delta_suite.fuzz.regressions import CORPUS, replay_on_subject
from delta_suite.fuzz.regressions import load as load_regression
from delta_suite.ledger.lock import FolderBusy
from delta_suite.ledger.records import append_records, unloadable_record
from delta_suite.spec.admission import admission_of
from delta_suite.spec.refusals import refusal_message
from delta_suite.subjects.protocol import SubjectUnavailable
from delta_suite.subjects.records import unavailable_record
from delta_suite.subjects.wiring import add_subject_argument

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


class UsageError(SuiteError):
    """A command line the campaign cannot run."""


def parse_budget(text: str) -> float:
    """Seconds of a budget such as 90s, 15m, 2h or 1h30m (a bare number is seconds)."""
    s = text.strip().lower()
    if re.fullmatch(r"\d+(\.\d+)?", s):
        value = float(s)
    else:
        parts = re.findall(r"(\d+(?:\.\d+)?)([smhd])", s)
        if not parts or "".join(n + u for n, u in parts) != s:
            raise UsageError(f"bad budget {text!r}: use a duration such as 90s, 15m, 2h or 1h30m")
        value = sum(float(n) * _UNITS[u] for n, u in parts)
    if value <= 0:
        raise UsageError(f"bad budget {text!r}: must be positive")
    return value


@dataclass
class Unloadable:
    """A provisioned tokenizer whose files cannot be loaded (changed since install, corrupt): recorded, skipped."""
    name: str
    reason: str


def unloadable_row(item: Unloadable) -> dict:
    """The ledger row of a tokenizer a campaign could not load: no comparison, the reason and the remedy."""
    return unloadable_record(KIND, "fuzz.load", item.name, item.reason,
                             f"corpora tokenizers pull {lookup(item.name).alias} --force")


def resolve_tokenizers(name: str, unloadable: list[Unloadable] | None = None,
                       user_name: str | None = None) -> tuple[list[str], list[str]]:
    """(runnable names, refusal lines) for NAME, ALIAS, "all", or a path to a user's tokenizer.json or snapshot
    folder (named `user_name`, else after the file); a single refused name or a refused file is a setup error.

    A tokenizer that is provisioned but cannot be loaded goes to `unloadable` (when given) and is skipped, so the
    others of "all" still run."""
    if name != "all" and (user_name is not None or is_path_argument(name)):
        tok = resolve_tokenizer(name, user_name)
        decided = admission_of(tok)
        if not decided.admitted:
            raise UsageError(f"tokenizer refused: {tok.name} ({name}): {refusal_message(decided.reason)}")
        return [tok.name], []
    targets = [r.name for r in rows()] if name == "all" else [lookup(name).name]
    ok, refused = [], []
    for n in targets:
        try:
            tok = load_tokenizer(n)
        except NotProvisioned as exc:
            refused.append(f"{n}: not provisioned ({exc})")
            continue
        except SuiteError as exc:
            refused.append(f"{n}: cannot be loaded ({exc})")
            if unloadable is not None:
                unloadable.append(Unloadable(n, str(exc)))
            continue
        if not admission_of(tok).admitted:
            refused.append(f"{n}: not admitted ({admission_of(tok).reason})")
            continue
        ok.append(n)
    if name != "all" and refused:
        raise UsageError(f"tokenizer refused: {refused[0]}")
    if not ok:
        raise UsageError("no tokenizer to fuzz: " + "; ".join(refused))
    return ok, refused


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="fuzz", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tokenizer", help="registry name, alias, 'all' (every provisioned admitted tokenizer), or a path "
                   "to a tokenizer.json or a folder holding one (a user file; never one of the eleven)")
    p.add_argument("--name", help="the name of a --tokenizer path in records and reports (default: the folder's "
                   "name, or the file's stem)")
    p.add_argument("--path", choices=("cut", "repair", "both"), default="both", help="what to fuzz (default both)")
    size = p.add_mutually_exclusive_group()
    size.add_argument("--budget", help="checking time, e.g. 90s, 15m, 2h (default 60s); setup (loading tokenizers, "
                      "building generator tables) comes on top and is reported")
    size.add_argument("--examples", type=int, help="cases per tokenizer and path instead of a time budget")
    p.add_argument("--seed", type=int, default=0, help="campaign seed (default 0)")
    p.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    p.add_argument("--control", help="run against this control (a deliberately broken variant) instead")
    add_subject_argument(p)
    p.add_argument("--out", help="campaign folder for ledgers and summaries (default out/fuzz)")
    p.add_argument("--resume", metavar="DIR", help="continue the latest campaign of DIR")
    p.add_argument("--profile", choices=tuple(PROFILES), default="ci", help="case sizes (default ci)")
    p.add_argument("--stop-on-first", action="store_true", help="stop at the first difference")
    p.add_argument("--regressions", help=f"where minimal counterexamples go (default {CORPUS}; against a --control: "
                   "the campaign folder's regressions/, never the source tree)")
    p.add_argument("--list-controls", action="store_true", help="print every control (path, the provisioned "
                   "tokenizers it applies to, what it breaks) and exit")
    p.add_argument("--json", action="store_true", help="with --list-controls: one JSON object instead of columns")
    p.add_argument("--replay", metavar="FILE", nargs="+",
                   help="run saved cases again (on --subject if given, else the subject each was saved with); "
                   "exit 1 if any still differs or faults; cases found on a user file need --tokenizer PATH (and "
                   "the same --name) again")
    return p


def _spec_from_args(args: argparse.Namespace,
                    unloadable: list[Unloadable] | None = None) -> tuple[CampaignSpec, Path, list[str]]:
    if args.workers < 1:
        raise UsageError("--workers must be at least 1")
    if args.examples is not None and args.examples < 1:
        raise UsageError("--examples must be at least 1")
    budget = parse_budget(args.budget) if args.budget else None
    if args.resume:
        out = Path(args.resume)
        spec = latest_campaign(out)
        if spec.suite_version != CampaignSpec(campaign="", tokenizers=[], paths=[]).suite_version:
            raise CampaignError(f"campaign {spec.campaign} was made by suite {spec.suite_version}; inputs would differ")
        if spec.generator != generator_digest():
            raise CampaignError(f"campaign {spec.campaign} used generator {spec.generator}; this suite generates "
                                f"{generator_digest()}, so its batches would differ")
        if budget is not None:
            spec.budget = budget
        reopen_user_files(spec)
        return spec, out, []
    if not args.tokenizer:
        raise UsageError("--tokenizer NAME|ALIAS|all|PATH is required (or --resume DIR)")
    paths = ["cut", "repair"] if args.path == "both" else [args.path]
    if args.control:
        path = control_path(args.control)
        if args.path not in ("both", path):
            raise UsageError(f"control {args.control} breaks the {path} path, not {args.path}")
        paths = [path]
    names, refused = resolve_tokenizers(args.tokenizer, unloadable, args.name)
    user_files = {n: {"path": e.path, "sha256": e.sha256} for n in names if (e := user_entry(n)) is not None}
    if args.control:
        inapplicable = [n for n in names if not control_applies(args.control, load_tokenizer(n))]
        refused += [f"{n}: control {args.control} not applicable (the condition it breaks does not exist here)"
                    for n in inapplicable]
        names = [n for n in names if n not in inapplicable]
        if not names:
            raise UsageError(f"control {args.control} applies to none of the tokenizers: " + "; ".join(refused))
    if budget is None and args.examples is None:
        budget = 60.0
    out = Path(args.out or "out/fuzz")
    if not is_default_subject(args.subject):
        if args.control:
            raise UsageError("--control breaks the minimal implementation; it cannot be combined with --subject "
                             f"{args.subject}")
        offered = set(paths)
        for n in names:
            offered &= set(open_or_record(args.subject, load_tokenizer(n), paths, out, strict=args.path != "both"))
        if not offered:
            raise UsageError(f"subject {args.subject} offers none of the paths {', '.join(paths)}")
        refused += [f"path {p}: subject {args.subject} does not offer it" for p in paths if p not in offered]
        paths = [p for p in paths if p in offered]
    spec = CampaignSpec(
        campaign=new_campaign_id(args.seed), tokenizers=names, paths=paths, seed=args.seed, budget=budget,
        examples=args.examples, workers=args.workers, control=args.control, subject=args.subject,
        profile=args.profile, stop_on_first=args.stop_on_first,
        regressions=args.regressions or str(out / "regressions" if args.control or user_files
                                            or not is_default_subject(args.subject) else CORPUS),
        generator=generator_digest(), user_files=user_files,
    )
    return spec, out, refused


def reopen_user_files(spec: CampaignSpec) -> None:
    """Name again the user files a resumed campaign ran on; each must still have the digest it had (a changed file
    is a different tokenizer, never resumed as the same one)."""
    for name, seen in spec.user_files.items():
        tok = resolve_tokenizer(seen["path"], name)
        if tok.sha256 != seen["sha256"]:
            raise CampaignError(f"campaign {spec.campaign} ran on {name} = {seen['path']} with sha256 "
                                f"{seen['sha256'][:16]}…; the file now has {tok.sha256[:16]}…: a different "
                                "tokenizer, start a new campaign")


def open_or_record(spec: str, tok, paths: list[str], out: Path, strict: bool) -> list[str]:
    """The paths subject `spec` offers on `tok`. Every path it cannot run gets a "not installed" ledger row (never a
    pass); SubjectUnavailable (exit 2) when it cannot run at all, or (`strict`) lacks a requested path."""
    level = {"cut": "chunked", "repair": "repair"}
    ledger = out / "fuzz-subject-unavailable.jsonl"
    try:
        subject = opened_subject(spec, tok)  # the same (cached) subject the campaign's checkers use: one peer process
    except SubjectUnavailable as exc:
        append_records(ledger, [unavailable_record(spec, tok, level[p], f"fuzz.{p}", exc.reason) for p in paths])
        raise
    offered = []
    for path in paths:
        try:
            SubjectChecker(tok, path, subject)  # refuses a path the subject does not offer
            offered.append(path)
        except SubjectUnavailable as exc:
            append_records(ledger, [unavailable_record(spec, tok, level[path], f"fuzz.{path}", exc.reason)])
            if strict:
                raise
    return offered


def report(result: CampaignResult, refused: list[str], out: Path) -> str:
    """The summary printed at the end of a campaign."""
    t, spec = result.totals, result.spec
    rate = t.cases / result.elapsed if result.elapsed > 0 else 0.0
    lines = [
        f"campaign {spec.campaign}: {', '.join(spec.tokenizers)} / {', '.join(spec.paths)}"
        + (f" against control {spec.control}" if spec.control else "")
        + f", seed {spec.seed}, profile {spec.profile}",
        f"  {t.batches} batches, {t.cases} cases ({rate:.1f}/s, {t.chars / max(result.elapsed, 1e-9):.0f} chars/s), "
        f"{t.cuts} cuts and {t.repairs} repairs checked, {t.differences} differences",
        f"  checking time {result.elapsed:.1f} s (setup not counted), of which {t.reference_seconds:.1f} s inside "
        f"the reference encodes it compares with; {t.library_seconds:.1f} s "
        f"({t.library_seconds / max(result.elapsed, 1e-9):.0%}) inside the reference library in all (those, and "
        "the implementation's own chunk and window encodes)",
    ]
    if result.resumed_from is not None:
        lines.insert(1, f"  resumed: {result.resumed_from} batches were already recorded; started with "
                     f"{spec.workers} worker(s)")
    if result.duplicates:
        lines.append(f"  {result.duplicates} duplicate batch record(s) in the ledger dropped (each counted once)")
    if "cut" in spec.paths:
        lines.append(f"  cut texts: {t.fast_by_path['cut']} cut at accepted offsets, "
                     f"{t.fallbacks_by_path['cut']} had no accepted cut")
    if "repair" in spec.paths:
        share = t.fast_by_path["repair"] / t.repairs if t.repairs else 0.0
        lines.append(f"  repairs: {t.fast_by_path['repair']} served by repair ({share:.0%}), "
                     f"{t.fallbacks_by_path['repair']} fell back to a whole encode")
    if t.paths:
        lines.append("  paths: " + ", ".join(f"{k} {v}" for k, v in sorted(t.paths.items())))
    for r in refused:
        lines.append(f"  refused {r}")
    if spec.control:
        if result.first_kill:
            k = result.first_kill
            lines.append(f"  control {spec.control} KILLED: first difference after {k['cases_to_first_kill']} cases "
                         f"({k['tokenizer']}, {k['path']}, batch {k['batch']} case {k['case']}) in "
                         f"{k['seconds_to_first_kill']} s ({k.get('checking_seconds_to_first_kill')} s of checking "
                         "after setup)")
        else:
            lines.append(f"  control {spec.control} SURVIVED {t.cases} cases in {result.elapsed:.1f} s: "
                         "this campaign cannot kill it")
    elif t.differences:
        lines.append(f"  DIFFERENCES FOUND: {t.differences}"
                     + (f" (subject {spec.subject})" if not is_default_subject(spec.subject) else ""))
    if t.faults:
        lines.append(f"  FAULTS FOUND (subject {spec.subject} gave no IDs): "
                     + ", ".join(f"{k} on {v} input(s)" for k, v in sorted(t.faults.items()))
                     + "; each is recorded with its input and saved (shrunk where it is not a timeout)")
    for name in result.regressions:
        lines.append(f"  saved {Path(spec.regressions) / name}")
    for e in result.errors:
        lines.append(f"  worker error: {e}")
    if result.torn_lines:
        lines.append(f"  {result.torn_lines} torn ledger line(s) from a killed run ignored (their batches re-ran)")
    if result.interrupted:
        lines.append(f"  interrupted: continue with  fuzz --resume {out}")
    return "\n".join(lines)


def replay_files(files: list[str], subject: str | None) -> int:
    """Replay saved cases: one line each ("same", "differs at token N", or the fault); exit 1 if any fails still."""
    failing = 0
    for name in files:
        reg = load_regression(Path(name))
        entry = user_entry(reg.tokenizer)
        if entry is not None and entry.sha256 != reg.tokenizer_sha256:
            raise UsageError(f"{name} was found on {reg.tokenizer} with sha256 {reg.tokenizer_sha256[:16]}…; "
                             f"{entry.path} has {entry.sha256[:16]}…: a different tokenizer")
        verdict = replay_on_subject(reg, subject)
        failing += verdict != "same"
        who = subject or reg.subject or reg.control or "delta"
        print(f"{name}: {who} on {reg.tokenizer} ({reg.case.path}, {len(reg.case.text)} chars): {verdict}")
    return 1 if failing else 0


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt  # SIGTERM (a job scheduler's stop) ends a campaign like Ctrl-C


def exit_status(result: CampaignResult, skipped: int) -> int:
    """One meaning per code (module docstring): 130 interrupted, 1 difference, 3/2 worker errors, 2 skipped or
    nothing checked, else 0."""
    if result.interrupted:
        return 130
    if result.totals.differences or result.totals.faults:
        return 1  # a finding: IDs that differ, or a subject that gave no IDs on some input
    if result.error_codes or result.errors:
        return max(result.error_codes or [2])
    if skipped:
        return 2
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # a campaign started in the background (where SIGINT may be ignored) still stops on Ctrl-C and on SIGTERM
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _interrupt)
    unloadable: list[Unloadable] = []
    out: Path | None = None
    try:
        if args.list_controls:
            toks = loadable_tokenizers()
            print((render_json if args.json else render_table)(control_lines(toks), [t.name for t in toks]))
            return 0
        if args.replay:
            if args.tokenizer:  # the user file the saved cases were found on, named again so that they load
                resolve_tokenizer(args.tokenizer, args.name)
            return replay_files(args.replay, None if is_default_subject(args.subject) else args.subject)
        print("fuzz: setting up (loading tokenizers, checking admission)", file=sys.stderr, flush=True)
        try:
            spec, out, refused = _spec_from_args(args, unloadable)
        finally:
            if unloadable:
                where = Path(args.out or "out/fuzz")
                append_records(where / "tokenizers-unloadable.jsonl", [unloadable_row(u) for u in unloadable])
        for r in refused:
            print(f"fuzz: refused {r}", file=sys.stderr)
        for u in unloadable:
            print(f"fuzz: skipped {u.name}: it cannot be loaded; remedy: corpora tokenizers pull {u.name} --force",
                  file=sys.stderr)
        progress = Progress(f"fuzz {'/'.join(spec.tokenizers)} {'+'.join(spec.paths)}", spec.budget)
        result = run_campaign(spec, out, progress, workers=args.workers if args.resume else None)
    except FolderBusy as exc:
        print(f"fuzz: error: {exc}", file=sys.stderr)
        return 2
    except SuiteError as exc:
        print(f"fuzz: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except OSError as exc:
        print(f"fuzz: error: {os_error_message(exc)}", file=sys.stderr)
        return 3
    except KeyboardInterrupt:
        where = f"; continue with  fuzz --resume {out}" if out is not None and any(out.glob("campaign-*.json")) else ""
        print(f"fuzz: interrupted during setup: no batch was checked{where}", file=sys.stderr)
        return 130
    print(report(result, refused, out))
    for u in unloadable:
        print(f"  skipped {u.name}: cannot be loaded (recorded in {out / 'tokenizers-unloadable.jsonl'})")
    if result.no_op:
        print(f"  campaign {result.spec.campaign} was already finished: nothing ran, nothing was added")
        return 0
    code = exit_status(result, len(unloadable))
    if code == 0 and result.totals.cases == 0:
        print("fuzz: error: no case was checked (nothing left to run, or the budget ended first)", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":
    sys.exit(main())
