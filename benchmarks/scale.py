"""The scale figure: per-core throughput of comparison levels 1 and 2 exactly as `corpora compare` runs them, and the
parallel efficiency of two worker processes over one, so the report can state what the paper's volumes would cost.

What is timed is `corpora.compare.run_unit` itself, one unit (shard, tokenizer, level, subject "delta") after
another in this process: the shard's documents read and rendered, and per document
- level 1 [encoder]: the subject's whole encode, the reference's whole encode, and their comparison;
- level 2 [chunked]: one whole reference encode, then for each chunk count of `corpora.compare.CHUNK_COUNTS` the
  chunked encode at the planned cuts and its comparison with the reference (documents of 512 to 400,000
  characters only, as the suite does).
Nothing of the checks is rewritten here; the records `run_unit` returns give the counts (documents, characters,
comparisons, differences) and the split of time between subject and reference.

Invariants: a rate is characters (documents, encodes, comparisons) of one repetition over the median CPU seconds
of this process for that repetition (all its threads, so CPU seconds are core-seconds: one process = one core);
every comparison any repetition made is counted in `comparisons`, and every difference in `differences`: a figure
whose outputs differ is recorded with its differences, never dropped. The efficiency record is
throughput(2 workers) / (2 x per-core rate of 1 worker), measured with worker processes started like a pool's
(on a machine shared with other work, the per-core CPU ratio instead, said so: `efficiency_of_runs`), or "not
measured" with the reason; it is never a constant.

Documents: the embedded default corpus (`corpora build --profile small`, the main job's corpus) where it is built,
else deterministic texts of `benchmarks.texts` written to a temporary shard; the full run adds long prose
documents (up to the paper's 400,000 characters) at level 2.
"""

from __future__ import annotations

import json
import multiprocessing
import statistics
import tempfile
import threading
import time
from dataclasses import dataclass
from multiprocessing.synchronize import Barrier
from pathlib import Path

from delta_suite.benchmarks.measure import machine, tokenizer_facts
from delta_suite.benchmarks.suite import record
from delta_suite.benchmarks.texts import text_of
from delta_suite.corpora.build import MANIFEST, default_out
from delta_suite.corpora.compare import (
    CHUNK_COUNTS,
    LEVEL_NAMES,
    MAX_CHUNKED_CHARS,
    MIN_CHUNKED_CHARS,
    Shard,
    Unit,
    document_text,
    run_unit,
    shards_of_files,
    shards_of_manifest,
)
from delta_suite.corpora.readers import read_documents
from delta_suite.frozen.loader import FrozenTokenizer, load_tokenizer

CORPUS_PROFILE = "small"  # the main job's embedded default (scripts/main-job.sh: corpora compare --profile small)
SAMPLE_SIZES = (600, 1_500, 3_000, 6_000, 12_000, 24_000)  # fallback documents when the corpus is not built
MAX_POINTERS = 20
STARTUP_TIMEOUT_S = 300.0
FREE_CORES_SHARE = 0.9  # the workers had their cores when their CPU seconds reach this share of cores x wall


@dataclass(frozen=True)
class ScalePlan:
    """Repetitions, the long documents added at level 2, and the efficiency measurement's tasks per worker
    (0: not measured)."""

    repetitions: int
    long_sizes: tuple[int, ...]
    efficiency_tasks_per_worker: int
    efficiency_workers: tuple[int, int] = (1, 2)


DEFAULT = ScalePlan(repetitions=3, long_sizes=(50_000, 100_000, 200_000, 400_000), efficiency_tasks_per_worker=20)
QUICK = ScalePlan(repetitions=1, long_sizes=(), efficiency_tasks_per_worker=0)


@dataclass(frozen=True)
class DocumentSet:
    """Documents compared as units: their name, where they come from, the shards, and the levels they serve."""

    name: str
    origin: str
    shards: tuple[Shard, ...]
    levels: tuple[int, ...]


# ---------------------------------------------------------------- documents


def corpus_set() -> DocumentSet | None:
    """The built small corpus (every shard, as the main job compares it), or None when it is not built here."""
    folder = default_out(CORPUS_PROFILE)
    if not (folder / MANIFEST).is_file():
        return None
    return DocumentSet(f"corpus:{CORPUS_PROFILE}", f"corpora build --profile {CORPUS_PROFILE} at {folder}",
                       tuple(shards_of_manifest(folder)), (1, 2))


def written_set(name: str, origin: str, docs: list[dict], folder: Path, levels: tuple[int, ...]) -> DocumentSet:
    """`docs` written as one JSONL shard in `folder` (deterministic bytes: the same texts give the same digest)."""
    path = folder / f"{name}.jsonl"
    path.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs), encoding="utf-8")
    return DocumentSet(name, origin, tuple(shards_of_files([path])), levels)


def sample_docs() -> list[dict]:
    """Prose and code of `SAMPLE_SIZES` characters (benchmarks.texts), for a machine without the built corpus."""
    return [{"id": f"{kind}-{size}", "text": text_of(kind, size)}
            for kind in ("prose", "code") for size in SAMPLE_SIZES]


def long_docs(sizes: tuple[int, ...]) -> list[dict]:
    """Prose documents of the given sizes (benchmarks.texts), for the upper end of the paper's level-2 range."""
    return [{"id": f"prose-{size}", "text": text_of("prose", size)} for size in sizes]


def compared_lengths(tok: FrozenTokenizer, shards: tuple[Shard, ...], level: int) -> list[int]:
    """Characters of every document the level compares (level 2: only those of 512 to 400,000 characters), read
    and rendered as `run_unit` reads them (untimed)."""
    lengths = []
    for shard in shards:
        for doc in read_documents(shard.path, shard.column, refused=lambda refusal: None):
            n = len(document_text(tok, doc))
            if level != 2 or MIN_CHUNKED_CHARS <= n <= MAX_CHUNKED_CHARS:
                lengths.append(n)
    return lengths


def _length_summary(lengths: list[int]) -> dict:
    if not lengths:
        return {"min": None, "median": None, "mean": None, "max": None}
    return {"min": min(lengths), "median": statistics.median(lengths), "mean": sum(lengths) / len(lengths),
            "max": max(lengths)}


# ---------------------------------------------------------------- per-core rate


def encodes_per_document(level: int) -> int:
    """Encodes one document costs at `level`: subject + reference (1); reference + one chunked encode per chunk
    count (2)."""
    return 2 if level == 1 else 1 + len(CHUNK_COUNTS)


def run_units(tok: FrozenTokenizer, shards: tuple[Shard, ...], level: int) -> tuple[list[dict], float, float]:
    """`run_unit` on every shard in turn: (records, CPU seconds of this process, wall seconds)."""
    cpu0, wall0 = time.process_time(), time.perf_counter()
    recs = [run_unit(Unit(shard, tok.name, level)) for shard in shards]
    return recs, time.process_time() - cpu0, time.perf_counter() - wall0


def level_rate(tok: FrozenTokenizer, dset: DocumentSet, level: int, repetitions: int) -> dict:
    """One `benchmark.scale` record: the document set's units at `level`, `repetitions` times after one untimed
    warm-up unit; rates over the median CPU seconds; every comparison and difference of every repetition counted."""
    smallest = min(dset.shards, key=lambda s: (s.characters, s.name))
    run_unit(Unit(smallest, tok.name, level))  # untimed: first calls pay for caches and the thread pool
    cpu, wall, comparisons, differences = [], [], 0, 0
    subject = reference = 0.0
    pointers: list[dict] = []
    recs: list[dict] = []
    for _ in range(repetitions):
        recs, cpu_s, wall_s = run_units(tok, dset.shards, level)
        cpu.append(cpu_s)
        wall.append(wall_s)
        comparisons += sum(r["comparisons"] for r in recs)
        differences += sum(r["differences"] for r in recs)
        subject += sum(r["details"]["subject_seconds"] for r in recs)
        reference += sum(r["details"]["reference_seconds"] for r in recs)
        for r in recs:
            for p in r["details"]["differing_documents"]:
                if len(pointers) < MAX_POINTERS:
                    pointers.append({"shard": r["details"]["shard"], **p})
    documents = sum(r["details"]["documents"] for r in recs)
    chars = sum(r["details"]["characters"] for r in recs)
    per_rep = comparisons // repetitions
    encodes = documents * encodes_per_document(level)
    seconds = statistics.median(cpu)
    lengths = compared_lengths(tok, dset.shards, level)

    def per_core(amount: int) -> float | None:
        return amount / seconds if seconds > 0 else None

    return record("benchmark.scale", tok, {
        **tokenizer_facts(tok), "figure": "scale", "comparison_level": level, "level_name": LEVEL_NAMES[level],
        "subject": "delta", "documents_set": dset.name, "documents_origin": dset.origin,
        "shards": [{"name": s.name, "sha256": s.sha256[:16]} for s in dset.shards],
        "chunk_counts": list(CHUNK_COUNTS) if level == 2 else None,
        "documents": documents, "chars": chars, "encodes": encodes, "comparisons_per_repetition": per_rep,
        "document_chars": _length_summary(lengths), "repetitions": repetitions, "threads": "library default",
        "seconds": seconds, "cpu_seconds_samples": cpu, "wall_seconds_samples": wall,
        "cpu_over_wall": seconds / statistics.median(wall) if statistics.median(wall) > 0 else None,
        "subject_seconds": subject / repetitions, "reference_seconds": reference / repetitions,
        "chars_per_s_per_core": per_core(chars), "encodes_per_s_per_core": per_core(encodes),
        "docs_per_s_per_core": per_core(documents), "comparisons_per_s_per_core": per_core(per_rep),
        "differing_documents": pointers,
        "timed": f"delta_suite.corpora.compare.run_unit on each shard at level {level} (subject delta), one after "
                 f"another in "
                 "this process; seconds = median over repetitions of this process's CPU seconds (all threads)",
        "encodes_of": "level 1: the subject's whole encode + the reference's whole encode per document; level 2: "
                      f"one whole reference encode + one chunked encode per chunk count {list(CHUNK_COUNTS)}",
    }, comparisons=comparisons, differences=differences,
        unit="documents" if level == 1 else "document_chunkings",
        oracle="self" if level == 1 else "reference")  # level 1: the library's batch path vs its single encode


# ---------------------------------------------------------------- parallel efficiency

_WORKER_UNIT: list[Unit] = []


def _worker_ready(unit: Unit, barrier: Barrier) -> None:
    """Pool initializer: load the tokenizer, run the unit once (untimed warm-up), then wait for the others; a
    worker that cannot breaks the barrier, so the parent stops waiting at once."""
    try:
        load_tokenizer(unit.tokenizer)
        run_unit(unit)
    except Exception:
        barrier.abort()
        raise
    _WORKER_UNIT[:] = [unit]
    barrier.wait(STARTUP_TIMEOUT_S)


def _timed_unit(_task: int) -> tuple[float, float, int, int, int]:
    """Pool task: the worker's unit once; (CPU seconds, wall seconds, characters, comparisons, differences)."""
    cpu0, wall0 = time.process_time(), time.perf_counter()
    rec = run_unit(_WORKER_UNIT[0])
    return (time.process_time() - cpu0, time.perf_counter() - wall0, rec["details"]["characters"],
            rec["comparisons"], rec["differences"])


def pool_run(unit: Unit, workers: int, tasks: int) -> dict:
    """`tasks` runs of `unit` on a spawned pool of `workers` processes, timed from the moment every worker is
    warm (startup excluded) to the last result: wall seconds, per-task CPU seconds, characters, counts."""
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(workers + 1)
    with ctx.Pool(workers, initializer=_worker_ready, initargs=(unit, barrier)) as pool:
        barrier.wait(STARTUP_TIMEOUT_S)
        load = machine()["load_average_1m"]
        start = time.perf_counter()
        results = pool.map(_timed_unit, range(tasks), chunksize=1)
        wall = time.perf_counter() - start
    return {"workers": workers, "tasks": tasks, "load_average_1m": load, "wall_s": wall,
            "task_cpu_s": [r[0] for r in results],
            "task_wall_s": [r[1] for r in results], "chars": sum(r[2] for r in results),
            "comparisons": sum(r[3] for r in results), "differences": sum(r[4] for r in results)}


def efficiency(tok: FrozenTokenizer, dset: DocumentSet, level: int, plan: ScalePlan) -> dict:
    """One `benchmark.scale_efficiency` record: the document set's largest shard at `level` as identical tasks on
    1 and on 2 worker processes. efficiency = (characters per wall second with 2 workers) / (2 x characters per CPU
    second with 1 worker), the factor the report divides by; the plain wall-throughput ratio is recorded beside it.
    A pool that cannot start gives a "not measured" record with the reason."""
    one, two = plan.efficiency_workers
    shard = max(dset.shards, key=lambda s: (s.characters, s.name))
    unit = Unit(shard, tok.name, level)
    facts = {**tokenizer_facts(tok), "figure": "scale", "comparison_level": level, "level_name": LEVEL_NAMES[level],
             "documents_set": dset.name, "shard": shard.name, "shard_sha256": shard.sha256[:16],
             "workers": [one, two], "tasks_per_worker": plan.efficiency_tasks_per_worker,
             "timed": "identical delta_suite.corpora.compare.run_unit tasks on a spawned process pool, from the "
                      "moment every "
                      "worker has loaded the tokenizer and run the unit once to the last result"}
    try:
        runs = [pool_run(unit, n, n * plan.efficiency_tasks_per_worker) for n in (one, two)]
    except threading.BrokenBarrierError as exc:
        return record("benchmark.scale_efficiency", tok, {**facts, "status": "not measured",
                                                          "reason": f"worker pool did not start: {exc!r}"},
                      unit="runs")
    base, wide = runs
    return record("benchmark.scale_efficiency", tok, {**facts, "status": "measured", "runs": runs,
                                                      **efficiency_of_runs(base, wide)},
                  comparisons=base["comparisons"] + wide["comparisons"],
                  differences=base["differences"] + wide["differences"], unit="runs")


def efficiency_of_runs(base: dict, wide: dict) -> dict:
    """The efficiency of `wide` (n workers) over `base` (1 worker), from their `pool_run` results.

    wall efficiency = characters per wall second with n workers / (n x characters per CPU second with 1): the
    throughput ratio the cluster's wall time needs, valid when the n workers had their cores. `cores_share` = the
    workers' CPU seconds / (n x wall seconds); below FREE_CORES_SHARE the machine was shared with other work and
    the wall ratio measures that load, so the efficiency used is the CPU one instead: characters per CPU second
    with n workers / with 1 (the slowdown the workers cause each other; scheduling overheads not included). The
    basis is recorded with the value."""
    n = wide["workers"]
    base_cpu, wide_cpu = sum(base["task_cpu_s"]), sum(wide["task_cpu_s"])
    base_core = base["chars"] / base_cpu if base_cpu > 0 else None
    wide_core = wide["chars"] / wide_cpu if wide_cpu > 0 else None
    base_wall = base["chars"] / base["wall_s"] if base["wall_s"] > 0 else None
    wide_wall = wide["chars"] / wide["wall_s"] if wide["wall_s"] > 0 else None
    wall_eff = wide_wall / (n * base_core) if wide_wall and base_core else None
    cpu_eff = wide_core / base_core if wide_core and base_core else None
    share = wide_cpu / (n * wide["wall_s"]) if wide["wall_s"] > 0 else None
    free = share is not None and share >= FREE_CORES_SHARE
    why = ("the workers had their cores" if free else
           f"the workers got {share or 0:.0%} of {n} cores (the machine was shared), so the wall ratio measures that "
           "load; the CPU ratio excludes it (and scheduling overheads)")
    return {"chars_per_s_per_core_1_worker": base_core, f"chars_per_s_per_core_{n}_workers": wide_core,
            "chars_per_wall_s": {str(base["workers"]): base_wall, str(n): wide_wall},
            "throughput_ratio": wide_wall / base_wall if wide_wall and base_wall else None,
            "throughput_ratio_of": f"characters per wall second with {n} workers / with {base['workers']}",
            "cores_share": share, "wall_efficiency": wall_eff, "cpu_efficiency": cpu_eff,
            "efficiency": wall_eff if free else cpu_eff, "efficiency_basis": "wall" if free else "cpu",
            "efficiency_basis_why": why,
            "efficiency_of": f"wall: characters per wall second with {n} workers / ({n} x characters per CPU second "
                             f"with 1); cpu: characters per CPU second with {n} workers / with 1; wall is used when "
                             f"the workers used >= {FREE_CORES_SHARE:.0%} of their cores, else cpu"}


# ---------------------------------------------------------------- the figure


def scale_figures(tok: FrozenTokenizer, quick: bool) -> list[dict]:
    """The scale records: per level and document set one `benchmark.scale` record; in the full run also one
    `benchmark.scale_efficiency` record per level (the quick run measures no efficiency: the report then says
    100% is assumed)."""
    plan = QUICK if quick else DEFAULT
    out: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="delta-scale-") as tmp:
        folder = Path(tmp)
        sets = [corpus_set() or written_set("samples", "delta_suite.benchmarks.texts (the corpus is not built here)",
                                            sample_docs(), folder, (1, 2))]
        if plan.long_sizes:
            sets.append(written_set("long-prose",
                                    f"delta_suite.benchmarks.texts prose of {', '.join(map(str, plan.long_sizes))} "
                                    "characters", long_docs(plan.long_sizes), folder, (2,)))
        for level in (1, 2):
            for dset in sets:
                if level in dset.levels:
                    out.append(level_rate(tok, dset, level, plan.repetitions))
            if plan.efficiency_tasks_per_worker:
                out.append(efficiency(tok, sets[0], level, plan))
    return out
