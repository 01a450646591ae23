"""The chunk planner and chunked encode: cut a long text only where the cut proposition accepts, encode in parallel.

Plan: tentative cuts at floor(i*N/k) for i = 1..k-1; for each, the highest special-token cut (the edge of a
selected special-token occurrence: a rendered chat's role marker) within `SCAN_BUDGET` (4,096) characters before
it, else a backward scan for an accepted cut over `QUICK_SCAN` (48) characters and then up to `SCAN_BUDGET`; never
a chunk shorter than max(16, min(1024, floor(N/4k))); never cut a text shorter than `MIN_TEXT` (256); a missed
cut leaves its text with the preceding chunk. Default policy for stateless requests (chunks=None): cut only from
`DEFAULT_MIN_CHARS` (131,072) characters, target chunk `TARGET_CHUNK` (65,536), k = min(ceil(N/65,536), 16,
workers).

Encode: the chunks (or the whole text, when no cut is planned) go through the reference library's own batch path
(parallel in Rust; the IDs-only `encode_batch_fast` where the library has it, which skips building offsets) and the
ID rows are concatenated; post-processing, when asked for, is applied once to the assembled sequence. Tokenizers
that are not admitted are encoded whole. A whole-word tokenizer's chunks after the first are encoded by the chunk
encoder of `spec.free_pair_cut` (without a second prefix; a chunk may become two rows there), its full and its
prefix-free rows each in one batch.
"""

from __future__ import annotations

import math
import os
from itertools import chain

from delta_suite.delta.cut_map import CutMap, cut_map
from delta_suite.frozen.loader import FrozenTokenizer
from delta_suite.spec.admission import admission_of
from delta_suite.spec.cut import DEFAULT_CUT_RULES, CutRules
from delta_suite.spec.free_pair_cut import chunked_ids
from delta_suite.spec.reference import check_text, post_process, reference_ids_batch

QUICK_SCAN = 48
SCAN_BUDGET = 4096
MIN_TEXT = 256
DEFAULT_MIN_CHARS = 131_072
TARGET_CHUNK = 65_536
MAX_DEFAULT_CHUNKS = 16


def min_chunk(n: int, k: int) -> int:
    """The smallest chunk the planner allows for a text of n characters in k chunks."""
    return max(16, min(1024, n // (4 * k)))


def default_chunks(n: int, workers: int | None = None) -> int:
    """The stateless policy: 1 below 131,072 characters, else min(ceil(n/65,536), 16, workers)."""
    if n < DEFAULT_MIN_CHARS:
        return 1
    w = workers if workers is not None else (os.cpu_count() or 1)
    return max(1, min(math.ceil(n / TARGET_CHUNK), MAX_DEFAULT_CHUNKS, w))


def _scan(cmap: CutMap, hi: int, lo: int) -> int | None:
    """The highest accepted cut in [lo, hi] (within the map's range), scanning down from hi."""
    for b in reversed(cmap.candidates(lo, hi)):
        if cmap.accepts(b):  # a pending NFC offset is judged here
            return b
    return None


def _marker_cut(cmap: CutMap) -> int | None:
    """The highest cut of the map's range that the special-token rule accepts (a role marker's edge), or None."""
    special = cmap.specials()
    return special[-1] if special else None


def plan_cuts(tok: FrozenTokenizer, text: str, chunks: int, rules: CutRules = DEFAULT_CUT_RULES,
              fault: str | None = None) -> list[int]:
    """Cut offsets (increasing) for about `chunks` chunks; every cut is accepted under `rules` (by the array
    evaluation `delta.cut_map`, equal offset by offset to `spec.cut.is_safe_cut`), no chunk is shorter than
    `min_chunk`, texts under 256 characters and inadmissible tokenizers get none. Within each target's scan range
    a special-token cut (a role marker's edge) is preferred to a transition cut. `fault`: a broken variant of the
    array evaluation (controls only)."""
    n = len(text)
    if chunks <= 1 or n < MIN_TEXT or not admission_of(tok).admitted:
        return []
    floor = min_chunk(n, chunks)
    cuts: list[int] = []
    prev = 0
    for i in range(1, chunks):
        target = i * n // chunks
        lowest = prev + floor
        if target < lowest or n - lowest < floor:
            continue
        cmap = cut_map(tok, text, rules, fault, lo=max(lowest, target - SCAN_BUDGET), hi=target)  # the scan range
        found = _marker_cut(cmap)
        if found is None:
            found = _scan(cmap, target, max(lowest, target - QUICK_SCAN))
        if found is None and target - QUICK_SCAN > lowest:
            found = _scan(cmap, target - QUICK_SCAN - 1, max(lowest, target - SCAN_BUDGET))
        if found is None or n - found < floor:
            continue  # missed: this stretch stays with the preceding chunk
        cuts.append(found)
        prev = found
    return cuts


def split_at(text: str, cuts: list[int]) -> list[str]:
    """The chunks of `text` between consecutive cuts."""
    bounds = [0, *cuts, len(text)]
    return [text[lo:hi] for lo, hi in zip(bounds, bounds[1:], strict=False)]


def encode_rows(tok: FrozenTokenizer, chunks: list[str]) -> list[list[int]]:
    """The IDs of each chunk, encoded in parallel by the library's batch path (IDs only where it can: the same
    IDs as `reference_encode_batch`, without the offsets the chunked encode does not return)."""
    return reference_ids_batch(tok, chunks)


def encode_chunked(
    tok: FrozenTokenizer,
    text: str,
    chunks: int | None = None,
    workers: int | None = None,
    rules: CutRules = DEFAULT_CUT_RULES,
    add_special_tokens: bool = False,
    fault: str | None = None,
) -> list[int]:
    """The reference IDs of `text`, computed chunk by chunk at planned cuts (equal to one whole encode when the
    cut proposition holds); post-processing is applied once when `add_special_tokens`. `fault`: a broken
    variant of the whole-text cut evaluation (controls only)."""
    ids, _ = encode_planned(tok, text, chunks, workers, rules, fault)
    return post_process(tok, ids) if add_special_tokens else ids


def encode_planned(
    tok: FrozenTokenizer,
    text: str,
    chunks: int | None = None,
    workers: int | None = None,
    rules: CutRules = DEFAULT_CUT_RULES,
    fault: str | None = None,
) -> tuple[list[int], list[int]]:
    """`encode_chunked` without post-processing, and the cuts it used (empty: the text went whole)."""
    check_text(text)
    k = chunks if chunks is not None else default_chunks(len(text), workers)
    admission = admission_of(tok)
    cuts = plan_cuts(tok, text, k, rules, fault) if admission.admitted else []
    if admission.own_rule and cuts:
        return chunked_ids(tok, text, cuts, rules.chunk_prefix), cuts
    return list(chain.from_iterable(encode_rows(tok, split_at(text, cuts)))), cuts  # no cut: one row, whole
