"""A trained piece-local file through the commands a user runs on their own file: a fuzz campaign, the corpus
comparison and the kill matrix (`spec.piece_local`; the files of `properties.piece_local_files`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from delta_suite.ledger.records import read_ledgers
from delta_suite.spec.vacuity import PROBE_TEXTS

from properties.piece_local_files import path_of

ROOT = Path(__file__).resolve().parents[1]


def _run(module: str, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def test_a_campaign_on_the_trained_wordpiece_file_checks_cuts_and_repairs(tmp_path: Path) -> None:
    """`fuzz --tokenizer <file> --budget 5s`: exit 0, cuts and repairs both checked, no difference."""
    got = _run("delta_suite.fuzz.cli", "--tokenizer", str(path_of("bert-wordpiece-uncased")), "--name",
               "bert-wordpiece-uncased", "--budget", "5s", "--out", str(tmp_path / "f"))
    assert got.returncode == 0, got.stdout[-1500:] + got.stderr[-1500:]
    records = read_ledgers([tmp_path / "f"]).records
    by_check = {r["check"]: r for r in records}
    assert by_check["fuzz.cut"]["comparisons"] > 0 and by_check["fuzz.repair"]["comparisons"] > 0, sorted(by_check)
    assert sum(r["differences"] for r in records) == 0


def test_the_trained_unigram_file_through_the_corpus_comparison_and_the_kill_matrix(tmp_path: Path) -> None:
    """`corpora compare` on the Unigram file: exit 0, encoder and chunked records with comparisons and no
    difference; the kill matrix command: the unbroken paths clean, no control survives."""
    path = path_of("unigram-metaspace-nfkc")
    corpus = tmp_path / "docs.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"d{i}", "text": t * 40}) + "\n" for i, t in enumerate(PROBE_TEXTS)))
    compared = _run("delta_suite.corpora.cli", "compare", "--corpus", str(corpus), "--tokenizer", str(path),
                    "--name", "unigram-metaspace-nfkc", "--out", str(tmp_path / "c"))
    assert compared.returncode == 0, compared.stdout[-1500:] + compared.stderr[-1500:]
    recs = read_ledgers([tmp_path / "c" / "corpus-ledger.jsonl"]).records
    assert {r["level"] for r in recs} >= {"encoder", "chunked"} and sum(r["comparisons"] for r in recs) > 0
    assert sum(r["differences"] for r in recs) == 0
    matrix = _run("delta_suite.controls.kill_matrix", "--tokenizer", str(path), "--name", "unigram-metaspace-nfkc",
                  "--stop", "400", "--ledger", str(tmp_path / "km.jsonl"))
    assert matrix.returncode == 0, matrix.stderr[-1500:]
    rows = [json.loads(line) for line in matrix.stdout.splitlines()]
    assert {r["status"] for r in rows if r["control"].startswith("unbroken")} == {"clean"}
    assert any(r["status"] == "killed" for r in rows)
    assert not [r["control"] for r in rows if r["status"] == "survived"]
