"""A user's own tokenizer file compared on a cluster whose workers share nothing with the client.

`corpora compare --tokenizer PATH --distributed dask://...` on the isolated workers of `test_cluster_isolated` (a
scheduler and two workers as separate processes, each worker with its own empty `DELTA_HOME` and working directory,
no `DELTA_USER_TOKENIZERS`, the corpus served over HTTP): the file's bytes travel to the workers with the digest
recorded when the run named it, and each worker checks that digest before use. Shown in process, as a worker
with an empty user table and cache: a snapshot folder's bytes (tokenizer.json and config) are verified, kept under
their digests and compared, and bytes of any other digest are refused with the cause, nothing kept. Shown on the
isolated workers, in one cluster's life:
1. the synthetic admissible file compares clean on the workers (0 differences, comparisons > 0), every record
   carries the file's digest and the user's path, and was computed by a worker from the bytes the client sent;
2. a file changed after the run named it is refused by every worker (the cause in words, in
   `worker-refusals.jsonl` and on stderr), nothing is compared, and the command exits 2.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import asdict, replace
from pathlib import Path

import pytest
from delta_suite.corpora import compare_cli
from delta_suite.corpora.cli import main
from delta_suite.corpora.compare import plan_units, shards_of_files
from delta_suite.corpora.run_units import REFUSALS
from delta_suite.corpora.worker import run_unit_on_worker
from delta_suite.frozen.bundle import USER_FILES, UserFileBundle, run_bundle_of
from delta_suite.frozen.digests import sha256_file
from delta_suite.frozen.user_files import load_user_file
from delta_suite.frozen.user_table import USER_TABLE_ENV, user_entry
from delta_suite.ledger.records import read_ledgers

from properties.fresh_homes import share_derived_caches
from properties.synthetic import base_config, write
from properties.test_cluster_isolated import cluster, served  # noqa: F401 (fixtures, used by name)
from properties.test_compare_distributed import _corpus

ROOT = Path(__file__).resolve().parents[1]
CHANGED = "changed since this run named it"


def _changed_config() -> dict:
    """The synthetic file with its special token renamed: another tokenizer under the same path and name."""
    changed = base_config()
    changed["added_tokens"][0]["content"] = "<|stop|>"
    return changed


def _as_a_fresh_worker(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This process as a worker that shares nothing with the client: no user table, a cache root of its own (with
    the content-keyed derived caches of this run, `fresh_homes`); that root."""
    monkeypatch.delenv(USER_TABLE_ENV, raising=False)
    monkeypatch.setenv("DELTA_HOME", str(share_derived_caches(home)))
    return home


def test_a_worker_compares_a_sent_user_file_only_with_the_named_digest(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A snapshot folder's bundle, on a worker with an empty table and cache: verified, kept under its digests,
    compared, the record naming the user's paths and digests; bytes of another digest (tokenizer.json or config)
    are refused with the cause and nothing is kept."""
    monkeypatch.delenv(USER_TABLE_ENV, raising=False)
    folder = tmp_path / "snap"
    write(folder, base_config(), {"added_tokens_decoder": {}})
    load_user_file(folder)  # the client names the file
    entry = user_entry("snap")
    bundle = run_bundle_of("snap")
    assert isinstance(bundle, UserFileBundle) and bundle.entry == entry and entry.config_sha256 is not None
    unit = plan_units(shards_of_files(_corpus(tmp_path / "c")[:1]), ["snap"], (1,))[0]

    home = _as_a_fresh_worker(tmp_path / "worker", monkeypatch)
    got = run_unit_on_worker(unit, bundle=bundle)
    assert "record" in got, got
    record = got["record"]
    assert record["details"]["unit"] == unit.key and record["comparisons"] > 0 and record["differences"] == 0
    assert record["tokenizer_file"] == {"source": "user file", **asdict(entry)}
    assert "sent by the client" in record["details"]["worker"]["tokenizer_source"]
    kept = sorted(p.name for p in (home / USER_FILES).iterdir())
    assert kept == sorted([f"{entry.sha256}.json", f"{entry.config_sha256}.json"])

    for i, changed in enumerate([replace(bundle, data=bundle.data + b" "), replace(bundle, config=b"{}"),
                                 replace(bundle, config=None)]):
        home = _as_a_fresh_worker(tmp_path / f"worker-{i}", monkeypatch)
        got = run_unit_on_worker(unit, bundle=changed)
        assert "record" not in got and CHANGED in got["refused"], got
        assert not (home / USER_FILES).exists()


def test_a_user_file_travels_to_isolated_workers_by_digest(served, cluster, tmp_path: Path,  # noqa: F811
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture) -> None:
    """The user file compares clean on the isolated workers, each record with its digest and path; once the file
    changed after it was named, every worker refuses it with the cause and the command exits 2."""
    _files, base = served
    address, homes = cluster
    folder = tmp_path / "mine"
    write(folder, base_config())
    main_file = folder / "tokenizer.json"
    digest = sha256_file(main_file)

    # 1. the file's bytes travel with its digest: clean on the workers, the digest in every record
    out = tmp_path / "cluster"
    proc = subprocess.run([sys.executable, "-m", "delta_suite.corpora.cli", "compare", "--corpus", base,
                           "--tokenizer", str(folder), "--levels", "1,2,3", "--distributed", f"dask://{address}",
                           "--out", str(out)], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    records = read_ledgers([out / "corpus-ledger.jsonl"]).records
    assert records and all(r["differences"] == 0 for r in records)
    assert sum(r["comparisons"] for r in records) > 0
    assert {r["level"] for r in records} == {"encoder", "chunked", "repair"}
    for r in records:
        assert r["tokenizer"] == "mine" and r["tokenizer_sha256"] == digest
        assert r["tokenizer_file"]["sha256"] == digest and r["tokenizer_file"]["path"] == str(main_file.resolve())
        worker = r["details"]["worker"]
        assert worker["delta_home"] in {str(h) for h in homes}, "compared on a cluster worker, never here"
        assert worker["tokenizer_sha256"] == digest and "sent by the client" in worker["tokenizer_source"]

    # 2. changed between naming and the workers' use: refused on every worker, nothing compared, exit 2
    monkeypatch.delenv(USER_TABLE_ENV, raising=False)  # the in-process run names the file in this process's table
    real_run_dask = compare_cli.run_dask

    def change_then_run(*args, **kwargs):
        write(folder, _changed_config())
        return real_run_dask(*args, **kwargs)

    monkeypatch.setattr(compare_cli, "run_dask", change_then_run)
    changed_out = tmp_path / "changed"
    code = main(["compare", "--corpus", base, "--tokenizer", str(folder), "--levels", "1", "--distributed",
                 f"dask://{address}", "--out", str(changed_out)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "error:" in err and "refused by every worker" in err and CHANGED in err, err
    refusals = read_ledgers([changed_out / REFUSALS]).records
    assert refusals and all(CHANGED in r["details"]["reason"] for r in refusals)
    assert {r["details"]["worker"]["delta_home"] for r in refusals} == {str(h) for h in homes}
    assert not list((changed_out / "units").glob("*.json")), "nothing compared from the changed file"
