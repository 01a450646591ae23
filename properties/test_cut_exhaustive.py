"""Exhaustive per-code-point checks of the cut proposition's tables against the reference (marker `exhaustive`).

- classes: for each distinct split pattern among the admitted tokenizers, the reference pre-tokenizer (its own
  Split stages and regex engine) behaves on probe strings exactly as the spec's class of every code point predicts;
- python disagreement: where Python's `regex` and `unicodedata` would have classified differently (version skew);
- anchors: the runtime anchor predicate (reference normalizer) equals the predicate computed from unicodedata2's
  tables at the Unicode version the reference NFC implements (detected by test), for every code point;
- transitions: every code point as the right and as the left side of every accepted pair, with representative
  partners, gets a piece boundary at the transition, and the left piece closes identically at end of input.
Surrogates (U+D800..U+DFFF) are not scalar values and are excluded (listed in every record of the range holding
them). Each test batches the reference calls (`boundaries`, equal to one call per probe: tested on the stratum and
a sample) and prints what it covered and its CPU time. A code point after "A" or "1" is observed once per run and
read by both the class test and the transition test's right side (`context_marks`).

The unassigned planes 4-13 (U+40000..U+DFFFF, 59% of the scalar values) are checked every 16th code point by
default, every one with DELTA_EXHAUSTIVE=full (the large-machine gate, the main job's --full): no per-code-point
check can tell their code points apart, which `test_unassigned_planes_are_alike` checks over every one of them
(the same class, the same membership in every engine property atom of every admitted split pattern, no pattern
naming one, the same Unicode facts). Every record of a range that was sampled says so (`details.sampled`).

So that no test runs long on one core (the gate is balanced for 64 workers), every per-code-point test runs once
per range of `RANGES`: sixteen ranges of 69,632 code points that partition the code space (tested below), one test
id each. A ranged test checks exactly what the whole test checked, restricted to its range; its ledger record keeps
the whole test's check name, names its range (`details.range`), and counts only its range, so the records of one
check sum to what the whole test compared. What every range needs (class table, engine masks, the families' split
pre-tokenizers) is built once per worker. Run with `pytest -m exhaustive` or DELTA_EXHAUSTIVE=1.
"""

from __future__ import annotations

import hashlib
import os
import random
import tempfile
import time
import unicodedata
from functools import lru_cache
from operator import itemgetter
from pathlib import Path

import numpy as np
import pytest
import regex
import unicodedata2
from delta_suite.frozen.cache_lock import computing
from delta_suite.frozen.loader import FrozenTokenizer, load_tokenizer, reference_pre_tokenizer
from delta_suite.spec.admission import admission_of, split_stages
from delta_suite.spec.classes import CLASS_NAMES, L, M, N, O, S, class_table
from delta_suite.spec.cut import ACCEPTED, pair_verdict, python_class_table, rules_for_family
from delta_suite.spec.engine_classes import engine_mask
from delta_suite.spec.normalization import is_anchor, nfc
from delta_suite.spec.unicode_version import (
    LATER,
    age,
    reference_nfc_version,
    table_anchor,
    tables_version,
    version_evidence,
    version_string,
)
from tokenizers import Regex
from tokenizers.pre_tokenizers import PreTokenizer, Sequence, Split

from properties.conftest import (
    ADMITTED,
    UNASSIGNED_PLANES,
    checked_scalars,
    exhaustive_stride,
    sampling_note,
    stratified_scalars,
    stratum,
    stride_note,
    unassigned_stride,
)
from properties.derived_synthetic import derived_families

pytestmark = [
    pytest.mark.exhaustive,
    pytest.mark.skipif(
        "os.environ.get('DELTA_EXHAUSTIVE') == '0'",
        reason="exhaustive per-code-point tests switched off with DELTA_EXHAUSTIVE=0",
    ),
]

CODE_SPACE = 0x110000
SURROGATES = (0xD800, 0xDFFF)
SEPARATOR = "\n"  # ends every probe: never extends a piece backwards past the probe's own transition
BATCH = 256  # probes per reference call: the reference splits 32,768 at once about half as fast (measured)
EXPECTED_NFC_VERSION = (9, 0)  # what tokenizers 0.23.3's normalizer implements; a change must be re-examined
RANGE_SIZE = 0x11000  # sixteen ranges of 69,632 code points: each range's test a few seconds on one core
RANGES = tuple((lo, min(lo + RANGE_SIZE, CODE_SPACE)) for lo in range(0, CODE_SPACE, RANGE_SIZE))
RANGE_IDS = [f"U+{lo:04X}" for lo, _ in RANGES]
V_T_JAMO = 48  # U+1161..U+1175 and U+11A8..U+11C2: the jamo that compose after U+1100 or U+AC00


def range_name(lo: int, hi: int) -> str:
    """How a ranged record names its range of code points (both ends included)."""
    return f"U+{lo:04X}..U+{hi - 1:04X}"


def range_details(lo: int, hi: int) -> dict:
    """The ledger details every ranged record carries: its range, the surrogates it leaves out (if any), and how
    it was sampled (`details.sampled`, only when it was: `conftest.sampling_note`)."""
    holds_surrogates = lo <= SURROGATES[1] and SURROGATES[0] < hi
    note = sampling_note(lo, hi)
    return {"range": range_name(lo, hi), "excluded": "U+D800..U+DFFF" if holds_surrogates else "none",
            **({"sampled": note} if note else {})}


def scalars(lo: int = 0, hi: int = CODE_SPACE) -> list[int]:
    """The scalar values in [lo, hi) the per-code-point tests check (`conftest.checked_scalars`): every one, but
    every 16th in the unassigned planes 4-13 unless DELTA_EXHAUSTIVE=full; with DELTA_EXHAUSTIVE_STRIDE=k only the
    multiples of k (the main job's sampled mode). The records say so."""
    return checked_scalars(lo, hi)


def strided_scalars() -> list[int]:
    """Every scalar value of the code space (with DELTA_EXHAUSTIVE_STRIDE=k every k-th plus the stratum:
    `conftest.stratified_scalars`): the whole-table comparisons cost little and never sample the unassigned
    planes."""
    return stratified_scalars()


def families() -> dict[str, FrozenTokenizer]:
    """One admitted tokenizer per distinct split pattern (family)."""
    out: dict[str, FrozenTokenizer] = {}
    for name in ADMITTED:
        tok = load_tokenizer(name)
        out.setdefault(admission_of(tok).pattern, tok)
    return out


FAMILIES = {**families(), **derived_families()}  # the derived ones: properties/derived_synthetic.py


def covered(rep: FrozenTokenizer) -> list[str]:
    """The admitted tokenizers whose Split stages are the representative's, regex for regex (the stages these tests
    run, with the isolated behaviour admission requires): the per-code-point facts checked on `rep` are theirs too,
    and each record says so (`details.covers`, read by the obligations table)."""
    want = split_stages(rep.admission_inputs.pre_tokenizer)
    return [n for n in ADMITTED if split_stages(load_tokenizer(n).admission_inputs.pre_tokenizer) == want]


COVERS = {family: covered(tok) for family, tok in FAMILIES.items()}


def split_pretokenizer(tok: FrozenTokenizer) -> PreTokenizer:
    """The tokenizer's own Split stages (from its file, as the reference reads them; the trailing ByteLevel stage
    splits nothing)."""
    stages, problem = split_stages(reference_pre_tokenizer(tok))
    assert problem is None, problem
    return Sequence([Split(Regex(r), behavior="isolated") for r in stages])


@lru_cache(maxsize=16)
def family_pretokenizer(family: str) -> PreTokenizer:
    """`split_pretokenizer` of the family's tokenizer, built once per worker (serializing a tokenizer to read its
    stages takes up to a second)."""
    return split_pretokenizer(FAMILIES[family])


_SPAN, _START = itemgetter(1), itemgetter(0)  # a piece's (start, end), a span's start


def boundaries(pt: PreTokenizer, probes: list[str], at: list[int]) -> bytearray:
    """For each probe, 1 if the pre-tokenizer starts a piece at offset `at[i]` of it, followed by SEPARATOR: what
    one reference call on probe + SEPARATOR gives (`single_call_boundaries`, the definition; tested below).
    The probes are joined once; each probe's offset in the text is the running sum of the probe lengths plus
    separators before it (`_observe` asks the reference)."""
    text = SEPARATOR.join(probes) + SEPARATOR
    spans = np.fromiter(map(len, probes), dtype=np.int64, count=len(probes)) + len(SEPARATOR)
    return _observe(pt, text, np.cumsum(spans) - spans, np.asarray(at, dtype=np.int64))


def context_boundaries(pt: PreTokenizer, prefix: str, cps: list[int] | np.ndarray, suffix: str = "") -> bytearray:
    """`boundaries` of the probes prefix + chr(c) + suffix for each c of `cps`, at the transition into c (with a
    prefix) or out of it (without one). The probes have one width, so their text is built as an array of code
    points and their offsets are multiples of the width: no string per probe."""
    if len(cps) == 0:
        return bytearray()
    width = len(prefix) + 1 + len(suffix) + len(SEPARATOR)
    grid = np.empty((len(cps), width), dtype=np.uint32)
    grid[:, : len(prefix)] = [ord(ch) for ch in prefix]
    grid[:, len(prefix)] = cps
    grid[:, len(prefix) + 1 :] = [ord(ch) for ch in suffix + SEPARATOR]
    text = grid.tobytes().decode("utf-32-le")
    firsts = np.arange(len(cps), dtype=np.int64) * width
    return _observe(pt, text, firsts, np.full(len(cps), len(prefix) if prefix else 1, dtype=np.int64))


def _observe(pt: PreTokenizer, text: str, firsts: np.ndarray, at: np.ndarray) -> bytearray:
    """The marks of `boundaries` for the probes of `text` (probe i from firsts[i], each followed by SEPARATOR),
    BATCH probes per reference call. A piece can reach past a separator into the next probe (o200k's punctuation
    runs take a following "/": "!" SEPARATOR "/"); a probe that does not start a piece of the batch is asked
    again alone."""
    first_list = firsts.tolist()
    starts = np.zeros(len(text) + 1, dtype=np.uint8)
    for lo in range(0, len(first_list), BATCH):
        base = first_list[lo]
        stop = first_list[lo + BATCH] if lo + BATCH < len(first_list) else len(text)
        pieces = pt.pre_tokenize_str(text[base:stop])
        starts[np.fromiter(map(_START, map(_SPAN, pieces)), dtype=np.int64, count=len(pieces)) + base] = 1
    out = bytearray(starts[firsts + at].tobytes())
    stops = [*first_list[1:], len(text)]
    for i in np.flatnonzero(starts[firsts] == 0).tolist():
        probe = text[first_list[i] : stops[i] - len(SEPARATOR)]
        out[i] = single_call_boundaries(pt, [probe], [int(at[i])])[0]
    return out


def single_call_boundaries(pt: PreTokenizer, probes: list[str], at: list[int]) -> bytearray:
    """`boundaries` by definition: one reference call per probe (the probe and SEPARATOR alone)."""
    return bytearray(int(any(s == a for _, (s, _e) in pt.pre_tokenize_str(p + SEPARATOR)))
                     for p, a in zip(probes, at, strict=True))


def test_ranges_partition_the_code_space() -> None:
    """The ranges the per-code-point tests run over are contiguous, disjoint and cover U+0000..U+10FFFF, and
    their scalar values together are exactly the scalar values of the whole code space (1,112,064 unsampled; by
    default every 16th in the unassigned planes 4-13): the ranged tests together check every code point the whole
    tests checked."""
    assert RANGES[0][0] == 0 and RANGES[-1][1] == CODE_SPACE
    assert all(hi == next_lo for (_, hi), (next_lo, _) in zip(RANGES, RANGES[1:], strict=False))
    assert all(lo < hi for lo, hi in RANGES)
    assert len(set(RANGE_IDS)) == len(RANGES)
    pieces = [cp for lo, hi in RANGES for cp in scalars(lo, hi)]
    assert pieces == scalars()
    u_lo, u_hi = UNASSIGNED_PLANES
    unassigned = (u_hi - u_lo) // unassigned_stride()  # 655,360 code points, or every 16th of them: 40,960
    if exhaustive_stride() == 1:  # outside the unassigned planes every scalar value, in them every k-th
        outside = [cp for cp in range(CODE_SPACE) if not (u_lo <= cp < u_hi or SURROGATES[0] <= cp <= SURROGATES[1])]
        assert [cp for cp in pieces if not u_lo <= cp < u_hi] == outside
        assert len(pieces) == len(outside) + unassigned == 1_112_064 - (u_hi - u_lo) + unassigned


# --- the unassigned planes -----------------------------------------------------------------------------------

ATOM = regex.compile(r"\\[pP]\{[^}]+\}|\\[sSdDwWhHvV]")
LITERAL = regex.compile(
    r"\\x\{([0-9A-Fa-f]+)\}|\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})|\\x([0-9A-Fa-f]{2})|([^\x00-\x7f])")


def pattern_atoms(patterns: list[str]) -> set[str]:
    """The property atoms of split patterns (\\p{..}, \\P{..}, \\s, \\d, \\w and their negations): with literal
    characters, the only ways a pattern can tell one code point from another."""
    return {m.group() for p in patterns for m in ATOM.finditer(p)}


def literal_codepoints(patterns: list[str]) -> list[int]:
    """Every code point a pattern names itself (escaped or raw non-ASCII; ASCII ones are below any plane)."""
    out = []
    for p in patterns:
        for m in LITERAL.finditer(p):
            text = next(g for g in m.groups() if g is not None)
            out.append(ord(text) if m.group(5) else int(text, 16))
    return out


def _unlike(values: bytes, lo: int, hi: int, value: int) -> list[int]:
    """The code points cp of [lo, hi) with values[cp] != value (a byte count first: usually there are none)."""
    window = bytes(values[lo:hi])
    if window.count(value) == len(window):
        return []
    return [lo + i for i, v in enumerate(window) if v != value]


def premise_problems(lo: int, hi: int, table: bytes, masks: dict[str, bytes], literals: list[int], facts) -> list[str]:
    """Why the code points of [lo, hi) are not all alike for the per-code-point checks (empty: they are, so a sample
    of them stands for all of them). Alike means: the same class in the engine-derived class table (class O), the
    same membership in every engine property atom of every admitted split pattern (so every pattern matches each
    of them exactly as it matches the others), no pattern naming one of them, and the same Unicode facts
    (`facts(cp)`: general category, combining class, decomposition, anchor predicate from the tables), which are
    all the anchor and NFC checks read."""
    problems = []
    odd = _unlike(table, lo, hi, O)
    if odd:
        problems.append(f"class table: {len(odd)} code points not of class O, first U+{odd[0]:04X}")
    for atom, mask in sorted(masks.items()):
        odd = _unlike(mask, lo, hi, mask[lo])
        if odd:
            problems.append(f"engine atom {atom}: {len(odd)} code points unlike U+{lo:04X}, first U+{odd[0]:04X}")
    named = sorted({cp for cp in literals if lo <= cp < hi or cp >= hi})
    if named:
        problems.append(f"split patterns name U+{named[0]:04X} (at or above the planes)")
    first = facts(lo)
    odd = [cp for cp in range(lo, hi) if facts(cp) != first]
    if odd or first[0] != "Cn":
        problems.append(f"Unicode facts: {len(odd)} code points unlike U+{lo:04X} {first}, first "
                        f"{f'U+{odd[0]:04X}' if odd else 'none'}")
    return problems


def unicode_facts(version: tuple[int, int]):
    """(general category, combining class, decomposition, anchor from the tables at `version`) of a code point
    (unassigned code points are class O: `table_anchor` is given O, the class test checks it apart)."""
    def facts(cp: int) -> tuple:
        ch = chr(cp)
        return (unicodedata2.category(ch), unicodedata2.combining(ch), unicodedata2.decomposition(ch),
                table_anchor(cp, O, version))
    return facts


def premise_inputs() -> tuple[dict[str, bytes], list[int]]:
    """The engine masks of every atom of every admitted split pattern (and of the classes and the [\\p{P}\\p{S}]
    refinement the class test reads), and the code points the patterns name."""
    patterns = [r for tok in FAMILIES.values() for r in split_stages(tok.admission_inputs.pre_tokenizer)[0]]
    atoms = pattern_atoms(patterns) | {r"\p{L}", r"\p{N}", r"\p{M}", r"\s", r"[\p{P}\p{S}]"}
    return {a: engine_mask(a) for a in sorted(atoms)}, literal_codepoints(patterns)


def test_unassigned_planes_are_alike(ledger) -> None:
    """Every code point of the unassigned planes 4-13 (U+40000..U+DFFFF) is alike in every input the
    per-code-point checks depend on (`premise_problems`), checked over every one of them: the premise that lets
    the default run check every 16th of them (`conftest.checked_scalars`; DELTA_EXHAUSTIVE=full checks all)."""
    lo, hi = UNASSIGNED_PLANES
    t0 = time.process_time()
    masks, literals = premise_inputs()
    problems = premise_problems(lo, hi, class_table(), masks, literals, unicode_facts(reference_nfc_version()))
    cpu = time.process_time() - t0
    print(f"unassigned planes U+{lo:04X}..U+{hi - 1:04X}: {hi - lo} code points x {len(masks)} engine atoms "
          f"{sorted(masks)}, {len(literals)} named code points; {len(problems)} problems; {cpu:.1f}s CPU")
    ledger.record("exhaustive", "unassigned_planes_alike", None, comparisons=(hi - lo) * (len(masks) + 2),
                  differences=len(problems), unit="code point x input",
                  details={"range": range_name(lo, hi), "atoms": sorted(masks), "problems": problems,
                           "cpu_seconds": round(cpu, 1), "sampled": None},
                  oracle="premise")  # every code point, whatever the stride
    assert not problems, problems
    assert len(masks) >= 10  # the o200k family's letter sub-classes and the rest are among them


def test_premise_check_names_each_unlike_code_point() -> None:
    """Test of the test: a code point made unlike the others in each input in turn (its class, one engine atom, a
    pattern naming it, its Unicode facts) is named by `premise_problems`; the unplanted inputs give none."""
    lo, hi = 0x40000, 0x40400
    table = bytes(CODE_SPACE)
    masks = {r"\p{L}": bytes(CODE_SPACE), r"\s": bytes(CODE_SPACE)}
    facts = {cp: ("Cn", 0, "", True) for cp in range(lo, hi)}
    assert premise_problems(lo, hi, table, masks, [0x41, 0x4E00], facts.__getitem__) == []
    planted_table = bytearray(table)
    planted_table[0x40123] = L
    planted_mask = bytearray(masks[r"\s"])
    planted_mask[0x403FF] = 1
    planted_facts = {**facts, 0x40200: ("Lo", 0, "", True)}
    cases = {
        "class table": (bytes(planted_table), masks, [], facts),
        "engine atom \\s": (table, {**masks, r"\s": bytes(planted_mask)}, [], facts),
        "split patterns name U+40010": (table, masks, [0x40010], facts),
        "split patterns name U+E0001": (table, masks, [0xE0001], facts),
        "Unicode facts": (table, masks, [], planted_facts),
    }
    for name, (t, m, lits, f) in cases.items():
        problems = premise_problems(lo, hi, t, m, lits, f.__getitem__)
        assert len(problems) == 1 and problems[0].startswith(name), (name, problems)
    assert premise_problems(lo, hi, table, masks, [], {cp: ("Co", 0, "", True) for cp in range(lo, hi)}.__getitem__)


# --- classes ------------------------------------------------------------------------------------------------

# contexts: (prefix, suffix); the observation is whether a piece starts right after the prefix (J=0 joined, S=1 split)
CONTEXTS = {"A+c": ("A", ""), "c+a": ("", "a"), ".+c": (".", ""), "1+c": ("1", ""), "!!+c": ("!!", "")}

# the behaviour the spec's classes predict, per family and context (J joined / S split), from the pattern text
EXPECTED = {
    "qwen2": {  # single digits: a code point after "1" is never joined to it
        "contexts": ("A+c", "c+a", "!!+c", "1+c"),
        "L": "JJSS", "N": "SSSS", "S": "SJSS", "CRLF": "SSJS", "O": "SJJS", "M": "SJJS",
    },
    "llama3": {
        "contexts": ("A+c", "c+a", "!!+c", "1+c"),
        "L": "JJSS", "N": "SSSJ", "S": "SJSS", "CRLF": "SSJS", "O": "SJJS", "M": "SJJS",
    },
    "o200k": {
        "contexts": ("A+c", "c+a", "!!+c", "1+c"),
        "L": "JJSS", "M": "JJJS", "N": "SSSJ", "S": "SJSS", "CRLF": "SSJS", "O": "SJJS",
    },
    "tekken": {  # o200k's letter runs without its contraction suffix, and single digits
        "contexts": ("A+c", "c+a", "!!+c", "1+c"),
        "L": "JJSS", "M": "JJJS", "N": "SSSS", "S": "SJSS", "CRLF": "SSJS", "O": "SJJS",
    },
    "deepseek": {
        "contexts": ("A+c", "c+a", ".+c", "1+c", "!!+c"),
        "L_ASCII": "JJJSS", "L": "JJSSS", "M": "JJSSS", "N": "SSSJS", "S": "SJSSS", "CRLF": "SSJSJ",
        "PS_ASCII": "SJJSJ", "PS": "SSJSJ", "O": "SJSSS", "CJK": "SSSSS",
    },
}
DEEPSEEK_CJK = regex.compile("[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]")


def behaviour_key(family: str, cp: int, cls: int, punct_or_symbol: bytes) -> str:
    """The spec class of cp, refined only where the family's pattern names characters itself (CR/LF; DeepSeek's
    CJK stage, its ASCII-only alternative, and its \\p{P}\\p{S} runs, read from the engine)."""
    ch = chr(cp)
    if ch in "\r\n":
        return "CRLF"
    name = CLASS_NAMES[cls]
    if family != "deepseek":
        return name
    if DEEPSEEK_CJK.match(ch):
        return "CJK"
    if cls == L:
        return "L_ASCII" if cp < 0x80 else "L"
    if cls == O and punct_or_symbol[cp]:
        return "PS_ASCII" if cp < 0x80 else "PS"
    return name


def class_prefixes(family: str) -> set[str]:
    """The prefixes of the family's class contexts ("A" of "A+c"; none for a family without a class test)."""
    return {CONTEXTS[ctx][0] for ctx in EXPECTED.get(family, {}).get("contexts", ()) if not CONTEXTS[ctx][1]}


@pytest.fixture(scope="session")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder every process of this pytest run shares (under xdist the parent of the workers' own folders)."""
    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "context-marks"
    folder.mkdir(exist_ok=True)
    return folder


@lru_cache(maxsize=64)
def context_marks(family: str, prefix: str, lo: int, hi: int, scratch: Path) -> np.ndarray:
    """`boundaries` of prefix + c at len(prefix) for every c of `scalars(lo, hi)`, in order: the observation the
    class test's context and the transition test's right side both read. One process of the run computes it and
    writes it to `scratch` (atomically: a whole file or none, under the file's lock, so a second process waits
    for it rather than computing it again); the others read it. A file of the wrong length
    (another code space sampling) is computed again."""
    cps = scalars(lo, hi)
    key = hashlib.sha256(repr((family, prefix, lo, hi, len(cps), exhaustive_stride())).encode()).hexdigest()[:32]
    path = scratch / f"{key}.marks"
    kept = _kept_marks(path, len(cps))
    if kept is not None:
        return kept
    with computing(path):  # a second worker needing these marks waits for the first, then reads its file
        kept = _kept_marks(path, len(cps))
        if kept is not None:
            return kept
        marks = bytes(context_boundaries(family_pretokenizer(family), prefix, cps))
        with tempfile.NamedTemporaryFile(dir=scratch, delete=False) as handle:
            handle.write(marks)
        os.replace(handle.name, path)
    return np.frombuffer(marks, dtype=np.uint8)


def _kept_marks(path: Path, count: int) -> np.ndarray | None:
    """The marks another process of the run wrote to `path`, if it holds `count` of them."""
    try:
        kept = path.read_bytes()
    except OSError:
        return None
    return np.frombuffer(kept, dtype=np.uint8) if len(kept) == count else None


@pytest.mark.parametrize("lo,hi", RANGES, ids=RANGE_IDS)
@pytest.mark.parametrize("family", sorted(set(FAMILIES) & set(EXPECTED)))  # derived: test_derived_exhaustive.py
def test_classes_agree_with_reference_pretokenizer(family: str, lo: int, hi: int, ledger, scratch: Path) -> None:
    """For every scalar value c in [lo, hi), the reference pre-tokenizer's boundaries in the probe contexts are
    exactly the ones the spec's class of c predicts for this split pattern."""
    t0 = time.process_time()
    tok = FAMILIES[family]
    pt = family_pretokenizer(family)
    table = class_table()
    ps = engine_mask(r"[\p{P}\p{S}]")
    cps = scalars(lo, hi)
    expected = EXPECTED[family]
    observed = []
    for ctx in expected["contexts"]:
        prefix, suffix = CONTEXTS[ctx]
        if not suffix:  # prefix+c: read with the transition test's right side
            observed.append(context_marks(family, prefix, lo, hi, scratch).tobytes())
            continue
        # c+a: the boundary of interest is after c
        observed.append(context_boundaries(pt, "", cps, suffix))
    # each code point's observations as one number (bit k: a split in context k), spelled out (S split, J joined)
    # once per distinct number
    got_bits = sum(np.frombuffer(obs, dtype=np.uint8).astype(np.int64) << k for k, obs in enumerate(observed))
    spell = {v: "".join("S" if v >> k & 1 else "J" for k in range(len(observed))) for v in set(got_bits.tolist())}
    wrong = []
    keys: dict[str, int] = {}
    for cp, got in zip(cps, got_bits.tolist(), strict=True):
        key = behaviour_key(family, cp, table[cp], ps)
        keys[key] = keys.get(key, 0) + 1
        if spell[got] != expected[key]:
            wrong.append((hex(cp), key, spell[got], expected[key]))
    cpu = time.process_time() - t0
    print(f"{family} ({tok.name}) {range_name(lo, hi)}: {len(cps)} scalar values x {len(expected['contexts'])} "
          f"contexts, keys {keys}, {len(wrong)} disagreements, {cpu:.1f}s CPU; surrogates excluded")
    ledger.record("exhaustive", f"classes_{family}", tok, comparisons=len(cps) * len(expected["contexts"]),
                  differences=len(wrong), unit="code point x context",
                  details={"keys": keys, "cpu_seconds": round(cpu, 1), **range_details(lo, hi),
                           "distinct_patterns": len(FAMILIES), "examples": wrong[:20], "covers": COVERS[family]},
                  oracle="premise")
    assert not wrong, f"{family}: {len(wrong)} code points behave unlike their class, e.g. {wrong[:10]}"


def _regex_module_table() -> bytes:
    """The class table the PyPI `regex` module (its own Unicode version) would give."""
    table = bytearray(CODE_SPACE)
    index = strided_scalars()
    text = "".join(chr(cp) for cp in index)
    for cls, pattern in ((M, r"\p{M}"), (N, r"\p{N}"), (L, r"\p{L}"), (S, r"[\t\n\x0b\x0c\r \x85\xa0\u1680"
                                                                          r"\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")):
        for m in regex.finditer(pattern, text):
            table[index[m.start()]] = cls
    return bytes(table)


def test_python_class_sources_disagree_only_by_unicode_version(ledger) -> None:
    """Python's `regex` module and `unicodedata` disagree with the engine's classes only on code points whose
    Unicode age differs between the versions (plus str.isspace's U+001C..U+001F); counts are reported."""
    t0 = time.process_time()
    engine = class_table()
    stdlib = python_class_table()
    regex_table = _regex_module_table()
    stdlib_diff = [cp for cp in strided_scalars() if stdlib[cp] != engine[cp]]
    regex_diff = [cp for cp in strided_scalars() if regex_table[cp] != engine[cp]]
    std_version = tuple(int(x) for x in unicodedata.unidata_version.split(".")[:2])
    unexplained_std = [cp for cp in stdlib_diff if not (age(cp) > std_version or 0x1C <= cp <= 0x1F)]
    unexplained_regex = [cp for cp in regex_diff if age(cp) != LATER]
    cpu = time.process_time() - t0
    print(f"python unicodedata {unicodedata.unidata_version}: {len(stdlib_diff)} disagreements; regex "
          f"{regex.__version__}: {len(regex_diff)} disagreements; unexplained {len(unexplained_std)}/"
          f"{len(unexplained_regex)}; {cpu:.1f}s CPU")
    ledger.record("exhaustive", "python_class_disagreement", None, comparisons=2 * len(strided_scalars()),
                  differences=len(unexplained_std) + len(unexplained_regex), unit="code point",
                  details={"unicodedata_version": unicodedata.unidata_version, "unicodedata_disagree": len(stdlib_diff),
                           "regex_version": regex.__version__, "regex_disagree": len(regex_diff),
                           **({"sampled": stride_note()} if stride_note() else {})}, oracle="premise")
    assert not unexplained_std and not unexplained_regex, (unexplained_std[:10], unexplained_regex[:10])


# --- anchors ------------------------------------------------------------------------------------------------


def test_reference_nfc_unicode_version_is_pinned(ledger) -> None:
    """The reference NFC implements exactly EXPECTED_NFC_VERSION (fails if the installed reference moves), and
    the pinned unicodedata2 tables are at least that version; U+113C2 U+113C2 (Unicode 16) stays uncomposed."""
    detected = reference_nfc_version()
    evidence = version_evidence()
    print(f"reference NFC = Unicode {version_string(detected)}; unicodedata2 tables {version_string(tables_version())};"
          f" evidence {[(version_string(v), e) for v, e in evidence.items()]}")
    ledger.record("exhaustive", "reference_nfc_version", None, comparisons=sum(e[0] for e in evidence.values()),
                  differences=0 if detected == EXPECTED_NFC_VERSION else 1, unit="probe",
                  details={"detected": version_string(detected), "tables": version_string(tables_version())},
                  oracle="premise")
    assert detected == EXPECTED_NFC_VERSION
    assert tables_version() >= detected
    assert nfc("\U000113c2\U000113c2") == "\U000113c2\U000113c2"


def _v_t_jamo(cps: list[int]) -> list[int]:
    """The V and T jamo among `cps` (the code points the Hangul probes exist for)."""
    return [cp for cp in cps if 0x1161 <= cp <= 0x1175 or 0x11A8 <= cp <= 0x11C2]


@pytest.mark.parametrize("lo,hi", RANGES, ids=RANGE_IDS)
def test_anchor_predicate_equals_tables_at_reference_version(lo: int, hi: int, ledger) -> None:
    """For every scalar value in [lo, hi): the runtime anchor predicate (reference normalizer and its probes)
    equals the predicate computed from unicodedata2's tables restricted to the detected Unicode version. Also:
    dropping the reorder probes changes no code point, dropping the Hangul probes changes exactly the V/T jamo
    (class L) of the range; the 48 of them all lie in the first range."""
    t0 = time.process_time()
    version = reference_nfc_version()
    table = class_table()
    runtime = is_anchor.__wrapped__
    cps = scalars(lo, hi)
    wrong, reorder_changed, hangul_changed = [], [], []
    anchors = 0
    for cp in cps:
        ch = chr(cp)
        got = runtime(ch, table[cp])
        anchors += got
        if got != table_anchor(cp, table[cp], version):
            wrong.append(hex(cp))
        if not got and table[cp] != M and nfc(ch) == ch:
            if runtime(ch, table[cp], False, True):
                reorder_changed.append(cp)
            if runtime(ch, table[cp], True, False):
                hangul_changed.append(cp)
    cpu = time.process_time() - t0
    print(f"anchors {range_name(lo, hi)}: {len(cps)} scalar values, {anchors} anchors, {len(wrong)} disagreements "
          f"with the tables at Unicode {version_string(version)}; reorder-probe knob changes {len(reorder_changed)}, "
          f"Hangul-probe knob changes {len(hangul_changed)}; {cpu:.1f}s CPU; surrogates excluded")
    ledger.record("exhaustive", "anchor_predicate_tables", None, comparisons=len(cps), differences=len(wrong),
                  unit="code point", details={"anchors": anchors, "version": version_string(version),
                                              "cpu_seconds": round(cpu, 1), **range_details(lo, hi),
                                              "reorder_knob_changes": len(reorder_changed),
                                              "hangul_knob_changes": len(hangul_changed)}, oracle="premise")
    assert not wrong, wrong[:20]
    assert reorder_changed == []
    jamo_vt = _v_t_jamo(cps)
    assert hangul_changed == jamo_vt and all(table[cp] == L for cp in hangul_changed)
    assert exhaustive_stride() > 1 or len(hangul_changed) == (V_T_JAMO if lo <= 0x1161 < hi else 0)


# --- transitions --------------------------------------------------------------------------------------------

# The partners of the transitions (one representative of each class). On the right side the letter and digit
# partners are the class test's contexts "A+c" and "1+c", so both tests read one reference observation of every code
# point after them (`context_marks`); on the left side a code point's partner follows it.
RIGHT_PARTNERS = {L: ("A",), N: ("1",), O: ("!",), S: (" ",), M: ("\u0300",)}
LEFT_PARTNERS = {L: ("a",), N: ("12",), O: ("!",), S: (" ",), M: ("\u0300",)}
CARVED_PAIRS = {(O, S), (L, O)}  # the pairs whose carve-outs depend on the right character


@lru_cache(maxsize=4)
def _class_array() -> np.ndarray:
    """`class_table()` as a numpy lookup array (built once per worker)."""
    return np.frombuffer(class_table(), dtype=np.uint8)


@lru_cache(maxsize=8)
def _scalar_array(lo: int, hi: int) -> np.ndarray:
    """`scalars(lo, hi)` as a numpy array (built once per worker and range)."""
    return np.array(scalars(lo, hi), dtype=np.int64)


@lru_cache(maxsize=8)
def _by_class_tuples(lo: int, hi: int) -> tuple[tuple[int, ...], ...]:
    """The scalar values of [lo, hi) of each class 0..4 (ascending), computed once per worker and range (the
    transition tests of both sides and the end-of-input tests of every family read the same)."""
    cps = _scalar_array(lo, hi)
    classes = _class_array()[cps]
    return tuple(tuple(cps[classes == c].tolist()) for c in range(5))


def _by_class(lo: int = 0, hi: int = CODE_SPACE) -> dict[int, tuple[int, ...]]:
    """The scalar values of [lo, hi) by class (ascending)."""
    return dict(enumerate(_by_class_tuples(lo, hi)))


@lru_cache(maxsize=4)
def _first_of_class(stride: int) -> dict[int, int]:
    """The first scalar value of each class in the whole code space (at the stride); built once per worker."""
    table = class_table()
    first: dict[int, int] = {}
    for cp in range(0, CODE_SPACE, stride):
        if not SURROGATES[0] <= cp <= SURROGATES[1]:
            first.setdefault(table[cp], cp)
            if len(first) == 5:
                break
    return first


@pytest.mark.parametrize("lo,hi", RANGES, ids=RANGE_IDS)
@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_accepted_transition_is_a_boundary(family: str, side: str, lo: int, hi: int, ledger,
                                                 scratch: Path) -> None:
    """For every pair the family accepts (the floor and its pattern's proved pairs, spec.transitions): every scalar
    value in [lo, hi) of class Y after an X partner (side "right"), and every scalar value in [lo, hi) of class X
    before a Y partner (side "left"), gets a piece boundary at the transition (carve-out pairs excluded)."""
    t0 = time.process_time()
    rules = rules_for_family(family)
    tok = FAMILIES[family]
    pt = family_pretokenizer(family)
    table = class_table()
    first_of_class = _first_of_class(exhaustive_stride())
    by_class = _by_class(lo, hi)
    # (prefix, code points, suffix, marks): every code point c of a group probed as prefix + c + suffix
    groups: list[tuple[str, list[int], str, np.ndarray]] = []
    read = 0  # probes read from a class context's observation
    for x, y in sorted(rules.pairs):
        carved: set[int] = set()
        if side == "right" and (x, y) in CARVED_PAIRS:
            verdicts = ((cp, pair_verdict(RIGHT_PARTNERS[x][0][-1], chr(cp), table, rules)) for cp in by_class[y])
            carved = {cp for cp, verdict in verdicts if verdict != ACCEPTED}
            # only CR, LF and the apostrophe are carved out: every other code point of the pair is probed
            assert carved <= {0x0A, 0x0D, 0x27}, f"{len(carved)} code points carved out of {(x, y)}"
        for partner in RIGHT_PARTNERS[x] if side == "right" else ():  # every code point as the right side
            cps = [cp for cp in by_class[y] if cp not in carved]
            if partner in class_prefixes(family):
                index = np.searchsorted(_scalar_array(lo, hi), np.asarray(cps, dtype=np.int64))
                groups.append((partner, cps, "", context_marks(family, partner, lo, hi, scratch)[index]))
                read += len(cps)
            else:
                groups.append((partner, cps, "", np.frombuffer(context_boundaries(pt, partner, cps), np.uint8)))
        for partner in LEFT_PARTNERS[y] if side == "left" else ():  # every code point as the left side
            if pair_verdict(chr(first_of_class[x]), partner[0], table, rules) != ACCEPTED:
                continue  # the partner itself is carved out (the verdict depends only on the right character)
            cps = list(by_class[x])
            groups.append(("", cps, partner, np.frombuffer(context_boundaries(pt, "", cps, partner), np.uint8)))
    probed = sum(len(cps) for _, cps, _, _ in groups)
    missing = [(prefix + chr(cps[i]) + suffix, len(prefix) or 1) for prefix, cps, suffix, marks in groups
               for i in np.flatnonzero(marks == 0).tolist()]
    cpu = time.process_time() - t0
    print(f"{family} ({tok.name}) {range_name(lo, hi)}: {probed} transition probes (every code point "
          f"as the {side} side of the {len(rules.pairs)} pairs; {read} of them observed in the class contexts), "
          f"{len(missing)} without a boundary; {cpu:.1f}s CPU; surrogates excluded")
    ledger.record("exhaustive", f"transition_boundaries_{side}_{family}", tok, comparisons=probed,
                  differences=len(missing), unit="probe",
                  details={"cpu_seconds": round(cpu, 1), **range_details(lo, hi), "read_from_class_contexts": read,
                           "examples": [repr(m) for m in missing[:10]], "covers": COVERS[family]}, oracle="premise")
    assert not missing, missing[:10]


LEFT_CONTEXTS = {L: "a", N: "12", O: "!", M: "a\u0300", S: "a"}
RIGHT_PARTNER = {L: "1", N: "a", O: " ", M: "1", S: "1"}  # M->N and S->N: pairs of some patterns only


@pytest.mark.parametrize("lo,hi", RANGES, ids=RANGE_IDS)
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_left_piece_closes_identically_at_end_of_input(family: str, lo: int, hi: int, ledger) -> None:
    """For every scalar value c in [lo, hi) of a left class X (L, N, O) after a same-class context: the pieces of
    context+c alone (the text ends at the transition) equal the pieces of context+c+r that end at or before the
    transition, where r starts a pair (X, class(r)) the family accepts (M and S on the left only where its pattern's
    proved pairs have them)."""
    t0 = time.process_time()
    rules = rules_for_family(family)
    tok = FAMILIES[family]
    pt = family_pretokenizer(family)
    table = class_table()
    by_class = _by_class(lo, hi)
    closing = []
    checked = 0
    for x in (L, N, O, M, S):
        right = RIGHT_PARTNER[x]
        # the pair's verdict reads the left character's class (X) and the right character only: one per class
        if not by_class[x] or pair_verdict(chr(by_class[x][0]), right, table, rules) != ACCEPTED:
            continue
        end = len(LEFT_CONTEXTS[x]) + 1  # the transition: where context+c ends
        for cp in by_class[x]:
            prefix = LEFT_CONTEXTS[x] + chr(cp)
            checked += 1
            alone = pt.pre_tokenize_str(prefix)
            # the pieces of context+c+r ending at or before the transition are a prefix of them (pieces are in
            # order): they equal `alone` iff the first len(alone) do and the next one ends after the transition
            full = pt.pre_tokenize_str(prefix + right)
            if full[: len(alone)] != alone or (len(full) > len(alone) and full[len(alone)][1][1] <= end):
                closing.append(prefix)
    cpu = time.process_time() - t0
    print(f"{family} ({tok.name}) {range_name(lo, hi)}: {checked} end-of-input checks, {len(closing)} differ; "
          f"{cpu:.1f}s CPU; surrogates excluded")
    ledger.record("exhaustive", f"end_of_input_{family}", tok, comparisons=checked, differences=len(closing),
                  unit="code point", details={"cpu_seconds": round(cpu, 1), **range_details(lo, hi),
                                              "examples": [repr(c) for c in closing[:10]], "covers": COVERS[family]},
                  oracle="premise")
    assert not closing, closing[:10]


# --- the batch route -----------------------------------------------------------------------------------------

BATCH_CHECK_SAMPLE = 600  # random scalar values per family, besides every stratum code point


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_batched_boundaries_equal_one_call_per_probe(family: str, ledger) -> None:
    """The batch routes are the definition: for every stratum code point (carve-outs, class changes, the battery's
    hazards) and a seeded sample of the others, in every context the class and transition tests probe (the class
    contexts, and the partners on both sides), `context_boundaries` (one context at a time) and `boundaries` (all
    the probes at once) both equal one reference call per probe."""
    t0 = time.process_time()
    pt = family_pretokenizer(family)
    hazards = set(stratum())
    pool = [cp for cp in scalars() if cp not in hazards]
    cps = sorted(hazards | set(random.Random(f"batch-{family}").sample(pool, BATCH_CHECK_SAMPLE)))
    contexts = [*CONTEXTS.values(), *((p, "") for ps in RIGHT_PARTNERS.values() for p in ps),
                *(("", p) for ps in LEFT_PARTNERS.values() for p in ps)]
    probes = [prefix + chr(cp) + suffix for prefix, suffix in contexts for cp in cps]
    at = [len(prefix) if prefix else 1 for prefix, _ in contexts for _ in cps]
    single = single_call_boundaries(pt, probes, at)
    by_context = b"".join(context_boundaries(pt, prefix, cps, suffix) for prefix, suffix in contexts)
    batched = boundaries(pt, probes, at)
    differ = [(probes[i], at[i], route) for route, marks in (("context", by_context), ("joined", batched))
              for i in range(len(probes)) if marks[i] != single[i]]
    cpu = time.process_time() - t0
    print(f"{family}: {len(probes)} probes ({len(cps)} code points x {len(contexts)} contexts), {sum(single)} "
          f"boundaries, {len(differ)} differ from one call per probe (both routes); {cpu:.1f}s CPU")
    ledger.record("exhaustive", f"batched_boundaries_{family}", FAMILIES[family], comparisons=2 * len(probes),
                  differences=len(differ), unit="probe x route",
                  details={"code_points": len(cps), "contexts": len(contexts), "sample": BATCH_CHECK_SAMPLE,
                           "batch": BATCH, "cpu_seconds": round(cpu, 1), "examples": [repr(d) for d in differ[:10]]},
                  oracle="self")
    assert not differ, differ[:10]
    assert 0 < sum(single) < len(probes)


def test_the_readers_of_a_shared_observation_follow_its_writer(request: pytest.FixtureRequest) -> None:
    """In the collected order (the one xdist hands out in consecutive chunks), each right-side transition test of a
    family and range comes right after the class test of that family and range, whose observation after "A" and "1"
    it reads (`context_marks`): conftest.keep_shared_observations_together."""
    position = {item.nodeid: k for k, item in enumerate(request.session.items)}
    here = request.node.nodeid.split("::")[0]
    pairs = [(f"{here}::test_classes_agree_with_reference_pretokenizer[{family}-{rid}]",
              f"{here}::test_every_accepted_transition_is_a_boundary[{family}-right-{rid}]")
             for family in sorted(set(FAMILIES) & set(EXPECTED)) for rid in RANGE_IDS]
    collected = [(w, r) for w, r in pairs if w in position and r in position]
    if not collected:
        pytest.skip("the class and transition tests are not both collected in this run")
    apart = [(w, r) for w, r in collected if position[r] != position[w] + 1]
    assert not apart, apart[:3]
