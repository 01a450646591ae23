"""A PyPI peer as a subject: its own environment, one server process, whole, session and chunked encodes.

`PeerSubject` resolves the version (asked for, else newest released), builds or reuses the environment, starts
one server process and loads the suite's digest-checked tokenizer file into it. Each adapter module subclasses
it to say how the peer loads a tokenizer and which paths it offers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from delta_suite.subjects.envs import ensure_env, resolve_version
from delta_suite.subjects.peer_client import PeerProcess, config_file, staged_tokenizer_file
from delta_suite.subjects.protocol import SubjectUnavailable

if TYPE_CHECKING:
    from delta_suite.frozen.loader import FrozenTokenizer


class PeerSession:
    """One session in the peer: every call sends the whole grown text and gets all of its IDs; `close()` ends it.

    Usable as a context manager. A peer may serve each session in a process of its own (fastokens does).
    """

    def __init__(self, peer: PeerProcess, *, in_process: bool = False) -> None:
        self._peer = peer
        self.sid = peer.request({"op": "session_open", **({"in_process": True} if in_process else {})})["sid"]
        self.last: dict = {}
        self.closed = False

    def encode(self, text: str) -> list[int]:
        self.last = self._peer.request({"op": "session_encode", "sid": self.sid, "text": text})
        return self.last["ids"]

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._peer.request({"op": "session_close", "sid": self.sid})

    def __enter__(self) -> PeerSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class PeerSubject:
    """A PyPI peer bound to one tokenizer, served by one process of its own environment."""

    peer_name = ""
    offers_session = False
    offers_chunked = False

    def __init__(self, tok: FrozenTokenizer, version: str | None = None) -> None:
        self.tok = tok
        self.name = self.peer_name
        self.version = resolve_version(self.peer_name, version)
        python = ensure_env(self.peer_name, self.version)
        self.peer = PeerProcess(self.peer_name, python, self.load_request(tok))
        self.info = self.peer.info
        if self.offers_session:
            self.session = self._session
        if self.offers_chunked:
            self.encode_chunked = self._encode_chunked

    def load_request(self, tok: FrozenTokenizer) -> dict:
        """What the server's `load` needs: by default the tokenizer.json (and config) paths."""
        cfg = config_file(tok)
        return {"tokenizer_json": str(staged_tokenizer_file(tok)), "config_json": str(cfg) if cfg else None}

    def encode(self, text: str) -> list[int]:
        """The peer's whole encode of `text` (no post-processing)."""
        return self.peer.request({"op": "encode", "text": text})["ids"]

    def encode_many(self, texts: list[str]) -> list[list[int]]:
        """The peer's whole encodes of many texts, in order, in one request."""
        return self.peer.request({"op": "encode_many", "texts": texts})["rows"]

    def _session(self) -> PeerSession:
        return PeerSession(self.peer)

    def _encode_chunked(self, text: str, chunks: int | None = None) -> list[int]:
        self.last_chunked = self.peer.request({"op": "chunked", "text": text, "chunks": chunks})
        return self.last_chunked["ids"]

    def close(self) -> None:
        self.peer.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name}=={self.version}, tokenizer={self.tok.name})"


def unavailable(name: str, exc: BaseException) -> SubjectUnavailable:
    """Wrap an unexpected start-up failure as SubjectUnavailable with its reason."""
    return SubjectUnavailable(name, f"{type(exc).__name__}: {exc}")
