"""What the loader reads from a tokenizer.json, kept per file digest: the file's JSON is parsed in Python once per
machine and library version, not once per process.

A tokenizer.json is 2 to 30 MB of JSON. The reference library parses it natively (`Tokenizer.from_str`); the loader
also needs a few of its sections (normalizer, pre-tokenizer, model type, dropout and byte fallback, the added
tokens) and the longest vocabulary entry in bytes, which used to cost a second, Python parse of the whole file in
every process that loaded it (about 0.2 s a file; every command and test worker loads several).

Invariant: `tokenizer_facts(data, digest, compute)` returns exactly `compute(data)` for the file whose bytes are
`data` and whose SHA-256 is `digest`. An entry is read only under a key made of that digest, the installed
`tokenizers` version and a digest of the source that computes the facts (`frozen/loader.py` and this module), so a
changed file, library or computation never reads an old entry. A missing, unreadable or corrupt entry is computed
again and written atomically (a temporary file renamed into place: concurrent workers of one run write the same
bytes, and a reader sees a whole entry or none); a cache folder that cannot be written costs only the write. A
fresh `DELTA_HOME` (a fresh clone's CI) computes every entry. `DELTA_FACTS_CACHE=0` turns the cache off.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from functools import cache
from pathlib import Path

import tokenizers
from delta_suite.frozen.cache import cache_root

FOLDER = "tokenizer-facts"
SOURCES = ("loader.py", "facts_cache.py", "vocabulary_facts.py")  # the code that computes and keys the facts


@cache
def code_digest() -> str:
    """SHA-256 over the source of the modules that compute the facts (a change to them is a new key)."""
    h = hashlib.sha256()
    for name in SOURCES:
        h.update((Path(__file__).parent / name).read_bytes())
    return h.hexdigest()


def facts_key(digest: str) -> str:
    """The cache key of a tokenizer.json's facts: its digest, the `tokenizers` version, the computing code."""
    return hashlib.sha256(f"{digest}|{tokenizers.__version__}|{code_digest()}".encode()).hexdigest()


def facts_path(digest: str) -> Path:
    return cache_root() / FOLDER / f"{facts_key(digest)}.json"


def _read(path: Path, digest: str) -> dict | None:
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or entry.get("sha256") != digest or not isinstance(entry.get("facts"), dict):
        return None
    return entry["facts"]


def _write(path: Path, digest: str, facts: dict) -> None:
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".facts-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"sha256": digest, "tokenizers": tokenizers.__version__, "facts": facts}, fh)
        os.replace(tmp, path)
    except OSError:  # a read-only or full cache: the facts were computed, only the saving is lost
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


def tokenizer_facts(data: bytes, digest: str, compute: Callable[[bytes], dict]) -> dict:
    """`compute(data)` for the tokenizer.json `data` (SHA-256 `digest`), read from the cache when an entry of this
    key exists, else computed and saved. `compute` raises for a file it refuses; nothing is saved then."""
    if os.environ.get("DELTA_FACTS_CACHE") == "0":
        return compute(data)
    path = facts_path(digest)
    facts = _read(path, digest)
    if facts is None:
        facts = compute(data)
        _write(path, digest, facts)
    return facts
