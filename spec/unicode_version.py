"""Which Unicode version the reference's NFC normalizer implements, found by test, and the tables at that version.

The reference's regex engine and its normalizer carry different Unicode data (tokenizers 0.23.3: Oniguruma's
properties are Unicode 16.0, while its NFC does not even compose the Unicode 16 pair U+113C2 U+113C2). So the
anchor predicate's table form must be computed from Unicode tables AT the normalizer's version.

Detection: for every Unicode version V, the normalization-relevant additions of V are the code points whose Age
is V and that have a non-zero canonical combining class or a canonical decomposition, plus the pairs that compose
into a primary composite of Age V. Each yields probes whose NFC or NFD under `unicodedata2` differs from the probe
itself. The reference implements V iff it agrees with the tables on every probe of every version <= V and leaves
every probe of every later version unchanged (an unknown code point is an inert starter to it).

Tables at version V: `unicodedata2` (pinned 18.0.0) provides the combining classes, decompositions and
composition data; `unicodedataplus` (pinned 16.0.0.post1) provides the Age property, which `unicodedata2` lacks.
Restricting `unicodedata2`'s data to code points with Age <= V is sound because the Unicode normalization
stability policy freezes the canonical combining class and canonical decomposition of every assigned code point,
and forbids new canonical compositions of already-encoded sequences: a code point's normalization data at V is
its data today, and a code point assigned after V is, at V, an unassigned inert starter.
"""

from __future__ import annotations

from collections import defaultdict
from functools import lru_cache

import unicodedata2
import unicodedataplus
from delta_suite.spec.classes import M
from delta_suite.spec.normalization import HANGUL_PROBES, REORDER_PROBE_AFTER, REORDER_PROBE_BEFORE, nfc
from tokenizers.normalizers import NFD

LATER = (99, 0)  # Age of code points unassigned in unicodedataplus (Unicode 17+ additions)
_STARTER = "\u4e00"  # a starter that composes with nothing
_REFERENCE_NFD = NFD()


def age(cp: int) -> tuple[int, int]:
    """The Age property as (major, minor); LATER for code points unassigned in unicodedataplus' Unicode 16."""
    value = unicodedataplus.age(chr(cp))
    if value in ("Unassigned", "NA", ""):
        return LATER
    major, minor = value.split(".")[:2]
    return int(major), int(minor)


def _canonical_decomposition(ch: str) -> str:
    """The canonical (untagged) decomposition mapping of `ch` in unicodedata2, or ''."""
    d = unicodedata2.decomposition(ch)
    if not d or d.startswith("<"):
        return ""
    return "".join(chr(int(x, 16)) for x in d.split())


def _scalar(cp: int) -> bool:
    return not 0xD800 <= cp < 0xE000


@lru_cache(maxsize=1)
def normalization_probes() -> dict[tuple[int, int], list[str]]:
    """Per Age, probes that only a normalizer knowing that Age's additions changes (tables: unicodedata2)."""
    probes: dict[tuple[int, int], list[str]] = defaultdict(list)
    for cp in range(0x110000):
        if not _scalar(cp):
            continue
        ch = chr(cp)
        ccc = unicodedata2.combining(ch)
        decomposition = _canonical_decomposition(ch)
        if not ccc and not decomposition:
            continue
        v = age(cp)
        candidates = [ch, _STARTER + ch + "\u0334", _STARTER + "\u0345" + ch]
        if len(decomposition) == 2 and unicodedata2.normalize("NFC", ch) == ch:
            candidates.append(decomposition)  # a primary composite: its pair composes from version v on
        for p in candidates:
            if unicodedata2.normalize("NFC", p) != p or unicodedata2.normalize("NFD", p) != p:
                probes[v].append(p)
    return dict(probes)


def _agrees(p: str) -> bool:
    return nfc(p) == unicodedata2.normalize("NFC", p) and _REFERENCE_NFD.normalize_str(p) == unicodedata2.normalize(
        "NFD", p
    )


def _inert(p: str) -> bool:
    return nfc(p) == p and _REFERENCE_NFD.normalize_str(p) == p


@lru_cache(maxsize=1)
def version_evidence() -> dict[tuple[int, int], tuple[int, int, int]]:
    """Per Age: (probes, probes where the reference agrees with the tables, probes the reference leaves inert)."""
    out = {}
    for v, ps in sorted(normalization_probes().items()):
        out[v] = (len(ps), sum(map(_agrees, ps)), sum(map(_inert, ps)))
    return out


class UnicodeVersionUnclear(RuntimeError):
    """The reference's NFC matches no single Unicode version's tables."""


@lru_cache(maxsize=1)
def reference_nfc_version() -> tuple[int, int]:
    """The Unicode version V the reference NFC implements: it agrees on every addition up to V, ignores later ones."""
    evidence = version_evidence()
    versions = sorted(evidence)
    for i, v in enumerate(versions):
        below_ok = all(evidence[u][1] == evidence[u][0] for u in versions[: i + 1])
        above_inert = all(evidence[u][2] == evidence[u][0] for u in versions[i + 1 :])
        if below_ok and above_inert:
            return v
    raise UnicodeVersionUnclear(f"reference NFC matches no Unicode version: {evidence}")


def version_string(v: tuple[int, int]) -> str:
    return f"{v[0]}.{v[1]}"


def tables_version() -> tuple[int, int]:
    """The Unicode version of the installed unicodedata2 tables (must be >= the detected reference version)."""
    major, minor = unicodedata2.unidata_version.split(".")[:2]
    return int(major), int(minor)


def _hangul_second_elements() -> frozenset[str]:
    """V jamo (compose after an L jamo) and T jamo (compose after an LV syllable), by the Hangul algorithm."""
    v_jamo = range(0x1161, 0x1161 + 21)
    t_jamo = range(0x11A8, 0x11A7 + 28)
    return frozenset(map(chr, [*v_jamo, *t_jamo]))


@lru_cache(maxsize=1)
def _second_elements_after_probes(version: tuple[int, int]) -> frozenset[str]:
    """Code points that compose after one of the probe characters (U+0301, U+1100, U+AC00) at `version`."""
    out = set()
    leads = {REORDER_PROBE_BEFORE, *HANGUL_PROBES}
    for cp in range(0x110000):
        if not _scalar(cp) or age(cp) > version:
            continue
        ch = chr(cp)
        d = _canonical_decomposition(ch)
        if len(d) == 2 and d[0] in leads and unicodedata2.normalize("NFC", ch) == ch and age(ord(d[1])) <= version:
            out.add(d[1])
    if "\u1100" in leads:
        out |= {c for c in _hangul_second_elements() if c < "\u1176"}
    if "\uac00" in leads:
        out |= {c for c in _hangul_second_elements() if c >= "\u11a8"}
    return frozenset(out)


@lru_cache(maxsize=1)
def _first_elements_before_probe(version: tuple[int, int]) -> frozenset[str]:
    """Code points that compose with a following U+0335 at `version`."""
    out = set()
    for cp in range(0x110000):
        if not _scalar(cp) or age(cp) > version:
            continue
        d = _canonical_decomposition(chr(cp))
        if len(d) == 2 and d[1] == REORDER_PROBE_AFTER and unicodedata2.normalize("NFC", chr(cp)) == chr(cp):
            out.add(d[0])
    return frozenset(out)


def table_anchor(cp: int, cls: int, version: tuple[int, int]) -> bool:
    """The anchor predicate from Unicode tables at `version`: ASCII; else not a mark and, unless the code point is
    unassigned at `version` (then it is an inert starter), combining class 0, NFC-stable alone, not composing
    after U+0301/U+1100/U+AC00 and not composing with a following U+0335."""
    if cp < 0x80:
        return True
    if cls == M:
        return False
    if age(cp) > version:
        return True
    ch = chr(cp)
    if unicodedata2.combining(ch) != 0:
        return False
    decomposition = _canonical_decomposition(ch)
    if decomposition and (unicodedata2.normalize("NFC", ch) != ch or any(age(ord(d)) > version for d in decomposition)):
        return False
    if ch in _second_elements_after_probes(version) or ch in _first_elements_before_probe(version):
        return False
    return True
