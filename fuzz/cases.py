"""One fuzz case and its outcome: a text with the positions to check, and what checking it found.

A cut case carries candidate cut offsets (the checker compares the reference pieces at every cut the rules
accept); a repair case carries one split, so the session holds S = text[:split] and then receives
D = text[split:]. An outcome counts what was compared and, when IDs differed, holds the difference.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

PATHS = ("cut", "repair")


@dataclass(frozen=True)
class FuzzCase:
    """A text and the positions to check on one path ("cut": candidate cuts; "repair": the S | D split)."""

    path: str
    text: str
    cuts: tuple[int, ...] = ()
    split: int | None = None
    origin: str = ""

    def __post_init__(self) -> None:
        if self.path not in PATHS:
            raise ValueError(f"unknown path {self.path!r}; one of {PATHS}")
        if self.path == "repair" and (self.split is None or not 0 <= self.split <= len(self.text)):
            raise ValueError(f"repair case needs a split within 0..{len(self.text)}, got {self.split}")
        if any(not 0 < b < len(self.text) for b in self.cuts):
            raise ValueError("cut offsets must lie strictly inside the text")

    def as_json(self) -> dict:
        out: dict = {"path": self.path, "text": self.text}
        if self.path == "cut":
            out["cuts"] = list(self.cuts)
        else:
            out["split"] = self.split
        if self.origin:
            out["origin"] = self.origin
        return out

    @classmethod
    def from_json(cls, data: dict) -> FuzzCase:
        return cls(
            path=data["path"],
            text=data["text"],
            cuts=tuple(data.get("cuts") or ()),
            split=data.get("split"),
            origin=data.get("origin", ""),
        )


@dataclass
class Difference:
    """Reference IDs against the IDs under test, with the first differing position and where it came from."""

    expected: list[int]
    actual: list[int]
    first_position: int
    where: dict = field(default_factory=dict)


@dataclass
class CaseOutcome:
    """What checking one case compared (cuts, repairs, fast path vs fallback, paths taken) and any difference."""

    cuts_checked: int = 0
    repairs_checked: int = 0
    fast_path: int = 0
    fallbacks: int = 0
    paths: Counter = field(default_factory=Counter)
    difference: Difference | None = None


def first_difference(expected: list[int], actual: list[int]) -> int:
    """The first index where two ID sequences differ (the shorter length when one is a prefix); -1 if equal."""
    for i, (a, b) in enumerate(zip(expected, actual, strict=False)):
        if a != b:
            return i
    return -1 if len(expected) == len(actual) else min(len(expected), len(actual))
