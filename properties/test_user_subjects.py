"""Bring your own implementation: the suite certifies subjects it has never seen, named three ways.

- `--subject module:factory` (`properties/user_subjects.py`, written as a user would): the reference wrapped is
  clean on a campaign, a corpus comparison and the pytest plugin; a front end that expands tabs is found, its
  counterexample shrunk to a tab and saved as a replayable case under the campaign's folder; a subject that
  crashes, hangs or returns strings on some inputs has each recorded as such with the input (never a pass, never
  an ID difference) while the campaign goes on; one that cannot be imported is "not installed" (exit 2).
- `--subject exec:COMMAND`: the protocol spoken from outside Python by the Node.js example server
  (`examples/node-subject`, tokenizers.js): hello, encode and sessions; clean on the built-in samples and battery
  strings; the one class of inputs where it differs from the reference (code points assigned after the reference's
  Unicode data, which Node's ICU knows) is what a campaign finds.
- the report shows each user subject under the name and version it reported.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import unicodedata
from importlib.metadata import EntryPoint
from pathlib import Path

import delta_suite.subjects.protocol as protocol
import pytest
import tokenizers
import unicodedata2
from delta_suite.corpora.samples import SAMPLES
from delta_suite.frozen.cache import cache_root
from delta_suite.frozen.loader import load_tokenizer
from delta_suite.fuzz.regressions import load
from delta_suite.ledger.records import read_ledgers
from delta_suite.spec.reference import reference_encode
from delta_suite.subjects.by_name import get_subject
from delta_suite.subjects.protocol import SubjectFault

from properties.conftest import PROVISIONED

pytestmark = pytest.mark.skipif("qwen3_8b" not in PROVISIONED, reason="qwen3 not provisioned")
ROOT = Path(__file__).resolve().parents[1]
FUZZ = [sys.executable, "-m", "delta_suite.fuzz.cli"]
MOD = "properties.user_subjects"


def fuzz(tmp_path: Path, subject: str, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*FUZZ, "--tokenizer", "qwen3", "--subject", subject, "--out", str(tmp_path / "c"), *args],
                          capture_output=True, text=True, timeout=600, cwd=ROOT, env={**os.environ, **(env or {})})


def subject_rows(folder: Path) -> list[dict]:
    return [r for r in read_ledgers([folder]).records if r["kind"] == "subject"]


def test_a_correct_wrapper_is_clean_and_reported_by_its_own_name(tmp_path: Path) -> None:
    proc = fuzz(tmp_path, f"{MOD}:reference_wrapper", "--examples", "96")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = subject_rows(tmp_path / "c")
    assert rows and {(r["details"]["subject"], r["details"]["subject_version"]) for r in rows} == {
        ("hf-wrapper", tokenizers.__version__)}
    assert sum(r["comparisons"] for r in rows) > 0 and not any(r["differences"] for r in rows)
    rep = subprocess.run([sys.executable, "-m", "delta_suite.reports.cli", "table3", "--ledgers", str(tmp_path / "c"),
                          "--out",
                          str(tmp_path / "r"), "--format", "json"], capture_output=True, text=True, cwd=ROOT,
                         timeout=300)
    assert rep.returncode == 0, rep.stderr
    model = json.loads((tmp_path / "r" / "table3.json").read_text())
    assert {(s["subject"], s["subject_version"]) for s in model["subjects"]} == {("hf-wrapper", tokenizers.__version__)}
    # the subject's rows are its own: none of the suite's rows or obligations counts them
    assert all(r["total"]["comparisons"] == 0 for sec in model["sections"] for r in sec["rows"]) or not any(
        r["check"].startswith("fuzz.") for sec in model["sections"] for r in sec["rows"])


def test_a_wrapper_wrong_on_tabs_is_found_and_shrunk_to_a_tab(tmp_path: Path) -> None:
    proc = fuzz(tmp_path, f"{MOD}:tab_expanding", "--path", "cut", "--examples", "64")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "DIFFERENCES FOUND" in proc.stdout
    saved = sorted((tmp_path / "c" / "regressions").glob("*.json"))
    assert saved, "no counterexample saved under the campaign's folder"
    for f in saved:
        reg = load(f)
        assert reg.subject == f"{MOD}:tab_expanding" and "\t" in reg.case.text and len(reg.case.text) <= 4, reg.case
        tok = load_tokenizer(reg.tokenizer)
        wrong = get_subject(reg.subject, tok)
        assert wrong.encode(reg.case.text) != reference_encode(tok, reg.case.text)  # it replays
        right = get_subject(f"{MOD}:reference_wrapper", tok)
        assert right.encode(reg.case.text) == reference_encode(tok, reg.case.text)
    replay = subprocess.run([*FUZZ, "--replay", *map(str, saved)], capture_output=True, text=True, cwd=ROOT,
                            timeout=300)
    assert replay.returncode == 1 and replay.stdout.count("differs at token") == len(saved), replay.stdout
    fixed = subprocess.run([*FUZZ, "--replay", *map(str, saved), "--subject", f"{MOD}:reference_wrapper"],
                           capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert fixed.returncode == 0 and fixed.stdout.count(": same") == len(saved), fixed.stdout


def test_crashes_hangs_and_malformed_output_are_recorded_as_such(tmp_path: Path) -> None:
    proc = fuzz(tmp_path, f"{MOD}:faulty", "--path", "cut", "--examples", "96",
                env={"DELTA_SUBJECT_TIMEOUT": "1"})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "FAULTS FOUND" in proc.stdout and "Traceback" not in proc.stderr
    batches = [r for r in read_ledgers([tmp_path / "c"]).records if r["kind"] == "fuzz"]
    faults: dict[str, int] = {}
    for r in batches:
        for k, n in r["details"]["faults"].items():
            faults[k] = faults.get(k, 0) + n
    assert faults.get("crash") and faults.get("malformed"), faults
    assert sum(r["details"]["cases"] for r in batches) == 96, "the campaign must go on past every fault"
    assert not any(r["differences"] for r in batches), "a fault is not an ID difference"
    kinds = {load(f).fault["kind"] for f in (tmp_path / "c" / "regressions").glob("*.json")}
    assert {"crash", "malformed"} <= kinds
    crash = next(load(f) for f in (tmp_path / "c" / "regressions").glob("*crash*.json"))
    assert "\u00e9" in crash.case.text and len(crash.case.text) <= 3  # shrunk to the letter it cannot take
    table = subject_rows(tmp_path / "c")
    assert any(r["details"].get("faults") for r in table)


def test_a_hang_is_a_timeout_and_the_subject_is_rebuilt(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DELTA_SUBJECT_TIMEOUT", "0.5")
    tok = load_tokenizer("qwen3")
    subject = get_subject(f"{MOD}:faulty", tok)
    with pytest.raises(SubjectFault) as info:
        subject.encode("a\u200db")
    assert info.value.kind == "timeout"
    assert subject.encode("fine") == reference_encode(tok, "fine")  # the next call is answered


def test_a_subject_that_cannot_be_imported_is_not_installed(tmp_path: Path) -> None:
    proc = fuzz(tmp_path, "properties.no_such_module:factory", "--examples", "32")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "cannot import" in proc.stderr and "Traceback" not in proc.stderr
    rows = subject_rows(tmp_path / "c")
    assert rows and all(r["details"]["status"] == "not installed" and r["comparisons"] == 0 for r in rows)


def test_corpus_compare_takes_a_user_subject(tmp_path: Path) -> None:
    corpus = tmp_path / "docs.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"d{i}", "text": t}) + "\n" for i, t in enumerate(SAMPLES)))
    proc = subprocess.run([sys.executable, "-m", "delta_suite.corpora.cli", "compare", "--corpus", str(corpus),
                           "--tokenizer",
                           "qwen3", "--levels", "1,2,3", "--subject", f"{MOD}:reference_wrapper", "--out",
                           str(tmp_path / "o")], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = [r for r in read_ledgers([tmp_path / "o" / "corpus-ledger.jsonl"]).records]
    assert rows and all(r["details"]["subject"] == "hf-wrapper" for r in rows)
    assert sum(r["comparisons"] for r in rows) > 0


def _users_ci(tmp_path: Path, factory: str, ledger_dir: Path) -> subprocess.CompletedProcess:
    """One line in a user's CI, run in a folder of its own: `pytest --delta-subject=MOD:factory -n 2` on qwen3."""
    work = tmp_path / "user-repo"
    work.mkdir()
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", "--delta-tokenizer",
               "qwen3", "--delta-examples", "40", f"--delta-subject={MOD}:{factory}", "--delta-ledger", str(ledger_dir)]
    return subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=work,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_the_pytest_plugin_certifies_a_clean_subject_in_a_users_ci(tmp_path: Path) -> None:
    """One line in a user's CI: `pytest --delta-subject=module:factory -n 2` runs the property, the battery and a
    campaign per path under xdist; a clean subject passes its four tests and its ledger holds their records."""
    clean = _users_ci(tmp_path, "reference_wrapper", tmp_path / "l1")
    assert clean.returncode == 0 and "4 passed" in clean.stdout, clean.stdout[-2000:] + clean.stderr[-2000:]
    rows = subject_rows(tmp_path / "l1")
    assert {r["check"] for r in rows} >= {"subject.property", "subject.battery.encoder", "fuzz.cut", "fuzz.repair"}


def test_the_pytest_plugin_fails_a_wrong_subject_with_records(tmp_path: Path) -> None:
    """The same line on a front end that expands tabs: the user's CI fails (exit 1), the property's record counts
    the texts whose IDs differed among those it compared (searching and shrinking included: at least one, at most
    all) and its minimal counterexample holds a tab."""
    wrong = _users_ci(tmp_path, "tab_expanding", tmp_path / "l2")
    assert wrong.returncode == 1, wrong.stdout[-2000:]
    rows = subject_rows(tmp_path / "l2")
    (prop,) = [r for r in rows if r["check"] == "subject.property"]
    assert 1 <= prop["differences"] <= prop["comparisons"], (prop["differences"], prop["comparisons"])
    assert "\t" in prop["details"]["minimal_counterexample"]["text"]


# --- exec: the protocol from outside Python ----------------------------------------------------------------------

NODE_EXAMPLE = ROOT / "examples" / "node-subject"


@pytest.fixture(scope="module")
def node_server() -> str:
    """The Node.js example installed once into the cache (`npm install` from the registry), as an exec: spec."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node/npm not on this machine")
    home = cache_root() / "node-subject"
    stamp = (NODE_EXAMPLE / "package.json").read_text()
    manifest = home / "package.json"
    ready = (home / "node_modules" / "@huggingface" / "tokenizers").is_dir() and manifest.is_file() and \
        manifest.read_text() == stamp
    if not ready:
        home.mkdir(parents=True, exist_ok=True)
        shutil.copy(NODE_EXAMPLE / "package.json", home / "package.json")
        got = subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund"], cwd=home, capture_output=True,
                             text=True, timeout=300)
        if got.returncode != 0:
            pytest.skip(f"npm install failed (registry unreachable?): {got.stderr[-300:]}")
    shutil.copy(NODE_EXAMPLE / "server.mjs", home / "server.mjs")
    return f"exec:node {home / 'server.mjs'}"


def _assigned_after_python_unicode(text: str) -> bool:
    """Whether `text` holds a code point unassigned in this Python's Unicode data but assigned in newer data: the
    class of inputs where an engine with newer tables (Node's ICU) and the reference can read characters apart."""
    return any(unicodedata.category(c) == "Cn" and unicodedata2.category(c) != "Cn" for c in text)


def test_the_node_server_speaks_the_protocol_and_is_clean_on_known_text(node_server: str) -> None:
    tok = load_tokenizer("qwen3")
    subject = get_subject(node_server, tok)
    try:
        assert subject.name == "tokenizers.js" and subject.version and hasattr(subject, "session")
        texts = [*SAMPLES, "It's 2026; we've\r\n\t x", "<|im_start|>user\nhi<|im_end|>", "e\u0301\u037e \u1100\u1161"]
        for text in texts:
            assert subject.encode(text) == reference_encode(tok, text), text
        session = subject.session()
        assert session.encode(texts[0]) == reference_encode(tok, texts[0])
        assert session.encode(texts[0] + texts[1]) == reference_encode(tok, texts[0] + texts[1])
    finally:
        subject.close()


def test_a_campaign_on_the_node_server_finds_only_the_unicode_version_skew(node_server: str, tmp_path: Path) -> None:
    proc = fuzz(tmp_path, node_server, "--examples", "256", "--seed", "0")
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    assert "FAULTS FOUND" not in proc.stdout
    saved = [load(f) for f in (tmp_path / "c" / "regressions").glob("*.json")]
    if proc.returncode == 1:
        assert saved and all(_assigned_after_python_unicode(r.case.text) for r in saved), [r.case.text for r in saved]


def test_an_entry_point_names_a_subject(monkeypatch: pytest.MonkeyPatch) -> None:
    """A package that registers `my-tok = "pkg.module:factory"` in group delta_suite.subjects is found by name."""
    fake = [EntryPoint(name="my-tok", value=f"{MOD}:reference_wrapper", group=protocol.ENTRY_POINT_GROUP)]
    monkeypatch.setattr(protocol, "entry_points", lambda group: fake if group == protocol.ENTRY_POINT_GROUP else [])
    assert "my-tok" in protocol.names() and protocol.is_third_party("my-tok")
    tok = load_tokenizer("qwen3")
    subject = get_subject("my-tok", tok)
    assert subject.name == "hf-wrapper" and subject.encode("hi there") == reference_encode(tok, "hi there")
