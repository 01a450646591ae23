"""A provisioned tokenizer as bytes that travel: how a cluster worker with an empty cache gets its files.

The client reads the files of an installed row (`bundle_of`, each file re-checked against the digest verified at
install); a worker installs a bundle into its own cache (`install_bundle`) through the same check every source
passes: the bytes are staged, each file's SHA-256 is classified against the registry's frozen and sibling digests
(`frozen.provision.verify_staged`), and only then is the row installed atomically. Invariant: a worker compares
with a tokenizer only if its bytes carry a digest the registry names; a tampered bundle raises `DigestMismatch`
with both digests and installs nothing. `ensure_provisioned` is the worker's entry: the local cache when it holds
the row intact, else the bundle.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from delta_suite.frozen.cache import ensure_writable, tokenizers_dir
from delta_suite.frozen.digests import sha256_bytes
from delta_suite.frozen.errors import DigestMismatch, NotProvisioned, SuiteError
from delta_suite.frozen.loader import load_tokenizer
from delta_suite.frozen.provision import install, installed, verify_staged
from delta_suite.frozen.registry import lookup
from delta_suite.frozen.user_table import USER_FILE, user_entry


@dataclass(frozen=True)
class TokenizerBundle:
    """The files of one registry row (name -> bytes) and where the sender installed them from."""

    name: str
    files: dict[str, bytes] = field(repr=False)
    source: str = ""

    def digests(self) -> dict[str, str]:
        """SHA-256 of each file as carried (what the receiver will verify)."""
        return {f: sha256_bytes(b) for f, b in self.files.items()}


def bundle_of(name: str, root: Path | None = None) -> TokenizerBundle:
    """The installed files of row `name`, each checked against the digest recorded (and verified) at install."""
    row = lookup(name)
    record = installed(row, root)
    if record is None:
        raise NotProvisioned(f"{row.name} is not provisioned here; run: corpora tokenizers pull {row.alias}")
    folder = (root or tokenizers_dir()) / row.name
    files: dict[str, bytes] = {}
    for fname, meta in record.get("files", {}).items():
        data = (folder / fname).read_bytes()
        if sha256_bytes(data) != meta.get("sha256"):
            raise DigestMismatch(str(folder / fname), str(meta.get("sha256")), sha256_bytes(data))
        files[fname] = data
    return TokenizerBundle(row.name, files, str(record.get("source", "")))


def install_bundle(bundle: TokenizerBundle, root: Path | None = None) -> Path:
    """Install a received bundle into this machine's cache, verified like any source; `DigestMismatch` (nothing
    installed) when a file's digest is neither the frozen one nor a sibling the registry names."""
    row = lookup(bundle.name)
    base = ensure_writable(root or tokenizers_dir())
    with _install_lock(base):
        staging = Path(tempfile.mkdtemp(prefix=f".{row.name}.bundle-", dir=base))
        try:
            for fname, data in bundle.files.items():
                if fname not in row.files:
                    raise SuiteError(f"{row.name}: the bundle carries {fname!r}, which the registry does not list")
                (staging / fname).write_bytes(data)
            files = verify_staged(row, staging)
            return install(row, staging, f"bundle from the client ({bundle.source or 'unknown source'})", files, base)
        finally:
            shutil.rmtree(staging, ignore_errors=True)


class _install_lock:
    """One installer at a time in a cache folder (worker threads and processes share it)."""

    def __init__(self, base: Path) -> None:
        self.path = base / ".install.lock"

    def __enter__(self) -> None:
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)


def ensure_provisioned(name: str, bundle: TokenizerBundle | None) -> str:
    """Make row `name` loadable here and say where its installed files came from (the install record's source: a
    mirror, a package, or "bundle from the client ..."). When the local cache does not hold the row, or holds a
    copy that changed since install, the client's bundle is installed (verified); without a bundle the loader's
    error stands (NotProvisioned, DigestMismatch). A user tokenizer of this run loads from its path, digest-checked
    (its source: "user file PATH"); a worker that cannot read that path refuses the unit with the loader's error."""
    entry = user_entry(name)
    if entry is not None:
        load_tokenizer(name)
        return f"{USER_FILE} {entry.path}"
    row = lookup(name)
    try:
        load_tokenizer(row.name)
    except (NotProvisioned, DigestMismatch):
        if bundle is None:
            raise
        install_bundle(bundle)
        load_tokenizer(row.name)
    record = installed(row) or {}
    return str(record.get("source", "unknown"))
