"""One tokenization session: stored text, IDs and spans, extended by repair when the new text appends to the old.

`Session.encode(text)` takes one of four paths, named in `.last_path` and counted in `.stats`:

- "initialized:<why>": no usable state (first call, history rewritten, evicted, tokenizer changed); whole encode;
- "repaired:window=k": the stored text is a proper prefix; the repair of spec/repair.py spliced on window k;
- "repaired:free_cut": the same for a whole-word tokenizer (spec/whole_word_repair.py: re-encoded from one cut);
- "fallback:<reason>": the stored text is a proper prefix but the repair refused (reason codes of spec/repair.py);
- "identical": the same text again; the stored IDs;
- "reference:not_admitted": an inadmissible tokenizer; always the reference, no state kept.

Reason and path codes are stable strings; consumers must tolerate unknown ones.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from delta_suite.frozen.loader import FrozenTokenizer
from delta_suite.spec.admission import admission_of
from delta_suite.spec.reference import reference_encode, reference_encode_with_offsets
from delta_suite.spec.repair import DEFAULT_REPAIR_PARAMS, RepairParams, Span, repair_splice


@dataclass
class SessionStats:
    """Cumulative counts of what each `encode` did; `calls` equals the sum of the other counts."""

    calls: int = 0
    initialized: Counter = field(default_factory=Counter)  # why -> count
    repaired: Counter = field(default_factory=Counter)  # window index (or "free_cut") -> count
    fallbacks: Counter = field(default_factory=Counter)  # reason -> count
    identical: int = 0
    reference: int = 0  # inadmissible tokenizer: reference path every time
    unchecked: int = 0  # broken variant check_seam=False

    def add_up(self) -> bool:
        """The per-path counts sum to the number of calls."""
        parts = (
            sum(self.initialized.values()) + sum(self.repaired.values()) + sum(self.fallbacks.values())
            + self.identical + self.reference + self.unchecked
        )
        return parts == self.calls

    @property
    def extensions(self) -> int:
        """Calls whose stored text was a proper prefix: repaired + fell back (+ unchecked reuse)."""
        return sum(self.repaired.values()) + sum(self.fallbacks.values()) + self.unchecked

    def count(self, path: str) -> None:
        """Count one call by the path it took (the codes in this module's docstring)."""
        self.calls += 1
        kind, _, detail = path.partition(":")
        if kind == "initialized":
            self.initialized[detail] += 1
        elif kind == "repaired":
            self.repaired[int(detail.removeprefix("window=")) if detail.startswith("window=") else detail] += 1
        elif kind == "fallback":
            self.fallbacks[detail] += 1
        elif kind in ("identical", "noop"):
            self.identical += 1
        elif kind == "reference":
            self.reference += 1
        elif kind == "unchecked":
            self.unchecked += 1
        else:
            raise ValueError(f"unknown session path {path!r}")


class Session:
    """Tokenization state of one session for one tokenizer; `encode` always returns ref(text)'s IDs."""

    def __init__(self, tok: FrozenTokenizer, params: RepairParams = DEFAULT_REPAIR_PARAMS) -> None:
        self.tok = tok
        self.params = params
        self.text: str | None = None
        self.ids: list[int] = []
        self.spans: list[Span] = []
        self.last_path = "none"
        self.stats = SessionStats()
        self._evicted = False
        self._switched = False
        self._text_bytes = 0

    @property
    def admitted(self) -> bool:
        return bool(admission_of(self.tok).admitted)

    def evict(self) -> None:
        """Drop the stored state; the next call initializes ("initialized:evicted")."""
        if self.text is not None:
            self._evicted = True
        self.text, self.ids, self.spans, self._text_bytes = None, [], [], 0

    def switch_tokenizer(self, tok: FrozenTokenizer) -> None:
        """Use another tokenizer; the stored state is dropped and the next call initializes ("tokenizer_changed")."""
        if tok is not self.tok:
            self.tok = tok
            self.text, self.ids, self.spans, self._text_bytes = None, [], [], 0
            self._switched = True

    def stored_bytes(self) -> int:
        """Resident size estimate: UTF-8 text plus 20 bytes per token (an ID and a span)."""
        return self._text_bytes + 20 * len(self.ids) if self.text is not None else 0

    def encode(self, text: str) -> list[int]:
        """ref(text)'s IDs, by the cheapest path the stored state allows."""
        ids = self._encode(text)
        self.stats.count(self.last_path)
        return ids

    def _encode(self, text: str) -> list[int]:
        if not self.admitted:
            self.last_path = "reference:not_admitted"
            return reference_encode(self.tok, text)
        if self.text is not None and text == self.text:
            self.last_path = "identical"
            return list(self.ids)
        if self.text is not None and text.startswith(self.text):
            delta = text[len(self.text):]
            edit = repair_splice(self.tok, self.text, self.ids, self.spans, delta, self.params)
            del self.ids[edit.keep:], self.spans[edit.keep:]  # the stored lists are the session's own
            self.ids.extend(edit.ids)
            self.spans.extend(edit.spans)
            self.text, self._text_bytes = text, self._text_bytes + len(delta.encode("utf-8"))
            self.last_path = edit.path
            return list(self.ids)
        why = self._why_initialize()
        ids, spans = reference_encode_with_offsets(self.tok, text)
        self._store(text, ids, spans)
        self.last_path = f"initialized:{why}"
        return list(ids)

    def _why_initialize(self) -> str:
        if self._switched:
            return "tokenizer_changed"
        if self._evicted:
            return "evicted"
        return "new" if self.text is None else "history_changed"

    def _store(self, text: str, ids: list[int], spans: list[Span]) -> None:
        self.text, self.ids, self.spans = text, ids, spans
        self._text_bytes = len(text.encode("utf-8"))
        self._evicted = self._switched = False
