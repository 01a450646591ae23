"""Deterministic case generation for campaigns: a batch's cases depend only on (seed, tokenizer, path, batch index).

Two sources, chosen per batch by its index:
- "battery" (all batches but every `seam_every`-th: 4 in the ci profile, 16 in full; the throughput source):
  consecutive cases of the battery generator (`checks.battery.battery_case`, full profile, an endless stream over
  derived battery seeds) with the battery's own candidate cuts, and for repair one case per battery split
  (S | D at the seams, at ws and ws + margin);
- "seam": texts of the seam families (`fuzz.seam_sampler`: the pools of the Hypothesis strategies in
  `fuzz.strategies`, drawn in bulk from a seeded `random.Random` without the Hypothesis engine, whose per-draw
  bookkeeping cost more than the reference's encodes of the texts), seeded from the batch, so the same seed gives
  the same texts in any process.

Seam cut cases carry every interior offset of short texts (a seeded sample of long ones) as candidate cuts. Seam
repair cases build S so that a seam text straddles the window start ws = len(S) - W or ws + margin for a window
width W of the profile, and start D with a piece that continues S across the junction (a mark, a Hangul vowel
or trailing jamo, the rest of a special-token string, a digit or whitespace run, LF after CR, a contraction);
every 8th seam repair case is instead a long plain session (4,096-8,192 characters, no special-token string).
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass
from functools import lru_cache

from delta_suite.checks import battery
from delta_suite.frozen.loader import FrozenTokenizer
from delta_suite.fuzz import strategies
from delta_suite.fuzz.cases import FuzzCase
from delta_suite.fuzz.seam_sampler import SeamSampler
from delta_suite.spec.classes import CLASS_NAMES, O, class_table

GENERATOR_VERSION = "fuzz-generate.v3"  # v3: seam texts from fuzz.seam_sampler (v2: long plain repair cases)
MAX_CANDIDATE_CUTS = 96


@dataclass(frozen=True)
class Profile:
    """Sizes of one campaign profile."""
    name: str
    batch_size: int
    pieces: int  # seam pieces per cut text (upper bound)
    windows: tuple[int, ...]  # repair window widths to place hazards at
    seam_every: int  # every seam_every-th batch comes from the seam families (`fuzz.seam_sampler`)


PROFILES = {
    "ci": Profile("ci", batch_size=32, pieces=24, windows=(512, 1024), seam_every=4),
    "full": Profile("full", batch_size=128, pieces=48, windows=(512, 1024, 2048, 4096, 8192, 16384), seam_every=16),
}


def derive_seed(*parts: object) -> int:
    """A 63-bit seed from the campaign seed and the coordinates of a batch or worker (stable across runs)."""
    digest = hashlib.sha256("\0".join(map(str, (GENERATOR_VERSION, *parts))).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def batch_source(batch_index: int, profile: Profile) -> str:
    """Which source generates a batch: every `profile.seam_every`-th batch comes from the seam strategies."""
    return "seam" if batch_index % profile.seam_every == profile.seam_every - 1 else "battery"


def battery_version() -> str:
    """The battery generator's version (recorded per batch)."""
    return battery.BATTERY_VERSION


def generator_digest() -> str:
    """A digest of what generation depends on: this module's version, the battery's and the seam pieces."""
    h = hashlib.sha256(f"{GENERATOR_VERSION}\0{battery_version()}\0".encode())
    for piece in strategies.FIXED_SEAMS:
        h.update(piece.encode("utf-8", "surrogatepass") + b"\0")
    return h.hexdigest()[:16]


# --- pieces ------------------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _class_members() -> tuple[tuple[int, ...] | None, ...]:
    """Code points of each engine class (surrogates excluded); None for O, which is drawn by rejection instead."""
    table = class_table()
    return tuple(
        None if cls == O else tuple(m.start() for m in re.finditer(re.escape(bytes([cls])), table)
                                    if not 0xD800 <= m.start() < 0xE000)
        for cls in range(len(CLASS_NAMES))
    )


def _class_codepoint(rng: random.Random, cls: int) -> str:
    """A random code point of engine class `cls`."""
    members = _class_members()[cls]
    if members is not None:
        return chr(rng.choice(members))
    table = class_table()
    while True:  # class O holds 87% of the code space: rejection takes about one draw
        cp = rng.randrange(0x110000)
        if table[cp] == cls and not 0xD800 <= cp < 0xE000:
            return chr(cp)


@lru_cache(maxsize=32)
def _special_pieces(tok: FrozenTokenizer) -> tuple[str, ...]:
    out: list[str] = []
    for s in tok.special_strings[:64]:
        out += [s, s[: len(s) // 2], s[len(s) // 2 :], s[:-1], s[1:]]
    return tuple(p for p in out if p)


class Splicer:
    """Seam texts from a seeded `random.Random`: seam pieces, special-token fragments, engine-class code points."""

    def __init__(self, tok: FrozenTokenizer, rng: random.Random) -> None:

        self.rng = rng
        self.fixed = strategies.FIXED_SEAMS
        self.nfc = strategies.NFC_CHANGING + strategies.MARKS_OUT_OF_ORDER + strategies.HANGUL
        self.specials = _special_pieces(tok) or ("<|none|>",)
        self.members = _class_members()

    def piece(self) -> str:
        r, roll = self.rng, self.rng.random()
        if roll < 0.40:
            return r.choice(self.fixed)
        if roll < 0.55:
            return r.choice(self.nfc)
        if roll < 0.70:
            return r.choice(self.specials)
        if roll < 0.85:
            return _class_codepoint(r, r.randrange(len(self.members)))
        return r.choice(("a", "b", "Hello", "world", "the", " ", "  ", "0", "42", "x", ".", ",", "\n"))

    def text(self, max_pieces: int) -> str:
        return "".join(self.piece() for _ in range(self.rng.randint(1, max_pieces)))

    def filler(self, length: int, max_pieces: int) -> str:
        """Exactly `length` code points of seam text."""
        out = ""
        while len(out) < length:
            out += self.text(max_pieces)
        return out[:length]


def _seam_texts(tok: FrozenTokenizer, n: int, seed: int, max_pieces: int) -> list[str]:
    """`n` seam texts of 1..max_pieces pieces, drawn by `fuzz.seam_sampler.SeamSampler` from `seed`."""
    return SeamSampler(tok, random.Random(seed)).texts(n, 1, max_pieces)


def _splice_texts(tok: FrozenTokenizer, n: int, seed: int, max_pieces: int) -> list[str]:
    splicer = Splicer(tok, random.Random(seed))
    return [splicer.text(max_pieces) for _ in range(n)]


def battery_cases(tok: FrozenTokenizer, seed: int, start: int, count: int) -> list:
    """Battery cases `start .. start + count` of an endless battery stream: the full profile's strings, then the
    same profile under the next derived seed (battery seed derive_seed(seed, "battery", round))."""
    size = battery.get_profile("full").strings
    out = []
    for i in range(start, start + count):
        round_, index = divmod(i, size)
        out.append(battery.battery_case(tok, "full", derive_seed(seed, "battery", round_) if round_ else seed, index))
    return out


def _battery_batch(tok: FrozenTokenizer, path: str, seed: int, batch_index: int, size: int, origin: str):
    """Cut cases from the battery's cases and candidate cuts; repair cases from its splits, one split per case."""
    if path == "cut":
        return [FuzzCase("cut", c.text, cuts=tuple(c.cuts), origin=f"{origin}:{c.hazard}")
                for c in battery_cases(tok, seed, batch_index * size, size) if c.cuts]
    out: list[FuzzCase] = []
    start = batch_index * size * 2
    while len(out) < size:
        for c in battery_cases(tok, seed, start, size):
            out += [FuzzCase("repair", c.text, split=s, origin=f"{origin}:{c.hazard}") for s in c.splits]
        start += size
    return out[:size]


# --- cases -------------------------------------------------------------------------------------------------


def cut_case(text: str, rng: random.Random, origin: str) -> FuzzCase | None:
    """A cut case: every interior offset of a short text, a seeded sample of a long one; None under 2 chars."""
    if len(text) < 2:
        return None
    offsets = range(1, len(text))
    if len(offsets) > MAX_CANDIDATE_CUTS:
        offsets = sorted(rng.sample(offsets, MAX_CANDIDATE_CUTS))
    return FuzzCase("cut", text, cuts=tuple(offsets), origin=origin)


PLAIN_JUNCTIONS = (
    ("e", "\u0301"),
    ("a", "\u0301\u0316"),
    ("\u1100", "\u1161"),
    ("\uac00", "\u11a8"),
    ("12", "34"),
    ("7", "0"),
    ("  ", " x"),
    ("\n ", " \n"),
    ("\r", "\n"),
    ("don", "'t"),
    ("it", "'s"),
    ("\u0915", "\u093c"),
    ("x", "\u200d\U0001f600"),
)
LONG_PLAIN_EVERY = 8  # in seam repair batches, every 8th case is a long plain session (`long_plain_repair_case`)
LONG_PLAIN_CHARS = (4096, 8192)


def _junction(tok: FrozenTokenizer, rng: random.Random) -> tuple[str, str]:
    """(end of S, start of D): a pair that a repair must not treat as a boundary without checking."""
    special = rng.choice(tok.special_strings) if tok.special_strings else "<|x|>"
    k = rng.randint(1, max(1, len(special) - 1))
    choices = (*PLAIN_JUNCTIONS[:4], (special[:k], special[k:]), *PLAIN_JUNCTIONS[4:])
    return rng.choice(choices)


def without_specials(tok: FrozenTokenizer, text: str) -> str:
    """`text` with every special-token string removed (repeatedly, so a removal cannot form a new occurrence)."""
    specials = [s for s in tok.special_strings if s]
    while any(s in text for s in specials):
        for s in specials:
            text = text.replace(s, "")
    return text


def long_plain_repair_case(tok: FrozenTokenizer, splicer: Splicer, origin: str) -> FuzzCase:
    """A repair case shaped like a long chat session at serving length: S of 4,096 to 8,192 characters of seam
    pieces with no special-token string anywhere, ending on one side of a junction that D continues (whitespace
    runs, marks, jamo, digits, contractions). Implementations that reuse work only past some context length, or
    only on text without added tokens, are reached here (fastokens' whitespace split needs both)."""
    rng = splicer.rng
    while True:  # a junction piece next to filler can form a special string only for exotic added tokens: redraw
        head_end, d_start = rng.choice(PLAIN_JUNCTIONS)
        s = without_specials(tok, splicer.filler(rng.randint(*LONG_PLAIN_CHARS), 6)) + head_end
        d = d_start + without_specials(tok, splicer.filler(rng.randint(0, 64), 4))
        if without_specials(tok, s + d) == s + d:
            return FuzzCase("repair", s + d, split=len(s), origin=f"{origin}:long_plain")


def repair_case(tok: FrozenTokenizer, splicer: Splicer, profile: Profile, origin: str) -> FuzzCase:
    """A repair case with a hazard across ws or ws + margin for one window width, and across the S | D junction."""
    rng = splicer.rng
    width = rng.choice(profile.windows)
    hazard = splicer.text(3)
    at_margin = rng.random() < 0.5
    jitter = rng.randint(-2, 2)
    # characters from the hazard's middle to the end of S: W (hazard straddles ws) or W - margin (ws + margin)
    to_end = width - (tok.margin if at_margin else 0) + jitter
    head_end, d_start = _junction(tok, rng)
    tail = splicer.filler(max(0, to_end - len(hazard) // 2 - len(head_end)), 6) + head_end
    prefix = splicer.filler(rng.randint(tok.margin + 16, 128), 6)  # keeps len(S) > W, so the window is partial
    s = prefix + hazard + tail
    d = d_start + splicer.filler(rng.randint(0, 64), 4)
    return FuzzCase("repair", s + d, split=len(s), origin=origin)


def generate_batch(
    tok: FrozenTokenizer, path: str, seed: int, batch_index: int, profile: Profile, size: int | None = None
) -> list[FuzzCase]:
    """The cases of one batch: the same (seed, tokenizer, path, batch index, profile) give the same cases."""
    size = profile.batch_size if size is None else size
    bseed = derive_seed(seed, tok.name, path, batch_index, profile.name)
    source = batch_source(batch_index, profile)
    rng = random.Random(bseed)
    origin = f"{source}:{batch_index}"
    if source == "battery":
        return _battery_batch(tok, path, seed, batch_index, size, origin)
    if path == "cut":
        make = _seam_texts if source == "seam" else _splice_texts
        texts = make(tok, size + size // 4, bseed, profile.pieces)
        cases = [c for c in (cut_case(t, rng, origin) for t in texts) if c is not None]
        while len(cases) < size:  # texts under 2 characters have no cut; top up from the splicer
            extra = cut_case(Splicer(tok, rng).text(profile.pieces) + "ab", rng, origin)
            assert extra is not None
            cases.append(extra)
        return cases[:size]
    if path == "repair":
        splicer = Splicer(tok, rng)
        if source == "seam":
            # hazards from the seam families, placed by the splicer's geometry
            pool = _seam_texts(tok, size, bseed, 4)
            splicer.text = lambda max_pieces, _pool=pool: rng.choice(_pool) or "a"  # type: ignore[method-assign]
        return [long_plain_repair_case(tok, splicer, origin) if i % LONG_PLAIN_EVERY == LONG_PLAIN_EVERY - 1
                else repair_case(tok, splicer, profile, origin) for i in range(size)]
    raise ValueError(f"unknown path {path!r}")


def warm_up(tok: FrozenTokenizer, seed: int) -> None:
    """Build the generators' per-process tables (battery palettes, seam strategy pools, class members) once, so
    batch timings measure steady-state generation; the caller times this as setup."""
    for i in range(battery.get_profile("full").long_every):
        battery.battery_case(tok, "full", seed, i)
    _seam_texts(tok, 2, seed, 2)
    _class_members()
