"""Verdicts on surviving mutants, written by hand in mutation/verdicts.toml and matched to a run's survivors.

A survivor is named by what does not move when unrelated lines are edited: its module, the operator, the source
line it mutates (stripped) and the column. One operator can make several mutants there (a number replaced by the
next and by the previous one); a verdict with `mutant`, the mutated line as the survivor's diff shows it (stripped),
judges that one only, and wins over a verdict without it, which judges them all. A verdict is one of
- "killed": a test added since kills it (name the test; the next run of the module counts it as killed),
- "equivalent": the mutant computes the same thing, or only refuses more (say why, and name the test or proof
  that checks the premise where there is one),
- "open": no kill and no argument yet (say what is known).
A survivor without a verdict is what the profile exists to find: `python -m mutation status` exits 1 on one.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser, published as tomli
    import tomli as tomllib

VERDICTS_FILE = Path(__file__).resolve().parent / "verdicts.toml"
KINDS = ("killed", "equivalent", "open")


class VerdictFileError(ValueError):
    """The verdicts file cannot be read or holds an entry without the fields it needs."""


@dataclass(frozen=True)
class Verdict:
    """A hand-written verdict on one surviving mutant."""

    module: str
    operator: str
    line: str
    column: int
    verdict: str
    reason: str
    test: str = ""
    mutant: str = ""  # the mutated line (stripped): this verdict judges only that mutant of the place

    @property
    def key(self) -> Key:
        return (self.module, self.operator, self.line, self.column, self.mutant)


Key = tuple[str, str, str, int, str]  # module, operator, source line (stripped), column, mutated line or ""


def survivor_key(module: str, operator: str, line: str, column: int) -> tuple[str, str, str, int]:
    """The place a verdict is matched on (see the module docstring)."""
    return (module, operator, line.strip(), column)


def mutated_line(diff: str) -> str:
    """The first line a mutant's unified diff adds, stripped ("" when it only removes lines, as a removed
    decorator does)."""
    return next((line[1:].strip() for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")),
                "")


def find_verdict(verdicts: dict[Key, Verdict], module: str, survivor: dict) -> Verdict | None:
    """The verdict on one survivor (operator, line, column, diff): the one naming its mutated line, else the one
    naming its place only, else None."""
    place = survivor_key(module, survivor["operator"], survivor["line"], survivor["column"])
    return verdicts.get((*place, mutated_line(survivor.get("diff", "")))) or verdicts.get((*place, ""))


def read_verdicts(path: Path = VERDICTS_FILE) -> dict[Key, Verdict]:
    """Every verdict of the file by key; a missing file is no verdicts. Raises VerdictFileError on a bad entry."""
    if not path.exists():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise VerdictFileError(f"{path}: {exc}") from exc
    out: dict[Key, Verdict] = {}
    for i, entry in enumerate(data.get("verdict", []), 1):
        try:
            v = Verdict(module=entry["module"], operator=entry["operator"], line=entry["line"].strip(),
                        column=int(entry["column"]), verdict=entry["verdict"], reason=entry["reason"],
                        test=entry.get("test", ""), mutant=entry.get("mutant", "").strip())
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise VerdictFileError(f"{path}: verdict {i} lacks a field or has a wrong type: {exc}") from exc
        if v.verdict not in KINDS:
            raise VerdictFileError(f"{path}: verdict {i}: {v.verdict!r} is not one of {KINDS}")
        if v.verdict == "killed" and not v.test:
            raise VerdictFileError(f"{path}: verdict {i}: a 'killed' verdict names the test that kills it")
        if not v.reason.strip():
            raise VerdictFileError(f"{path}: verdict {i}: the reason is empty")
        if v.key in out:
            raise VerdictFileError(f"{path}: verdict {i} judges the same mutants as an earlier one")
        out[v.key] = v
    return out
