"""Peer environments: each PyPI peer installed on demand into a cached virtual environment of its own.

A peer's pins never touch the suite's own environment: `ensure_env(peer, version)` creates `$DELTA_HOME/subject-
envs/NAME-VERSION` and installs the peer (plus the imports it needs but does not declare) with uv where it is
installed (beside this interpreter, as `./run` installs it, or on PATH; `DELTA_PEER_INSTALLER=pip` forces pip), else
with `python -m venv` and pip; it checks that the installed version is the one asked for, and writes a marker last,
so a half-built environment is never taken for a ready one. Creation is serialized by a lock file, so two processes
that need the same peer build it once. A peer that cannot be installed raises `SubjectUnavailable` with the
installer's own last words as the reason.
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

from delta_suite.frozen.cache import cache_root
from delta_suite.subjects.protocol import SubjectUnavailable

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


def uv_command() -> str | None:
    """The uv that builds peer environments: beside this interpreter (`./run` installs it into the suite's
    environment), else on PATH; None (pip builds them) when there is none or `DELTA_PEER_INSTALLER=pip`. A fresh
    toktier environment: about 4 s with uv against 20 to 40 s with pip."""
    if os.environ.get("DELTA_PEER_INSTALLER") == "pip":
        return None
    beside = Path(sys.executable).parent / "uv"
    return str(beside) if beside.is_file() else shutil.which("uv")


def _installer(python: Path, uv: str | None) -> list[str]:
    """The command prefix of a pip-style subcommand (install, freeze) run on the environment of `python`."""
    return [uv, "pip"] if uv else [str(python), "-m", "pip", "--disable-pip-version-check"]


def _run_pip(python: Path, args: list[str], name: str, uv: str | None = None) -> None:
    tool = "uv pip" if uv else "pip"
    try:
        out = subprocess.run(
            [*_installer(python, uv), "-q", *args, *(["--python", str(python)] if uv else [])],
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired as exc:
        raise SubjectUnavailable(name, f"{tool} timed out after {INSTALL_TIMEOUT_S} s") from exc
    if out.returncode != 0:
        tail = " | ".join(line for line in (out.stderr or out.stdout).strip().splitlines()[-4:])
        raise SubjectUnavailable(name, f"not installable here: {tool} {' '.join(args[:3])}... failed: {tail}")


def _make_venv(target: Path, name: str, uv: str | None) -> None:
    """An empty virtual environment at `target` on this interpreter (uv's has no pip: uv installs into it)."""
    command = [uv, "venv", "-q", "--python", sys.executable, str(target)] if uv else [sys.executable, "-m", "venv",
                                                                                       str(target)]
    made = subprocess.run(command, capture_output=True, text=True)
    if made.returncode != 0:
        raise SubjectUnavailable(name, f"{' '.join(command[:2])} failed: {made.stderr.strip()[-300:]}")


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
        uv = uv_command()
        python = target / "bin" / "python"
        try:
            _make_venv(target, name, uv)
            # pip's --no-compile (uv compiles nothing by default): byte-compiling every installed module costs
            # toktier 0.3.0 45 s of CPU against 18 s without; Python compiles the few a peer imports when it first
            # imports them.
            _run_pip(python, ["install", *([] if uv else ["--no-compile"]), *want], name, uv)
            got = _installed_version(python, peer.distribution)
            if got != version:
                raise SubjectUnavailable(name, f"asked for {version}, the installer gave {got or 'nothing'}")
        except SubjectUnavailable:
            shutil.rmtree(target, ignore_errors=True)  # never leave a half-built environment behind
            raise
        freeze = subprocess.run(
            [*_installer(python, uv), "freeze", *(["--python", str(python)] if uv else [])],
            capture_output=True, text=True,
        ).stdout.split()
        tmp = target / (MARKER + ".tmp")
        tmp.write_text(json.dumps({"peer": name, "version": version, "requirements": want, "freeze": freeze}, indent=1))
        os.replace(tmp, target / MARKER)
        return python


def env_freeze(name: str, version: str) -> list[str]:
    """The `pip freeze` of a built peer environment (recorded with results)."""
    marker = _read_marker(env_dir(name, version)) or {}
    return list(marker.get("freeze", []))
