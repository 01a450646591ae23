"""The whole pre-tokenizer of a pattern family as one function from a string of abstract symbols to its piece
boundaries, written once over an algebra so the same code runs on concrete symbols (checked against the reference
engine) and on z3 variables (proved for every string up to a length bound).

Semantics encoded (what `tokenizers` runs: Split stages, Isolated, not inverted, in order, then a ByteLevel stage
without regex that maps each piece's bytes one to one and so moves no boundary):

- A Split stage scans its input left to right. At a scan position q it tries the regex at q; the engine
  (Oniguruma) is a backtracking matcher, so the match at q is the first successful path in priority order:
  alternatives left to right, greedy repetitions trying one more iteration before leaving the loop, a lookahead
  evaluated where it stands and consuming nothing. A match ends at e > q: q and e are piece boundaries and the
  scan resumes at e. No match at q: the scan moves to q + 1 and the character joins an unmatched gap (gaps lie
  between matches, so their ends are match boundaries already).
- A later stage runs on every piece of the earlier one separately: its matches and lookaheads stop at the piece's
  end (the piece is the whole input it sees), and its scan restarts at every piece start.
- The boundaries of a stage are the earlier stage's boundaries plus its own match starts and ends.

`Pipeline.boundaries(algebra, lo, hi)` gives, for the symbols at positions lo..hi-1 alone, one truth value per
position lo..hi (is it a piece boundary); `ConcreteAlgebra` evaluates it on one string, `Z3Algebra` builds the
formula over symbolic characters. The matcher is written in continuation-passing style with concrete positions:
a symbol consumes exactly one position, so every position it reaches is a known integer and only the conditions
are symbolic; results are memoized per (node, position, continuation, match start). On concrete symbols the
matcher stops where a condition fails (a symbol, a lookahead) and at the first alternative or loop iteration that
succeeds: the same results, without evaluating paths whose outcome is already decided.

`StageSemantics` holds the clauses a broken encoding may drop (lookaheads, the isolation of earlier pieces); the
prover must fail on each such encoding (properties/test_pipeline_proof.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from delta_suite.spec.proofs.alphabet import Alphabet
from delta_suite.spec.proofs.lazy_z3 import z3
from delta_suite.spec.proofs.regex import Alt, Cat, Look, Node, Rep, Sym


class Algebra(Protocol):
    """Booleans and match ends, concrete or symbolic."""

    true: Any
    false: Any

    def member(self, position: int, symbols: frozenset[int]) -> Any: ...
    def and_(self, *xs: Any) -> Any: ...
    def or_(self, *xs: Any) -> Any: ...
    def not_(self, x: Any) -> Any: ...
    def ite(self, c: Any, a: Any, b: Any) -> Any: ...
    def end(self, position: int) -> Any: ...
    def end_is(self, end: Any, position: int) -> Any: ...


class ConcreteAlgebra:
    """Python booleans and integers over one string of abstract symbols."""

    true, false = True, False

    def __init__(self, symbols: Sequence[int]) -> None:
        self.symbols = tuple(symbols)

    def member(self, position: int, symbols: frozenset[int]) -> bool:
        return self.symbols[position] in symbols

    def and_(self, *xs: bool) -> bool:
        return all(xs)

    def or_(self, *xs: bool) -> bool:
        return any(xs)

    def not_(self, x: bool) -> bool:
        return not x

    def ite(self, c: bool, a: Any, b: Any) -> Any:
        return a if c else b

    def end(self, position: int) -> int:
        return position

    def end_is(self, end: int, position: int) -> bool:
        return end == position


class Z3Algebra:
    """z3 terms over one symbolic character per position (an integer in [0, symbols))."""

    def __init__(self, length: int, symbols: int, name: str = "c") -> None:
        self.true, self.false = z3.BoolVal(True), z3.BoolVal(False)
        self.chars = [z3.Int(f"{name}{i}") for i in range(length)]
        self.domain = [z3.And(c >= 0, c < symbols) for c in self.chars]

    def member(self, position: int, symbols: frozenset[int]) -> z3.BoolRef:
        c = self.chars[position]
        return z3.Or(*[c == s for s in sorted(symbols)]) if symbols else self.false

    def and_(self, *xs: z3.BoolRef) -> z3.BoolRef:
        xs = tuple(x for x in xs if not z3.is_true(x))
        if any(z3.is_false(x) for x in xs):
            return self.false
        return self.true if not xs else xs[0] if len(xs) == 1 else z3.And(*xs)

    def or_(self, *xs: z3.BoolRef) -> z3.BoolRef:
        xs = tuple(x for x in xs if not z3.is_false(x))
        if any(z3.is_true(x) for x in xs):
            return self.true
        return self.false if not xs else xs[0] if len(xs) == 1 else z3.Or(*xs)

    def not_(self, x: z3.BoolRef) -> z3.BoolRef:
        return self.false if z3.is_true(x) else self.true if z3.is_false(x) else z3.Not(x)

    def ite(self, c: z3.BoolRef, a: Any, b: Any) -> Any:
        if z3.is_true(c):
            return a
        if z3.is_false(c):
            return b
        return z3.If(c, a, b)

    def end(self, position: int) -> z3.ArithRef:
        return z3.IntVal(position)

    def end_is(self, end: z3.ArithRef, position: int) -> z3.BoolRef:
        return z3.simplify(end == position)


# a continuation: what must still match after the current node (None: the match succeeds here)
Continuation = tuple | None


@dataclass(frozen=True)
class StageSemantics:
    """The semantics knobs a mutation may break (the correct values are the defaults)."""

    pieces_isolated: bool = True  # a later stage sees each earlier piece alone
    lookaheads: bool = True  # lookaheads are evaluated (False: dropped, as if the clause were absent)


class _Matcher:
    """The backtracking match of one regex at every start of one region, under one algebra."""

    def __init__(self, alg: Algebra, alphabet: Alphabet, ast: Node, lo: int, hi: int,
                 blocked: Callable[[int, int], Any], semantics: StageSemantics) -> None:
        self.alg, self.alphabet, self.ast, self.lo, self.hi = alg, alphabet, ast, lo, hi
        self.blocked = blocked  # blocked(q, i): a piece boundary lies in (q, i], so position i is past q's piece
        self.semantics = semantics
        self.memo: dict[tuple, tuple[Any, Any]] = {}
        self.atom_symbols: dict[int, frozenset[int]] = {}
        self.q = lo
        # on concrete symbols a failed condition decides the path, so the matcher stops there: what it skips
        # cannot change a result (a failed path's end is never read, and the first alternative that succeeds wins)
        self.concrete = isinstance(alg, ConcreteAlgebra)

    def match_at(self, q: int) -> tuple[Any, Any]:
        """(matched?, end) of the regex tried at q."""
        self.q = q
        return self.run(self.ast, q, None)

    def fail(self) -> tuple[Any, Any]:
        return self.alg.false, self.alg.end(-1)

    def cont(self, k: Continuation, i: int) -> tuple[Any, Any]:
        if k is None:
            return self.alg.true, self.alg.end(i)
        if k[0] == "seq":
            _, items, idx, nxt = k
            if idx == len(items):
                return self.cont(nxt, i)
            return self.run(items[idx], i, ("seq", items, idx + 1, nxt))
        _, rep, count, nxt = k
        return self.repeat(rep, count, i, nxt)

    def run(self, node: Node, i: int, k: Continuation) -> tuple[Any, Any]:
        key = (id(node), i, _key(k), self.q)
        if key in self.memo:
            return self.memo[key]
        alg = self.alg
        if isinstance(node, Sym):
            if i >= self.hi:
                out = self.fail()
            else:
                symbols = self.atom_symbols.get(id(node.atom))
                if symbols is None:
                    symbols = self.atom_symbols[id(node.atom)] = self.alphabet.symbols_of(node.atom)
                here = alg.and_(alg.not_(self.blocked(self.q, i)), alg.member(i, symbols))
                if self.concrete and not here:
                    out = self.fail()
                else:
                    ok, end = self.cont(k, i + 1)
                    out = alg.and_(here, ok), end
        elif isinstance(node, Cat):
            out = self.cont(("seq", node.items, 0, k), i)
        elif isinstance(node, Alt) and self.concrete:
            out = next((r for r in (self.run(item, i, k) for item in node.items) if r[0]), self.fail())
        elif isinstance(node, Alt):
            out = self.fail()
            for item in reversed(node.items):  # the first alternative that succeeds wins
                ok, end = self.run(item, i, k)
                out = alg.or_(ok, out[0]), alg.ite(ok, end, out[1])
        elif isinstance(node, Rep):
            out = self.repeat(node, 0, i, k)
        elif isinstance(node, Look):
            if not self.semantics.lookaheads:
                out = self.cont(k, i)
            else:
                seen, _ = self.run(node.item, i, None)
                holds = alg.not_(seen) if node.negative else seen
                if self.concrete and not holds:
                    out = self.fail()
                else:
                    ok, end = self.cont(k, i)
                    out = alg.and_(holds, ok), end
        else:
            raise TypeError(node)
        self.memo[key] = out
        return out

    def repeat(self, rep: Rep, count: int, i: int, k: Continuation) -> tuple[Any, Any]:
        """Greedy repetition after `count` iterations: one more first, else leave the loop."""
        if count < rep.lo:
            return self.run(rep.item, i, ("rep", rep, count + 1, k))
        if rep.hi is not None and count >= rep.hi:
            return self.cont(k, i)
        if i >= self.hi:  # no iteration can consume a character past the region (items never match empty)
            return self.cont(k, i)
        count = count if rep.hi is not None else rep.lo  # past the minimum an unbounded loop forgets its count
        more_ok, more_end = self.run(rep.item, i, ("rep", rep, count + 1 if rep.hi is not None else count, k))
        if self.concrete and more_ok:
            return more_ok, more_end
        rest_ok, rest_end = self.cont(k, i)
        return self.alg.or_(more_ok, rest_ok), self.alg.ite(more_ok, more_end, rest_end)


def _key(k: Continuation) -> tuple | None:
    if k is None:
        return None
    return (k[0], id(k[1]), k[2], _key(k[3]))


@dataclass(frozen=True)
class Pipeline:
    """The Split stages of one family over its abstract alphabet."""

    alphabet: Alphabet
    stages: tuple[Node, ...]
    semantics: StageSemantics = field(default_factory=StageSemantics)

    def boundaries(self, alg: Algebra, lo: int, hi: int) -> list[Any]:
        """Per position lo..hi: is it a piece boundary of the pipeline run on the symbols at lo..hi-1 alone."""
        bounds = [alg.true] + [alg.false] * (hi - lo - 1) + [alg.true] if hi > lo else [alg.true]
        for ast in self.stages:
            bounds = self._stage(alg, ast, lo, hi, bounds)
        return bounds

    def _stage(self, alg: Algebra, ast: Node, lo: int, hi: int, prev: list[Any]) -> list[Any]:
        isolated = self.semantics.pieces_isolated

        def blocked(q: int, i: int) -> Any:
            if not isolated:
                return alg.false
            return alg.or_(*[prev[j - lo] for j in range(q + 1, i + 1) if j < hi])

        matcher = _Matcher(alg, self.alphabet, ast, lo, hi, blocked, self.semantics)
        matched, ends = [], []
        for q in range(lo, hi):
            ok, end = matcher.match_at(q)
            matched.append(ok)
            ends.append(end)
        visited: list[Any] = [alg.true]
        for q in range(lo + 1, hi + 1):
            arrivals = [alg.and_(visited[r - lo], matched[r - lo], alg.end_is(ends[r - lo], q)) for r in range(lo, q)]
            step = alg.and_(visited[q - 1 - lo], alg.not_(matched[q - 1 - lo]))
            restart = prev[q - lo] if isolated else alg.false
            visited.append(alg.or_(restart, step, *arrivals))
        out = []
        for q in range(lo, hi + 1):
            starts = alg.and_(visited[q - lo], matched[q - lo]) if q < hi else alg.false
            ends_here = [alg.and_(visited[r - lo], matched[r - lo], alg.end_is(ends[r - lo], q)) for r in range(lo, q)]
            out.append(alg.or_(prev[q - lo], starts, *ends_here))
        return out


def pieces_to_boundaries(pieces: list[str]) -> list[int]:
    """The boundary positions (0 and the end included) of a list of consecutive pieces."""
    out, at = [0], 0
    for piece in pieces:
        at += len(piece)
        out.append(at)
    return out
