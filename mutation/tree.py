"""The scratch copy of the checkout that a mutation session or the coverage map works in, and what identifies it.

cosmic-ray writes each mutant into the file on disk before it runs the tests, so nothing runs in the working tree:
the checkout is copied (without history, environment, outputs and caches) and the tests run there with PYTHONPATH
pointing at the copy (their subprocesses inherit it). The copy's digest (every Python file in it) says whether a
coverage map measured on one copy still describes another.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

# the whole checkout but its history, environment, outputs and caches (tests read the README, scripts, examples)
NOT_COPIED = (".git", ".venv", "out", "*.egg-info", "__pycache__", "*.pyc", ".hypothesis", ".pytest_cache",
              ".ruff_cache", ".import_linter_cache")


def copy_tree(root: Path, dest: Path) -> None:
    """The checkout at `root` (without NOT_COPIED) into `dest`, replacing an older copy. The reference material
    next to the checkout (`../shared`, which some tests read) is linked next to the copy too."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(root, dest, ignore=shutil.ignore_patterns(*NOT_COPIED))
    shared, link = root.parent / "shared", dest.parent / "shared"
    if shared.is_dir() and not link.exists() and not link.is_symlink():
        link.symlink_to(shared.resolve(), target_is_directory=True)


def python_digest(root: Path) -> str:
    """SHA-256 over the paths and contents of every Python file under `root` outside NOT_COPIED: equal digests mean
    the same code and the same tests, so a coverage map of one copy holds for the other."""
    h = hashlib.sha256()
    for path in sorted(python_files(root)):
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def python_files(root: Path):
    """Every Python file under `root` outside NOT_COPIED."""
    skip = {".git", ".venv", "out", "__pycache__", ".hypothesis", ".pytest_cache", ".ruff_cache",
            ".import_linter_cache"}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in skip and not d.endswith(".egg-info")]
        for name in filenames:
            if name.endswith(".py"):
                yield Path(dirpath) / name


def commit_of(root: Path) -> str:
    """The commit (short) of the checkout at `root`, with "+changes" when the tree differs from it."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True)
    except OSError:
        return "unknown"
    return (head.stdout.strip() or "unknown") + ("+changes" if dirty.stdout.strip() else "")


PROFILE_ROOT = Path(__file__).resolve().parent.parent  # the checkout holding this profile


def tree_environment(tree: Path, ledgers: Path) -> dict[str, str]:
    """The environment the tests run in inside a copy: the copy first on PYTHONPATH (its `delta_suite` maps its
    own floors), then the checkout holding this profile, which is not installed (so `python -m mutation...` runs in
    a toy tree that has none of its own), ledgers kept out of the checkout's, one thread for the tokenizer library."""
    env = dict(os.environ)
    path = [str(tree), str(PROFILE_ROOT), *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(path))
    env["DELTA_LEDGER_DIR"] = str(ledgers)
    env.setdefault("RAYON_NUM_THREADS", "1")
    return env
