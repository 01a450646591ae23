"""`corpora compare`: compare a corpus's shards under tokenizers at levels 1-3, here, on a pool or on a cluster.

    corpora compare [--profile small|full | --corpus PATH|GLOB [--column C]] [--tokenizer NAME|all|PATH [--name N]]
                    [--workers N] [--shard i/N] [--distributed dask://HOST:PORT | --local-cluster N]
                    [--out DIR] [--subject NAME[==VERSION]] [--levels 1,2,3] [--chunks 2,4,8]
                    [--transcripts small|full|none]

With --profile the built-in corpus is built first (or reused from the cache), and with level 3 its long chat
transcripts (`corpora.transcripts`, the same profile unless --transcripts names another). Unprovisioned tokenizers are
listed as "not provisioned", never skipped silently. A --tokenizer PATH (a user's own file) runs on a cluster too:
its bytes travel to the workers, each of which checks them against the digest recorded when the run named the file
(`frozen.bundle.UserFileBundle`) and refuses a file that changed since.

Nothing is left out silently: a corpus document whose text is not valid Unicode (a lone surrogate, bytes that are
not UTF-8, a null text) is refused, named with its file, line (JSONL) or row (Parquet) and id, recorded in each
unit's `details.refused`, and the run goes on with the other documents; a document too long for level 2 (over
400,000 characters) is counted in `details.skipped_documents` and printed. The output folder belongs to one run
at a time (`ledger.lock.FolderLock` on OUT/.lock; a `--shard i/N` slice locks OUT/.slices/i-of-N/.lock, so the
slices of a job array may share OUT): a second run on the same folder is refused at once with the holder's pid.

Exit status, first match wins:
  0  every comparison equal, no document refused (documents skipped at level 2 are printed, not failed);
  1  some comparison differs (whatever else happened);
  2  usage or input error: bad arguments, an unknown tokenizer, the output folder in use by another run, a run
     that compared nothing, units every cluster worker refused (a user file changed since the run named it, a
     tokenizer bundle or shard whose digest does not verify), a subject that is not installed, or - after the
     whole run, every other document compared equal - one or more corpus documents refused for bad text, or a
     provisioned tokenizer that cannot be loaded (changed since install: recorded in
     OUT/tokenizers-unloadable.jsonl with the remedy, the other tokenizers compared);
  3  the environment: --out is a file or cannot be written, a full disk, a corpus file the machine cannot read
     ("error: PATH: REASON"; unit records stored before the failure stay whole, the same command resumes);
  130  interrupted (Ctrl-C, SIGTERM).
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections import defaultdict
from pathlib import Path

from delta_suite.corpora.build import PROFILES, build_corpus
from delta_suite.corpora.compare import (
    SUBJECTS,
    Options,
    plan_units,
    shards_of_files,
    shards_of_manifest,
    slice_units,
    transcript_shard,
)
from delta_suite.corpora.readers import expand
from delta_suite.corpora.remote import is_url
from delta_suite.corpora.run_units import RunSummary, print_record, run_dask, run_local
from delta_suite.corpora.transcripts import TRANSCRIPT_PROFILES, build_transcripts
from delta_suite.frozen.errors import EnvironmentFault, NotProvisioned, SuiteError
from delta_suite.frozen.loader import load_tokenizer
from delta_suite.frozen.registry import lookup, rows
from delta_suite.frozen.user_files import is_path_argument, resolve_tokenizer
from delta_suite.frozen.user_table import user_entry
from delta_suite.ledger.lock import FolderBusy, FolderLock
from delta_suite.ledger.records import append_records, unloadable_record
from delta_suite.spec.admission import admission_of
from delta_suite.spec.refusals import refusal_message


def _ints(text: str, what: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError as exc:
        raise SuiteError(f"{what} must be comma-separated integers, got {text!r}") from exc


def _slice(text: str) -> tuple[int, int]:
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError as exc:
        raise SuiteError(f"--shard must look like i/N (0-based i), got {text!r}") from exc
    return i, n


def _per_s(chars: float, seconds: float) -> str:
    return f"{chars / seconds:,.0f}" if seconds > 0 else "-"


def select_tokenizers(name: str, broken: list[tuple[str, str]] | None = None,
                      user_name: str | None = None) -> tuple[list[str], list[str]]:
    """(provisioned names to compare, names that are not provisioned); a provisioned tokenizer that cannot be
    loaded (changed since install, corrupt) goes to `broken` as (name, reason) and is not compared, so the others
    still are. A path (a user's tokenizer.json or snapshot folder) is loaded as a user file, named `user_name` or
    after the file; a path that is not a tokenizer file is an error (exit 2; unreadable: 3)."""
    if name != "all" and (user_name is not None or is_path_argument(name)):
        return [resolve_tokenizer(name, user_name).name], []
    names = [r.name for r in rows()] if name == "all" else [lookup(name).name]
    ready, missing = [], []
    for n in names:
        try:
            load_tokenizer(n)
            ready.append(n)
        except NotProvisioned:
            missing.append(n)
        except SuiteError as exc:
            if broken is None:
                raise
            broken.append((n, str(exc)))
    return ready, missing


UNLOADABLE_LEDGER = "tokenizers-unloadable.jsonl"


def record_unloadable(out: Path, broken: list[tuple[str, str]]) -> None:
    """One "not loadable" row per broken tokenizer in the output folder's ledger (the report lists them)."""
    append_records(out / UNLOADABLE_LEDGER, [
        unloadable_record("corpus", "corpus.load", n, reason, f"corpora tokenizers pull {lookup(n).alias} --force")
        for n, reason in broken])


class UnitsRefused(SuiteError):
    """Units no cluster worker would run: their tokenizer or shard did not verify there, or could not be reached."""


class NothingCompared(SuiteError):
    """A run whose units compared nothing at all (an empty corpus, or no document any level takes)."""


class RefusedDocuments(SuiteError):
    """A finished run that refused corpus documents for bad text and found no difference (exit status 2)."""


class OutputBusy(SuiteError):
    """The output folder is held by another live run (its pid in the message)."""


SHOWN = 3  # refused or skipped documents named in the summary


def _probe(folder: Path) -> None:
    """FolderBusy if another process holds `folder`'s lock (taken and given back at once otherwise)."""
    FolderLock(folder).acquire().release()


def claim_output(out: Path, piece: tuple[int, int] | None) -> FolderLock:
    """Hold this run's share of `out`: the whole folder (OUT/.lock), or one `--shard i/N` slice of it
    (OUT/.slices/i-of-N/.lock, so the slices of a job array share OUT). A whole-folder run also refuses while any
    slice runs, a slice while a whole-folder run does (checked once, at the start). OutputBusy (exit 2, the
    holder's pid) if the share is taken; EnvironmentFault or OSError (exit 3) if `out` is a file or unwritable."""
    if out.exists() and not out.is_dir():
        raise EnvironmentFault(f"--out {out}: is a file, not a folder")
    slices = out / ".slices"
    lock = FolderLock(out if piece is None else slices / f"{piece[0]}-of-{piece[1]}")
    try:
        if piece is not None:
            _probe(out)
        lock.acquire()
        try:
            if piece is None:
                for folder in sorted(slices.iterdir()) if slices.is_dir() else []:
                    if folder.is_dir():
                        _probe(folder)
        except BaseException:
            lock.release()
            raise
    except FolderBusy as exc:
        raise OutputBusy(str(exc)) from None
    return lock


def _refusals(summary: RunSummary) -> tuple[int, list[dict]]:
    """(documents refused, the distinct refusals named in the records): every unit of a shard reads the same
    documents, so a shard counts the most any of its units refused, not the sum over its units."""
    per_shard: dict[str, int] = {}
    named: dict[tuple, dict] = {}
    for rec in summary.records.values():
        d = rec["details"]
        shard = d.get("shard_sha256", d.get("shard"))
        per_shard[shard] = max(per_shard.get(shard, 0), d.get("refused_documents") or 0)
        for r in d.get("refused") or []:
            named.setdefault((r["file"], r.get("line"), r.get("row")), r)
    return sum(per_shard.values()), sorted(named.values(), key=lambda r: (r["file"], r.get("line") or r.get("row")))


def _where(refusal: dict) -> str:
    at = f":{refusal['line']}" if refusal.get("line") is not None else f" row {refusal.get('row')}"
    return f"{refusal['file']}{at} id {refusal['id']}"


def _print_left_out(summary: RunSummary) -> tuple[int, list[dict]]:
    """Print the refused documents and, per tokenizer, level 2's skipped ones; (refused count, refusals)."""
    refused, named = _refusals(summary)
    if refused:
        print(f"refused: {refused:,} documents of bad text, not compared (details.refused of each unit):")
        for r in named[:SHOWN]:
            print(f"  {_where(r)}: {r['reason']}")
        if refused > SHOWN:
            print(f"  ... and {refused - SHOWN:,} more")
    skipped: dict[str, list[dict]] = defaultdict(list)
    counts: dict[str, int] = defaultdict(int)
    for rec in summary.records.values():
        d = rec["details"]
        if d.get("skipped_documents"):
            counts[rec["tokenizer"]] += d["skipped_documents"]
            skipped[rec["tokenizer"]].extend(d.get("skipped") or [])
    for tok in sorted(counts):
        first = skipped[tok][0] if skipped[tok] else None
        example = f", e.g. {first['id']} ({first['characters']:,} characters)" if first else ""
        reason = first["reason"] if first else "outside the level's range"
        print(f"skipped: {counts[tok]:,} documents under {tok}: {reason}{example}")
    return refused, named


def _interrupt_on_sigterm(signum, frame) -> None:
    raise KeyboardInterrupt  # SIGTERM (a job scheduler's stop) ends the run like Ctrl-C: workers stopped, exit 130


def _positive(value: int | None, flag: str) -> None:
    if value is not None and value < 1:
        raise SuiteError(f"{flag} must be at least 1, got {value}")


def _cmd(args: argparse.Namespace) -> int:
    levels = _ints(args.levels, "--levels")
    if not levels or not set(levels) <= {1, 2, 3}:
        raise SuiteError(f"--levels takes 1, 2 and 3, got {args.levels}")
    chunks = _ints(args.chunks, "--chunks")
    if not chunks or min(chunks) < 1:
        raise SuiteError(f"--chunks takes chunk counts of at least 1, got {args.chunks}")
    _positive(args.workers, "--workers")
    _positive(args.local_cluster, "--local-cluster")
    options = Options(chunk_counts=chunks)
    broken: list[tuple[str, str]] = []
    ready, missing = select_tokenizers(args.tokenizer, broken, args.name)
    refuse_user_files(ready, levels)
    for n in missing:
        print(f"{n:20s} not provisioned (run: corpora tokenizers pull {n}); not compared")
    for n, reason in broken:
        print(f"{n:20s} cannot be loaded, not compared: {reason}", file=sys.stderr)
    if not ready:
        if broken:
            raise SuiteError(f"no requested tokenizer can be loaded: {broken[0][1]}")
        raise NotProvisioned("no requested tokenizer is provisioned; nothing to compare")
    piece = _slice(args.shard) if args.shard else None
    if piece is not None:
        slice_units([], *piece)  # a bad slice is refused before any folder is made
    files = expand(args.corpus) if args.corpus else None  # so is a --corpus that names no file
    out = Path(args.out or f"out/corpus/{'user' if args.corpus else args.profile}")
    lock = claim_output(out, piece)
    try:
        if broken:
            record_unloadable(out, broken)
        code = _run(args, levels, options, ready, missing, out, piece, files)
    finally:
        lock.release()
    if broken and code == 0:
        print(f"error: {len(broken)} provisioned tokenizer(s) could not be loaded and were not compared: "
              f"{', '.join(n for n, _ in broken)} (recorded in {out / UNLOADABLE_LEDGER})", file=sys.stderr)
        return 2
    return code


def refuse_user_files(ready: list[str], levels: tuple[int, ...]) -> None:
    """Levels 2 and 3 compare the cut and repair paths, which need a user tokenizer admitted: otherwise a usage error
    (exit 2) with the reason. (On a cluster a user file travels to the workers as bytes, checked there against the
    digest the run named it with: `frozen.bundle.UserFileBundle`.)"""
    for n in ready:
        if user_entry(n) is None:
            continue
        decided = admission_of(load_tokenizer(n))
        if not decided.admitted and set(levels) & {2, 3}:
            raise SuiteError(f"tokenizer refused: {n} ({user_entry(n).path}): {refusal_message(decided.reason)}; "
                             "levels 2 and 3 compare the cut and repair paths, which it does not have (--levels 1 "
                             "compares its encoder alone)")


def _run(args: argparse.Namespace, levels: tuple[int, ...], options: Options, ready: list[str], missing: list[str],
         out: Path, piece: tuple[int, int] | None, files: list[Path] | None) -> int:
    """Plan, run and summarize the units, while this process holds its share of the output folder."""
    if files is not None:
        shards = shards_of_files(files, args.column)
    elif args.corpus_dir and is_url(args.corpus_dir):
        shards = shards_of_manifest(args.corpus_dir)  # a built corpus served by URL: read as it is, not built
        if 3 in levels and args.transcripts != "none":
            print(f"transcripts: not replayed from a corpus served by URL ({args.corpus_dir}); the transcript set is "
                  "built from a local corpus folder")
    else:
        built = build_corpus(args.profile, Path(args.corpus_dir) if args.corpus_dir else None)
        shards = shards_of_manifest(built.out)
        transcripts = args.transcripts or args.profile
        if 3 in levels and transcripts != "none":
            parts = build_transcripts(built.out, transcripts)
            shards.extend(transcript_shard(p) for p in parts)
            print(f"transcripts: the {transcripts} set, {len(parts)} parts in {parts[0].parent}")
    units = plan_units(shards, ready, levels, args.subject)
    if piece is not None:
        units = slice_units(units, *piece)
    print(f"{len(units)} units ({len(shards)} shards x {len(ready)} tokenizers x levels {levels}) -> {out}")
    previous = signal.signal(signal.SIGTERM, _interrupt_on_sigterm)
    try:
        if args.distributed or args.local_cluster:
            summary = run_dask(units, out, address=args.distributed, local_workers=args.local_cluster or 0,
                               options=options, report=print_record)
        else:
            summary = run_local(units, out, workers=args.workers, options=options, report=print_record)
    except KeyboardInterrupt:
        print(f"interrupted: finished units are stored in {out / 'units'}; the same command resumes", file=sys.stderr)
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)
    totals: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0, 0, 0, 0.0, 0.0, 0.0, 0, 0])
    for rec in summary.records.values():
        d = rec["details"]
        t = totals[(rec["level"], rec["tokenizer"])]
        encodes = len(d["chunk_counts"]) if d.get("chunk_counts") else 1
        t[0] += rec["comparisons"]
        t[1] += rec["differences"]
        t[2] += d["characters"]
        t[3] += d["characters"] * encodes
        t[4] += d["subject_seconds"]
        t[5] += d["reference_seconds"]
        t[6] += rec["fast_path"] or 0
        t[7] += (rec["fast_path"] or 0) + (rec["fallbacks"] or 0)
    print(f"ran {summary.ran} units, reused {summary.reused} finished ones; ledger {out / 'corpus-ledger.jsonl'}")
    print("  level    tokenizer            comparisons    characters differ  subject c/s/core"
          "  reference c/s/core  fast")
    for (level, tok), (comp, diff, chars, work, subj, ref, fast, paths) in sorted(totals.items()):
        share = f"{fast / paths:5.0%}" if paths else "    -"
        print(f"  {level:8s} {tok:20s} {comp:11,} {chars:13,} {diff:6} {_per_s(work, subj):>17s} "
              f"{_per_s(chars, ref):>19s} {share}")
    for n in missing:
        print(f"  {'-':8s} {n:20s} not provisioned")
    unavailable = sorted({(r["tokenizer"], r["level"], r["details"].get("reason")) for r in summary.records.values()
                          if r["details"].get("status") == "not installed"})
    for tok, level, reason in unavailable:
        print(f"  {level:8s} {tok:20s} subject {args.subject} not installed: {reason}")
    for r in summary.refusals:
        where = r["worker"].get("address") or r["worker"].get("host")
        print(f"  worker {where} refused {r['unit']}: {r['reason']}", file=sys.stderr)
    if summary.unrun:
        raise UnitsRefused(f"{len(summary.unrun)} units were refused by every worker and not compared (recorded in "
                           f"{out / 'worker-refusals.jsonl'}); first: {next(iter(summary.unrun.values()))}")
    refused, named = _print_left_out(summary)
    if unavailable:
        return 2
    first = f"; first {_where(named[0])}: {named[0]['reason']}" if named else ""
    if not any(t[0] for t in totals.values()):
        also = f" ({refused:,} documents refused for bad text{first})" if refused else ""
        raise NothingCompared(f"{len(units)} units compared nothing: no document of the corpus is taken by levels "
                              f"{', '.join(map(str, levels))} (empty, or outside each level's size range){also}")
    if any(t[1] for t in totals.values()):
        if refused:
            print(f"warning: {refused:,} corpus documents refused for bad text{first}", file=sys.stderr)
        return 1
    if refused:
        raise RefusedDocuments(f"{refused:,} corpus documents refused for bad text, not compared{first}; every other "
                               "document compared equal (the refusals are in details.refused of each unit record)")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compare", help="compare corpus shards with the reference (levels 1-3), resumable",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = p.add_mutually_exclusive_group()
    src.add_argument("--profile", choices=PROFILES, default="small",
        help="the built-in corpus (built if needed; default: %(default)s)")
    src.add_argument("--corpus", help="user corpus: JSONL (.gz/.zst) or Parquet file, folder or glob; or a URL "
                     "(http(s)://, file://, s3://... through fsspec), read by each worker and digest-checked")
    p.add_argument("--column", default="text", help="text column of --corpus files (default: %(default)s)")
    p.add_argument("--corpus-dir", help="where the built-in corpus is (default: $DELTA_HOME/corpus/PROFILE); a URL "
                   "(http(s)://, s3://, ...) reads a built corpus served there, for workers that share no folder")
    p.add_argument("--tokenizer", default="all", help="a registry name or alias, all, or a path to a tokenizer.json "
                   "or a folder holding one (a user file; on a cluster its bytes travel to the workers, digest-checked "
                   "there; default: %(default)s)")
    p.add_argument("--name", help="the name of a --tokenizer path in records and reports (default: the folder's "
                   "name, or the file's stem)")
    p.add_argument("--workers", type=int, default=1, help="local worker processes (default: %(default)s)")
    p.add_argument("--shard", help="run only slice i/N (0-based) of the units, for job arrays")
    cl = p.add_mutually_exclusive_group()
    cl.add_argument("--distributed", help="a Dask scheduler address, dask://HOST:PORT")
    cl.add_argument("--local-cluster", type=int, help="start a local Dask cluster of N worker processes")
    p.add_argument("--out", help="folder of unit records and the merged ledger (default out/corpus/PROFILE)")
    p.add_argument("--subject", default="delta", metavar="NAME[==VERSION]",
                   help=f"implementation under test: {', '.join(SUBJECTS)} (default delta), or a subject of subjects/ "
                   "(e.g. lopt, fastokens==0.3.5), checked on levels 1-3 on its own paths")
    p.add_argument("--levels", default="1,2,3", help="levels to compare: 1 whole encodes, 2 chunked encodes, 3 "
                   "sessions (default 1,2,3)")
    p.add_argument("--chunks", default="2,4,8", help="chunk counts of level 2 (default: %(default)s)")
    p.add_argument("--transcripts", choices=[*TRANSCRIPT_PROFILES, "none"],
                   help="the long transcript set replayed at level 3 (default: the --profile's; none: skip it)")
    p.set_defaults(func=_cmd)
