"""Character-class membership as the reference's own regex engine decides it, probed over every code point.

`tokenizers` compiles split patterns with Oniguruma, whose Unicode data is not Python's. So membership of a
code point in a class such as \\p{L} or \\s is read off the reference itself: a `Split(Regex(X), "removed")`
pre-tokenizer runs over all scalar values in batches, and the positions it removes are the members.
Surrogates (U+D800..U+DFFF) are not scalar values, cannot reach the engine, and are excluded (never members).
"""

from __future__ import annotations

import hashlib
import os
from contextlib import nullcontext
from functools import lru_cache
from importlib.metadata import version
from pathlib import Path

import numpy as np
from delta_suite.frozen.cache import cache_root
from delta_suite.frozen.cache_lock import computing
from tokenizers import Regex
from tokenizers.pre_tokenizers import Split

CODE_SPACE = 0x110000
SURROGATES = range(0xD800, 0xE000)
BATCH = 1024  # code points per reference call: 32,768 at once took about 1.6 times as long (measured)


def scalar_values() -> list[int]:
    """Every code point except the surrogates: 1,112,064 values."""
    return [cp for cp in range(CODE_SPACE) if not 0xD800 <= cp < 0xE000]


def _probe_text(cps: np.ndarray) -> str:
    """The code points of `cps` in order, one character each."""
    return cps.astype(np.uint32).tobytes().decode("utf-32-le")


@lru_cache(maxsize=1)
def _all_scalars() -> tuple[np.ndarray, str]:
    """`scalar_values()` as an array and as the text of `_probe_text`, built once per process (every mask of a
    partition probes the same code points: building them again cost about a third of a cold mask)."""
    cps = np.concatenate([np.arange(SURROGATES.start, dtype=np.int64),
                          np.arange(SURROGATES.stop, CODE_SPACE, dtype=np.int64)])
    cps.flags.writeable = False
    return cps, _probe_text(cps)


def probe_membership(regex: str, codepoints: list[int] | None = None) -> bytearray:
    """A 0/1 mask over the code space: 1 where the reference engine's `regex` matches the code point alone.

    `regex` must match single code points (a character class); the batch string is the code points in order,
    and every removed position is a member. The batch text is built as an array of code points (one character
    each; for all scalar values, once per process) and the kept spans are cleared with slices, not per code point.
    """
    splitter = Split(Regex(regex), behavior="removed")
    if codepoints is None:
        cps, text = _all_scalars()
    else:
        cps = np.asarray(codepoints, dtype=np.int64)
        text = _probe_text(cps)
    member = np.ones(len(cps), dtype=np.uint8)
    for start in range(0, len(cps), BATCH):
        for _, (lo, hi) in splitter.pre_tokenize_str(text[start : start + BATCH]):
            member[start + lo : start + hi] = 0
    mask = np.zeros(CODE_SPACE, dtype=np.uint8)
    mask[cps] = member
    return bytearray(mask.tobytes())


def mask_file(regex: str, root: Path | None = None) -> Path:
    """Where `engine_mask(regex)` is kept under the cache root `root` (default `cache_root()`): one file per
    installed `tokenizers` version and regex."""
    key = f"{version('tokenizers')}-{hashlib.sha256(regex.encode()).hexdigest()[:24]}.mask"
    return (cache_root() if root is None else root) / "engine-classes" / key


def _disk_cache(regex: str) -> Path | None:
    path = mask_file(regex)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return path
    except OSError:
        return None


@lru_cache(maxsize=64)
def engine_mask(regex: str) -> bytes:
    """`probe_membership` for all scalar values, memoized in-process and on disk (`mask_file`) per `tokenizers`
    version."""
    path = _disk_cache(regex)
    cached = _read_mask(path)
    if cached is not None:
        return cached
    with computing(path) if path is not None else nullcontext():  # one process computes, the others read it
        cached = _read_mask(path)
        if cached is not None:
            return cached
        data = bytes(probe_membership(regex))
        if path is not None:
            tmp = path.with_suffix(f".tmp{os.getpid()}")
            try:
                tmp.write_bytes(data)
                tmp.replace(path)
            except OSError:
                pass
    return data


def _read_mask(path: Path | None) -> bytes | None:
    """The cached mask at `path` when it is whole, else None."""
    if path is None or not path.is_file():
        return None
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return data if len(data) == CODE_SPACE else None
