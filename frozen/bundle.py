"""A provisioned tokenizer as bytes that travel: how a cluster worker with an empty cache gets its files.

The client reads the files of an installed row (`bundle_of`, each file re-checked against the digest verified at
install); a worker installs a bundle into its own cache (`install_bundle`) through the same check every source
passes: the bytes are staged, each file's SHA-256 is classified against the registry's frozen and sibling digests
(`frozen.provision.verify_staged`), and only then is the row installed atomically. Invariant: a worker compares
with a tokenizer only if its bytes carry a digest the registry names; a tampered bundle raises `DigestMismatch`
with both digests and installs nothing. `ensure_provisioned` is the worker's entry: the local cache when it holds
the row intact, else the bundle.

A user's own file (`frozen.user_files`) travels the same way, as a `UserFileBundle`: the run's table entry (the
digests recorded when the run named the file) and the bytes the client read when it sent them, unchecked there.
The worker checks them (`install_user_bundle`): bytes whose digest is not the named one are a changed file,
refused with `UserFileChanged` as the loader refuses it locally; verified bytes are kept in the worker's cache
under their digest (`user-files/SHA256.json`) and entered into the worker's user table under the run's name, so
`load_tokenizer(NAME)` loads (and re-checks) that copy. Invariant: a worker compares with a user file only if the
bytes it loads carry the digest the run named.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from delta_suite.frozen.cache import cache_root, ensure_writable, tokenizers_dir
from delta_suite.frozen.digests import sha256_bytes
from delta_suite.frozen.errors import DigestMismatch, NotProvisioned, SuiteError
from delta_suite.frozen.loader import UserFileChanged, load_tokenizer
from delta_suite.frozen.provision import install, installed, verify_staged
from delta_suite.frozen.registry import lookup
from delta_suite.frozen.user_files import UserFileUnreadable
from delta_suite.frozen.user_table import USER_FILE, UserEntry, register_user_entry, user_entry

USER_FILES = "user-files"  # under a worker's cache root: the verified copies of user files, one per digest


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


@dataclass(frozen=True)
class UserFileBundle:
    """A user file of the run as it travels: the client's table entry (the user's paths, and the digests recorded
    when the run named the file) and the bytes of its tokenizer.json and config as the client read them to send."""

    entry: UserEntry
    data: bytes = field(repr=False)
    config: bytes | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return self.entry.name

    def file_facts(self) -> dict:
        """The file's facts in a record (`ledger.records.user_tokenizer_file`'s form): the user's paths, digests."""
        return {"source": USER_FILE, **asdict(self.entry)}


def user_bundle_of(entry: UserEntry) -> UserFileBundle:
    """The bytes of a user file as they are now, with the entry the run named it by; not checked here (each worker
    checks them before use). `UserFileUnreadable` (exit 3) for a file that can no longer be read."""
    try:
        data = Path(entry.path).read_bytes()
        config = Path(entry.config_path).read_bytes() if entry.config_path else None
    except OSError as exc:
        raise UserFileUnreadable(f"user tokenizer {entry.name}: {exc.filename}: cannot be read any more since this "
                                 f"run named it ({exc.strerror or exc})") from exc
    return UserFileBundle(entry, data, config)


def run_bundle_of(name: str) -> TokenizerBundle | UserFileBundle:
    """What a cluster run sends for tokenizer `name`: the file's bundle for a user tokenizer of this run, else the
    installed files of the registry row (`bundle_of`)."""
    entry = user_entry(name)
    return user_bundle_of(entry) if entry is not None else bundle_of(name)


def verify_user_bytes(bundle: UserFileBundle) -> None:
    """Return when the bundle's bytes carry the digests the run named the file with; raise `UserFileChanged` (the
    loader's refusal of a changed file, with both digests) otherwise."""
    entry = bundle.entry
    got = sha256_bytes(bundle.data)
    if got != entry.sha256:
        raise UserFileChanged(f"user tokenizer {entry.name}: {entry.path} changed since this run named it (sha256 "
                              f"{entry.sha256[:16]}…, sent {got[:16]}…); a changed file is a different tokenizer: "
                              "start a new run on it")
    config = None if bundle.config is None else sha256_bytes(bundle.config)
    if config != entry.config_sha256:
        raise UserFileChanged(f"user tokenizer {entry.name}: {entry.config_path} changed since this run named it "
                              "(or came or went); a changed file is a different tokenizer: start a new run on it")


def _keep(data: bytes, digest: str, folder: Path) -> Path:
    """`folder/DIGEST.json` holding `data` (whose SHA-256 is `digest`): kept when it already holds those bytes, else
    written whole (a temporary file renamed over it, so a concurrent reader never sees part of it)."""
    path = folder / f"{digest}.json"
    try:
        if sha256_bytes(path.read_bytes()) == digest:
            return path
    except OSError:
        pass
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{digest[:16]}-")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def install_user_bundle(bundle: UserFileBundle, root: Path | None = None) -> UserEntry:
    """Verify a user file's bundle (`verify_user_bytes`), keep its bytes in this machine's cache under their
    digests, and enter the file into this process's user table under the run's name, with the local copies' paths
    and the named digests; return that local entry. Bytes that do not verify are neither kept nor entered."""
    verify_user_bytes(bundle)
    entry = bundle.entry
    folder = ensure_writable((root or cache_root()) / USER_FILES)
    main = _keep(bundle.data, entry.sha256, folder)
    config = None
    if bundle.config is not None and entry.config_sha256 is not None:
        config = str(_keep(bundle.config, entry.config_sha256, folder))
    local = replace(entry, path=str(main), config_path=config)
    register_user_entry(local)
    return local


def ensure_provisioned(name: str, bundle: TokenizerBundle | UserFileBundle | None) -> str:
    """Make tokenizer `name` loadable here and say where its files came from.

    A registry row: the install record's source (a mirror, a package, or "bundle from the client ..."); when the
    local cache does not hold the row, or holds a copy that changed since install, the client's bundle is installed
    (verified); without a bundle the loader's error stands (NotProvisioned, DigestMismatch). A user file the client
    sent (`UserFileBundle`): verified against the digests the run named it with, kept and entered under its name
    (`install_user_bundle`; `UserFileChanged` for changed bytes), source "user file PATH, sent by the client ...".
    A user tokenizer already in this process's table, without a bundle: loaded from its path, digest-checked
    (source "user file PATH")."""
    if isinstance(bundle, UserFileBundle):
        if bundle.name != name:
            raise SuiteError(f"tokenizer {name}: the client sent the file of {bundle.name} for it")
        local = install_user_bundle(bundle)
        load_tokenizer(name)
        return f"{USER_FILE} {bundle.entry.path}, sent by the client (sha256 verified here, kept as {local.path})"
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
