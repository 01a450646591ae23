"""A fuzzing campaign: numbered batches over (tokenizer, path) streams, checked, shrunk, saved and counted once.

Batch b of stream (tokenizer, path) is generated from (seed, tokenizer, path, b, profile) alone, so a campaign
with the same seed, tokenizer and suite version checks the same inputs whatever the number of workers. Worker w
of W takes the batches at positions w, w + W, ... of the interleaved schedule, skips the batches the ledger
already holds, and appends one fsynced record per completed batch; a batch interrupted by the budget, Ctrl-C or
a kill is not recorded, so `--resume` re-runs it and nothing is lost or counted twice. A difference is shrunk
(fuzz.shrink), saved as a replayable regression (fuzz.regressions), and appended unshrunk to the campaign's
`differences-*.jsonl`.
"""

from __future__ import annotations

import hashlib
import json
import math
import multiprocessing as mp
import os
import queue
import re
import signal
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from delta_suite.frozen.errors import SuiteError, os_error_message
from delta_suite.frozen.loader import load_tokenizer
from delta_suite.fuzz.cases import Difference, FuzzCase
from delta_suite.fuzz.checker import checker_for
from delta_suite.fuzz.generate import PROFILES, batch_source, battery_version, derive_seed, generate_batch, warm_up
from delta_suite.fuzz.ledger_writer import BatchTally, batch_id, batch_record, ledger_file, read_campaign, write_batch
from delta_suite.fuzz.progress import Progress, Totals
from delta_suite.fuzz.regressions import CORPUS, make_fault_regression, make_regression, save
from delta_suite.fuzz.shrink import shrink
from delta_suite.ledger.lock import FolderLock
from delta_suite.ledger.records import append_records, suite_version
from delta_suite.spec.reference import LIBRARY
from delta_suite.subjects.protocol import SubjectFault
from delta_suite.subjects.records import subject_record

SAVE_CAP_DELTA = 10  # shrunk regressions per stream and worker when the real implementation differs
SAVE_CAP_CONTROL = 1  # a control needs its first kill saved, not thousands
SAVE_CAP_SUBJECT = 3  # a third-party subject's shrunk findings per stream and worker, in its campaign's folder


class CampaignError(SuiteError):
    """A campaign that cannot start or resume (bad folder, mismatched suite version, nothing to run)."""


@dataclass
class CampaignSpec:
    """Everything that determines a campaign's inputs and checks; saved as campaign-<id>.json in its folder."""
    campaign: str
    tokenizers: list[str]
    paths: list[str]
    seed: int = 0
    budget: float | None = None
    examples: int | None = None
    workers: int = 1
    control: str | None = None
    subject: str = "delta"
    profile: str = "ci"
    stop_on_first: bool = False
    regressions: str = str(CORPUS)
    suite_version: str = field(default_factory=suite_version)
    generator: str = ""
    created: float = field(default_factory=time.time)
    user_files: dict = field(default_factory=dict)  # name -> {path, sha256} of each user tokenizer (resumed by path)

    @property
    def streams(self) -> list[tuple[str, str]]:
        return [(t, p) for t in self.tokenizers for p in self.paths]

    def batch_count(self) -> int | None:
        """Batches per stream when the campaign is sized by examples; None for a time budget."""
        if self.examples is None:
            return None
        return math.ceil(self.examples / PROFILES[self.profile].batch_size)

    def batch_size(self, batch: int) -> int:
        size = PROFILES[self.profile].batch_size
        if self.examples is None:
            return size
        return min(size, self.examples - batch * size)

    def file(self, out: Path) -> Path:
        return out / f"campaign-{self.campaign}.json"

    def save(self, out: Path) -> None:
        out.mkdir(parents=True, exist_ok=True)
        self.file(out).write_text(json.dumps(asdict(self), indent=1) + "\n", encoding="utf-8")


def new_campaign_id(seed: int) -> str:
    return f"{seed}-{uuid.uuid4().hex[:8]}"


def latest_campaign(out: Path) -> CampaignSpec:
    """The most recently created campaign of a folder (what `--resume DIR` continues)."""
    specs = []
    for f in sorted(out.glob("campaign-*.json")) if out.is_dir() else []:
        try:
            specs.append(CampaignSpec(**json.loads(f.read_text(encoding="utf-8"))))
        except (OSError, ValueError, TypeError) as exc:
            raise CampaignError(f"cannot read campaign file {f}: {exc}") from exc
    if not specs:
        raise CampaignError(f"{out} holds no campaign to resume (no campaign-*.json)")
    return max(specs, key=lambda s: s.created)


def next_segment(out: Path, campaign: str) -> int:
    """The number of this invocation of a campaign: one more than any segment its folder already holds."""
    used = [int(m.group(1)) for f in out.glob(f"fuzz-{campaign}-s*-w*.jsonl")
            if (m := re.search(r"-s(\d+)-w\d+\.jsonl$", f.name))]
    return 1 + max(used, default=0)


def schedule(spec: CampaignSpec, worker: int, workers: int):
    """(position, tokenizer, path, batch) of every batch of worker `worker`, in order (endless under a budget)."""
    streams = spec.streams
    limit = spec.batch_count()
    batch = 0
    position = 0
    while limit is None or batch < limit:
        for tok_name, path in streams:
            if position % workers == worker:
                yield position, tok_name, path, batch
            position += 1
        batch += 1


def cases_digest(cases: list[FuzzCase]) -> str:
    """A digest of a batch's generated inputs (recorded so runs can be compared input for input)."""
    h = hashlib.sha256()
    for c in cases:
        h.update(json.dumps(c.as_json(), sort_keys=True, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    return h.hexdigest()[:16]


@dataclass
class WorkerContext:
    """What one worker needs: the campaign, where to write, what is done, when to stop, and where to report."""
    spec: CampaignSpec
    out: Path
    segment: int
    worker: int
    workers: int
    done: set
    budget_left: float | None  # seconds of checking left; the clock starts once the worker's setup is done
    started: float  # wall-clock start of this invocation
    prior_elapsed: float
    stop: object  # has is_set() and set()
    emit: Callable[[dict], None]
    parent: int | None = None  # a pool worker's parent pid: the worker stops if its parent is gone


def _check_case(checker, case: FuzzCase):
    """Run one check: (outcome, None), or (None, the SubjectFault of a third-party subject that produced no IDs on
    this input: a fault, counted apart from differences), or (None, "Type: message") when the minimal
    implementation raised (its IDs are not produced: a difference, never a pass)."""
    try:
        return checker.check(case), None
    except KeyboardInterrupt:
        raise
    except SubjectFault as fault:
        return None, fault
    except Exception as exc:  # the implementation crashed on this input: report it, never pass it
        return None, f"{type(exc).__name__}: {exc}"


def _faults_like(checker, kind: str) -> Callable[[FuzzCase], bool]:
    """The shrink predicate of a fault: the subject still fails on the smaller case with the same kind."""
    def fails(case: FuzzCase) -> bool:
        try:
            checker.check(case)
        except SubjectFault as fault:
            return fault.kind == kind
        return False

    return fails


def _fails(checker) -> Callable[[FuzzCase], bool]:
    def fails(case: FuzzCase) -> bool:
        try:
            outcome = checker.check(case)
        except SubjectFault:
            return False  # another kind of finding: not the ID difference being shrunk
        return outcome.difference is not None

    return fails


def _handle_differences(ctx: WorkerContext, tok, checker, found: list, batch: int, saved_count: dict) -> list[str]:
    """Shrink and save the differences of a batch (up to the cap); every one goes unshrunk to differences-*.jsonl."""
    spec = ctx.spec
    control = spec.control
    # a third-party subject's differences are its own, not regressions of the minimal implementation: listed, not saved
    third_party = getattr(checker, "opened", None) is not None
    # a third-party subject's findings go to its campaign's own regressions folder (never the source tree's corpus)
    cap = SAVE_CAP_SUBJECT if third_party else SAVE_CAP_CONTROL if control else SAVE_CAP_DELTA
    key = (tok.name, checker.path)
    saved = []
    lines = []
    for case_index, case, diff, error in found:
        found_by = {"campaign": spec.campaign, "seed": spec.seed, "batch": batch, "case": case_index,
                    "worker": ctx.worker, "profile": spec.profile, "origin": case.origin}
        if isinstance(error, SubjectFault):
            lines.append({"tokenizer": tok.name, "subject": spec.subject, **case.as_json(),
                          "fault": {"kind": error.kind, "message": error.message}, "found_by": found_by})
            kind_key = (*key, error.kind)  # each kind of fault gets its own saved cases
            if saved_count.get(kind_key, 0) >= cap:
                continue
            # a hang is saved as found (each shrink step would wait out the timeout); a crash or malformed output
            # is shrunk to the smallest case that still fails the same way
            small = case if error.kind == "timeout" else shrink(case, _faults_like(checker, error.kind))
            path = save(make_fault_regression(tok, spec.subject, small, error, {
                **found_by, "shrunk_from_chars": len(case.text)}), Path(spec.regressions))
            saved_count[kind_key] = saved_count.get(kind_key, 0) + 1
            saved.append(path.name)
            ctx.emit({"type": "note", "message": f"saved {error.kind} of subject {spec.subject}: {path} "
                      f"({len(small.text)} chars, from {len(case.text)})"})
            continue
        if error is not None:
            lines.append({"tokenizer": tok.name, "control": control, **case.as_json(), "error": error,
                          "found_by": found_by})
            continue
        who = {"subject": spec.subject} if third_party else {}
        lines.append(replace(make_regression(tok, control, case, diff, found_by), **who).as_json())
        if saved_count.get(key, 0) >= cap:
            continue
        small = shrink(case, _fails(checker))
        final = checker.check(small).difference
        assert final is not None, "shrink returned a passing case"
        found_by = {**found_by, "shrunk_from_chars": len(case.text)}
        path = save(replace(make_regression(tok, control, small, final, found_by), **who), Path(spec.regressions))
        saved_count[key] = saved_count.get(key, 0) + 1
        saved.append(path.name)
        ctx.emit({"type": "note", "message": f"saved minimal counterexample {path} ({len(small.text)} chars, "
                  f"shrunk from {len(case.text)})"})
    append_records(ctx.out / f"differences-{spec.campaign}-s{ctx.segment}-w{ctx.worker}.jsonl", lines)
    return saved


def _subject_batch_record(checker, tok, path: str, tally: BatchTally, found: list, campaign: str, batch: int,
                          **timing: float) -> dict:
    """The kind "subject" row of one batch checked on a third-party subject, with its first counterexample and the
    batch's seconds (`timing`: subject_seconds, reference_seconds, check_seconds)."""
    example = None
    for _index, case, diff, error in found:
        error = str(error) if error is not None else None
        example = {"text": case.text, "path": path, "error": error} if diff is None else {
            "text": case.text, "path": path, "position": diff.first_position, "subject_ids": diff.actual[:3],
            "reference_ids": diff.expected[:3], **diff.where}
        break
    level = "chunked" if path == "cut" else "repair"
    record = subject_record(checker.opened, tok, level, f"fuzz.{path}", comparisons=tally.cuts if path == "cut"
                            else tally.repairs, differences=tally.differences, counterexample=example,
                            campaign=campaign, batch=batch, cases=tally.cases, faults=dict(tally.faults),
                            **{k: round(v, 6) for k, v in timing.items()})
    record["id"] = f"{batch_id(campaign, tok.name, path, batch)}:subject"
    return record


def run_worker(ctx: WorkerContext) -> None:
    """Run this worker's share of the schedule until it ends, the budget runs out, or a stop is requested."""
    spec = ctx.spec
    profile = PROFILES[spec.profile]
    toks = {name: load_tokenizer(name) for name in spec.tokenizers}
    checkers = {}
    saved_count: dict = {}
    ledger = ledger_file(ctx.out, spec.campaign, ctx.segment, ctx.worker)
    worker_seed = derive_seed(spec.seed, "worker", ctx.worker)
    t_setup = time.monotonic()
    for tok in toks.values():
        warm_up(tok, spec.seed)
    setup_seconds = time.monotonic() - t_setup  # recorded on this worker's first batch of this segment
    deadline = None if ctx.budget_left is None else time.time() + ctx.budget_left
    checking_started = time.time()
    ctx.emit({"type": "checking", "worker": ctx.worker, "setup_seconds": setup_seconds})
    ctx.emit({"type": "note", "message": f"worker {ctx.worker}: setup {setup_seconds:.1f} s "
              f"(tokenizers, generator tables); checking {', '.join(spec.tokenizers)} / {', '.join(spec.paths)}"})
    for position, tok_name, path, batch in schedule(spec, ctx.worker, ctx.workers):
        if ctx.stop.is_set() or (deadline is not None and time.time() >= deadline):
            return
        if ctx.parent is not None and os.getppid() != ctx.parent:
            return  # the campaign's process is gone (killed): its folder lock is released, so stop writing
        if (tok_name, path, batch) in ctx.done:
            continue
        tok = toks[tok_name]
        if (tok_name, path) not in checkers:
            checkers[(tok_name, path)] = checker_for(tok, path, spec.control, spec.subject)
        checker = checkers[(tok_name, path)]
        t0 = time.monotonic()
        cases = generate_batch(tok, path, spec.seed, batch, profile, spec.batch_size(batch))
        generate_seconds = time.monotonic() - t0
        tally = BatchTally()
        # integer nanoseconds of one meter: the oracle's share of the batch never exceeds the library's in all
        ref0 = getattr(getattr(checker, "clock", None), "nanoseconds", 0)
        library0 = LIBRARY.nanoseconds
        subject0 = getattr(checker, "subject_seconds", 0.0)
        found = []
        first_kill_elapsed = first_kill_checking = None
        for case_index, case in enumerate(cases):
            if ctx.stop.is_set() or (deadline is not None and time.time() >= deadline):
                return  # an unfinished batch is not recorded; a resumed campaign runs it again
            outcome, error = _check_case(checker, case)
            tally.cases += 1
            tally.chars += len(case.text)
            if outcome is not None:
                tally.cuts += outcome.cuts_checked
                tally.repairs += outcome.repairs_checked
                tally.fast_path += outcome.fast_path
                tally.fallbacks += outcome.fallbacks
                tally.paths.update(outcome.paths)
            elif isinstance(error, SubjectFault):
                tally.paths[f"fault:{error.kind}"] += 1
            else:
                tally.paths["error"] += 1
            if isinstance(error, SubjectFault):
                tally.faults[error.kind] += 1
                found.append((case_index, case, None, error))
            elif error is not None or (outcome is not None and outcome.difference is not None):
                tally.differences += 1
                diff: Difference | None = outcome.difference if outcome is not None else None
                found.append((case_index, case, diff, error))
                if first_kill_elapsed is None:
                    first_kill_elapsed = ctx.prior_elapsed + time.time() - checking_started
                    first_kill_checking = time.time() - checking_started
        tally.reference_seconds = (getattr(getattr(checker, "clock", None), "nanoseconds", 0) - ref0) / 1e9
        tally.library_seconds = (LIBRARY.nanoseconds - library0) / 1e9
        subject_seconds = getattr(checker, "subject_seconds", 0.0) - subject0
        check_seconds = time.monotonic() - t0
        saved = _handle_differences(ctx, tok, checker, found, batch, saved_count) if found else []
        batch_seconds = time.monotonic() - t0
        elapsed = ctx.prior_elapsed + time.time() - checking_started  # the campaign clock counts checking only
        details = {
            "seed": spec.seed,
            "worker": ctx.worker,
            "worker_seed": worker_seed,
            "segment": ctx.segment,
            "batch": batch,
            "position": position,
            "batch_seed": derive_seed(spec.seed, tok.name, path, batch, profile.name),
            "source": batch_source(batch, profile),
            "profile": spec.profile,
            "cases_digest": cases_digest(cases),
            "generator_digest": spec.generator,
            "battery_version": battery_version(),
            "elapsed": round(elapsed, 4),
            "batch_seconds": round(batch_seconds, 6),
            "generate_seconds": round(generate_seconds, 6),
            "subject_seconds": round(subject_seconds, 6),
            "suite_seconds": round(check_seconds - tally.reference_seconds - subject_seconds, 6),
            "shrink_seconds": round(batch_seconds - check_seconds, 6),
            "cases_per_second": round(tally.cases / check_seconds, 3) if check_seconds > 0 else None,
            "chars_per_second": round(tally.chars / check_seconds, 3) if check_seconds > 0 else None,
            "first_difference_case": found[0][0] if found else None,
            "first_difference_elapsed": round(first_kill_elapsed, 4) if first_kill_elapsed is not None else None,
            # seconds of checking (this worker, this segment, setup excluded) before the first difference
            "first_difference_checking": round(first_kill_checking, 4) if first_kill_checking is not None else None,
            "regressions": saved,
            "setup_seconds": round(setup_seconds, 4),
            "workers": ctx.workers,  # of this segment; the campaign file keeps the workers it was started with
        }
        setup_seconds = 0.0
        record = batch_record(campaign=spec.campaign, tok_name=tok.name, tok_sha256=tok.sha256, path=path,
                              control=spec.control, tally=tally, details=details, subject=spec.subject)
        write_batch(ledger, record)
        if getattr(checker, "opened", None) is not None:
            write_batch(ledger, _subject_batch_record(
                checker, tok, path, tally, found, spec.campaign, batch, subject_seconds=subject_seconds,
                reference_seconds=tally.reference_seconds, check_seconds=check_seconds - generate_seconds))
        ctx.emit({"type": "batch", "record": record})
        if found and spec.stop_on_first:
            ctx.stop.set()
            return


def _worker_process(ctx_dict: dict, events) -> None:
    """Entry of a worker process: Ctrl-C and SIGTERM are the parent's to handle (it sets the stop event). Each
    worker is one core: the reference library runs on one thread in it (RAYON_NUM_THREADS=1 unless the caller set
    it), so N workers use N cores and do not contend for them."""
    os.environ.setdefault("RAYON_NUM_THREADS", "1")
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    ctx = WorkerContext(**ctx_dict, emit=events.put)
    try:
        run_worker(ctx)
    except SuiteError as exc:
        events.put({"type": "error", "message": str(exc), "exit_code": exc.exit_code})
    except OSError as exc:  # a full disk, an unwritable folder: the environment, exit 3
        events.put({"type": "error", "message": os_error_message(exc), "exit_code": 3})
    finally:
        events.put({"type": "done", "worker": ctx.worker})


def tally_of(record: dict) -> dict:
    d = record["details"]
    return {"cases": d.get("cases"), "chars": d.get("chars"), "cuts": d.get("cuts"), "repairs": d.get("repairs"),
            "fast_path": record.get("fast_path"), "fallbacks": record.get("fallbacks"),
            "differences": record.get("differences"), "reference_seconds": d.get("reference_seconds"),
            "library_seconds": d.get("library_seconds"), "paths": d.get("paths"), "path": d.get("path"),
            "faults": d.get("faults")}


@dataclass
class CampaignResult:
    """What a campaign run ended with (over every segment of the campaign)."""
    spec: CampaignSpec
    totals: Totals
    elapsed: float
    interrupted: bool
    finished: bool
    first_kill: dict | None
    regressions: list[str]
    errors: list[str]
    torn_lines: int
    error_codes: list[int] = field(default_factory=list)  # the exit status each error calls for (2 input, 3 I/O)
    resumed_from: int | None = None  # batches the ledger already held when this invocation started (None: new)
    duplicates: int = 0  # exact duplicate batch records dropped on reading the ledger
    no_op: bool = False  # the campaign was already finished: nothing ran, nothing was added

    def as_json(self) -> dict:
        t = self.totals
        return {
            "campaign": self.spec.campaign, "tokenizers": self.spec.tokenizers, "paths": self.spec.paths,
            "control": self.spec.control, "seed": self.spec.seed, "profile": self.spec.profile,
            "batches": t.batches, "cases": t.cases, "chars": t.chars, "cuts": t.cuts, "repairs": t.repairs,
            "fast_path": t.fast_path, "fallbacks": t.fallbacks, "differences": t.differences,
            "faults": dict(t.faults), "reference_seconds": round(t.reference_seconds, 4),
            "library_seconds": round(t.library_seconds, 4), "elapsed": round(self.elapsed, 4),
            "interrupted": self.interrupted, "finished": self.finished, "first_kill": self.first_kill,
            "regressions": self.regressions, "errors": self.errors, "torn_lines": self.torn_lines,
            "workers": self.spec.workers, "resumed_from": self.resumed_from, "duplicates": self.duplicates,
            "budget": self.spec.budget, "examples": self.spec.examples,
        }


def first_kill(spec: CampaignSpec, records: list[dict]) -> dict | None:
    """The earliest difference in generation order: its stream, batch, case, cases checked before it, and time."""
    best = None
    for r in records:
        d = r["details"]
        if not r.get("differences") or d.get("first_difference_case") is None:
            continue
        key = (int(d["batch"]), int(d["first_difference_case"]))
        if best is None or key < best[0]:
            best = (key, r)
    if best is None:
        return None
    (batch, case), r = best
    size = PROFILES[spec.profile].batch_size
    per_stream = batch * size + case + 1
    return {"tokenizer": r["tokenizer"], "path": r["details"]["path"], "batch": batch, "case": case,
            "cases_to_first_kill": per_stream, "seconds_to_first_kill": r["details"].get("first_difference_elapsed"),
            "checking_seconds_to_first_kill": r["details"].get("first_difference_checking")}


def already_finished(spec: CampaignSpec, out: Path, done: set) -> bool:
    """Whether a campaign's ledger already holds all of it: every batch of an example-sized campaign, or a time
    budget that its last invocation used up (its summary says finished, under the same budget). Resuming such a
    campaign is a no-op (nothing runs, its clock does not grow); a resume with a larger --budget continues it."""
    limit = spec.batch_count()
    if limit is not None:
        return len(done) >= limit * len(spec.streams)
    try:
        last = json.loads((out / f"summary-{spec.campaign}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return bool(last.get("finished")) and not last.get("interrupted") and last.get("budget") == spec.budget


def run_campaign(spec: CampaignSpec, out: Path, progress: Progress | None = None, *,
                 workers: int | None = None) -> CampaignResult:
    """Run (or continue) `spec` in folder `out` until done, out of budget, stopped or interrupted.

    The folder is held with an OS-level lock for the whole run (ledger.lock.FolderLock): a second process is
    refused with FolderBusy, so no batch is run or recorded twice by concurrent resumes. `workers` (default the
    campaign's own) is this invocation's worker count; the campaign file keeps the count it was started with.
    """
    with FolderLock(out):
        return _run_locked(spec, out, progress, spec.workers if workers is None else workers)


def _run_locked(spec: CampaignSpec, out: Path, progress: Progress | None, workers: int) -> CampaignResult:
    resuming = spec.file(out).is_file()
    if not resuming:
        spec.save(out)
    ledger = read_campaign(out)
    prior = ledger.of(spec.campaign)
    done = ledger.done(spec.campaign)
    totals = Totals()
    for r in prior:
        totals.add(tally_of(r))
    prior_elapsed = max((float(r["details"].get("elapsed") or 0.0) for r in prior), default=0.0)
    progress = progress or Progress(f"fuzz {spec.campaign}", spec.budget)
    if resuming:
        progress.note(f"resuming campaign {spec.campaign}: {len(done)} batches already recorded "
                      f"({totals.cases} cases, {prior_elapsed:.1f} s of campaign clock)"
                      + (f", {ledger.duplicates} duplicate records dropped" if ledger.duplicates else ""))
    if resuming and already_finished(spec, out, done):
        progress.note(f"campaign {spec.campaign} is already finished: nothing to run")
        summary = out / f"summary-{spec.campaign}.json"
        result = CampaignResult(spec, totals, prior_elapsed, False, True, first_kill(spec, prior),
                                [g for r in prior for g in r["details"].get("regressions") or []], [],
                                len(ledger.torn), resumed_from=len(done), duplicates=ledger.duplicates, no_op=True)
        if not summary.is_file():
            summary.write_text(json.dumps(result.as_json(), indent=1) + "\n", encoding="utf-8")
        return result
    segment = next_segment(out, spec.campaign)
    started = time.time()
    budget_left = None if spec.budget is None else max(0.0, spec.budget - prior_elapsed)
    records = list(prior)
    errors: list[str] = []
    codes: list[int] = []
    regs: list[str] = []

    def handle(event: dict) -> None:
        if event["type"] == "batch":
            rec = event["record"]
            records.append(rec)
            totals.add(tally_of(rec))
            regs.extend(rec["details"].get("regressions") or [])
            progress.update(totals, prior_elapsed)
        elif event["type"] == "checking":
            progress.checking(event["worker"], event.get("setup_seconds") or 0.0)
        elif event["type"] == "note":
            progress.note(event["message"])
        elif event["type"] == "error":
            errors.append(event["message"])
            codes.append(int(event.get("exit_code") or 2))
            progress.note(f"worker error: {event['message']}")

    base = {"spec": spec, "out": out, "segment": segment, "workers": workers, "done": done,
            "budget_left": budget_left, "started": started, "prior_elapsed": prior_elapsed}
    interrupted = False
    progress.start()
    try:
        if workers <= 1:
            stop = threading.Event()
            try:
                run_worker(WorkerContext(**base, worker=0, stop=stop, emit=handle))
            except KeyboardInterrupt:
                interrupted = True
        else:
            interrupted = _run_pool(spec, base, handle, workers)
    finally:
        progress.stop(totals, prior_elapsed)
    elapsed = prior_elapsed + progress.checking_seconds()
    limit = spec.batch_count()
    done_now = {(r["tokenizer"], r["details"]["path"], int(r["details"]["batch"])) for r in records}
    stopped_early = interrupted or bool(errors) or (spec.stop_on_first and totals.differences > 0)
    finished = (limit is not None and len(done_now) >= limit * len(spec.streams)) or (
        limit is None and not stopped_early
    )
    result = CampaignResult(spec, totals, elapsed, interrupted, finished, first_kill(spec, records), regs, errors,
                            len(ledger.torn), codes, len(done) if resuming else None, ledger.duplicates)
    (out / f"summary-{spec.campaign}.json").write_text(json.dumps(result.as_json(), indent=1) + "\n", encoding="utf-8")
    return result


def _run_pool(spec: CampaignSpec, base: dict, handle: Callable[[dict], None], workers: int) -> bool:
    """Run the workers as processes, forwarding their events; returns whether Ctrl-C (or SIGTERM, which the CLI
    turns into KeyboardInterrupt) interrupted the run. Workers ignore both signals and stop at the stop event."""
    ctx = mp.get_context("spawn")
    events = ctx.Queue()
    stop = ctx.Event()
    procs = [ctx.Process(target=_worker_process, args=({**base, "worker": w, "stop": stop, "parent": os.getpid()},
                                                       events), daemon=True)
             for w in range(workers)]
    for p in procs:
        p.start()
    running = len(procs)
    interrupted = False
    while running:
        try:
            event = events.get(timeout=0.25)
        except queue.Empty:
            if not any(p.is_alive() for p in procs):
                break
            continue
        except KeyboardInterrupt:
            interrupted = True
            stop.set()
            continue
        if event["type"] == "done":
            running -= 1
            continue
        if event["type"] == "batch" and event["record"].get("differences") and spec.stop_on_first:
            stop.set()
        handle(event)
    for p in procs:
        try:
            p.join(timeout=30)
        except KeyboardInterrupt:  # a second Ctrl-C while the workers finish their current case
            interrupted = True
            stop.set()
    while True:  # events sent after the last "done" was read
        try:
            event = events.get_nowait()
        except (queue.Empty, OSError):
            break
        if event["type"] != "done":
            handle(event)
    return interrupted
