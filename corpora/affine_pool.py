"""A local process pool that keeps each worker on the tokenizers it has already loaded.

`corpora compare --workers N` runs units of (shard, tokenizer, level). A plain pool hands the next unit to
whichever worker is free, so every worker ends up loading every tokenizer (0.4-1.5 s each, plus its tables):
on two cores that duplicated setup, not the comparisons, is what kept two workers from doubling the throughput.
Here the driving process assigns the units: a free worker gets the largest pending unit of a tokenizer it has
loaded, else the largest pending unit of a tokenizer no other worker holds, else the largest pending unit; the
first assignments go to distinct tokenizers. Records come back one unit at a time, in completion order, so the
caller stores each as it arrives (an interruption loses only the units in flight, which a rerun repeats).

Invariants: every unit is run exactly once (or the run raises); a worker's exception is re-raised here as it is
(an OSError keeps its path); a worker that dies without answering is an error naming its unit; an interruption or
an error terminates every worker (no orphans).
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Iterator
from multiprocessing.connection import Connection, wait

from delta_suite.corpora.compare import Options, Unit, run_unit


class WorkerDied(RuntimeError):
    """A pool worker exited without returning its unit's record."""


def _serve(conn: Connection, options: Options) -> None:
    """A worker: run each unit it is sent, answer (key, record) or (key, exception); stop on None, or when the
    driving process is gone. Ctrl-C is the driving process's to handle (it terminates the workers)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            unit = conn.recv()
        except EOFError:
            return
        if unit is None:
            return
        try:
            conn.send((unit.key, run_unit(unit, options), None))
        except Exception as exc:  # handed to the driving process, which re-raises it
            conn.send((unit.key, None, exc))


def _pick(pending: list[Unit], mine: set[str], others: set[str]) -> Unit:
    """The unit a free worker runs next (`pending` is largest first): its own tokenizers first, then a tokenizer
    no other worker holds, then anything."""
    for wanted in (lambda u: u.tokenizer in mine, lambda u: u.tokenizer not in others, lambda u: True):
        for i, unit in enumerate(pending):
            if wanted(unit):
                return pending.pop(i)
    raise IndexError("no pending unit")


def run_affine(units: list[Unit], workers: int, options: Options) -> Iterator[tuple[str, dict]]:
    """(unit key, record) for every unit, run on `workers` spawned processes with tokenizer affinity."""
    pending = list(units)
    if not pending:
        return
    ctx = multiprocessing.get_context("spawn")
    conns: list[Connection] = []
    procs = []
    held: list[set[str]] = []
    running: dict[int, Unit] = {}
    try:
        for _ in range(min(workers, len(pending))):
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_serve, args=(child, options), daemon=True)
            proc.start()
            child.close()
            conns.append(parent)
            procs.append(proc)
            held.append(set())

        def assign(w: int) -> None:
            others = set().union(*(held[v] for v in range(len(held)) if v != w))
            unit = _pick(pending, held[w], others)
            held[w].add(unit.tokenizer)
            running[w] = unit
            conns[w].send(unit)

        for w in range(len(conns)):
            assign(w)
        while running:
            for conn in wait([conns[w] for w in running]):
                w = conns.index(conn)
                unit = running.pop(w)
                try:
                    key, record, error = conn.recv()
                except EOFError as exc:
                    raise WorkerDied(f"a comparison worker exited while running unit {unit.key}") from exc
                if error is not None:
                    raise error
                yield key, record
                if pending:
                    assign(w)
        for conn in conns:
            conn.send(None)
        for proc in procs:
            proc.join(timeout=30)
    finally:
        for proc in procs:
            if proc.is_alive():
                proc.terminate()
        for proc in procs:
            proc.join(timeout=5)
        for conn in conns:
            conn.close()
