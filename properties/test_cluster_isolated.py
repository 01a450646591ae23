"""Whole-corpus comparisons on workers that share nothing with the client, tested like separate machines.

A Dask scheduler and two workers run as separate processes (`python -m dask scheduler|worker`), each worker with its
own `DELTA_HOME` and its own working directory; the corpus is served over HTTP by a server this test starts on the
loopback address. A worker's `DELTA_HOME` starts with no tokenizer, no corpus and nothing else of the client's but
the reference engine's class masks (`spec.classes.CLASS_REGEX`: white space, letters, numbers and marks, each over
every code point; a function of the installed `tokenizers` version alone, which each worker would otherwise probe
again for about 2 s). Shown, in one cluster's life:
1. a tampered tokenizer bundle is refused by every worker with the digest mismatch in the ledger, installs nothing,
   and leaves every unit unrun (never a record from unverified inputs);
2. `corpora compare --corpus http://... --distributed dask://...` provisions each worker by digest from the
   client's bundle, reads the shards by URL, and gives the same unit outcomes as the single-machine run, with each
   worker's host and digests in the records;
3. with one worker SIGKILLed in the middle of a unit, every unit is still recorded exactly once, equal to the
   single-machine run.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest
from delta_suite.corpora.compare import outcome, plan_units, shards_of_files, shards_of_manifest
from delta_suite.corpora.readers import expand
from delta_suite.corpora.remote import ShardDigestMismatch
from delta_suite.corpora.run_units import REFUSALS, run_dask, run_local
from delta_suite.frozen.bundle import TokenizerBundle, bundle_of
from delta_suite.ledger.records import read_ledgers
from delta_suite.spec.classes import CLASS_REGEX
from delta_suite.spec.engine_classes import engine_mask, mask_file

from properties.conftest import PROVISIONED
from properties.test_compare_distributed import _corpus, _held, _kill_first_running

pytestmark = pytest.mark.skipif(not PROVISIONED, reason="no tokenizer provisioned")
ROOT = Path(__file__).resolve().parents[1]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # no request log on the test's stderr
        pass


@pytest.fixture
def served(tmp_path: Path):
    """The test corpus in a folder served over HTTP on 127.0.0.1: (local files, base URL)."""
    files = _corpus(tmp_path / "www")
    handler = functools.partial(_Quiet, directory=str(tmp_path / "www"))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield files, f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def _clean_env(home: Path) -> dict:
    """A worker's environment: its own empty cache, no mirror, no hub, nothing of this machine's suite set-up."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DELTA_", "PYTEST", "HYPOTHESIS"))}
    return {**env, "DELTA_HOME": str(home), "DELTA_NO_HUB": "1", "HF_HUB_OFFLINE": "1"}


def _class_masks_only(home: Path) -> None:
    """A worker's cache root holding the reference engine's class masks (the client's), nothing else."""
    for regex in CLASS_REGEX.values():
        path = mask_file(regex, home)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(engine_mask(regex))


def _scheduler_address(path: Path) -> str:
    """The address in the scheduler's file once it is there and whole (the scheduler writes it in place)."""
    deadline = time.monotonic() + 60
    while True:
        try:
            return json.loads(path.read_text())["address"]
        except (OSError, ValueError, KeyError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


@pytest.fixture
def cluster(tmp_path: Path):
    """A scheduler and two isolated workers as separate processes, all three started at once (the workers read the
    scheduler's address from its file when it appears): (address, [worker homes])."""
    procs: list[subprocess.Popen] = []
    sched_file = tmp_path / "scheduler.json"
    log = open(tmp_path / "cluster.log", "w")  # noqa: SIM115 - closed below
    try:
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "dask", "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
             "--scheduler-file", str(sched_file)], cwd=tmp_path, stdout=log, stderr=log,
            env=_clean_env(tmp_path / "sched-home"), start_new_session=True))
        homes = []
        for i in range(2):
            home, cwd = tmp_path / f"w{i}-home", tmp_path / f"w{i}-cwd"
            cwd.mkdir()
            homes.append(home)
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "dask", "worker", "--scheduler-file", str(sched_file), "--nthreads", "1",
                 "--no-dashboard", "--name", f"isolated-{i}", "--local-directory", str(cwd)], cwd=cwd, stdout=log,
                stderr=log, env=_clean_env(home), start_new_session=True))
        for home in homes:
            _class_masks_only(home)
        address = _scheduler_address(sched_file)
        from dask.distributed import Client

        with Client(address, timeout="30s") as client:
            client.wait_for_workers(2, timeout=90)
        yield address, homes
        with Client(address, timeout="30s") as client:  # a nanny still restarting a killed worker ignores SIGTERM
            client.wait_for_workers(2, timeout=90)
    finally:
        # SIGTERM to each nanny, then to the scheduler, not to their process groups: a worker process that dies of
        # the signal before its nanny handles it is restarted, and that nanny does not end; a worker whose scheduler
        # closes while its nanny closes it takes the nanny's 8 s timeout
        for group in (procs[1:], procs[:1]):
            for p in group:
                p.send_signal(signal.SIGTERM)
            for p in group:
                try:
                    p.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    pass
                try:
                    os.killpg(p.pid, signal.SIGKILL)  # whatever is left of its group
                except ProcessLookupError:
                    pass
        log.close()


def _tampered(name: str) -> TokenizerBundle:
    real = bundle_of(name)
    data = real.files["tokenizer.json"]
    return replace(real, files={**real.files, "tokenizer.json": data[:-2] + b" " + data[-2:]})


def test_isolated_workers_provision_by_digest_and_equal_the_single_machine(served, cluster, tmp_path: Path,
                                                                            ledger) -> None:
    """On isolated workers (their caches: no tokenizer, nothing of the client's but the class masks) a tampered
    bundle is refused everywhere and installs nothing; the CLI provisions each worker by digest from the client's
    bundle and gives every unit the single machine's outcome; with a worker killed mid-unit every unit is recorded
    once, with the single machine's outcome."""
    files, base = served
    address, homes = cluster
    for home in homes:  # nothing of the client's but the class masks
        held = sorted(p for p in home.rglob("*") if p.is_file())
        assert held == sorted(mask_file(regex, home) for regex in CLASS_REGEX.values()), held
    tok = PROVISIONED[0]
    levels = (1, 2, 3)
    local_units = plan_units(shards_of_files(files), [tok], levels)
    baseline = run_local(local_units, tmp_path / "single")
    want = {k: outcome(r) for k, r in baseline.records.items()}
    url_units = plan_units(shards_of_files(expand(base)), [tok], levels)
    assert {u.key for u in url_units} == set(want), "the served shards are the local ones, byte for byte"

    # 1. a tampered bundle: refused everywhere, digest mismatch recorded, nothing installed, nothing compared
    tampered = run_dask(url_units, tmp_path / "tampered", address=address, bundle_for=_tampered)
    assert tampered.ran == 0 and set(tampered.unrun) == set(want)
    rows = read_ledgers([tmp_path / "tampered" / REFUSALS]).records
    assert rows and all("digest mismatch" in r["details"]["reason"] for r in rows)
    assert {r["details"]["worker"]["delta_home"] for r in rows} == {str(h) for h in homes}
    assert not any((h / "tokenizers" / tok / "tokenizer.json").exists() for h in homes)

    # 2. the real CLI against the cluster: provisioned from the client's bundle, shards read by URL
    out = tmp_path / "cluster"
    proc = subprocess.run([sys.executable, "-m", "delta_suite.corpora.cli", "compare", "--corpus", base, "--tokenizer",
                           tok,
                           "--levels", "1,2,3", "--distributed", f"dask://{address}", "--out", str(out)],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    merged = read_ledgers([out / "corpus-ledger.jsonl"]).records
    assert {r["details"]["unit"]: outcome(r) for r in merged} == want
    used = {r["details"]["worker"]["delta_home"] for r in merged}
    assert used <= {str(h) for h in homes}
    assert all(r["details"]["worker"]["tokenizer_source"].startswith("bundle from the client") for r in merged)
    assert all(r["details"]["worker"]["tokenizer_sha256"] == r["tokenizer_sha256"] for r in merged)
    for home in used:
        assert (Path(home) / "tokenizers" / tok / "tokenizer.json").is_file()

    # 3. one worker killed mid-unit: every unit once, equal to the single machine
    running = tmp_path / "running"
    killed: list[int] = []
    summary = run_dask(url_units, tmp_path / "killed", address=address, options=_held(running),
                       on_client=_kill_first_running(running, killed))
    assert len(killed) == 1 and not summary.unrun
    assert {k: outcome(r) for k, r in summary.records.items()} == want
    merged = read_ledgers([tmp_path / "killed" / "corpus-ledger.jsonl"]).records
    assert sorted(r["details"]["unit"] for r in merged) == sorted(want)
    ledger.record("harness", "corpus.isolated_workers_equal_single", comparisons=len(want),
                  differences=sum(1 for r in merged if outcome(r) != want[r["details"]["unit"]]), unit="units",
                  details={"refusals_of_tampered_bundle": len(rows), "killed_pid": killed[0]}, oracle="self")


def test_a_shard_whose_bytes_changed_is_refused_not_compared(served, tmp_path: Path) -> None:
    """A URL shard is compared only if the bytes read have the digest the run was planned with."""
    files, base = served
    units = plan_units(shards_of_files(expand(base + files[0].name)), [PROVISIONED[0]], (1,))
    with files[0].open("ab") as f:
        f.write(b'{"id": "late", "text": "appended after planning"}\n')
    with pytest.raises(ShardDigestMismatch, match="expected sha256"):
        run_local(units, tmp_path / "out")
    assert not list((tmp_path / "out").rglob("*.json"))


def test_a_built_corpus_served_by_url_equals_the_local_folder(tmp_path: Path) -> None:
    """`--corpus-dir URL`: the manifest and shards of a built corpus read through fsspec (here file://) give the
    same units and outcomes as the local folder."""
    files = _corpus(tmp_path / "c")
    shards = shards_of_files(files)
    manifest = {"shards": [{"name": Path(s.path).name, "sha256": s.sha256, "characters": s.characters,
                            "chats": 1} for s in shards]}
    (tmp_path / "c" / "manifest.json").write_text(json.dumps(manifest))
    local = run_local(plan_units(shards_of_manifest(tmp_path / "c"), [PROVISIONED[0]], (1, 2)), tmp_path / "a")
    remote = run_local(plan_units(shards_of_manifest((tmp_path / "c").as_uri()), [PROVISIONED[0]], (1, 2)),
                       tmp_path / "b")
    assert {k: outcome(r) for k, r in remote.records.items()} == {k: outcome(r) for k, r in local.records.items()}
    assert remote.ran == local.ran > 0
