"""Run comparison units anywhere: in this process, on a local process pool, or on a Dask distributed cluster.

Every runner does the same thing: skip units whose record is already stored, run the rest, and store each
returned record atomically from the driving process (workers never write records), then merge the ledger.
A worker that dies mid-unit therefore leaves nothing behind; its unit is run again, whole, elsewhere.
An error stops the run and reaches the caller as it is: an OSError raised in a pool worker (a corpus file the
machine cannot read) is re-raised in this process as the same OSError with its path, one raised while storing
a record (a full disk) leaves every record stored before it whole and no partial file; `frozen.errors.run_command`
turns either into "error: PATH: REASON" and exit status 3.

On a cluster the workers need nothing but the installed package: each unit travels with the client's bundle of its
tokenizer (installed by a worker whose cache lacks it, after the registry digest check; a user's file: its bytes,
checked on the worker against the digest the run named it with) and names its shard by path or by URL (fsspec;
digest-checked on the worker); see `corpora.worker`. A worker that cannot verify or reach
an input refuses the unit; the refusal is recorded and the unit goes to another worker.

Why Dask distributed (not Ray): the units are coarse, independent Python function calls, which is exactly
`Client.submit` + `as_completed`. Dask distributed is pure Python (a few MB with its
dependencies, no compiled wheels beyond msgpack/psutil), so it is an ordinary dependency and the distributed
test always runs; it gives a local multi-process cluster in one line (`LocalCluster`), an address to join from
any machine (`dask-scheduler`/`dask-worker`, or `dask://host:port` here), and it re-runs a task whose worker
died (the nanny restarts the worker and the scheduler reassigns the task). Ray would give the same semantics
at the cost of a ~60 MB native wheel, its own object store and a daemon per node, none of which these units need.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from delta_suite.corpora.affine_pool import run_affine
from delta_suite.corpora.compare import (
    DEFAULT_OPTIONS,
    Options,
    Unit,
    finished_record,
    merge_ledger,
    run_unit,
    suite_digest,
    write_unit_record,
)
from delta_suite.corpora.worker import run_unit_on_worker
from delta_suite.frozen.bundle import TokenizerBundle, UserFileBundle, run_bundle_of
from delta_suite.frozen.errors import SuiteError
from delta_suite.ledger.records import append_records, make_record

REFUSALS = "worker-refusals.jsonl"


class ClusterUnavailable(SuiteError):
    """A `--distributed` address that cannot be reached, or a cluster that cannot start."""


@dataclass
class RunSummary:
    """What a run did: units already finished before, units run now, and every unit's record."""

    reused: int = 0
    ran: int = 0
    records: dict[str, dict] = field(default_factory=dict)
    refusals: list[dict] = field(default_factory=list)  # every refusal by a cluster worker (unit, reason, worker)
    unrun: dict[str, str] = field(default_factory=dict)  # unit key -> last reason, for units every worker refused


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
    """Run the unfinished units here (workers=1) or on `workers` processes (`corpora.affine_pool`: largest first,
    each worker kept on the tokenizers it has loaded); an interruption terminates the workers (finished units
    stay stored, so a rerun resumes)."""
    summary = RunSummary()
    todo = _pending(out, units, summary)
    if workers <= 1:
        for u in todo:
            _store(out, u, run_unit(u, options), summary, report)
    else:
        by_key = {u.key: u for u in todo}
        # tokenizer affinity: a worker stays on the tokenizers it has loaded; an interruption or a failure
        # terminates the workers too (no orphans)
        for key, record in run_affine(todo, workers, options):
            _store(out, by_key[key], record, summary, report)
    merge_ledger(out)
    return summary


def refusal_record(unit: Unit, refusal: dict) -> dict:
    """The ledger row of a worker's refusal of a unit: no comparison; the unit, the reason and the worker."""
    rec = make_record("corpus", "harness", "corpus.worker_refused", tokenizer=unit.tokenizer, unit="units",
                      oracle="none",
                      details={"status": "refused by worker", "unit": unit.key, "reason": refusal["refused"],
                               "worker": refusal["worker"], "shard": unit.shard.name,
                               "shard_sha256": unit.shard.sha256})
    return rec


Bundle = TokenizerBundle | UserFileBundle


def _bundles(client, names: set[str], bundle_for: Callable[[str], Bundle]) -> dict:
    """Each tokenizer's bundle (a registry row's installed files, or a user file's bytes), scattered to every worker
    once (a worker that joins later fetches it from a peer)."""
    return {n: client.scatter(bundle_for(n), broadcast=True, hash=False) for n in sorted(names)}


def run_dask(units: list[Unit], out: Path, *, address: str | None = None, local_workers: int = 0,
             options: Options = DEFAULT_OPTIONS, report: Callable[[Unit, dict], None] | None = None,
             on_client: Callable | None = None,
             bundle_for: Callable[[str], Bundle] = run_bundle_of) -> RunSummary:
    """Submit the unfinished units to a Dask cluster (an address, or a local cluster of `local_workers`
    processes), largest first; store each record as it arrives; merge the ledger.

    Workers need nothing but the package: each unit carries the client's bundle of its tokenizer (verified and
    installed by the worker when its cache lacks it; a user file's bytes, verified by the worker against the
    digest the run named the file with, before every use) and names its shard by path or URL (`corpora.worker`). A
    refusal is recorded (`worker-refusals.jsonl`) and the unit is submitted again to a worker that has not
    refused it; a unit every worker refused stays unrun and is listed in `summary.unrun`."""
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
        bundles = _bundles(client, {u.tokenizer for u in todo}, bundle_for) if todo else {}
        suite = suite_digest()
        futures = {}
        refusers: dict[str, set[str]] = {}

        def submit(u: Unit, rank: int, workers: list[str] | None = None):
            attempt = len(refusers.get(u.key, ()))
            where = {"workers": workers, "allow_other_workers": False} if workers else {}
            fut = client.submit(run_unit_on_worker, u, options, bundles[u.tokenizer], suite,
                                key=f"unit-{u.key}" + (f"-retry{attempt}" if attempt else ""), pure=False,
                                priority=rank, **where)
            futures[fut] = u
            return fut

        for rank, u in enumerate(todo):
            submit(u, len(todo) - rank)
        if on_client is not None:
            on_client(client, futures)
        pending = dask_completed(list(futures))
        for fut in pending:
            u = futures.pop(fut)
            result = fut.result()
            if "record" in result:
                _store(out, u, result["record"], summary, report)
                continue
            append_records(out / REFUSALS, [refusal_record(u, result)])
            summary.refusals.append({"unit": u.key, "reason": result["refused"], "worker": result["worker"]})
            refusers.setdefault(u.key, set()).add(str(result["worker"].get("address")))
            others = [w for w in client.scheduler_info()["workers"] if w not in refusers[u.key]]
            if others:
                pending.add(submit(u, 0, others))
            else:
                summary.unrun[u.key] = result["refused"]
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
