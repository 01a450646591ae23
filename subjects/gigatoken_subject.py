"""gigatoken (PyPI) as a subject: whole encodes of the suite's tokenizer.json by its SIMD pre-tokenizer and cache."""

from __future__ import annotations

from delta_suite.subjects.pypi_peer import PeerSubject


class GigatokenSubject(PeerSubject):
    """gigatoken bound to one tokenizer.json (`gigatoken.Tokenizer(path)`); whole encodes and batches."""

    peer_name = "gigatoken"

    def encode_fresh(self, text: str) -> list[int]:
        """The encode of `text` by a newly constructed gigatoken object (same process)."""
        return self.peer.request({"op": "encode_fresh", "text": text})["ids"]
