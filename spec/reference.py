"""The reference oracle: a whole Hugging Face `tokenizers` encode, without and then with post-processing.

Every comparison in the suite goes through `reference_encode`. Sequence-level post-processing (for example
Llama's beginning-of-text token) is applied once, to an assembled ID sequence, by `post_process`: it adds the
prefix and suffix IDs that the reference's own post-processor puts around a single sequence. A file that truncates
or pads (embedding models' fixed 128 or 512) has both applied there too, in the reference's order (truncation to
max_length less the template's tokens, the template, then padding: `Tokenizer::post_process`); the loaded object
encodes with neither (`frozen.loader.reference_object`), and `reference_encode_full` encodes with the file's own
settings, so the two are compared.
"""

from __future__ import annotations

import json
import operator
import os
import threading
import time
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.metadata import version
from itertools import compress, count, islice
from typing import TYPE_CHECKING

from delta_suite.frozen.errors import InvalidText, SuiteError

if TYPE_CHECKING:
    from delta_suite.frozen.loader import FrozenTokenizer
    from tokenizers import Encoding, Tokenizer

PROBE_TEXT = "probe"


@dataclass
class LibraryMeter:
    """Time and calls this process spent inside the reference library's encode calls, whoever asked: the
    oracle's whole encodes and the minimal implementation's chunk and window encodes alike (every library encode
    of the suite goes through this module). Campaigns and benchmarks read it before and after a piece of work.

    Time is kept in integer nanoseconds, added under a lock: a reader that sums the meter's increments over some
    calls inside a window gets at most the meter's increment over the whole window, exactly (no float rounding,
    no lost update between threads)."""

    nanoseconds: int = 0
    calls: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def seconds(self) -> float:
        return self.nanoseconds / 1e9

    def add(self, since_ns: int) -> None:
        """Count one call that started at `since_ns` (a `time.perf_counter_ns()` reading) and ends now."""
        spent = time.perf_counter_ns() - since_ns
        with self._lock:
            self.nanoseconds += spent
            self.calls += 1


LIBRARY = LibraryMeter()
# a child forked while another thread held the lock would wait on it forever: the child starts with a free lock
os.register_at_fork(after_in_child=lambda: setattr(LIBRARY, "_lock", threading.Lock()))


def reference_version() -> str:
    """The installed `tokenizers` version, recorded in every result."""
    return version("tokenizers")


def check_text(text: str) -> str:
    """Return `text` if it is encodable Unicode; `InvalidText` naming the first lone surrogate otherwise."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidText(
            f"text contains a lone surrogate U+{ord(text[exc.start]):04X} at offset {exc.start}; not valid Unicode"
        ) from exc
    return text


class ReferenceEncodeFailed(SuiteError):
    """The reference library raised while encoding (a file it loads but cannot encode with, such as an unknown token
    missing from the vocabulary): the input's fault, exit 2, never a traceback."""


def encode_failed(tok: FrozenTokenizer, exc: Exception) -> ReferenceEncodeFailed:
    """The error a library exception during an encode of `tok` becomes (its own words kept)."""
    return ReferenceEncodeFailed(f"{tok.name}: the reference library cannot encode with this file: {exc}")


def _encode(tok: FrozenTokenizer, text: str, add_special_tokens: bool = False,
            tokenizer: Tokenizer | None = None) -> Encoding:
    """One library encode of an already checked text (by `tokenizer`, default the loaded object), counted on
    `LIBRARY` (one call, the time it took); a library error is `ReferenceEncodeFailed`."""
    t0 = time.perf_counter_ns()
    try:
        return (tokenizer or tok.tokenizer).encode(text, add_special_tokens=add_special_tokens)
    except SuiteError:
        raise
    except Exception as exc:  # the Rust library raises a bare Exception
        raise encode_failed(tok, exc) from exc
    finally:
        LIBRARY.add(t0)


def reference_encode(tok: FrozenTokenizer, text: str) -> list[int]:
    """The reference IDs of `text`: one whole encode, no post-processing (add_special_tokens=False)."""
    return _encode(tok, check_text(text)).ids


def reference_encode_with_offsets(tok: FrozenTokenizer, text: str) -> tuple[list[int], list[tuple[int, int]]]:
    """Reference IDs with each token's character span in the original (un-normalized) text."""
    enc = _encode(tok, check_text(text))
    return enc.ids, list(map(tuple, enc.offsets))


def reference_encode_batch(tok: FrozenTokenizer, texts: list[str]) -> list[list[int]]:
    """Reference IDs of many texts at once (the reference's own batch path), no post-processing; a library error is
    `ReferenceEncodeFailed`."""
    texts = [check_text(t) for t in texts]
    t0 = time.perf_counter_ns()
    try:
        encodings = tok.tokenizer.encode_batch(texts, add_special_tokens=False)
    except SuiteError:
        raise
    except Exception as exc:  # the Rust library raises a bare Exception
        raise encode_failed(tok, exc) from exc
    finally:
        LIBRARY.add(t0)
    return [e.ids for e in encodings]


def reference_ids_batch(tok: FrozenTokenizer, texts: list[str]) -> list[list[int]]:
    """The IDs of `reference_encode_batch` through the library's IDs-only batch path (`encode_batch_fast`, which
    skips building offsets) where the installed library has it; the same IDs either way."""
    return library_ids_batch(tok.tokenizer, texts)


def library_ids_batch(tokenizer: Tokenizer, texts: list[str]) -> list[list[int]]:
    """`reference_ids_batch` on a given library object (the whole-word family's chunk encoder is a copy of the
    reference object with its prefix stage changed, `spec.free_pair_cut.chunk_encoder`), metered the same way."""
    fast = getattr(tokenizer, "encode_batch_fast", None)
    texts = [check_text(t) for t in texts]
    t0 = time.perf_counter_ns()
    try:
        encodings = (fast or tokenizer.encode_batch)(texts, add_special_tokens=False)
    finally:
        LIBRARY.add(t0)
    return [e.ids for e in encodings]


@lru_cache(maxsize=64)
def _template(tok: FrozenTokenizer) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The (prefix, suffix) IDs the post-processor places around one sequence, found by encoding a probe."""
    bare = tok.tokenizer.encode(PROBE_TEXT, add_special_tokens=False).ids
    full = tok.tokenizer.encode(PROBE_TEXT, add_special_tokens=True).ids
    for start in range(len(full) - len(bare) + 1):
        if full[start : start + len(bare)] == bare:
            return tuple(full[:start]), tuple(full[start + len(bare) :])
    raise RuntimeError(f"{tok.name}: post-processor rewrites the sequence itself; cannot apply it once")


def post_process(tok: FrozenTokenizer, ids: list[int]) -> list[int]:
    """Apply sequence-level post-processing once to an assembled sequence, as a whole encode would: the file's
    truncation (to max_length less the template's tokens, from its direction's end), the post-processor's
    template, then its padding (to the fixed length or the sequence's own, rounded up to pad_to_multiple_of, on
    its direction's side)."""
    prefix, suffix = _template(tok)
    settings = tok.admission_inputs.sequence
    truncation, padding = settings.get("truncation"), settings.get("padding")
    if truncation:  # the reference subtracts the template's tokens; a limit below them truncates nothing (measured)
        keep = int(truncation["max_length"]) - len(prefix) - len(suffix)
        if 0 <= keep < len(ids):
            ids = ids[len(ids) - keep:] if str(truncation.get("direction", "Right")).lower() == "left" else ids[:keep]
    out = [*prefix, *ids, *suffix]
    if padding:
        strategy = padding.get("strategy")
        target = int(strategy["Fixed"]) if isinstance(strategy, dict) and "Fixed" in strategy else len(out)
        multiple = padding.get("pad_to_multiple_of") or 0
        if multiple and target % multiple:
            target += multiple - target % multiple
        pads = [int(padding.get("pad_id", 0))] * max(0, target - len(out))
        out = pads + out if str(padding.get("direction", "Right")).lower() == "left" else out + pads
    return out


@lru_cache(maxsize=16)
def _full_object(tok: FrozenTokenizer) -> Tokenizer:
    """The reference object with the file's own truncation and padding (the loaded one has neither), built by the
    library's own deserializer."""
    if not tok.admission_inputs.sequence:
        return tok.tokenizer
    from tokenizers import Tokenizer as Library

    config = json.loads(tok.tokenizer.to_str())
    config.update(tok.admission_inputs.sequence)
    return Library.from_str(json.dumps(config))


def reference_encode_full(tok: FrozenTokenizer, text: str) -> list[int]:
    """The reference IDs with post-processing (add_special_tokens=True) and the file's truncation and padding, for
    checking `post_process`."""
    return _encode(tok, check_text(text), add_special_tokens=True, tokenizer=_full_object(tok)).ids


def reference_encode_units(tok: FrozenTokenizer, text: str) -> tuple[list[int], list[tuple[int, ...]]]:
    """Reference IDs and the same IDs grouped into units, one tuple per pre-token (the encoding's word indices).

    The cut proposition holds at this level too: the units of S equal the units of its pieces, concatenated.
    Special-token strings are units of their own."""
    enc = _encode(tok, check_text(text))
    units: list[tuple[int, ...]] = []
    current: list[int] = []
    last = object()
    for token_id, word in zip(enc.ids, enc.word_ids, strict=True):
        if current and word != last:
            units.append(tuple(current))
            current = []
        current.append(token_id)
        last = word
    if current:
        units.append(tuple(current))
    return enc.ids, units


def unit_lengths(word_ids: list[int | None]) -> list[int]:
    """The number of tokens in each unit (run of equal word indices), in order; the units are the IDs cut at
    these lengths, so two encodings have equal units iff their IDs and their unit lengths are equal. Computed
    with C-level iteration (no Python loop per token): the differential checks call it on every piece."""
    n = len(word_ids)
    if n == 0:
        return []
    ends = list(compress(count(1), map(operator.ne, word_ids, islice(word_ids, 1, None))))
    ends.append(n)
    return list(map(operator.sub, ends, [0, *ends[:-1]]))


def units_from_lengths(ids: list[int], lengths: list[int]) -> list[tuple[int, ...]]:
    """The units as tuples of IDs, from the IDs and `unit_lengths` (for reports; equal to the units of
    `reference_encode_units`)."""
    units, at = [], 0
    for length in lengths:
        units.append(tuple(ids[at : at + length]))
        at += length
    return units


def reference_encode_unit_lengths(tok: FrozenTokenizer, text: str) -> tuple[list[int], list[int]]:
    """Reference IDs and their `unit_lengths` (the units of `reference_encode_units` in compact form)."""
    enc = _encode(tok, check_text(text))
    return enc.ids, unit_lengths(enc.word_ids)
