"""What a cluster worker runs for one unit: provision the tokenizer by digest, fetch the shard by URL, compare.

A worker may share nothing with the client: no cache, no corpus folder, no working directory. For each unit it
makes the tokenizer loadable (`frozen.bundle.ensure_provisioned`: its own cache, else the client's bundle, verified
against the registry; a user's file from the bytes the client sent, verified against the digest the run named it
with), reads a URL shard through a verified temporary copy (`corpora.remote.fetched`), and runs
`corpora.compare.run_unit`. Invariant: a worker returns either a record computed from verified inputs, with its
host and the digests it used in `details.worker`, or a refusal naming the reason (a tokenizer or shard whose
digest does not verify, a shard it cannot reach, other suite code) - never a record from unverified inputs. The
client records each refusal and re-runs the unit on another worker (`corpora.run_units.run_dask`).
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

from delta_suite.corpora.compare import DEFAULT_OPTIONS, Options, Unit, run_unit, suite_digest
from delta_suite.corpora.remote import is_url
from delta_suite.frozen.bundle import TokenizerBundle, UserFileBundle, ensure_provisioned
from delta_suite.frozen.cache import cache_root
from delta_suite.frozen.errors import SuiteError, os_error_message


def worker_identity() -> dict:
    """Host, pid, Dask address (when inside a Dask worker) and cache root of this process."""
    address = None
    try:
        from distributed import get_worker  # only inside a Dask worker

        address = get_worker().address
    except (ImportError, ValueError):
        pass
    return {"host": socket.gethostname(), "pid": os.getpid(), "address": address, "delta_home": str(cache_root())}


def stamp_user_file(record: dict, bundle: UserFileBundle) -> str | None:
    """Give the record of a unit compared with a user file the client sent the user's path and digests (not this
    worker's copy of it), and return None; or, when the record was computed from a file of another digest (another
    run's file of the same name, entered into this process's table meanwhile by a thread of its own), the reason
    to refuse it."""
    if record["tokenizer_sha256"] != bundle.entry.sha256:
        return (f"compared a file of sha256 {record['tokenizer_sha256'][:16]}…, not the one this run named "
                f"({bundle.entry.sha256[:16]}…); not recorded")
    record["tokenizer_file"] = bundle.file_facts()
    return None


def run_unit_on_worker(unit: Unit, options: Options = DEFAULT_OPTIONS,
                       bundle: TokenizerBundle | UserFileBundle | None = None, suite: str | None = None) -> dict:
    """{"record": ..., "worker": ...} for a unit compared from verified inputs, or {"refused": reason, "worker":
    ...} when this worker cannot verify or reach them (see the module docstring)."""
    ident = worker_identity()

    def refused(reason: str) -> dict:
        return {"refused": reason, "worker": ident, "unit": unit.key}

    if suite is not None and suite != suite_digest():
        return refused(f"this worker runs suite code {suite_digest()[:12]}, the client {suite[:12]}: install the "
                       "same version of the package on every worker")
    try:
        source = ensure_provisioned(unit.tokenizer, bundle)
    except SuiteError as exc:
        return refused(f"tokenizer {unit.tokenizer}: {exc}")
    except OSError as exc:
        return refused(f"tokenizer {unit.tokenizer}: {os_error_message(exc)}")
    try:
        if not is_url(unit.shard.path) and not Path(unit.shard.path).is_file():
            return refused(f"shard {unit.shard.path} is not on this worker: share the folder or address the corpus "
                           "by URL (--corpus URL, --corpus-dir URL)")
        else:
            record = run_unit(unit, options)
    except SuiteError as exc:
        return refused(str(exc))
    except OSError as exc:
        return refused(f"shard: {os_error_message(exc)}")
    if isinstance(bundle, UserFileBundle):
        wrong = stamp_user_file(record, bundle)
        if wrong is not None:
            return refused(f"tokenizer {unit.tokenizer}: {wrong}")
    record["details"]["worker"] = {**ident, "tokenizer_source": source, "tokenizer_sha256": record["tokenizer_sha256"],
                                   "shard_sha256": unit.shard.sha256}
    return {"record": record, "worker": ident}
