"""The suite's side of a peer process: start `peer_server.py` in the peer's environment and talk JSON lines.

One `PeerProcess` is one long-lived process, as a serving engine runs one tokenizer process: every call of a
session goes to the same process in order. The tokenizer files handed to a peer are the suite's own
digest-checked files (`staged_tokenizer_file`), never a copy the peer fetched itself.
"""

from __future__ import annotations

import atexit
import json
import subprocess
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from delta_suite.frozen.cache import tokenizers_dir
from delta_suite.frozen.digests import sha256_file
from delta_suite.frozen.user_table import user_entry
from delta_suite.subjects.envs import envs_root
from delta_suite.subjects.protocol import SubjectUnavailable

if TYPE_CHECKING:
    from delta_suite.frozen.loader import FrozenTokenizer

SERVER = Path(__file__).resolve().with_name("peer_server.py")
_LIVE: list[PeerProcess] = []


def staged_tokenizer_file(tok: FrozenTokenizer) -> Path:
    """A tokenizer.json whose SHA-256 equals `tok.sha256`: the provisioned file, else a staged serialization.

    For a provisioned registry row this is the cached file itself (re-hashed here). A tokenizer loaded from a
    synthetic file is written out from the reference object into `$DELTA_HOME/subject-envs/staged/`.
    """
    if tok.source_path is not None and sha256_file(Path(tok.source_path)) == tok.sha256:
        return Path(tok.source_path)  # a user's file, as the user named it
    provisioned = tokenizers_dir() / tok.name / "tokenizer.json"
    if provisioned.is_file() and sha256_file(provisioned) == tok.sha256:
        return provisioned
    staged = envs_root() / "staged" / f"{tok.sha256}.tokenizer.json"
    if not staged.is_file():
        staged.parent.mkdir(parents=True, exist_ok=True)
        tmp = staged.with_suffix(".tmp")
        tmp.write_text(tok.tokenizer.to_str(), encoding="utf-8")
        tmp.replace(staged)
    return staged


def config_file(tok: FrozenTokenizer) -> Path | None:
    """The provisioned tokenizer_config.json of `tok` (a user file's: the one its folder holds), if any."""
    entry = user_entry(tok.name) if tok.is_user_file else None
    if entry is not None:
        return Path(entry.config_path) if entry.config_path else None
    path = tokenizers_dir() / tok.name / "tokenizer_config.json"
    return path if path.is_file() else None


class PeerError(RuntimeError):
    """The peer answered a request with an error (its exception type and message)."""


class PeerProcess:
    """A running `peer_server.py` with one adapter loaded; requests are answered in order."""

    def __init__(self, name: str, python: Path, load: dict, *, timeout_s: float = 900.0) -> None:
        self.name = name
        self.last_server_seconds: float | None = None
        log_dir = envs_root() / "logs"
        log_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = log_dir / f"{name}-{threading.get_ident()}-{id(self)}.log"
        self._log = open(self.log_path, "w")  # noqa: SIM115 - lives as long as the process
        self._proc = subprocess.Popen(
            [str(python), "-u", str(SERVER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
            encoding="utf-8",
            bufsize=1,
        )
        self._lock = threading.Lock()
        self.timeout_s = timeout_s
        _LIVE.append(self)
        try:
            self.info = self.request({"op": "load", "adapter": name, **load})["info"]
        except PeerError as exc:
            self.close()
            raise SubjectUnavailable(name, f"the peer could not load the tokenizer: {exc}") from exc

    def request(self, req: dict) -> dict:
        """Send one request and wait for its answer; PeerError if the peer answered with an error."""
        with self._lock:
            if self._proc.poll() is not None:
                code = self._proc.returncode
                raise SubjectUnavailable(self.name, f"peer process exited ({code}); log {self.log_path}")
            assert self._proc.stdin is not None and self._proc.stdout is not None
            self._proc.stdin.write(json.dumps(req) + "\n")
            self._proc.stdin.flush()
            line = self._proc.stdout.readline()
        if not line:
            raise SubjectUnavailable(self.name, f"peer process died during {req.get('op')}; log {self.log_path}")
        answer = json.loads(line)
        self.last_server_seconds = answer.get("server_seconds")  # the peer's own time for the call, transport excluded
        if not answer.get("ok"):
            raise PeerError(f"{answer.get('error')}: {answer.get('message')}")
        return answer

    def close(self) -> None:
        if self._proc.poll() is None:
            try:
                assert self._proc.stdin is not None
                self._proc.stdin.close()
                self._proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self._proc.kill()
                self._proc.wait()
        self._log.close()
        if self.log_path.is_file() and self.log_path.stat().st_size == 0:
            self.log_path.unlink()  # keep only logs that say something
        if self in _LIVE:
            _LIVE.remove(self)


@atexit.register
def _close_all() -> None:
    for peer in list(_LIVE):
        peer.close()
