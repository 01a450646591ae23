"""Harness self-test faults: plant one known error in a correct ID sequence, which the comparison must detect.

Each planter takes the tokenizer, a correct result (the reference IDs of a text) and a seeded `random.Random`, and
returns a faulty copy, or None when the fault cannot be planted in that result (too short, no two different
neighbours to swap, no pair of tokens whose bytes split another way). The faults are those of the shadow
verifier's injection study: an ID substituted, deleted, duplicated, two neighbours swapped, and a same-length
re-split of the tail (different IDs, same count, same decoded bytes), the subtle one that a length or a decoded
text comparison would miss.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from functools import lru_cache

from delta_suite.frozen.loader import FrozenTokenizer, byte_level_bytes

TAIL_TOKENS = 64
Planter = Callable[[FrozenTokenizer, list[int], random.Random], "list[int] | None"]


def substitute_id(tok: FrozenTokenizer, ids: list[int], rng: random.Random) -> list[int] | None:
    """One ID replaced by a different valid ID."""
    if not ids:
        return None
    i = rng.randrange(len(ids))
    size = tok.tokenizer.get_vocab_size(with_added_tokens=True)
    new = (ids[i] + rng.randrange(1, size)) % size
    return ids[:i] + [new] + ids[i + 1 :]


def delete_id(tok: FrozenTokenizer, ids: list[int], rng: random.Random) -> list[int] | None:
    """One ID removed."""
    if not ids:
        return None
    i = rng.randrange(len(ids))
    return ids[:i] + ids[i + 1 :]


def duplicate_id(tok: FrozenTokenizer, ids: list[int], rng: random.Random) -> list[int] | None:
    """One ID repeated in place."""
    if not ids:
        return None
    i = rng.randrange(len(ids))
    return ids[: i + 1] + ids[i:]


def swap_ids(tok: FrozenTokenizer, ids: list[int], rng: random.Random) -> list[int] | None:
    """Two different neighbouring IDs exchanged."""
    spots = [i for i in range(len(ids) - 1) if ids[i] != ids[i + 1]]
    if not spots:
        return None
    i = rng.choice(spots)
    return ids[:i] + [ids[i + 1], ids[i]] + ids[i + 2 :]


@lru_cache(maxsize=16)
def _byte_vocab(tok: FrozenTokenizer) -> tuple[dict[int, bytes], dict[bytes, int]]:
    """Each byte-level vocabulary entry's bytes, and the inverse (bytes -> ID)."""
    to_bytes: dict[int, bytes] = {}
    for token, token_id in tok.tokenizer.get_vocab(with_added_tokens=False).items():
        if token and (raw := byte_level_bytes(token)) is not None:
            to_bytes[token_id] = raw
    to_id = {raw: token_id for token_id, raw in sorted(to_bytes.items())}
    return to_bytes, to_id


def resplit_tail(tok: FrozenTokenizer, ids: list[int], rng: random.Random) -> list[int] | None:
    """Two neighbouring tokens near the end whose joined bytes split at another point into two vocabulary tokens:
    the same count and the same bytes, different IDs (searched backwards over the last TAIL_TOKENS tokens)."""
    to_bytes, to_id = _byte_vocab(tok)
    for i in range(len(ids) - 2, max(-1, len(ids) - 2 - TAIL_TOKENS), -1):
        a, b = to_bytes.get(ids[i]), to_bytes.get(ids[i + 1])
        if a is None or b is None:
            continue
        joined = a + b
        for k in range(1, len(joined)):
            if k == len(a):
                continue
            left, right = to_id.get(joined[:k]), to_id.get(joined[k:])
            if left is not None and right is not None:
                return ids[:i] + [left, right] + ids[i + 2 :]
    return None


FAULTS: dict[str, Planter] = {
    "substitute_id": substitute_id,
    "delete_id": delete_id,
    "duplicate_id": duplicate_id,
    "swap_ids": swap_ids,
    "resplit_tail": resplit_tail,
}
