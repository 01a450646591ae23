"""Corpus shards addressed by URL, read through fsspec: local paths, `file://`, `http(s)://`, and the object stores
fsspec supports when their extras are installed (`s3://` with s3fs, `gs://` with gcsfs, ...).

A shard named by URL is planned on the client from its digest (`url_shard`: streamed once, SHA-256 and size) and
read on a worker that shares nothing with the client (`fetched`: streamed in 1 MiB blocks into a temporary file
under the shard's own name, hashed on the way). Invariant: a unit compares a URL shard only if the bytes the
worker read have the digest the client planned with; otherwise `ShardDigestMismatch` (both digests) and nothing is
compared. Local paths keep the plain readers (`corpora.readers`).
"""

from __future__ import annotations

import contextlib
import hashlib
import tempfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from delta_suite.frozen.errors import SuiteError

BLOCK = 1 << 20
GLOB_CHARS = "*?["


class ShardDigestMismatch(SuiteError):
    """The bytes read for a shard are not the ones the run was planned with (changed, truncated, or tampered)."""


def is_url(spec: str | Path) -> bool:
    """Whether a `--corpus` or shard path is a URL (anything with a scheme; `file://` included)."""
    return "://" in str(spec)


def _fs(url: str):
    import fsspec  # only URL corpora need it; http(s) needs the `fsspec[http]` extra (aiohttp)

    try:
        return fsspec.core.url_to_fs(url)
    except (ImportError, ValueError) as exc:
        raise SuiteError(f"{url}: no fsspec filesystem for this URL ({exc}); install the fsspec extra for it") from exc


def _unstrip(fs, url: str, path: str) -> str:
    """A path fsspec returned, as a full URL again (fsspec strips the scheme of most filesystems)."""
    return path if is_url(path) else fs.unstrip_protocol(path)


def expand_url(spec: str, suffixes: tuple[str, ...]) -> list[str]:
    """The corpus files a URL names, sorted: one file, a folder listing (files with a corpus suffix), or a glob."""
    fs, path = _fs(spec)
    try:
        if any(c in path for c in GLOB_CHARS):
            found = [p for p in fs.glob(path) if fs.isfile(p)]
        elif fs.isdir(path):
            found = [p for p in fs.find(path) if p.endswith(suffixes)]
        elif fs.exists(path):
            found = [path]
        else:
            found = []
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror or str(exc), spec) from exc
    return sorted(_unstrip(fs, spec, p) for p in found)


def url_name(url: str) -> str:
    """The file name of a URL (what names its units and its temporary copy)."""
    return PurePosixPath(url.split("://", 1)[-1].split("?", 1)[0]).name


def url_blocks(url: str) -> Iterator[bytes]:
    import fsspec

    try:
        with fsspec.open(url, "rb", block_size=BLOCK) as stream:
            while block := stream.read(BLOCK):
                yield block
    except FileNotFoundError as exc:
        raise FileNotFoundError(exc.errno, "no such shard", url) from exc


def url_shard_digest(url: str) -> tuple[str, int]:
    """(SHA-256, size in bytes) of the shard at `url`, streamed."""
    h, size = hashlib.sha256(), 0
    for block in url_blocks(url):
        h.update(block)
        size += len(block)
    return h.hexdigest(), size


@contextlib.contextmanager
def fetched(url: str, sha256: str) -> Iterator[Path]:
    """A local temporary copy of the shard at `url` (same file name), verified against `sha256`; removed after."""
    with tempfile.TemporaryDirectory(prefix="delta-shard-") as tmp:
        path = Path(tmp) / url_name(url)
        h = hashlib.sha256()
        with open(path, "wb") as out:
            for block in url_blocks(url):
                h.update(block)
                out.write(block)
        if h.hexdigest() != sha256:
            raise ShardDigestMismatch(f"shard {url}: expected sha256 {sha256}, read {h.hexdigest()}; not compared")
        yield path
