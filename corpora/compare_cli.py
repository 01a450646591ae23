"""`corpora compare`: compare a corpus's shards under tokenizers at levels 1-3, here, on a pool or on a cluster.

    corpora compare [--profile small|full | --corpus PATH|GLOB [--column C]] [--tokenizer NAME|all]
                    [--workers N] [--shard i/N] [--distributed dask://HOST:PORT | --local-cluster N]
                    [--out DIR] [--subject NAME[==VERSION]] [--levels 1,2,3] [--chunks 2,4,8]
                    [--transcripts small|full|none]

With --profile the built-in corpus is built first (or reused from the cache), and with level 3 its long chat
transcripts (`corpora.transcripts`, the same profile unless --transcripts names another). Unprovisioned tokenizers are
listed as "not provisioned", never skipped silently. Exit status 1 if any comparison differs.
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections import defaultdict
from pathlib import Path

from corpora.build import PROFILES, build_corpus
from corpora.compare import (
    SUBJECTS,
    Options,
    plan_units,
    shards_of_files,
    shards_of_manifest,
    slice_units,
    transcript_shard,
)
from corpora.readers import expand
from corpora.run_units import print_record, run_dask, run_local
from corpora.transcripts import TRANSCRIPT_PROFILES, build_transcripts
from frozen.errors import NotProvisioned, SuiteError
from frozen.loader import load_tokenizer
from frozen.registry import lookup, rows


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


def select_tokenizers(name: str) -> tuple[list[str], list[str]]:
    """(provisioned names to compare, names that are not provisioned)."""
    names = [r.name for r in rows()] if name == "all" else [lookup(name).name]
    ready, missing = [], []
    for n in names:
        try:
            load_tokenizer(n)
            ready.append(n)
        except NotProvisioned:
            missing.append(n)
    return ready, missing


class NothingCompared(SuiteError):
    """A run whose units compared nothing at all (an empty corpus, or no document any level takes)."""


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
    ready, missing = select_tokenizers(args.tokenizer)
    for n in missing:
        print(f"{n:20s} not provisioned (run: corpora tokenizers pull {n}); not compared")
    if not ready:
        raise NotProvisioned("no requested tokenizer is provisioned; nothing to compare")
    if args.corpus:
        shards = shards_of_files(expand(args.corpus), args.column)
        label = "user"
    else:
        built = build_corpus(args.profile, Path(args.corpus_dir) if args.corpus_dir else None)
        shards = shards_of_manifest(built.out)
        label = args.profile
        transcripts = args.transcripts or args.profile
        if 3 in levels and transcripts != "none":
            parts = build_transcripts(built.out, transcripts)
            shards.extend(transcript_shard(p) for p in parts)
            print(f"transcripts: the {transcripts} set, {len(parts)} parts in {parts[0].parent}")
    units = plan_units(shards, ready, levels, args.subject)
    if args.shard:
        units = slice_units(units, *_slice(args.shard))
    out = Path(args.out or f"out/corpus/{label}")
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
    if unavailable:
        return 2
    if not any(t[0] for t in totals.values()):
        raise NothingCompared(f"{len(units)} units compared nothing: no document of the corpus is taken by levels "
                              f"{', '.join(map(str, levels))} (empty, or outside each level's size range)")
    return 1 if any(t[1] for t in totals.values()) else 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compare", help="compare corpus shards with the reference (levels 1-3), resumable")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--profile", choices=PROFILES, default="small", help="the built-in corpus (built if needed)")
    src.add_argument("--corpus", help="user corpus: JSONL (.gz/.zst) or Parquet file, folder or glob")
    p.add_argument("--column", default="text", help="text column of --corpus files")
    p.add_argument("--corpus-dir", help="where the built-in corpus is (default: $DELTA_HOME/corpus/PROFILE)")
    p.add_argument("--tokenizer", default="all", help="a registry name or alias, or all")
    p.add_argument("--workers", type=int, default=1, help="local worker processes")
    p.add_argument("--shard", help="run only slice i/N (0-based) of the units, for job arrays")
    cl = p.add_mutually_exclusive_group()
    cl.add_argument("--distributed", help="a Dask scheduler address, dask://HOST:PORT")
    cl.add_argument("--local-cluster", type=int, help="start a local Dask cluster of N worker processes")
    p.add_argument("--out", help="folder of unit records and the merged ledger (default out/corpus/PROFILE)")
    p.add_argument("--subject", default="delta", metavar="NAME[==VERSION]",
                   help=f"implementation under test: {', '.join(SUBJECTS)} (default delta), or a subject of subjects/ "
                   "(e.g. lopt, fastokens==0.3.5), checked on levels 1-3 on its own paths")
    p.add_argument("--levels", default="1,2,3")
    p.add_argument("--chunks", default="2,4,8", help="chunk counts of level 2")
    p.add_argument("--transcripts", choices=[*TRANSCRIPT_PROFILES, "none"],
                   help="the long transcript set replayed at level 3 (default: the --profile's; none: skip it)")
    p.set_defaults(func=_cmd)
