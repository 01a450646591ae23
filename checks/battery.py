"""The adversarial seam battery: a deterministic, versioned generator of strings built around cut and repair seams.

`battery(tok, profile, seed)` returns the cases of one tokenizer; the same (BATTERY_VERSION, tokenizer file, profile,
seed) give the same strings byte for byte, and `battery_digest` names them (recorded with every result). Case i
is generated from its own `random.Random` seeded by SHA-256 of (version, seed, tokenizer, profile, i), so any
case can be regenerated alone. Strings are not random text: each is a hazard core placed in ordinary context,
and it carries the positions to test:

- `cuts`: every offset from two before the core to two after it (accepted and refused ones alike; the
  variant under test decides which it accepts);
- `splits`: repair splits S | D at (and, in the full profile, next to) the seams of the core, for cases
  whose S is longer than the first window (so the window does not cover S); the `long_window` cases place a
  hazard exactly at the window start ws and at ws + margin for one window width 512 * 2^k (k = 0..5), with a
  witness-free letter run after it so that every narrower window fails and width k is the one used.

Hazards (`HAZARDS`): special-token strings whole, cut, overlapping (where the tokenizer has overlapping strings,
else shared-prefix near-overlaps) and adjacent; role markers (the special-token cut's seams) beside
NFC-sensitive text, CR/LF, apostrophes, digits and other markers, at the text's ends too; NFC composition
exclusions and other class-changing decompositions (U+0958), decomposed accents, marks out of canonical order,
Hangul L/V/T jamo and LV + T,
characters whose NFC changes with their neighbour; CR/LF and CR | LF; apostrophes and contractions after
letters; whitespace runs before words and before newlines; digit runs across a cut; CJK and kana runs (the
DeepSeek split, including the marks and other-class characters inside its ranges); multi-byte characters whose
bytes the tokenizer's BPE divides between tokens; emoji with ZWJ and variation selectors; every general
category; the Unicode-version skew between the engine and Python; periodic blocks longer than the first
window whose last unit D extends (where matching by IDs alone splices a unit twice); digit runs longer than the
first window in scripts whose digits no token joins, extended by ASCII digits (where a window starting inside the run
groups the digits in another phase than the whole text); newline runs longer than the first window after a
punctuation character, then other whitespace and a newline (where a window starting inside the run joins its last
newline with that whitespace); mark runs longer than the first window between punctuation (where a window starting
among the marks reads them as a letter piece). Profiles: `ci` (a few
hundred strings per tokenizer, for the default gate) and `full` (100,000 strings per tokenizer).
"""

from __future__ import annotations

import hashlib
import json
import random
import string
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache

from delta_suite.checks import palette as P
from delta_suite.frozen.errors import SuiteError
from delta_suite.frozen.loader import FrozenTokenizer
from delta_suite.spec.admission import PIECE_LOCAL, WHOLE_WORD, admission_of
from delta_suite.spec.classes import L, M, N, O, S, class_table
from delta_suite.spec.piece_local import CANDIDATES, COMPOSES_WITH_NEXT, piece_local_rules
from delta_suite.spec.repair import MARK_TAIL_PAIRS
from delta_suite.spec.whole_word import whole_word_rules

BATTERY_VERSION = "delta-suite.battery.v7"  # v2: periodic_tail; v3: its contraction units; v4: role_marker;
# v5: digit_phase; v6: newline_tail, nfc_mark_order's composing branch, special_overlap's chains; v7: mark_tail
FIRST_WINDOW = 512
WINDOW_DOUBLINGS = 5
WINDOW_WIDTHS = tuple(FIRST_WINDOW << k for k in range(WINDOW_DOUBLINGS + 1))
CUT_REACH = 2  # candidate cuts extend this far beyond the core on each side
LONG_CORE = 64  # cores longer than this get candidate cuts only around their edges and seams


class UnknownProfile(SuiteError):
    """A battery profile name that is not defined."""


@dataclass(frozen=True)
class Profile:
    """Battery size and density: `strings` cases per tokenizer, every `long_every`-th a long_window case, every
    `long_prefix_every`-th short case with a prefix longer than the first window (and so repair splits), at most
    `max_splits` repair splits per short case, and long_window splits at ws and ws + margin exactly (`jitter`
    False) or also one character either side (True)."""
    name: str
    strings: int
    long_every: int
    long_prefix_every: int = 2
    max_splits: int = 6
    jitter: bool = True


PROFILES = {
    "ci": Profile("ci", strings=216, long_every=36, long_prefix_every=3, max_splits=2, jitter=False),
    "full": Profile("full", strings=100_000, long_every=200),
}


@dataclass(frozen=True)
class BatteryCase:
    """One battery string with the positions to test on it."""
    index: int
    hazard: str
    text: str
    cuts: tuple[int, ...]  # candidate cut offsets, 0 < b < len(text)
    splits: tuple[int, ...]  # repair splits s: S = text[:s], D = text[s:], 0 < s < len(text)
    window: int | None = None  # for long_window cases: the window width the hazard is placed for

    def as_json(self) -> dict:
        return {
            "index": self.index,
            "hazard": self.hazard,
            "text": self.text,
            "cuts": list(self.cuts),
            "splits": list(self.splits),
            "window": self.window,
        }


def get_profile(name: str) -> Profile:
    """The named profile; UnknownProfile names the ones that exist."""
    try:
        return PROFILES[name]
    except KeyError:
        raise UnknownProfile(f"unknown battery profile {name!r}; known: {', '.join(PROFILES)}") from None


# --- hazard cores ------------------------------------------------------------------------------------------------


class _Draw:
    """The per-case random source with the tokenizer's pools."""

    def __init__(self, tok: FrozenTokenizer, rng: random.Random) -> None:
        self.tok, self.rng = tok, rng
        self.specials = tok.special_strings or ("<|endoftext|>",)

    def one(self, seq):
        return seq[self.rng.randrange(len(seq))]

    def cls_char(self, cls: int) -> str:
        return P.pick(self.rng, P.class_pool(cls))

    def word(self) -> str:
        return self.one(P.WORDS)

    def neighbour(self) -> str:
        """A short piece of one class or a common ASCII shape, to sit next to a hazard."""
        r = self.rng.random()
        if r < 0.5:
            return self.one(("a", "x", "Z", "1", "42", " ", "  ", ".", "/", "'", "\n", "\r\n", "-", "(", "é", "中", "",
                             ".com", "(self", "_id", "\u2019s", "/api", "-based"))
        if r < 0.8:
            return self.word()
        return self.cls_char(self.one((L, N, O, S, M)))

    def special(self) -> str:
        return self.one(self.specials)

    def special_len2(self) -> str:
        """A special-token string of at least two characters (one that a cut can fall inside). For a whole-word
        tokenizer, half the draws come from the strings with a free pair inside (`_free_inside`): only those put
        the guard to work there, and a vocabulary that holds every marker as a token (Gemma 3's 6,415) may list
        them far past the first 256."""
        free = _free_inside(self.tok)
        if free and self.rng.random() < 0.5:
            return self.one(free)
        longer = [s for s in self.specials[:256] if len(s) >= 2]
        return self.one(longer) if longer else "<|x|>"


@lru_cache(maxsize=16)
def _free_inside(tok: FrozenTokenizer) -> tuple[str, ...]:
    """The added-token strings of a whole-word tokenizer with a pair inside that the free-pair rule would accept
    (empty for any other tokenizer)."""
    if admission_of(tok).kind != WHOLE_WORD:
        return ()
    rules = whole_word_rules(tok)
    return tuple(s for s in tok.special_strings
                 if any(rules.pair_refusal(a, b) is None for a, b in zip(s, s[1:], strict=False)))


Core = tuple[str, list[int]]  # the hazard text and its seam offsets


def _join(*parts: str) -> Core:
    """Concatenate parts; the seams are the junctions between them."""
    seams, pos = [], 0
    for p in parts[:-1]:
        pos += len(p)
        seams.append(pos)
    return "".join(parts), seams


def h_special_whole(d: _Draw) -> Core:
    return _join(d.neighbour(), d.special(), d.neighbour())


def h_special_cut(d: _Draw) -> Core:
    s = d.special_len2()
    k = d.rng.randint(1, len(s) - 1)
    return d.one(
        (
            lambda: _join(d.neighbour(), s[:k], d.neighbour()),
            lambda: _join(d.neighbour(), s[k:], d.neighbour()),
            lambda: _join(s[:k], s, d.neighbour()),
            lambda: _join(d.neighbour(), s, s[k:]),
            lambda: _join(s[:k], s[k:] + s[:k], s[k:]),
        )
    )()


@lru_cache(maxsize=16)
def overlapping_pairs(tok: FrozenTokenizer) -> tuple[tuple[str, str, int], ...]:
    """(a, b, k) for special-token strings where the last k characters of a are the first k of b."""
    specials = [s for s in tok.special_strings if len(s) >= 2]
    by_prefix: dict[str, list[str]] = {}
    for s in specials:
        for k in range(1, len(s)):
            by_prefix.setdefault(s[:k], []).append(s)
    return tuple((a, b, k) for a in specials for k in range(1, len(a)) for b in by_prefix.get(a[len(a) - k :], ()))


def h_special_overlap(d: _Draw) -> Core:
    """Overlapping special-token strings (a's last k characters are b's first k), or strings sharing a prefix where
    none overlap. Where a string overlaps itself, 4 in 10 cases are a chain of it longer than the first window
    (each link a[:-k], then a[-k:] closing it): the whole text selects every other occurrence from the chain's
    start, a window starting inside the chain selects its own; the splits are at the chain's end and one link
    before it, so both phases of the window start occur."""
    pairs = overlapping_pairs(d.tok)
    selfs = [(a, k) for a, b, k in pairs if a == b]
    if selfs and d.rng.random() < 0.4:
        a, k = d.one(selfs)
        link = a[:-k]
        n = (FIRST_WINDOW + d.rng.randint(40, 160)) // len(link) + 1
        head = d.neighbour()
        chain = head + link * n
        return chain + a[-k:] + d.neighbour(), [len(chain) - len(link), len(chain)]
    if pairs and d.rng.random() < 0.7:
        a, b, k = d.one(pairs)
        return _join(d.neighbour(), a[:-k], a[-k:], b[k:], d.neighbour())
    s, t = d.special_len2(), d.special_len2()
    common = 0
    while common < min(len(s), len(t)) - 1 and s[common] == t[common]:
        common += 1
    j = d.rng.randint(1, max(1, common)) if common else 1
    return _join(d.neighbour(), s[:j], t, s[j:] if d.rng.random() < 0.5 else "", d.neighbour())


def h_special_adjacent(d: _Draw) -> Core:
    sep = d.one(("", "", "", " ", "\n", "a", "1"))
    return _join(d.neighbour(), d.special(), sep + d.special(), d.special() if d.rng.random() < 0.4 else "")


ROLE_SEAM_LEFT = ("e\u0301", "\u0301", "a\u0308", "\u037e", "\u1100", "\u212b", "\r\n", "\n", "\r", "\n\n", "it'",
                  "'", "123", "4", " ", "  ", "\t", ".", "user", "\u4e2d", "", "\u0915\u094d")
ROLE_SEAM_RIGHT = ("\u0301", "\u0301e", "\u0308a", "\u037e", "\u1161", "\u11a8", "\r\n", "\n", "\r", "\n\n", "'s",
                   "'", "123", "4", " ", "  x", "\t", ".", "user\n", "assistant", "\u4e2d", "", "\u093f")
ROLE_EDGE_SHARE = 0.3  # role_marker cases with no context before (or after) the core: a marker at a text's end


def h_role_marker(d: _Draw) -> Core:
    """A role marker between the characters a chat template puts beside it and the ones that stress the other
    stages: NFC-sensitive text (decomposed accents, U+037E, jamo), CR/LF, apostrophes, digits, spaces; sometimes
    two markers, overlapping ones where the tokenizer has them."""
    left, right = d.one(ROLE_SEAM_LEFT), d.one(ROLE_SEAM_RIGHT)
    pairs = overlapping_pairs(d.tok)
    r = d.rng.random()
    if pairs and r < 0.5:  # the second string's end is an unselected occurrence's edge; punctuation after it
        a, b, k = d.one(pairs)  # joins the text before it into one piece in the whole text
        return _join(left, a[:-k], a[-k:] + b[k:], d.one((".", "!", "?!", "/", "'s", "-", right)))
    if r < 0.7:
        return _join(left, d.special(), d.one(ROLE_SEAM_LEFT) + d.special(), right)
    return _join(left, d.special(), right)


MERGING_FOLLOWERS = (".com", ".get", "(self", "/api", ".html", "-based", "_id", "@gmail", ".py", "#include", ".org",
                     "(\"", ".append", "_name", "-in", "\u2019s", ".length", "->", "::")  # fmt: skip


def h_nfc_exclusion(d: _Draw) -> Core:
    x = d.one(P.nfc_class_changers())
    follow = d.one(("/", "\n", " ", ".", "'", "1", "a", "\r\n", "!?", "-", ":", " x", "\u0301", "", "中", "\t"))
    if d.rng.random() < 0.6:  # other-class character then letters: the mark NFC leaves joins the punctuation run,
        follow = d.one(MERGING_FOLLOWERS)  # and these punctuation + letters pieces are single tokens
    return _join(d.neighbour(), x * d.rng.randint(1, 2), follow, d.neighbour())


def h_nfc_decomposed(d: _Draw) -> Core:
    base = d.one(("e", "a", "o", "u", "A", "E", "n", "c", "s", "z", "i", "\u03b1", "\u0438"))
    marks = "".join(d.one(P.CCC_MARKS) for _ in range(d.rng.randint(1, 2)))
    return _join(d.neighbour(), base, marks, d.one((".", " ", "1", "/", "\n", "'", "x", "")), d.neighbour())


def h_nfc_mark_order(d: _Draw) -> Core:
    """Marks out of canonical order after a base; in 4 of 10 cases a vowel, a mark that does not compose with it
    and then one that does, so NFC composes the base with the mark after the next one (a window of the pair around
    the cut after the base sees no change)."""
    if d.rng.random() < 0.4:
        base = d.one(("a", "e", "o", "u"))
        return _join(d.neighbour(), base, d.one(("\u0316", "\u0334")), d.one(("\u0301", "\u0308", "\u0300")),
                     d.neighbour())
    marks = [d.one(P.CCC_MARKS) for _ in range(d.rng.randint(2, 4))]
    base = d.one(("a", "e", "\u05d0", "\u0915", "1", ".", " ", ""))
    return _join(d.neighbour(), base + "".join(marks[:1]), "".join(marks[1:]), d.neighbour())


def h_nfc_hangul(d: _Draw) -> Core:
    lj, vj, tj = d.one(P.HANGUL_L), d.one(P.HANGUL_V), d.one(P.HANGUL_T)
    lv = chr(0xAC00 + 28 * d.rng.randrange(399))
    pieces = d.one(((lj, vj), (lj, vj, tj), (lv, tj), (lv, vj), ("1", vj), ("1", tj), (".", vj), (lj, lj + vj),
                    (lv, tj + tj), (tj, "1"), (vj, "."), (lj, "/")))  # fmt: skip
    return _join(d.neighbour(), *pieces, d.neighbour())


def h_nfc_context(d: _Draw) -> Core:
    if d.rng.random() < 0.6:
        a, b = d.one(P.CONTEXT_PAIRS)
        return _join(d.neighbour(), a, b, d.one(("/", " ", "1", ".", "\n", "")), d.neighbour())
    x = d.one(P.SINGLETONS)
    return _join(d.neighbour(), x, d.one(("/", " ", "1", ".", "\n", "a", "")))


def h_crlf(d: _Draw) -> Core:
    punct = d.one(P.PUNCT)
    brk = d.one(("\r\n", "\r", "\n", "\n\n", "\r\n\r\n", " \n", "\r \n", "\n\r", "\r\r\n"))
    return _join(d.neighbour(), punct, brk, d.one(("x", " y", "1", "", "\t", ".", "\n")))


CONTRACTIONS = (("don", "t"), ("it", "s"), ("I", "m"), ("you", "re"), ("can", "t"), ("that", "s"), ("I", "ve"),
                ("I", "ll"), ("I", "d"), ("didn", "t"), ("isn", "t"), ("couldn", "t"), ("It", "s"), ("He", "s"),
                ("we", "re"), ("they", "ve"), ("DON", "T"), ("IT", "S"))  # fmt: skip


def h_apostrophe(d: _Draw) -> Core:
    if d.rng.random() < 0.6:
        word, suffix = d.one(CONTRACTIONS)
        apo = "'"
    else:
        word = d.one(("don", "it", "they", "I", "DON", "o", "caf\u00e9", "na\u00efve", "x", "\u00c9t\u00e9"))
        apo, suffix = d.one(("'", "'", "\u2019", "''")), d.one(P.APOSTROPHE_SUFFIXES)
    return _join(d.neighbour(), word, apo, suffix, d.one((" ", ".", "x", "'", "1", "")))


def h_whitespace_run(d: _Draw) -> Core:
    run = "".join(d.one(P.WHITESPACE) for _ in range(d.rng.randint(1, 4)))
    after = d.one(("word", "x", "\n", "\r\n", "1", ".", "\n\n", "  \n", "\u4e2d", ""))
    return _join(d.word(), *list(run), after)


def h_digit_run(d: _Draw) -> Core:
    n = d.rng.randint(1, 12)
    r = d.rng.random()
    if r < 0.6:
        digits = [d.one(string.digits) for _ in range(n)]
    else:
        pool = P.category_pool(d.one(("Nd", "Nd", "No", "Nl")))
        digits = [P.pick(d.rng, pool) if d.rng.random() < 0.5 else d.one(string.digits) for _ in range(n)]
    before = d.one(("", "a", "x", " ", "$", "(", ".", "v", "\u00e9", "-", "\u4e2d"))
    after = d.one(("", "a", " ", ".", "%", "px", ",", "\n", "\u00b2"))
    return _join(before, *digits, after)


def h_cjk_kana(d: _Draw) -> Core:
    def ch() -> str:
        r = d.rng.random()
        if r < 0.35:
            return chr(d.rng.randint(0x4E00, 0x9FA5))
        if r < 0.55:
            return chr(d.rng.randint(0x3041, 0x3096))
        if r < 0.75:
            return chr(d.rng.randint(0x30A1, 0x30FA))
        if r < 0.9:
            return d.one(P.CJK_IN_RANGE_ODD)
        return d.one(("a", "1", " ", "\u3001", "\u3002", "\uff01", "\u9fa6", "\u3400", "\u3005"))

    return _join(*[ch() for _ in range(d.rng.randint(2, 8))])


def h_multibyte_bpe(d: _Draw) -> Core:
    pairs = P.divided_pairs(d.tok)
    if not pairs:
        return _join("\u547d", "\u6570")
    pair = d.one(pairs)
    extra = d.one(pairs) if d.rng.random() < 0.3 else ""
    return _join(d.neighbour(), pair[0], pair[1:] + extra[:1], extra[1:], d.neighbour())


def h_emoji_zwj(d: _Draw) -> Core:
    parts: list[str] = []
    for _ in range(d.rng.randint(1, 3)):
        parts.append(d.one(P.EMOJI))
        if d.rng.random() < 0.7:
            parts.append(d.one(P.EMOJI_JOINERS))
    if d.rng.random() < 0.2:
        parts = [d.one(string.digits), "\ufe0f", "\u20e3", *parts]
    return _join(d.neighbour(), *parts, d.neighbour())


def h_general_category(d: _Draw) -> Core:
    cat = P.GENERAL_CATEGORIES[d.rng.randrange(len(P.GENERAL_CATEGORIES))]
    pool = P.category_pool(cat)
    x = P.pick(d.rng, pool) if pool else "?"
    y = P.pick(d.rng, pool) if pool and d.rng.random() < 0.4 else ""
    return _join(d.cls_char(d.one((L, N, O, S, M))), x, y, d.cls_char(d.one((L, N, O, S, M))), d.neighbour())


def h_unicode_skew(d: _Draw) -> Core:
    pool = P.unicode_skew_pool()
    digits = [cp for cp in pool if class_table()[cp] == N]
    if digits and d.rng.random() < 0.5:  # a digit the engine groups and Python does not: the grouping shifts
        x = P.pick(d.rng, tuple(digits))
        return _join(*d.one((("1", x, "234"), ("12", x, "3456"), (x, "123"), ("7", x, x, "89"))))
    x = P.pick(d.rng, pool)
    shape = d.one((("a", x, "b"), ("x", x, " "), (".", x, "."), (x, "'s"), ("\u4e2d", x), (x, "\n"), ("1", x, "234")))
    return _join(*shape)


PERIODIC_UNITS = (" ab", " the", ".x", " go", "ab ", " 12", " \u4e2d", "-a", " x,", "\u00e9t ", " \u0434\u0430")
PERIODIC_NEXT = ("c", "m", "y", "es", "x", "3", "\u6587", "b", "y", "e", "\u043d")
# Contraction units: o200k pre-tokenizes "'s's" in pairs whose phase depends on where the scan starts, while the
# tokens stay "'s"; a run matched without a witness then ends on the wrong phase ("'s" "e" instead of "'" "se").
PHASE_UNITS = (("'s", "e"), ("'t", "o"), ("'S", "E"), ("'d", "a"))


def h_periodic_tail(d: _Draw) -> Core:
    """A periodic block longer than the first window, then a character that extends its last unit: matching by
    IDs alone ties the true alignment with one shifted by a unit and, preferring the later end, splices a unit
    twice; with contraction units, a run accepted without a witness ends on the wrong pre-token phase."""
    if d.rng.random() < 0.35:
        unit, nxt = d.one(PHASE_UNITS)
    else:
        k = d.rng.randrange(len(PERIODIC_UNITS))
        unit, nxt = PERIODIC_UNITS[k], PERIODIC_NEXT[k]
    block = unit * ((FIRST_WINDOW + d.rng.randint(40, 160)) // len(unit))
    return _join(d.word(), block, nxt + d.one(("", " ", ".", " end")))


# Digits outside ASCII that byte-level BPE never joins: each is one token or its bytes (checked per tokenizer by
# properties/test_battery.py::test_phase_digits_never_share_a_token).
PHASE_DIGITS = ("\u0660\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668\u0669",  # Arabic-Indic (Nd)
                "\uff10\uff11\uff12\uff13\uff14\uff15\uff16\uff17\uff18\uff19",  # fullwidth (Nd)
                "\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079\u2070")  # superscripts (No)


def h_digit_phase(d: _Draw) -> Core:
    """A digit run longer than the first window, then ASCII digits that extend it. Patterns that group digits by
    up to three (\\p{N}{1,3}) pre-tokenize the run in a phase set by where the scan starts, so a window starting
    inside the run groups it differently from the whole text; as no token joins two digits, the two streams still
    agree token for token over the run (keys equal, no class-transition witness: N->N is not accepted), and only the
    appended digits show the phase. Repair accepted on such a run without a witness splices the wrong groups.
    The run length puts the first window's start off the whole text's phase ((n - 512) % 3 != 0)."""
    digits = d.one(PHASE_DIGITS)
    n = FIRST_WINDOW + d.rng.randint(40, 160)
    if (n - FIRST_WINDOW) % 3 == 0:
        n += 1
    run = "".join(d.one(digits) for _ in range(n))
    return _join(d.one(("x ", "a", " ", "$", "(")), run, d.one(("1", "12", "123", "1234")) + d.one(("", " ", ".", "a")))


# Punctuation that the byte-level vocabularies keep apart from a following newline run (".", ")", ";" and "}" merge
# with the first newlines on some, which moves the run's chunking off the phase below).
TAIL_HEADS = ("!", ":", "?", "]", ",", " !", "!!")
TAIL_FILLS = (" ", "  ", "   ", "    ", "\t")
TAIL_WINDOW_NEWLINES = 497  # 1 mod 16: the newlines the first window keeps of the run
TAIL_PHASE = 64  # the window starts a multiple of this into the run


def h_newline_tail(d: _Draw) -> Core:
    """A punctuation character, a newline run longer than the first window, other whitespace, a newline, a word;
    the one seam is the end of the word. Patterns with ` ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*` (qwen2, llama3, o200k, tekken)
    keep the punctuation and the run in one piece that ends where the run does, while a window starting inside
    the run matches `\\s*[\\r\\n]+` there: one piece through the whitespace to the next newline. Where the vocabulary
    has tokens joining a newline with the whitespace after it ("\\n \\n", "\\n\\t\\n"), the window's last newline
    joins them, while the window's and the whole text's chunks of the run agree token for token (newline to
    newline: no accepted transition, no witness); a repair accepted on that run splices the joined token. The run
    length puts the first window's start a multiple of TAIL_PHASE into the run (aligned with every power-of-two
    chunking of it) and leaves TAIL_WINDOW_NEWLINES (1 mod 16) of it in the window, where the joining falls."""
    head, fill = d.one(TAIL_HEADS), d.one(TAIL_FILLS)
    word = "abcdefghijklmn"[: FIRST_WINDOW - 1 - len(fill) - TAIL_WINDOW_NEWLINES]
    run = "\n" * (TAIL_WINDOW_NEWLINES + TAIL_PHASE * d.rng.randint(1, 3))
    body = head + run + fill + "\n" + word
    return body + d.one((" end", "x", ".", "\n")), [len(body)]


def h_mark_tail(d: _Draw) -> Core:
    """Two punctuation characters, a run of one mark longer than the first window, a punctuation character that
    byte-level vocabularies can join with the mark (spec.repair.MARK_TAIL_PAIRS), then a tail; the seam is right
    after the punctuation. Where a letter alternative takes marks and the punctuation class does too (o200k,
    tekken), the whole text reads head, marks and punctuation as one punctuation piece, while a window starting
    among the marks reads them as a letter piece ending before the punctuation; each mark is one token in both,
    so the streams agree over the run (mark to mark: no witness), and where the whole text's last mark joins the
    punctuation's first bytes in one token, a repair accepted on the run splices the window's split instead."""
    mark, punct = d.one(MARK_TAIL_PAIRS)
    head = d.one(("!!", "((", "!?", "..."))
    body = head + mark * (FIRST_WINDOW + d.rng.randint(40, 160)) + punct
    return body + d.one((" end", "x", ".", "\n", " 1")), [len(body)]


HAZARD_BUILDERS: dict[str, Callable[[_Draw], Core]] = {
    "special_whole": h_special_whole,
    "special_cut": h_special_cut,
    "special_overlap": h_special_overlap,
    "special_adjacent": h_special_adjacent,
    "role_marker": h_role_marker,
    "nfc_exclusion": h_nfc_exclusion,
    "nfc_decomposed": h_nfc_decomposed,
    "nfc_mark_order": h_nfc_mark_order,
    "nfc_hangul": h_nfc_hangul,
    "nfc_context": h_nfc_context,
    "crlf": h_crlf,
    "apostrophe": h_apostrophe,
    "whitespace_run": h_whitespace_run,
    "digit_run": h_digit_run,
    "cjk_kana": h_cjk_kana,
    "multibyte_bpe": h_multibyte_bpe,
    "emoji_zwj": h_emoji_zwj,
    "general_category": h_general_category,
    "unicode_skew": h_unicode_skew,
    "periodic_tail": h_periodic_tail,
    "digit_phase": h_digit_phase,
    "newline_tail": h_newline_tail,
    "mark_tail": h_mark_tail,
}
SHORT_HAZARDS = tuple(HAZARD_BUILDERS)


def h_separator(d: _Draw) -> Core:
    """A piece-local tokenizer's separator candidates (`spec.piece_local.CANDIDATES`, proved or not) between
    neighbours that test each premise: punctuation runs (a Whitespace stage groups them), control characters a
    normalizer drops, compatibility characters and marks a normal form changes, digits, spaces (a Metaspace joins
    a space to the next word, U+0338 after the candidates it composes with); half the time the candidate is one the
    file's premises refused, so a control that skips a premise meets its own counterexamples."""
    left = d.one((d.word(), d.word() + d.one(P.PUNCT), "\x0b", "\ufb01", "e\u0301", "\uff76", "7", " ", "\x00"))
    right = d.one((d.word(), d.one(P.PUNCT) + d.word(), "\x0c", "\u0301", "\uff9e", "8", " " + d.word(), "\n",
                   "\u0338" + d.word()))  # U+0338 composes after "<", "=" and ">" under NFC and NFKC
    refused = [c for c, _, _ in piece_local_rules(d.tok).refused] if admission_of(d.tok).piece_local else []
    if refused and d.rng.random() < 0.5:  # half the time a refused candidate, between the contexts that refute it
        middle = d.one(refused)
        if middle in COMPOSES_WITH_NEXT:  # "word=" + U+0338: one piece after NFC or NFKC
            return _join(d.word(), middle, "\u0338" + d.word())
        return _join(d.word() + d.one(("", d.one(P.PUNCT))), middle, d.word())  # "ab\x0bcd", "ab?!cd", "ab\tcd"
    return _join(left, d.one(CANDIDATES) * d.rng.randint(1, 2), right)


PIECE_LOCAL_BUILDERS: dict[str, Callable[[_Draw], Core]] = {"separator": h_separator}
BUILDERS = {**HAZARD_BUILDERS, **PIECE_LOCAL_BUILDERS}
HAZARDS = (*SHORT_HAZARDS, "long_window")  # every kind's; a piece-local battery adds PIECE_LOCAL_BUILDERS


def short_hazards(tok: FrozenTokenizer) -> tuple[str, ...]:
    """The short hazards drawn for `tok`: every tokenizer's, and for a piece-local one (`spec.piece_local`) its
    separator hazard too (the batteries of the other kinds are unchanged by it)."""
    if admission_of(tok).kind == PIECE_LOCAL:
        return (*SHORT_HAZARDS, *PIECE_LOCAL_BUILDERS)
    return SHORT_HAZARDS


# --- context and placement --------------------------------------------------------------------------------------


def context(d: _Draw, n: int) -> str:
    """Ordinary text of at least n characters: words, numbers, punctuation, spaces and line breaks."""
    out: list[str] = []
    size = 0
    while size < n:
        r = d.rng.random()
        if r < 0.6:
            piece = d.word()
        elif r < 0.75:
            piece = d.one(P.PUNCT)
        else:
            piece = str(d.rng.randint(0, 99999)) if r < 0.85 else ""
        sep = d.one((" ", " ", " ", " ", "\n", ", ", ". ", "\n\n", "\t"))
        out.append(piece + sep)
        size += len(piece) + len(sep)
    return "".join(out)


def _letters(d: _Draw, n: int) -> str:
    """A witness-free run of n lowercase ASCII letters (one pre-token under every pattern)."""
    return "".join(d.rng.choices(string.ascii_lowercase, k=n))


def _short_case(tok: FrozenTokenizer, d: _Draw, index: int, hazard: str, prof: Profile) -> BatteryCase:
    core, seams = BUILDERS[hazard](d)
    if not core:
        core, seams = "a.", [1]
    long_prefix = index % prof.long_prefix_every == 0
    prefix = context(d, d.rng.randint(FIRST_WINDOW + 24, FIRST_WINDOW + 200) if long_prefix else d.rng.randint(0, 24))
    prefix = prefix[: FIRST_WINDOW + 200] if long_prefix else prefix[: d.rng.randint(0, 24)]
    suffix = context(d, d.rng.randint(0, 16))[: d.rng.randint(0, 16)]
    if hazard == "role_marker" and not long_prefix:  # markers at the text's ends
        prefix = "" if d.rng.random() < ROLE_EDGE_SHARE else prefix
        suffix = "" if d.rng.random() < ROLE_EDGE_SHARE else suffix
    text = prefix + core + suffix
    p0 = len(prefix)
    if len(core) <= LONG_CORE:
        cuts = tuple(range(max(1, p0 - CUT_REACH), min(len(text) - 1, p0 + len(core) + CUT_REACH) + 1))
    else:  # a long core (a periodic block): around its edges and seams only
        near = {p0 + s + j for s in (0, *seams, len(core)) for j in range(-CUT_REACH - 1, CUT_REACH + 2)}
        cuts = tuple(sorted(b for b in near if 0 < b < len(text)))
    splits: tuple[int, ...] = ()
    if long_prefix or p0 + max(seams, default=0) > FIRST_WINDOW:
        valid = set(range(FIRST_WINDOW + 1, len(text)))
        if prof.jitter:  # at and next to the core's start and every seam
            marks = sorted({p0 + s + j for s in [0, *seams] for j in (-1, 0, 1)} & valid)
        else:  # exactly at the seams inside the core
            marks = [p0 + s for s in seams if p0 + s in valid]
        splits = tuple(marks[: prof.max_splits])
    return BatteryCase(index, hazard, text, cuts, splits)


def _long_case(tok: FrozenTokenizer, d: _Draw, index: int, k: int, prof: Profile) -> BatteryCase:
    """A hazard at the window start ws and at ws + margin for width 512 * 2^k, then a witness-free letter run."""
    width = WINDOW_WIDTHS[k]
    hazard = SHORT_HAZARDS[d.rng.randrange(len(SHORT_HAZARDS))]
    core, seams = HAZARD_BUILDERS[hazard](d)
    prefix = context(d, d.rng.randint(40, 120))
    mixed = context(d, 48)[:48]
    h = len(prefix)  # the hazard core starts here
    ends = sorted({h + width - off + j for off in (0, tok.margin) for j in ((-1, 0, 1) if prof.jitter else (0,))})
    body = prefix + core + mixed
    filler = _letters(d, max(0, ends[-1] - len(body)))
    tail = d.one(("x", " y", "'s", "1", "\u0301", "\n", ".", "\u4e2d", "z z")) + context(d, 24)[:24]
    text = body + filler + tail
    cuts = tuple(range(max(1, h - CUT_REACH), min(len(text) - 1, h + len(core) + CUT_REACH) + 1))
    splits = tuple(s for s in ends if FIRST_WINDOW < s < len(text))
    return BatteryCase(index, "long_window", text, cuts, splits, window=width)


def case_seed(tok: FrozenTokenizer, profile: str, seed: int, index: int) -> int:
    """The seed of case `index`: SHA-256 of the battery version, seed, tokenizer file, profile and index."""
    return P.derived_seed(BATTERY_VERSION, seed, tok.name, tok.sha256, profile, index)


def battery_case(tok: FrozenTokenizer, profile: str, seed: int, index: int) -> BatteryCase:
    """Case `index` of the battery, generated on its own (the same inputs give the same case)."""
    prof = get_profile(profile)
    if not 0 <= index < prof.strings:
        raise IndexError(f"case {index} outside the {profile} battery of {prof.strings}")
    d = _Draw(tok, random.Random(case_seed(tok, profile, seed, index)))
    slot = index % prof.long_every
    if slot == prof.long_every - 1:
        return _long_case(tok, d, index, (index // prof.long_every) % len(WINDOW_WIDTHS), prof)
    hazards = short_hazards(tok)
    hazard = hazards[(index - index // prof.long_every) % len(hazards)]
    return _short_case(tok, d, index, hazard, prof)


def iter_battery(
    tok: FrozenTokenizer, profile: str = "ci", seed: int = 0, start: int = 0, stop: int | None = None
) -> Iterator[BatteryCase]:
    """The battery's cases in order (optionally a slice [start, stop)), generated lazily."""
    prof = get_profile(profile)
    stop = prof.strings if stop is None else min(stop, prof.strings)
    for i in range(start, stop):
        yield battery_case(tok, profile, seed, i)


@lru_cache(maxsize=32)
def _battery(tok: FrozenTokenizer, profile: str, seed: int) -> tuple[BatteryCase, ...]:
    return tuple(iter_battery(tok, profile, seed))


def battery(tok: FrozenTokenizer, profile: str = "ci", seed: int = 0) -> list[BatteryCase]:
    """All cases of the battery for `tok` (memoized per process)."""
    return list(_battery(tok, profile, seed))


def case_bytes(case: BatteryCase) -> bytes:
    """The canonical serialization of one case that the digest covers."""
    return json.dumps(case.as_json(), ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode("utf-8")


@lru_cache(maxsize=32)
def battery_digest(tok: FrozenTokenizer, profile: str = "ci", seed: int = 0) -> str:
    """SHA-256 over the battery version, profile, seed, tokenizer digest and every case in order."""
    h = hashlib.sha256()
    h.update(f"{BATTERY_VERSION}\0{profile}\0{seed}\0{tok.name}\0{tok.sha256}\0".encode())
    for case in iter_battery(tok, profile, seed):
        h.update(case_bytes(case))
        h.update(b"\n")
    return h.hexdigest()


# The named strings of the hazard cores above and of the palette they draw from (its small named sets, not its
# class or category pools): every code point in them is one the battery places at a seam on purpose.
HAZARD_STRINGS: tuple[tuple[str, ...], ...] = (
    ROLE_SEAM_LEFT, ROLE_SEAM_RIGHT, PERIODIC_UNITS, PERIODIC_NEXT, PHASE_DIGITS, TAIL_HEADS, TAIL_FILLS,
    tuple(a + b for a, b in PHASE_UNITS), ("\ufe0f", "\u20e3", "\u2019", "\u0316", "\u0334", "\u0300"),
    P.CCC_MARKS, P.HANGUL_L, P.HANGUL_V, P.HANGUL_T, tuple(a + b for a, b in P.CONTEXT_PAIRS), P.SINGLETONS,
    P.CJK_IN_RANGE_ODD, P.EMOJI, P.EMOJI_JOINERS, P.APOSTROPHE_SUFFIXES, P.WHITESPACE, P.PUNCT,
)


@lru_cache(maxsize=1)
def hazard_code_points() -> frozenset[int]:
    """Every code point the battery names as a hazard (`HAZARD_STRINGS`): a sample of the code space that must
    stand for the whole (a strided per-code-point check) includes each of them."""
    return frozenset(ord(c) for group in HAZARD_STRINGS for s in group for c in s)
