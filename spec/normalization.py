"""The normalization condition (NFC and NFKC tokenizers): a cut must survive the reference's own normalizer.

Condition 3 of the cut proposition. Anchors a < b < c are found within `ANCHOR_SCAN` (256) code points on each
side of the cut b; the text ends count as anchors (the start only when the scan reaches it, the end likewise).
An anchor is a code point before which NFC can be applied piecewise: it is not a mark, NFC leaves it unchanged
alone, the probe marks U+0301 (before it) and U+0335 (after it) do not reorder it, and it does not compose after
the Hangul probes U+1100 or U+AC00 (ASCII is always an anchor). The cut is refused if an anchor is missing or a
special-token occurrence touches S[a:c]; it is accepted only if
    NFC(S[a:c]) == NFC(S[a:b]) + NFC(S[b:c])   (both sides non-empty)
and the last character of NFC(S[a:b]) with the first of NFC(S[b:c]) is again an accepted transition.
The counterexample this exists for: U+0958 followed by "/" is letter->other raw, but NFC gives U+0915 U+093C
(a mark), and mark->other is not an accepted transition.

NFKC tokenizers (the public Claude file) are judged by the same condition with NFKC in place of NFC
(`FrozenTokenizer.normal_form`; `is_anchor` says why the argument carries over). Every runtime predicate here calls
the reference's normalizer object (`tokenizers.normalizers.NFC()` or `NFKC()`), never
Python's `unicodedata` (whose Unicode version differs from the reference's; see `spec.unicode_version`).
"""

from __future__ import annotations

from functools import lru_cache

from delta_suite.spec.classes import M
from tokenizers.normalizers import NFC, NFKC

ANCHOR_SCAN = 256
REORDER_PROBE_BEFORE = "\u0301"  # combining acute, ccc 230
REORDER_PROBE_AFTER = "\u0335"  # combining short stroke overlay, ccc 1
HANGUL_PROBES = ("\u1100", "\uac00")  # an L jamo (takes V) and an LV syllable (takes T)
COUNTEREXAMPLE = "\u0958/"  # raw L->O, NFC M->O: the cut at 1 must be refused under NFC

_REFERENCE_NFC = NFC()
_REFERENCE = {"nfc": _REFERENCE_NFC, "nfkc": NFKC()}
FORMS = tuple(_REFERENCE)  # the composing normal forms admitted for byte-level files (`FrozenTokenizer.normal_form`)


def nfc(text: str) -> str:
    """The reference's NFC of `text` (the installed `tokenizers` normalizer object)."""
    return _REFERENCE_NFC.normalize_str(text)


def normalize(text: str, form: str = "nfc") -> str:
    """The reference's normal form `form` ("nfc" or "nfkc") of `text`."""
    return _REFERENCE[form].normalize_str(text)


@lru_cache(maxsize=1 << 17)
def is_anchor(ch: str, cls: int, reorder_probes: bool = True, hangul_probes: bool = True, form: str = "nfc") -> bool:
    """Whether `ch` (of class `cls`) is an anchor: the normal form `form` of the text splits before it, whatever
    precedes it.

    ASCII always; otherwise not a mark, F(ch) == ch, unchanged after U+0301 and before U+0335 (no reordering),
    and unchanged after U+1100 and U+AC00 (no Hangul composition), F the reference's NFC or NFKC. The argument is
    the same for both forms: they decompose character by character (canonically or by compatibility), reorder
    only runs of non-starters, and compose only with the last starter before a character that nothing blocks; a
    starter that F leaves as it is and that composes after nothing (the probes, and not a mark: the characters
    that compose after a starter are marks or Hangul jamo) is a boundary of both. F(ch) == ch is what excludes a
    compatibility character that NFKC turns into a non-starter (U+FF9E becomes U+3099, which composes with the
    kana before it). The probe knobs exist for broken variants.
    """
    if ch < "\x80":
        return True
    if cls == M or normalize(ch, form) != ch:
        return False
    if reorder_probes:
        for probe in (REORDER_PROBE_BEFORE + ch, ch + REORDER_PROBE_AFTER):
            if normalize(probe, form) != probe:
                return False
    if hangul_probes:
        for lead in HANGUL_PROBES:
            if normalize(lead + ch, form) != lead + ch:
                return False
    return True


def anchors_around(
    text: str,
    b: int,
    table: bytes,
    reorder_probes: bool = True,
    hangul_probes: bool = True,
    scan: int = ANCHOR_SCAN,
    form: str = "nfc",
) -> tuple[int | None, int | None]:
    """The anchors (a, c) around cut b: a = nearest anchor index in [b-scan, b-1] (0 if the scan reaches the
    start), c = nearest anchor index in [b+1, b+scan] (len(text) if the scan reaches the end); None when missing."""
    a: int | None = None
    for i in range(b - 1, max(-1, b - 1 - scan), -1):
        if is_anchor(text[i], table[ord(text[i])], reorder_probes, hangul_probes, form):
            a = i
            break
    else:
        if b - scan <= 0:  # the scan reached the first character: the start of the text is the anchor
            a = 0
    c: int | None = None
    n = len(text)
    for j in range(b + 1, min(n, b + 1 + scan)):
        if is_anchor(text[j], table[ord(text[j])], reorder_probes, hangul_probes, form):
            c = j
            break
    else:
        if b + 1 + scan >= n:  # the scan reached the last character: the end of the text is the anchor
            c = n
    return a, c


def nfc_split(text: str, a: int, b: int, c: int, form: str = "nfc") -> tuple[str, str] | None:
    """The equation condition: (F(S[a:b]), F(S[b:c])) when both are non-empty and they concatenate to F(S[a:c]),
    F the normal form `form`; None when the normalizer does not split the window at b."""
    before, after = normalize(text[a:b], form), normalize(text[b:c], form)
    if not before or not after or normalize(text[a:c], form) != before + after:
        return None
    return before, after
