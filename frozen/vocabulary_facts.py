"""Facts about a BPE model's vocabulary and merges that the whole-word family's premises read (`spec.whole_word`).

Computed once per file digest with the loader's other facts (`frozen.facts_cache`), and only for files that have
no ByteLevel stage (the byte-level families never read them). Each fact is a plain reading of the model section:
- `inner_pairs`: every pair of characters that stand next to each other inside a vocabulary token, byte-fallback
  tokens (`<0xNN>`) left out, as sorted integers `(ord(left) << 21) | ord(right)`;
- `single_chars`: the code points that are a vocabulary token on their own, sorted;
- `byte_tokens`: the byte values b whose fallback token `<0xNN>` is in the vocabulary, sorted;
- `merge_taking_byte_token`, `merge_making_byte_token`, `merge_taking_unk`: the first merge (as "left right")
  that takes a byte-fallback token as a side, produces the string of one, or takes the unknown token; None when
  no merge does;
- `unk_in_vocab`: whether the model's unk_token is a vocabulary token;
- `longest_token_chars`: the longest vocabulary token in code points;
- `first_merge`: the first merge's two sides (None for an empty or unreadable list);
- `duplicate_id`: the first ID two vocabulary tokens share, as "ID: first, second" (None when every token has its
  own ID): the reference then reads the ID back as one of them.
"""

from __future__ import annotations

import re

BYTE_TOKEN = re.compile(r"<0x([0-9A-F]{2})>")
PAIR_SHIFT = 21  # code points fit in 21 bits


def pair_key(left: str, right: str) -> int:
    """The integer a character pair is stored as in `inner_pairs`."""
    return (ord(left) << PAIR_SHIFT) | ord(right)


def is_byte_token(token: str) -> bool:
    """Whether `token` is a byte-fallback token's string (`<0x41>`: upper-case hex, as the reference writes it)."""
    return BYTE_TOKEN.fullmatch(token) is not None


def merge_sides(merge: object) -> tuple[str, str] | None:
    """The two sides of a merges-list entry ("a b" or ["a", "b"]); None for an entry of neither form."""
    if isinstance(merge, str):
        parts = merge.split(" ")
        return (parts[0], parts[1]) if len(parts) == 2 else None
    if isinstance(merge, list) and len(merge) == 2 and all(isinstance(side, str) for side in merge):
        return merge[0], merge[1]
    return None


def _first_merge(merges: list, unk: object) -> dict[str, str | None]:
    """The first merge that takes a byte token, makes one, or takes the unknown token (each None if none does)."""
    found: dict[str, str | None] = {"merge_taking_byte_token": None, "merge_making_byte_token": None,
                                    "merge_taking_unk": None}
    for merge in merges:
        sides = merge_sides(merge)
        if sides is None:
            continue
        left, right = sides
        named = f"{left} {right}"
        if found["merge_taking_byte_token"] is None and (is_byte_token(left) or is_byte_token(right)):
            found["merge_taking_byte_token"] = named
        if found["merge_making_byte_token"] is None and is_byte_token(left + right):
            found["merge_making_byte_token"] = named
        if found["merge_taking_unk"] is None and unk is not None and unk in (left, right):
            found["merge_taking_unk"] = named
    return found


def vocabulary_facts(model: dict) -> dict:
    """The facts of the module docstring for a BPE model section (a vocab dict and a merges list)."""
    vocab = model.get("vocab")
    vocab = vocab if isinstance(vocab, dict) else {}
    merges = model.get("merges")
    merges = merges if isinstance(merges, list) else []
    pairs: set[int] = set()
    singles: set[int] = set()
    byte_values: set[int] = set()
    longest = 0
    for token in vocab:
        if not isinstance(token, str):
            continue
        matched = BYTE_TOKEN.fullmatch(token)
        if matched is not None:
            byte_values.add(int(matched.group(1), 16))
            continue
        longest = max(longest, len(token))
        if len(token) == 1:
            singles.add(ord(token))
        pairs.update(pair_key(a, b) for a, b in zip(token, token[1:], strict=False))
    unk = model.get("unk_token")
    first = merge_sides(merges[0]) if merges else None
    facts = {"duplicate_id": duplicate_id(vocab)}
    return {"first_merge": list(first) if first else None, "inner_pairs": sorted(pairs),
            "single_chars": sorted(singles), "byte_tokens": sorted(byte_values), **_first_merge(merges, unk),
            "unk_in_vocab": isinstance(unk, str) and unk in vocab, "longest_token_chars": longest, **facts}


def duplicate_id(vocab: dict) -> str | None:
    """The first ID (in vocabulary order) that a second token also has, as "ID: first, second"; None when the
    vocabulary maps its tokens to distinct IDs."""
    seen: dict[object, str] = {}
    for token, token_id in vocab.items():
        key = token_id if isinstance(token_id, int) else repr(token_id)
        if key in seen:
            return f"{token_id}: {seen[key]!r}, {token!r}"
        seen[key] = token
    return None
