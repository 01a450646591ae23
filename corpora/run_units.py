"""Run comparison units anywhere: in this process, on a local process pool, or on a Dask distributed cluster.

Every runner does the same thing: skip units whose record is already stored, run the rest, and store each
returned record atomically from the driving process (workers never write records), then merge the ledger.
A worker that dies mid-unit therefore leaves nothing behind; its unit is run again, whole, elsewhere.
An error stops the run and reaches the caller as it is: an OSError raised in a pool worker (a corpus file the
machine cannot read) is re-raised in this process as the same OSError with its path, one raised while storing
a record (a full disk) leaves every record stored before it whole and no partial file; `frozen.errors.run_command`
turns either into "error: PATH: REASON" and exit status 3.

Why Dask distributed (not Ray): the units are coarse, independent Python function calls over files on a shared
path, which is exactly `Client.submit` + `as_completed`. Dask distributed is pure Python (a few MB with its
dependencies, no compiled wheels beyond msgpack/psutil), so it is an ordinary dependency and the distributed
test always runs; it gives a local multi-process cluster in one line (`LocalCluster`), an address to join from
any machine (`dask-scheduler`/`dask-worker`, or `dask://host:port` here), and it re-runs a task whose worker
died (the nanny restarts the worker and the scheduler reassigns the task). Ray would give the same semantics
at the cost of a ~60 MB native wheel, its own object store and a daemon per node, none of which these units need.
"""

from __future__ import annotations

import multiprocessing
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from corpora.compare import DEFAULT_OPTIONS, Options, Unit, finished_record, merge_ledger, run_unit, write_unit_record
from frozen.errors import SuiteError


class ClusterUnavailable(SuiteError):
    """A `--distributed` address that cannot be reached, or a cluster that cannot start."""


@dataclass
class RunSummary:
    """What a run did: units already finished before, units run now, and every unit's record."""

    reused: int = 0
    ran: int = 0
    records: dict[str, dict] = field(default_factory=dict)


def _pending(out: Path, units: list[Unit], summary: RunSummary) -> list[Unit]:
    todo = []
    for u in units:
        rec = finished_record(out, u)
        if rec is None:
            todo.append(u)
        else:
            summary.reused += 1
            summary.records[u.key] = rec
    return todo


def _store(out: Path, unit: Unit, record: dict, summary: RunSummary, report: Callable[[Unit, dict], None] | None):
    write_unit_record(out, unit, record)
    summary.ran += 1
    summary.records[unit.key] = record
    if report:
        report(unit, record)


def run_local(units: list[Unit], out: Path, *, workers: int = 1, options: Options = DEFAULT_OPTIONS,
              report: Callable[[Unit, dict], None] | None = None) -> RunSummary:
    """Run the unfinished units here (workers=1) or on a pool of `workers` processes, largest first; an
    interruption terminates the pool's workers (finished units stay stored, so a rerun resumes)."""
    summary = RunSummary()
    todo = _pending(out, units, summary)
    if workers <= 1:
        for u in todo:
            _store(out, u, run_unit(u, options), summary, report)
    else:
        pool = multiprocessing.get_context("spawn").Pool(workers)
        try:
            by_key = {u.key: u for u in todo}
            for key, record in pool.imap_unordered(_run_keyed, [(u, options) for u in todo]):
                _store(out, by_key[key], record, summary, report)
            pool.close()
        except BaseException:
            pool.terminate()  # an interruption (Ctrl-C, SIGTERM) or a failure stops the workers too: no orphans
            raise
        finally:
            pool.join()
    merge_ledger(out)
    return summary


def _run_keyed(job: tuple[Unit, Options]) -> tuple[str, dict]:
    """A pool task: one unit's key and record."""
    unit, options = job
    return unit.key, run_unit(unit, options)


def run_dask(units: list[Unit], out: Path, *, address: str | None = None, local_workers: int = 0,
             options: Options = DEFAULT_OPTIONS, report: Callable[[Unit, dict], None] | None = None,
             on_client: Callable | None = None) -> RunSummary:
    """Submit the unfinished units to a Dask cluster (an address, or a local cluster of `local_workers`
    processes), largest first; store each record as it arrives; merge the ledger."""
    from dask.distributed import Client, LocalCluster  # heavy optional: only distributed runs load dask
    from dask.distributed import as_completed as dask_completed

    summary = RunSummary()
    todo = _pending(out, units, summary)
    cluster = None
    try:
        if address:
            client = Client(address.removeprefix("dask://"), timeout="20s")
        else:
            cluster = LocalCluster(n_workers=max(1, local_workers), threads_per_worker=1, processes=True,
                                   dashboard_address=None, silence_logs=40)
            client = Client(cluster)
    except OSError as exc:
        raise ClusterUnavailable(f"cannot reach Dask scheduler {address}: {exc}") from exc
    try:
        futures = {}
        for rank, u in enumerate(todo):
            fut = client.submit(run_unit, u, options, key=f"unit-{u.key}", pure=False, priority=len(todo) - rank)
            futures[fut] = u
        if on_client is not None:
            on_client(client, futures)
        for fut in dask_completed(list(futures)):
            _store(out, futures[fut], fut.result(), summary, report)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    merge_ledger(out)
    return summary


def print_record(unit: Unit, record: dict) -> None:
    """One line per finished unit."""
    d = record["details"]
    share = f" fast {d['fast_path_share']:.0%}" if d.get("fast_path_share") is not None else ""
    left_out = "".join(f", {d[k]:,} {what}" for k, what in (("refused_documents", "documents refused"),
                                                             ("skipped_documents", "documents skipped"))
                       if d.get(k))
    print(f"{unit.key}: {record['comparisons']:,} {record['unit']}, {record['differences']} differ,"
          f" {d['characters']:,} chars{share}{left_out}, {d['wall_seconds']:.1f} s", file=sys.stdout, flush=True)
