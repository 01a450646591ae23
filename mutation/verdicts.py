"""Verdicts on surviving mutants, written by hand in mutation/verdicts.toml and matched to a run's survivors.

A survivor is named by what does not move when unrelated lines are edited: its module, the operator, the source
line it mutates (stripped) and the column. One operator can make several mutants there (a number replaced by the
next and by the previous one); a verdict with `mutant`, the mutated line as the survivor's diff shows it (stripped),
judges that one only, and wins over a verdict without it, which judges them all. One line can also stand at
several places of a module (two `@dataclass(frozen=True)`): a verdict on such a line names, as `context`, a line
(stripped) its survivor's diff shows around the mutated one (the decorated `class RepairParams:`), and judges only
survivors whose diff shows it; `ambiguous_verdicts` finds a verdict that would judge more than one place of the
module's source. A verdict is one of
- "killed": a test added since kills it (name the test; the next run of the module counts it as killed),
- "equivalent": the mutant computes the same thing, or only refuses more, for every tokenizer admission can
  accept (say why, and name the test or proof that checks the premise where there is one); since any file can be
  admitted, a reason that rests on the provisioned tokenizers or on a measurement is refused
  (`set_grounds`): what holds on them is shown by a test on them, which kills no mutant,
- "open": no kill and no argument yet (say what is known).
A survivor without a verdict is what the profile exists to find: `python -m mutation status` exits 1 on one.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser, published as tomli
    import tomli as tomllib

VERDICTS_FILE = Path(__file__).resolve().parent / "verdicts.toml"
KINDS = ("killed", "equivalent", "open")


# The words by which a reason rests a mutant's equivalence on the tokenizers at hand instead of an argument for
# every admissible one: the provisioned (frozen) set, and a measurement. An "equivalent" reason may name a test
# that checks its premise on them (the argument stands without it), but not in these words.
SET_GROUNDS = re.compile(
    r"\bprovisioned\b|\bfrozen (?:tokenizers?|vocabular(?:y|ies)|ones|set)\b|\bthe eight\b|\bmeasured\b",
    re.IGNORECASE,
)


def set_grounds(reason: str, tokenizer_names: Iterable[str] = ()) -> list[str]:
    """The phrases of `reason` that rest an equivalence on the tokenizers at hand: the words of SET_GROUNDS and the
    names of `tokenizer_names` (the registry's names and aliases, as whole words). Empty for a reason that argues for
    every tokenizer admission can accept, which is what an "equivalent" verdict must do."""
    found = [m.group(0) for m in SET_GROUNDS.finditer(reason)]
    for name in tokenizer_names:
        found += [m.group(0) for m in re.finditer(rf"(?<![\w.-]){re.escape(name)}(?![\w-]|\.\w)", reason,
                                                   re.IGNORECASE)]
    return found


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
    context: str = ""  # a line (stripped) the survivor's diff shows around it: this verdict judges only that place

    @property
    def key(self) -> Key:
        return (self.module, self.operator, self.line, self.column, self.mutant, self.context)


Key = tuple[str, str, str, int, str, str]  # module, operator, source line (stripped), column, mutated line or "",
# context line or ""
CONTEXT_LINES = 3  # the unchanged lines a survivor's diff shows on each side of the mutated line


def survivor_key(module: str, operator: str, line: str, column: int) -> tuple[str, str, str, int]:
    """The place a verdict is matched on (see the module docstring)."""
    return (module, operator, line.strip(), column)


def mutated_line(diff: str) -> str:
    """The first line a mutant's unified diff adds, stripped ("" when it only removes lines, as a removed
    decorator does)."""
    return next((line[1:].strip() for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")),
                "")


def context_lines(diff: str) -> set[str]:
    """The unchanged lines a unified diff shows around its change, stripped."""
    return {line[1:].strip() for line in diff.splitlines() if line.startswith(" ")}


def find_verdict(verdicts: dict[Key, Verdict], module: str, survivor: dict) -> Verdict | None:
    """The verdict on one survivor (operator, line, column, diff): of those on its place whose context (if any)
    its diff shows, the one naming its mutated line and a context, else its mutated line, else a context, else
    the place only; None when there is none."""
    place = survivor_key(module, survivor["operator"], survivor["line"], survivor["column"])
    diff = survivor.get("diff", "")
    mutant, shown = mutated_line(diff), context_lines(diff)
    found = [v for k, v in verdicts.items() if k[:4] == place and v.mutant in ("", mutant)
             and (not v.context or v.context in shown)]
    return max(found, key=lambda v: (bool(v.mutant), bool(v.context)), default=None)


def ambiguous_verdicts(verdicts: dict[Key, Verdict], source_of: Callable[[str], str | None]) -> list[Verdict]:
    """The verdicts that would judge more than one place of their module's current source (`source_of(module)`,
    None when the module is gone): the line stands at several places and no context tells them apart, or the
    context is within CONTEXT_LINES of more than one of them."""
    out = []
    for v in verdicts.values():
        source = source_of(v.module)
        if source is None:
            continue
        lines = [line.strip() for line in source.splitlines()]
        places = [i for i, line in enumerate(lines) if line == v.line]
        if v.context:
            places = [i for i in places if v.context in lines[max(0, i - CONTEXT_LINES) : i + CONTEXT_LINES + 1]]
        if len(places) > 1:
            out.append(v)
    return out


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
                        test=entry.get("test", ""), mutant=entry.get("mutant", "").strip(),
                        context=entry.get("context", "").strip())
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise VerdictFileError(f"{path}: verdict {i} lacks a field or has a wrong type: {exc}") from exc
        if v.verdict not in KINDS:
            raise VerdictFileError(f"{path}: verdict {i}: {v.verdict!r} is not one of {KINDS}")
        if v.verdict == "killed" and not v.test:
            raise VerdictFileError(f"{path}: verdict {i}: a 'killed' verdict names the test that kills it")
        if not v.reason.strip():
            raise VerdictFileError(f"{path}: verdict {i}: the reason is empty")
        if v.verdict == "equivalent" and (grounds := set_grounds(v.reason)):
            raise VerdictFileError(f"{path}: verdict {i}: an 'equivalent' reason rests on the tokenizers at hand "
                                   f"({', '.join(grounds)}): argue for every admissible tokenizer, or kill the mutant")
        if v.key in out:
            raise VerdictFileError(f"{path}: verdict {i} judges the same mutants as an earlier one")
        out[v.key] = v
    return out
