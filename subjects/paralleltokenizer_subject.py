"""paralleltokenizer (PyPI) as a subject: LoPT's overlap-and-stitch predecessor, joined by longest common ID run.

It cuts the text into `chunk_size` pieces that reach `overlap_length` (512) characters into the next, encodes
each with a transformers tokenizer built from the suite's tokenizer.json, and stitches neighbours at the longest
common run of IDs (difflib). Its package declares no dependencies; its environment adds numpy, torch,
transformers and sentencepiece (see `subjects.envs.PEERS`).
"""

from __future__ import annotations

from delta_suite.subjects.pypi_peer import PeerSubject


class ParallelTokenizerSubject(PeerSubject):
    """paralleltokenizer bound to one tokenizer.json; `encode_chunked(text, chunks)` sets chunk_size = len/chunks."""

    peer_name = "paralleltokenizer"
    offers_chunked = True

    def encode_chunked_sized(self, text: str, chunk_size: int, overlap: int = 512) -> list[int]:
        """The stitched IDs with an explicit chunk size and overlap (characters)."""
        req = {"op": "chunked", "text": text, "chunks": None, "chunk_size": chunk_size, "overlap": overlap}
        self.last_chunked = self.peer.request(req)
        return self.last_chunked["ids"]
