"""Unicode-data skew of a subject's pre-tokenizer: code points whose class the reference and a peer read differently.

Candidates come from the suite's exhaustive per-code-point tables: the reference's own class table
(`spec.classes.class_table`, probed from its regex engine) against the class newer Unicode data gives
(`unicodedata2`). Each candidate X is then confirmed or refuted on whole encodes: for every probe shape
(X alone, between letters, after a digit, after a space, doubled, and before U+0334, a mark of combining
class 1 that canonical reordering moves in front of any mark of a higher class) the subject's IDs are compared
with the reference's.
A code point is a confirmed skew when some shape differs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import unicodedata2
from delta_suite.spec.classes import CLASS_NAMES, L, M, N, O, S, class_table
from delta_suite.spec.engine_classes import scalar_values
from delta_suite.spec.reference import reference_encode_batch

SHAPES = ("{x}", "a{x}b", "{x}a", "1{x}", " {x}", "{x}{x}", "{x}\u0334", "a{x}\u0334")


def newer_class(cp: int) -> int:
    """The O/S/L/N/M class of `cp` under unicodedata2's (newer) Unicode data; whitespace left to the engine."""
    cat = unicodedata2.category(chr(cp))
    return {"L": L, "N": N, "M": M}.get(cat[0], O)


def skew_candidates() -> list[int]:
    """Scalar values where Unicode data can skew: the class differs between the reference's engine table and newer
    data (S excluded), or newer data gives a nonzero combining class or a canonical decomposition (NFC can move it).
    """
    table = class_table()
    out = []
    for cp in scalar_values():
        ch = chr(cp)
        if table[cp] != S and table[cp] != newer_class(cp):
            out.append(cp)
        elif unicodedata2.combining(ch) or (unicodedata2.decomposition(ch)[:1] not in ("", "<")):
            out.append(cp)
    return out


@dataclass
class SkewResult:
    """What a skew probe compared: code points, encodes, and the code points with a differing encode."""

    codepoints: int = 0
    comparisons: int = 0
    differing: list[int] = field(default_factory=list)
    examples: list[dict] = field(default_factory=list)

    def ranges(self) -> list[str]:
        """The differing code points as compact U+XXXX[-U+YYYY] ranges."""
        out, run = [], []
        for cp in sorted(self.differing):
            if run and cp == run[-1] + 1:
                run.append(cp)
                continue
            if run:
                out.append(_fmt(run))
            run = [cp]
        if run:
            out.append(_fmt(run))
        return out


def _fmt(run: list[int]) -> str:
    return f"U+{run[0]:04X}" if len(run) == 1 else f"U+{run[0]:04X}-U+{run[-1]:04X}"


def probe_skew(subject, tok, codepoints: list[int], *, batch: int = 4096, keep_examples: int = 5) -> SkewResult:
    """Compare subject and reference whole encodes of every probe shape of every code point.

    The proposition per (code point, shape): subject.encode(shape(x)) == reference_encode(tok, shape(x)).
    """
    result = SkewResult()
    table = class_table()
    for start in range(0, len(codepoints), batch):
        cps = codepoints[start : start + batch]
        texts = [shape.format(x=chr(cp)) for cp in cps for shape in SHAPES]
        got = subject.encode_many(texts)
        want = reference_encode_batch(tok, texts)
        result.codepoints += len(cps)
        result.comparisons += len(texts)
        for k, cp in enumerate(cps):
            rows = range(k * len(SHAPES), (k + 1) * len(SHAPES))
            bad = [r for r in rows if got[r] != want[r]]
            if bad:
                result.differing.append(cp)
                if len(result.examples) < keep_examples:
                    r = bad[0]
                    result.examples.append(
                        {
                            "codepoint": f"U+{cp:04X}",
                            "reference_class": CLASS_NAMES[table[cp]],
                            "newer_class": CLASS_NAMES[newer_class(cp)],
                            "text": texts[r],
                            "subject_ids": got[r],
                            "reference_ids": want[r],
                        }
                    )
    return result
