"""fastokens (PyPI) as a subject: whole encodes on a served object, and sessions replayed in one process.

fastokens reuses work from earlier calls in the same process. A session here is one fastokens object that
receives the whole transcript on every call, in order, with no unrelated call in between, as SGLang drives it;
`encode_fresh` encodes on a newly built object for the contrast the paper draws.
"""

from __future__ import annotations

from subjects.pypi_peer import PeerSubject

SGLANG_PINNED = "0.1.2"  # the version SGLang v0.5.19 pins


class FastokensSubject(PeerSubject):
    """fastokens bound to one tokenizer.json."""

    peer_name = "fastokens"
    offers_session = True

    def encode_fresh(self, text: str) -> list[int]:
        """The encode of `text` by a newly constructed fastokens object (in the same process)."""
        return self.peer.request({"op": "encode_fresh", "text": text})["ids"]
