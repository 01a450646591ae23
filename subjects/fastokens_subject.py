"""fastokens (PyPI) as a subject: whole encodes on a served object, and sessions replayed in one process.

fastokens reuses work from earlier calls in the same process. A session here is one fastokens object that
receives the whole transcript on every call, in order, with no unrelated call in between, as SGLang drives it;
`encode_fresh` encodes on a newly built object for the contrast the paper draws.

Each session runs in a process of its own, forked from a template that built one object and never encoded
(`peer_server.ForkedSessions`): opening a session costs a fork (about 10 ms) instead of parsing tokenizer.json
again (about 1.8 s for Qwen3). `session_in_process()` builds the session's object in the server process instead,
the slow way, to show that both give the same IDs.
"""

from __future__ import annotations

from delta_suite.subjects.fastokens_releases import SGLANG_PINNED
from delta_suite.subjects.pypi_peer import PeerSession, PeerSubject

__all__ = ["SGLANG_PINNED", "FastokensSubject"]


class FastokensSubject(PeerSubject):
    """fastokens bound to one tokenizer.json."""

    peer_name = "fastokens"
    offers_session = True

    def encode_fresh(self, text: str) -> list[int]:
        """The encode of `text` by a newly constructed fastokens object (in the same process)."""
        return self.peer.request({"op": "encode_fresh", "text": text})["ids"]

    def session_in_process(self) -> PeerSession:
        """A session whose object is built by `Tokenizer.from_file` in the server process (no fork; ~1.8 s to open)."""
        return PeerSession(self.peer, in_process=True)
