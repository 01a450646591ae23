"""Peer environments: each PyPI peer installed on demand into a cached virtual environment of its own.

A peer's pins never touch the suite's own environment: `ensure_env(peer, version)` creates
`$DELTA_HOME/subject-envs/NAME-VERSION` with `python -m venv`, installs the peer (plus the imports it needs but
does not declare) with pip, checks that the installed version is the one asked for, and writes a marker last, so a
half-built environment is never taken for a ready one. Creation is serialized by a lock file, so two processes
that need the same peer build it once. A peer that cannot be installed raises `SubjectUnavailable` with pip's
own last words as the reason.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from frozen.cache import cache_root
from subjects.protocol import SubjectUnavailable

MARKER = "delta-subject-env.json"
INSTALL_TIMEOUT_S = 1800
INDEX_TIMEOUT_S = 120


@dataclass(frozen=True)
class Peer:
    """A PyPI peer: its distribution name, the module to import, and requirements it needs but does not declare."""

    name: str
    distribution: str
    module: str
    extra_requirements: tuple[str, ...] = field(default_factory=tuple)


PEERS: dict[str, Peer] = {
    "fastokens": Peer("fastokens", "fastokens", "fastokens"),
    "gigatoken": Peer("gigatoken", "gigatoken", "gigatoken", ("tokenizers>=0.22.2,<0.24",)),
    "toktier": Peer("toktier", "toktier", "toktier"),
    # paralleltokenizer declares no dependencies; it imports numpy, torch, transformers and sentencepiece.
    "paralleltokenizer": Peer(
        "paralleltokenizer",
        "paralleltokenizer",
        "parallel_tokenizer",
        ("numpy", "torch", "transformers>=4.40,<5", "sentencepiece", "tokenizers>=0.22.2,<0.24"),
    ),
}


def envs_root() -> Path:
    """Where peer environments live: `$DELTA_HOME/subject-envs`."""
    return cache_root() / "subject-envs"


def env_dir(peer: str, version: str) -> Path:
    return envs_root() / f"{peer}-{version}"


def env_python(peer: str, version: str) -> Path:
    return env_dir(peer, version) / "bin" / "python"


def _peer(name: str) -> Peer:
    if name not in PEERS:
        raise SubjectUnavailable(name, f"no PyPI peer named {name!r} (known: {', '.join(PEERS)})")
    return PEERS[name]


def requirements(peer: Peer, version: str) -> list[str]:
    """The pip requirements of one peer environment: the exact peer version plus what it imports."""
    return [f"{peer.distribution}=={version}", *peer.extra_requirements]


def cached_versions(name: str) -> list[str]:
    """Versions of `name` whose environment is complete (marker written), newest first."""
    root = envs_root()
    out = []
    if root.is_dir():
        for d in root.iterdir():
            if d.name.startswith(name + "-") and (d / MARKER).is_file():
                out.append(d.name[len(name) + 1 :])
    return sorted(out, key=version_key, reverse=True)


def version_key(v: str) -> tuple:
    """A sort key for release numbers (numeric parts compared as numbers)."""
    return tuple(int(p) if p.isdigit() else 0 for p in re.split(r"[.+-]", v))


def available_versions(name: str) -> list[str]:
    """Released versions of a peer as the package index lists them, newest first; [] if the index cannot answer."""
    peer = _peer(name)
    try:
        out = subprocess.run(
            [sys.executable, "-m", "pip", "index", "versions", peer.distribution, "--disable-pip-version-check"],
            capture_output=True,
            text=True,
            timeout=INDEX_TIMEOUT_S,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    m = re.search(r"Available versions:\s*(.+)", out.stdout)
    return [v.strip() for v in m.group(1).split(",")] if m else []


def resolve_version(name: str, version: str | None) -> str:
    """The version to use: the one asked for (refused if the index answers without it and none is cached), else the
    newest released, else the newest already cached."""
    if version:
        if version in cached_versions(name):
            return version
        listed = available_versions(name)
        if listed and version not in listed:
            known = ", ".join(listed)
            raise SubjectUnavailable(name, f"version {version} is not on the package index (it lists {known})")
        return version
    listed = available_versions(name)
    if listed:
        return listed[0]
    cached = cached_versions(name)
    if cached:
        return cached[0]
    raise SubjectUnavailable(name, "the package index lists no version and no environment is cached")


def _read_marker(path: Path) -> dict | None:
    try:
        return json.loads((path / MARKER).read_text())
    except (OSError, json.JSONDecodeError):
        return None


def _run_pip(python: Path, args: list[str], name: str) -> None:
    try:
        out = subprocess.run(
            [str(python), "-m", "pip", "--disable-pip-version-check", "-q", *args],
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired as exc:
        raise SubjectUnavailable(name, f"pip timed out after {INSTALL_TIMEOUT_S} s") from exc
    if out.returncode != 0:
        tail = " | ".join(line for line in (out.stderr or out.stdout).strip().splitlines()[-4:])
        raise SubjectUnavailable(name, f"not installable here: pip {' '.join(args[:3])}... failed: {tail}")


def _installed_version(python: Path, distribution: str) -> str:
    out = subprocess.run(
        [str(python), "-c", f"import importlib.metadata as m; print(m.version({distribution!r}))"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return out.stdout.strip()


def ensure_env(name: str, version: str) -> Path:
    """The python of a ready environment holding exactly `name==version`; built on first use, then reused."""
    peer = _peer(name)
    want = requirements(peer, version)
    target = env_dir(name, version)
    marker = _read_marker(target)
    if marker is not None and marker.get("requirements") == want:
        return target / "bin" / "python"
    try:
        envs_root().mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SubjectUnavailable(name, f"cannot create {envs_root()}: {exc}") from exc
    with open(envs_root() / f".{name}-{version}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        marker = _read_marker(target)
        if marker is not None and marker.get("requirements") == want:
            return target / "bin" / "python"
        if target.exists():
            shutil.rmtree(target)
        made = subprocess.run([sys.executable, "-m", "venv", str(target)], capture_output=True, text=True)
        if made.returncode != 0:
            raise SubjectUnavailable(name, f"python -m venv failed: {made.stderr.strip()[-300:]}")
        python = target / "bin" / "python"
        try:
            # --no-compile: pip would byte-compile every installed module (toktier 0.3.0: 45 s of CPU against
            # 18 s without); Python compiles the few a peer imports when it first imports them.
            _run_pip(python, ["install", "--no-compile", *want], name)
            got = _installed_version(python, peer.distribution)
            if got != version:
                raise SubjectUnavailable(name, f"asked for {version}, pip installed {got or 'nothing'}")
        except SubjectUnavailable:
            shutil.rmtree(target, ignore_errors=True)  # never leave a half-built environment behind
            raise
        freeze = subprocess.run(
            [str(python), "-m", "pip", "freeze", "--disable-pip-version-check"], capture_output=True, text=True
        ).stdout.split()
        tmp = target / (MARKER + ".tmp")
        tmp.write_text(json.dumps({"peer": name, "version": version, "requirements": want, "freeze": freeze}, indent=1))
        os.replace(tmp, target / MARKER)
        return python


def env_freeze(name: str, version: str) -> list[str]:
    """The `pip freeze` of a built peer environment (recorded with results)."""
    marker = _read_marker(env_dir(name, version)) or {}
    return list(marker.get("freeze", []))
