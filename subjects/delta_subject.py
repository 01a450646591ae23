"""The default subject: the suite's own minimal implementation (delta.session.Session, delta.cuts.encode_chunked).

Its whole encode is the reference's (the minimal implementation adds no encoder of its own); its session path is
the repairing `Session`, and its chunked path the planned cuts. Both are imported lazily so the protocol can be
used while those modules change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from delta_suite.delta.cuts import encode_chunked
from delta_suite.delta.session import Session
from delta_suite.ledger.records import suite_version
from delta_suite.spec.reference import reference_encode

if TYPE_CHECKING:
    from delta_suite.frozen.loader import FrozenTokenizer


class DeltaSubject:
    """The minimal implementation bound to one tokenizer."""
    name = "delta"

    def __init__(self, tok: FrozenTokenizer, version: str | None = None) -> None:
        self.tok = tok
        self.version = version or suite_version()

    def encode(self, text: str) -> list[int]:
        return reference_encode(self.tok, text)

    def session(self):
        """A repairing session (`delta.session.Session`): every call takes the whole grown text."""
        return Session(self.tok)

    def encode_chunked(self, text: str, chunks: int | None = None) -> list[int]:
        """IDs by encoding disjoint chunks at planned safe cuts (`delta.cuts.encode_chunked`)."""
        return encode_chunked(self.tok, text, chunks)
