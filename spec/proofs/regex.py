"""A parser for exactly the regex constructs the six split patterns use, into an AST over single-character atoms.

Supported: alternation, concatenation, bracket classes (negation, ranges, \\p{..}, \\s, \\S, escapes, literal
characters), \\p{..} / \\P{..} / \\s / \\S outside brackets, the greedy quantifiers ?, *, +, {m}, {m,} and {m,n},
non-capturing and case-insensitive groups ((?:...), (?i:...)) and lookaheads ((?=...), (?!...)). Anything else
(lookbehind, anchors, backreferences, lazy or possessive quantifiers, inline flags other than i, '.') is refused
with `PatternSyntaxUnsupported`: a construct the proofs do not model must never be silently approximated.

Every atom keeps the exact source text that matches it as a standalone regex (the bracket text verbatim, or a
literal wrapped in (?i:...) inside a case-insensitive group), so its membership is read off the reference
engine itself, never from this parser's idea of the class.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from delta_suite.frozen.errors import SuiteError


class PatternSyntaxUnsupported(SuiteError):
    """The pattern uses a construct the proof model does not cover; `construct` names it (one of `CONSTRUCTS`)."""

    def __init__(self, message: str, construct: str = "syntax") -> None:
        super().__init__(message)
        self.construct = construct


# the names a refusal gives the constructs the parser does not model (admission's split_pattern_unsupported:NAME)
CONSTRUCTS = ("lookbehind", "anchor", "word_boundary", "backreference", "lazy_quantifier", "possessive_quantifier",
              "capturing_group", "named_group", "atomic_group", "inline_flag", "dot", "class_escape",
              "nested_bracket", "repetition", "escape", "syntax")
# escapes that stand for a position or an earlier group, not a character
_POSITION_ESCAPES = {"b": "word_boundary", "B": "word_boundary", "A": "anchor", "z": "anchor", "Z": "anchor",
                     "G": "anchor", "k": "backreference"}


@dataclass(frozen=True)
class Atom:
    """One position matching a single code point; `source` is a standalone regex for exactly that set."""

    source: str
    negated: bool = False
    parts: tuple[tuple[str, str], ...] = ()  # ("prop", "L") ("nprop", "L") ("space", "") ("nonspace", "")
    # ("char", c) ("range", "a-z"); membership = (any part) xor negated, chars case-folded iff icase
    icase: bool = False


@dataclass(frozen=True)
class Sym:
    atom: Atom


@dataclass(frozen=True)
class Cat:
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Alt:
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Rep:
    item: Node
    lo: int
    hi: int | None  # None = unbounded


@dataclass(frozen=True)
class Look:
    negative: bool
    item: Node


Node = Sym | Cat | Alt | Rep | Look

_SIMPLE_ESCAPES = {"r": "\r", "n": "\n", "t": "\t", "f": "\f", "v": "\v", "a": "\a", "e": "\x1b"}
_META = set("\\[](){}|?*+.^$")


def _escape_literal(c: str) -> str:
    """A standalone regex matching exactly the literal character `c`."""
    if c in _META or c == "-":
        return "\\" + c
    return {"\r": r"\r", "\n": r"\n", "\t": r"\t"}.get(c, c)


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def error(self, what: str, construct: str = "syntax") -> PatternSyntaxUnsupported:
        return PatternSyntaxUnsupported(f"{what} at offset {self.pos} of {self.text!r}", construct)

    def peek(self) -> str | None:
        return self.text[self.pos] if self.pos < len(self.text) else None

    def take(self) -> str:
        if self.pos >= len(self.text):
            raise self.error("unexpected end of pattern")
        c = self.text[self.pos]
        self.pos += 1
        return c

    def parse(self) -> Node:
        node = self.alternation(icase=False)
        if self.pos != len(self.text):
            raise self.error("unbalanced ')'")
        return node

    def alternation(self, icase: bool) -> Node:
        branches = [self.concatenation(icase)]
        while self.peek() == "|":
            self.take()
            branches.append(self.concatenation(icase))
        return branches[0] if len(branches) == 1 else Alt(tuple(branches))

    def concatenation(self, icase: bool) -> Node:
        items: list[Node] = []
        while self.peek() not in (None, "|", ")"):
            items.append(self.quantified(icase))
        return items[0] if len(items) == 1 else Cat(tuple(items))

    def quantified(self, icase: bool) -> Node:
        node = self.primary(icase)
        while True:
            c = self.peek()
            if c == "?":
                self.take()
                node = Rep(node, 0, 1)
            elif c == "*":
                self.take()
                node = Rep(node, 0, None)
            elif c == "+":
                self.take()
                node = Rep(node, 1, None)
            elif c == "{":
                node = Rep(node, *self.braces())
            else:
                return node
            if self.peek() in ("?", "+"):
                kind = "lazy_quantifier" if self.peek() == "?" else "possessive_quantifier"
                raise self.error("lazy or possessive quantifier", kind)

    def braces(self) -> tuple[int, int | None]:
        start = self.pos
        self.take()
        end = self.text.find("}", self.pos)
        if end < 0:
            raise self.error("unterminated {")
        body = self.text[self.pos : end]
        self.pos = end + 1
        lo_s, comma, hi_s = body.partition(",")
        if not lo_s.isdigit() or (hi_s and not hi_s.isdigit()):
            self.pos = start
            raise self.error(f"unsupported repetition {{{body}}}", "repetition")
        lo = int(lo_s)
        hi = (int(hi_s) if hi_s else None) if comma else lo
        return lo, hi

    def primary(self, icase: bool) -> Node:
        c = self.take()
        if c == "(":
            return self.group(icase)
        if c == "[":
            return Sym(self.bracket(icase))
        if c == "\\":
            return Sym(self.escape_atom(icase))
        if c in ".^$":
            raise self.error(f"unsupported construct {c!r}", "dot" if c == "." else "anchor")
        if c in ")|?*+{":
            raise self.error(f"unexpected {c!r}")
        return Sym(self.literal_atom(c, icase))

    def group(self, icase: bool) -> Node:
        if self.peek() != "?":
            raise self.error("capturing group (unsupported)", "capturing_group")
        self.take()
        kind = self.take()
        if kind in "=!":
            inner = self.alternation(icase)
            self.expect_close()
            return Look(negative=kind == "!", item=inner)
        if kind == ":":
            inner = self.alternation(icase)
            self.expect_close()
            return inner
        if kind == "i" and self.peek() == ":":
            self.take()
            inner = self.alternation(icase=True)
            self.expect_close()
            return inner
        if kind == "<" and self.peek() in ("=", "!"):
            raise self.error("lookbehind (unsupported)", "lookbehind")
        if kind in "<P'":
            raise self.error(f"named group (?{kind} (unsupported)", "named_group")
        if kind == ">":
            raise self.error("atomic group (unsupported)", "atomic_group")
        raise self.error(f"unsupported group (?{kind}", "inline_flag")

    def expect_close(self) -> None:
        if self.take() != ")":
            raise self.error("expected ')'")

    def literal_atom(self, c: str, icase: bool) -> Atom:
        folds = icase and c.lower() != c.upper()
        src = _escape_literal(c)
        return Atom(source=f"(?i:{src})" if folds else src, parts=(("char", c),), icase=folds)

    def escape_atom(self, icase: bool) -> Atom:
        start = self.pos - 1
        part = self.escape_part()
        source = self.text[start : self.pos]
        if part[0] == "char":
            return self.literal_atom(part[1], icase)
        return Atom(source=source, parts=(part,))

    def escape_part(self) -> tuple[str, str]:
        c = self.take()
        if c in "pP":
            if self.take() != "{":
                raise self.error("expected { after \\p")
            end = self.text.find("}", self.pos)
            if end < 0:
                raise self.error("unterminated \\p{")
            name = self.text[self.pos : end]
            self.pos = end + 1
            return ("prop" if c == "p" else "nprop", name)
        if c == "s":
            return ("space", "")
        if c == "S":
            return ("nonspace", "")
        if c in _SIMPLE_ESCAPES:
            return ("char", _SIMPLE_ESCAPES[c])
        if c == "u":
            digits = self.text[self.pos : self.pos + 4]
            self.pos += 4
            return ("char", chr(int(digits, 16)))
        if c in _POSITION_ESCAPES:
            raise self.error(f"unsupported escape \\{c}", _POSITION_ESCAPES[c])
        if c.isdigit():
            raise self.error(f"unsupported escape \\{c}", "backreference")
        if c in "dDwWhHRXN":
            raise self.error(f"unsupported class escape \\{c}", "class_escape")
        if c.isalnum():
            raise self.error(f"unsupported escape \\{c}", "escape")
        return ("char", c)

    def bracket(self, icase: bool) -> Atom:
        start = self.pos - 1
        negated = self.peek() == "^"
        if negated:
            self.take()
        parts: list[tuple[str, str]] = []
        first = True
        while True:
            c = self.take()
            if c == "]" and not first:
                break
            first = False
            if c == "[":
                raise self.error("nested or set-operation bracket", "nested_bracket")
            part = self.escape_part() if c == "\\" else ("char", c)
            if part[0] == "char" and self.peek() == "-" and self.text[self.pos + 1 : self.pos + 2] not in ("]", ""):
                self.take()
                d = self.take()
                hi = self.escape_part() if d == "\\" else ("char", d)
                if hi[0] != "char" or ord(hi[1]) < ord(part[1]):
                    raise self.error("bad range")
                part = ("range", part[1] + "-" + hi[1])
            parts.append(part)
        source = self.text[start : self.pos]
        has_letters = any(p[0] in ("char", "range") and p[1].lower() != p[1].upper() for p in parts)
        folds = icase and has_letters
        return Atom(source=f"(?i:{source})" if folds else source, negated=negated, parts=tuple(parts), icase=folds)


# a backslash (not itself escaped) before a group number or a named reference: a backreference, named as such
# before the parser meets the capturing group it refers to
_BACKREFERENCE = re.compile(r"(?<!\\)(?:\\\\)*\\(?:[1-9]|k<)")


def parse(pattern: str) -> Node:
    """The AST of one Split-stage regex; raises PatternSyntaxUnsupported on constructs the proofs do not model."""
    found = _BACKREFERENCE.search(pattern)
    if found:
        raise PatternSyntaxUnsupported(f"backreference at offset {found.start()} of {pattern!r}", "backreference")
    return _Parser(pattern).parse()


def atoms(node: Node) -> list[Atom]:
    """Every atom of the AST, in order of appearance, without repeats."""
    seen: dict[str, Atom] = {}

    def walk(n: Node) -> None:
        if isinstance(n, Sym):
            seen.setdefault(n.atom.source, n.atom)
        elif isinstance(n, (Cat, Alt)):
            for item in n.items:
                walk(item)
        elif isinstance(n, (Rep, Look)):
            walk(n.item)

    walk(node)
    return list(seen.values())


def alternatives(node: Node) -> tuple[Node, ...]:
    """The top-level alternatives of a stage (the stage itself when it has no top-level alternation)."""
    return node.items if isinstance(node, Alt) else (node,)


def lookaheads(node: Node) -> list[Look]:
    """Every lookahead of the AST, in order."""
    out: list[Look] = []

    def walk(n: Node) -> None:
        if isinstance(n, Look):
            out.append(n)
            walk(n.item)
        elif isinstance(n, (Cat, Alt)):
            for item in n.items:
                walk(item)
        elif isinstance(n, Rep):
            walk(n.item)

    walk(node)
    return out


def is_single_run(node: Node) -> bool:
    """The stage is one class repeated one or more times (C+), whose matches are exactly the maximal C-runs."""
    return isinstance(node, Rep) and isinstance(node.item, Sym) and node.lo == 1 and node.hi is None
