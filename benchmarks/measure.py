"""Interleaved timing: candidates measured side by side in one run, repeated, summarized as median, min and max.

Each repetition runs every candidate once, in a rotated order (so neither always runs first), each after
`gc.collect()` and an untimed `prepare` step (building the state it consumes), and times the call alone with
`time.perf_counter`. A figure is a ratio of two medians of the same run; absolute times are recorded but never
compared across runs or asserted in tests.
"""

from __future__ import annotations

import gc
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from delta_suite.frozen.loader import FrozenTokenizer


@dataclass(frozen=True)
class Timing:
    """Seconds per repetition of one candidate (wall clock, and the process's CPU time over all its threads),
    and their median, min and max."""

    samples: tuple[float, ...]
    cpu_samples: tuple[float, ...] = ()

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def low(self) -> float:
        return min(self.samples)

    @property
    def high(self) -> float:
        return max(self.samples)

    @property
    def parallelism(self) -> float | None:
        """Median CPU time / median wall time: about 1 for one busy thread, up to the threads that found a core."""
        if not self.cpu_samples or self.median <= 0:
            return None
        return statistics.median(self.cpu_samples) / self.median

    def as_json(self) -> dict:
        return {"median_s": self.median, "min_s": self.low, "max_s": self.high, "samples_s": list(self.samples),
                "cpu_samples_s": list(self.cpu_samples), "cpu_over_wall": self.parallelism}


@dataclass
class Candidate:
    """A timed call: `prepare(rep)` (untimed) returns the argument `run(arg)` consumes in repetition `rep`."""

    name: str
    run: Callable[[Any], Any]
    prepare: Callable[[int], Any] = lambda rep: None


def timed_call(run: Callable[[Any], Any], arg: Any) -> tuple[float, float, Any]:
    """(wall seconds, process CPU seconds, result) of one call, after a full garbage collection so none is billed
    to it."""
    gc.collect()
    cpu, start = time.process_time(), time.perf_counter()
    out = run(arg)
    return time.perf_counter() - start, time.process_time() - cpu, out


def interleaved(
    candidates: list[Candidate],
    repetitions: int,
    after: Callable[[int, dict[str, Any]], None] | None = None,
    each: Callable[[str, Any], Any] | None = None,
) -> dict[str, Timing]:
    """Time every candidate once per repetition, rotating the order; name -> Timing. Untimed: `each(name,
    result)` right after a call (its value replaces the result kept, e.g. a comparison, to free the output), and
    `after(rep, {name: kept result})` after each repetition (e.g. to compare the candidates' outputs)."""
    if repetitions < 1:
        raise ValueError("repetitions must be >= 1")
    samples: dict[str, list[float]] = {c.name: [] for c in candidates}
    cpu: dict[str, list[float]] = {c.name: [] for c in candidates}
    for rep in range(repetitions):
        shift = rep % len(candidates)
        results: dict[str, Any] = {}
        for cand in candidates[shift:] + candidates[:shift]:
            arg = cand.prepare(rep)
            seconds, cpu_seconds, out = timed_call(cand.run, arg)
            del arg
            results[cand.name] = each(cand.name, out) if each is not None else out
            del out
            samples[cand.name].append(seconds)
            cpu[cand.name].append(cpu_seconds)
        if after is not None:
            after(rep, results)
        results.clear()
    return {name: Timing(tuple(s), tuple(cpu[name])) for name, s in samples.items()}


def ratio(numerator: Timing, denominator: Timing) -> float:
    """median(numerator) / median(denominator): how many times faster the denominator's candidate is."""
    return numerator.median / denominator.median if denominator.median > 0 else float("inf")


def machine() -> dict:
    """The machine facts every figure records: core count and load average at the time of measurement."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = None
    return {"cores": os.cpu_count(), "load_average_1m": load, "rayon_num_threads": os.environ.get("RAYON_NUM_THREADS")}


def tokenizer_facts(tok: FrozenTokenizer) -> dict:
    """Tokenizer name and digest, as figure parameters."""
    return {"tokenizer": tok.name, "tokenizer_sha256": tok.sha256}
