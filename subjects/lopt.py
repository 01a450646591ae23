"""LoPT's overlap-and-join encode, written from the description in the paper's supplement (S5), as a subject.

The input is cut into 32 equal chunks; each chunk reaches `overlap` (512) characters into the next. Every chunk
is encoded by the reference with character offsets (shifted to the whole text). Neighbours are joined left to
right where their tokens in the overlap coincide: the longest run of consecutive tokens that agree in both
streams (by character span only, as published; `compare_ids=True` also requires equal IDs) is found, a seam
is accepted when that run has at least two tokens, and the output continues with the right chunk's tokens after
the run. If any seam is refused the chunk length is doubled and the whole input encoded again, at most five
times; then the input is encoded serially. The span-only rule is the published one and is NOT exact: two chunks
that divide the bytes of one character differently give tokens with equal spans and different IDs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from delta_suite.spec.reference import check_text, reference_encode

if TYPE_CHECKING:
    from delta_suite.frozen.loader import FrozenTokenizer

CHUNKS = 32
OVERLAP = 512
MIN_RUN = 2
MAX_DOUBLINGS = 5

Token = tuple[int, int, int]  # (id, start, end) in characters of the whole text


@dataclass(frozen=True)
class LoptParams:
    """The knobs of the published rule; defaults are the paper's reading (32 chunks, 512 overlap, 2 tokens, 5)."""

    chunks: int = CHUNKS
    overlap: int = OVERLAP
    min_run: int = MIN_RUN
    max_doublings: int = MAX_DOUBLINGS
    compare_ids: bool = False


def _encode_chunk(tok: FrozenTokenizer, text: str, start: int, end: int) -> list[Token]:
    enc = tok.tokenizer.encode(text[start:end], add_special_tokens=False)
    return [(i, start + a, start + b) for i, (a, b) in zip(enc.ids, enc.offsets, strict=False)]


def _longest_run(left: list[Token], right: list[Token], lo: int, hi: int, compare_ids: bool) -> tuple[int, int, int]:
    """The longest run of consecutive tokens equal in both streams inside [lo, hi): (left end, right end, length).

    Ends are indices of the run's last token; ties go to the run found first (leftmost in the left stream).
    """

    def key(t: Token) -> tuple:
        return (t[1], t[2], t[0]) if compare_ids else (t[1], t[2])

    inside_l = [i for i, t in enumerate(left) if lo <= t[1] and t[2] <= hi and t[2] > t[1]]
    inside_r = [j for j, t in enumerate(right) if lo <= t[1] and t[2] <= hi and t[2] > t[1]]
    best = (-1, -1, 0)
    prev: dict[tuple[int, int], int] = {}  # (i, j) -> run length ending there
    r_by_key: dict[tuple, list[int]] = {}
    for j in inside_r:
        r_by_key.setdefault(key(right[j]), []).append(j)
    for i in inside_l:
        for j in r_by_key.get(key(left[i]), ()):
            run = prev.get((i - 1, j - 1), 0) + 1
            prev[(i, j)] = run
            if run > best[2]:
                best = (i, j, run)
    return best


def lopt_encode(tok: FrozenTokenizer, text: str, params: LoptParams = LoptParams()) -> tuple[list[int], dict]:
    """LoPT's joined IDs of `text` and how they were made ({"path", "attempts", "chunk_len", "seams"})."""
    check_text(text)
    n = len(text)
    chunk_len = -(-n // params.chunks) if n else 0
    for attempt in range(params.max_doublings + 1):
        if chunk_len <= 0 or chunk_len >= n:
            break
        starts = list(range(0, n, chunk_len))
        joined = _encode_chunk(tok, text, 0, min(n, chunk_len + params.overlap))
        ok, seams = True, []
        for s in starts[1:]:
            right = _encode_chunk(tok, text, s, min(n, s + chunk_len + params.overlap))
            i, j, run = _longest_run(joined, right, s, min(n, s + params.overlap), params.compare_ids)
            if run < params.min_run:
                ok = False
                break
            seams.append({"at": s, "run": run, "matched_chars": joined[i][2] - joined[i - run + 1][1]})
            joined = joined[: i + 1] + right[j + 1 :]
        if ok:
            facts = {"path": "joined", "attempts": attempt, "chunk_len": chunk_len, "seams": seams}
            return [t[0] for t in joined], facts
        chunk_len *= 2
    return reference_encode(tok, text), {"path": "serial", "attempts": params.max_doublings + 1, "chunk_len": chunk_len}


class LoptSubject:
    """LoPT as a subject: `encode` and `encode_chunked` both run the join (position-only, or with IDs)."""

    def __init__(self, tok: FrozenTokenizer, version: str | None = None, *, compare_ids: bool = False) -> None:
        self.tok = tok
        self.name = "lopt-ids" if compare_ids else "lopt"
        self.version = version or "s5"
        self.params = LoptParams(compare_ids=compare_ids)
        self.last: dict = {}

    def encode(self, text: str) -> list[int]:
        ids, self.last = lopt_encode(self.tok, text, self.params)
        return ids

    def encode_chunked(self, text: str, chunks: int | None = None) -> list[int]:
        params = self.params if not chunks else LoptParams(chunks=chunks, compare_ids=self.params.compare_ids)
        ids, self.last = lopt_encode(self.tok, text, params)
        return ids
