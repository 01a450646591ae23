"""Merge locality: BPE over one whole word never merges across a pair of characters that no merge joins.

This is the lemma the cut proposition for BPE without a splitting pre-tokenizer (the SentencePiece-style files:
Llama 2, Mistral v1, Gemma, Gemini) rests on. It is stated and checked here on the model alone; which files it
admits, and how the normalizers and added tokens around the model compose with it, is decided elsewhere.

Proposition. Let M be a BPE model with the reference's semantics and w a word (the normalized text of one
pre-token), and let J = {(a[-1], b[0]) : (a, b) a merge of M} be the merges' junction pairs. For every 0 < b < |w|
with (w[b-1], w[b]) not in J (and, under P4, not two characters that both become the unknown token):

    BPE_M(w) = BPE_M(w[:b]) + BPE_M(w[b:])

Premises (each a predicate of `premises_of`):
- P1 `no_dropout`: dropout absent or 0 (with dropout the merges are random).
- P2 `no_ignore_merges`: `ignore_merges` off. With it on, a side that is itself a vocabulary token is returned
  whole while the whole word is merged pair by pair (`planted_variant("ignore_merges")` finds such a word).
- P3 `merges_avoid_special_symbols`: no merge takes or yields a byte-fallback token (`<0xXX>`) or the unknown
  token. The symbols of a character outside the vocabulary then never merge, and J, computed from the merges'
  strings, names every pair of characters a merge can join.
- P4 `unknown_pairs_not_free` (a rule of the premise, not a refusal): with `fuse_unk` on, two adjacent characters
  that both become the unknown token fuse into one symbol, so such a pair is never free (`free_pairs` excludes it).
- P5 `byte_fallback_complete`: with `byte_fallback` on, all 256 byte tokens exist; otherwise the reference emits a
  pending unknown token after the next character's byte tokens, a reordering across the cut.
- P6 `no_affixes`: no `continuing_subword_prefix` and no `end_of_word_suffix` (they make a character's symbol
  depend on its place in the word).

Argument. The reference builds the initial symbols character by character (a vocabulary character, else its byte
tokens under byte fallback, else the unknown token), so under P4 and P5 the symbols of w are those of w[:b]
followed by those of w[b:]. It then repeatedly merges the adjacent pair of least (rank, position) that is a merge
until none is (the queue in `Word::merge_all` skips stale entries, so this is what it computes). Suppose some merge
joins a symbol ending at b-1 with one starting at b, and take the first: before it no merge crossed b, so the left
symbol's string ends with w[b-1] and the right one's starts with w[b] (P3: neither is a byte or unknown token),
and (w[b-1], w[b]) is in J, against the hypothesis. So the sequence stays L ++ R at every step. The candidates are
then those inside L and those inside R; the global least is the least of its own side, and a merge on one side
changes no pair of the other. By induction on the steps, the whole's merges restricted to each side are exactly
that side's own merges in its own order, and the whole stops when both sides stop. Hence the two encodings
concatenate. P1, P2 and P6 keep the model a function of the symbols alone.

Machine checks and their reach (times measured on the 2-core development machine):

- `prove_locality`, z3 over the abstraction, for ALL merge tables: the abstraction of the argument (`abstract_bpe`:
  merge the adjacent pair of least (rank, position) until none is a merge) run symbolically (`symbolic_bpe`, n - 1
  steps) on a word of n symbols, on its left side and on its right side, with the table uninterpreted: tokens are
  a sort, and IsM, Rank, New, First and Last are functions about which only this is asserted, on every pair a step
  queries: IsM(l, r) => First(New(l, r)) = First(l) and Last(New(l, r)) = Last(r); First = Last = identity on the
  word's symbols; and the junction premise Last(l) = x[k-1] and First(r) = x[k] => not IsM(l, r). Ranks may tie
  (the position decides) and distinct pairs may make the same token, so this covers more than real tables. The
  query asks for final states of the whole and of the two sides that differ position by position; UNSAT, for
  every cut 0 < k < n of every n = 2..N, is the lemma for every merge table and every word of up to N symbols.
  The gate proves N = `Z3_GATE_LENGTH` = 6 (15 queries, 4-6 s); `prove_locality(8)` (`Z3_PROOF_LENGTH`) proves
  N = 8 (28 queries: n = 7 in 7.4 s, n = 8 in 30.5 s, 44 s in all). The symbols are the characters, or (P3) byte
  and unknown tokens, which no merge takes, so the junction premise holds of them too. Controls
  (`Z3_CONTROLS`): with the junction premise dropped, or the table axiom, every cut of n = 3 and 4 is SAT.
- `abstraction_check`, the abstraction against the reference: `abstract_bpe` over the reference's initial symbols
  (`initial_symbols`) gives the reference's IDs on every (merge list, word) pair `exhaustive_check` enumerates:
  243 merge lists x 1,092 words = 265,356 encodes per mode, 0 differences under each of byte fallback, the plain
  unknown token and `fuse_unk`. A leftmost-first abstraction (position before rank) differs on 10,240 of them
  (plain unknown token). Beyond the enumeration, that the reference computes the abstraction is the argument's
  reading of `Word::merge_all`, not a machine check.
- `exhaustive_check`, the lemma itself against the reference: every merge list of up to `max_merges` merges over
  an alphabet (each merge an ordered pair of the tokens built so far, not yet a merge), and every word of up to
  `max_length` characters over the alphabet and the characters outside it, each free cut compared with the whole
  encode, under byte fallback, the plain unknown token and `fuse_unk`. The gate runs it over {a, b} with "é"
  outside the vocabulary, up to 3 merges and 6 characters (`GATE_BOUND`: 243 merge lists of the 485, the other 242
  being some of these with a and b swapped, and 1,092 words): 885,593 free cuts under byte fallback and under the
  plain unknown token, 752,672 under `fuse_unk`, 0 failures; each premise's planted violation (`planted_variant`)
  is caught. It reaches what it enumerates and no further.

Together: for words of up to 6 symbols in the gate (8 in the longer run) the lemma holds of the abstraction under
every merge table, and the abstraction is the reference wherever it was compared; the argument above covers longer
words, and the reference's computing the abstraction everywhere.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from delta_suite.spec.proofs.lazy_z3 import z3
from tokenizers import Tokenizer

UNK = "<unk>"
BYTE_TOKENS = tuple(f"<0x{b:02X}>" for b in range(256))
MODES = ("byte_fallback", "unk", "fuse_unk")
PLANTS = ("junction_forgotten", "ignore_merges", "unknown_pair_free", "merge_takes_byte_tokens")

Merge = tuple[str, str]


@dataclass(frozen=True)
class Bound:
    """What one exhaustive run enumerates."""
    alphabet: tuple[str, ...] = ("a", "b")
    outside: tuple[str, ...] = ("é",)  # characters outside the vocabulary (two UTF-8 bytes each for "é")
    max_merges: int = 3
    max_length: int = 6


GATE_BOUND = Bound()


@dataclass
class Outcome:
    """What a run compared: vocabularies, free cuts checked, cuts whose halves did not concatenate to the whole,
    and the first such cut (merges, word, offset, whole, left, right)."""
    mode: str
    plant: str | None
    vocabularies: int = 0
    cuts: int = 0
    failures: int = 0
    first: tuple | None = None
    words: int = 0
    notes: list[str] = field(default_factory=list)


def junction_pairs(merges: list[Merge]) -> set[tuple[str, str]]:
    """J: the last character of each merge's left side with the first of its right side."""
    return {(a[-1], b[0]) for a, b in merges if a and b}


def inner_pairs(vocabulary: dict[str, int] | list[str]) -> set[tuple[str, str]]:
    """V: the adjacent character pairs inside some vocabulary token. Every merge's result is a vocabulary token
    (the reference refuses to build a model otherwise), so J is inside V: a cut free by V is free by J."""
    return {(t[i], t[i + 1]) for t in vocabulary for i in range(len(t) - 1)}


def free_pairs_rule(merges: list[Merge], unknown: set[str], fuse_unk: bool) -> set[tuple[str, str]]:
    """The pairs that are NOT free: J, and under `fuse_unk` every pair of two unknown characters (P4)."""
    joined = junction_pairs(merges)
    if fuse_unk:
        joined |= {(x, y) for x in unknown for y in unknown}
    return joined


def premises_of(model: dict) -> dict[str, bool]:
    """Each premise of the lemma on a tokenizer.json model section (a BPE model)."""
    vocab = model.get("vocab") or {}
    merges = [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) for m in model.get("merges") or []]
    special = {UNK if model.get("unk_token") is None else str(model["unk_token"]), *BYTE_TOKENS}
    return {
        "no_dropout": not model.get("dropout"),
        "no_ignore_merges": not model.get("ignore_merges", False),
        "merges_avoid_special_symbols": not any(a in special or b in special or a + b in special
                                                for a, b in merges),
        "byte_fallback_complete": not model.get("byte_fallback") or all(t in vocab for t in BYTE_TOKENS),
        "no_affixes": not model.get("continuing_subword_prefix") and not model.get("end_of_word_suffix"),
    }


def reference_model(alphabet: tuple[str, ...], merges: list[Merge], mode: str, *,
                    ignore_merges: bool = False) -> Tokenizer:
    """A reference tokenizer with no normalizer and no pre-tokenizer (the whole text is one word)."""
    vocab: dict[str, int] = {}
    if mode == "byte_fallback":
        for token in BYTE_TOKENS:
            vocab[token] = len(vocab)
    vocab[UNK] = len(vocab)
    for c in alphabet:
        vocab.setdefault(c, len(vocab))
    for a, b in merges:
        vocab.setdefault(a, len(vocab))
        vocab.setdefault(b, len(vocab))
        vocab.setdefault(a + b, len(vocab))
    model = {"type": "BPE", "dropout": None, "unk_token": UNK, "continuing_subword_prefix": None,
             "end_of_word_suffix": None, "fuse_unk": mode == "fuse_unk", "byte_fallback": mode == "byte_fallback",
             "ignore_merges": ignore_merges, "vocab": vocab, "merges": [[a, b] for a, b in merges]}
    return Tokenizer.from_str(json.dumps({"version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
                                          "normalizer": None, "pre_tokenizer": None, "post_processor": None,
                                          "decoder": None, "model": model}))


def merge_lists(alphabet: tuple[str, ...], most: int) -> Iterator[list[Merge]]:
    """Every merge list of up to `most` merges: each an ordered pair of tokens built so far, not yet a merge."""
    def grow(tokens: list[str], merges: list[Merge]) -> Iterator[list[Merge]]:
        yield merges
        if len(merges) == most:
            return
        for a in tokens:
            for b in tokens:
                if (a, b) not in merges:
                    yield from grow(tokens if a + b in tokens else [*tokens, a + b], [*merges, (a, b)])
    yield from grow(list(alphabet), [])


def _words(bound: Bound) -> list[str]:
    chars = [*bound.alphabet, *bound.outside]
    return ["".join(p) for n in range(1, bound.max_length + 1) for p in itertools.product(chars, repeat=n)]


def exhaustive_check(bound: Bound = GATE_BOUND, mode: str = "byte_fallback", plant: str | None = None) -> Outcome:
    """Every free cut of every word under every merge list of the bound, compared with the reference's whole
    encode. `plant` runs a violation of one premise instead (`planted_variant`): it must find failures."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}")
    words = _words(bound)
    out = Outcome(mode, plant, words=len(words))
    unknown = set(bound.outside)
    for merges in enumerated_merge_lists(bound):
        used = list(merges)
        if plant == "merge_takes_byte_tokens":
            if mode != "byte_fallback" or not merges:
                continue
            last = "\u00e9".encode()[-1]
            used = [*merges, (f"<0x{last:02X}>", bound.alphabet[0])]  # "é"'s last byte joins a following letter
        tok = reference_model(bound.alphabet, used, mode, ignore_merges=plant == "ignore_merges")
        batch = tok.encode_batch_fast(words, add_special_tokens=False)
        encoded = {w: e.ids for w, e in zip(words, batch, strict=True)}
        not_free = free_pairs_rule(merges, unknown, fuse_unk=mode == "fuse_unk" and plant != "unknown_pair_free")
        if plant == "junction_forgotten" and merges:
            not_free -= junction_pairs(merges[-1:]) - junction_pairs(merges[:-1])
        out.vocabularies += 1
        for w in words:
            for b in range(1, len(w)):
                if (w[b - 1], w[b]) in not_free:
                    continue
                out.cuts += 1
                if encoded[w[:b]] + encoded[w[b:]] != encoded[w]:
                    out.failures += 1
                    if out.first is None:
                        out.first = (merges, w, b, encoded[w], encoded[w[:b]], encoded[w[b:]])
    return out


def planted_variant(plant: str, bound: Bound = GATE_BOUND) -> Outcome:
    """One premise broken, in the mode where it applies: J missing the last merge's junction, `ignore_merges` on,
    two unknown characters counted free under `fuse_unk`, a merge taking a byte-fallback token."""
    if plant not in PLANTS:
        raise ValueError(f"unknown plant {plant!r}")
    mode = {"unknown_pair_free": "fuse_unk", "merge_takes_byte_tokens": "byte_fallback"}.get(plant, "byte_fallback")
    return exhaustive_check(bound, mode, plant)


# --- the proof's abstraction, executable ----------------------------------------------------------------------


def initial_symbols(word: str, vocabulary: dict[str, int], mode: str) -> list[str]:
    """The reference's symbols of `word` before any merge, character by character: the character when it is a
    vocabulary token, else its UTF-8 byte tokens under byte fallback (P5: all 256 exist), else the unknown token,
    fused with an unknown token just before it under `fuse_unk`."""
    symbols: list[str] = []
    for ch in word:
        if ch in vocabulary:
            symbols.append(ch)
        elif mode == "byte_fallback":
            symbols.extend(f"<0x{x:02X}>" for x in ch.encode())
        elif not (mode == "fuse_unk" and symbols and symbols[-1] == UNK):
            symbols.append(UNK)
    return symbols


def abstract_bpe(symbols: list[str], merges: list[Merge]) -> list[str]:
    """The abstraction the argument uses: while some adjacent pair is a merge, merge the one of least (rank,
    position), rank being the merge's index in `merges` (distinct merges) and position the left symbol's index.
    Invariant: the result's concatenation is the symbols' concatenation, and no adjacent pair of it is a merge."""
    rank = {pair: i for i, pair in enumerate(merges)}
    symbols = list(symbols)
    while True:
        candidates = [(rank[pair], i) for i, pair in enumerate(itertools.pairwise(symbols)) if pair in rank]
        if not candidates:
            return symbols
        _, i = min(candidates)
        symbols[i:i + 2] = [symbols[i] + symbols[i + 1]]


@dataclass
class Agreement:
    """What the abstraction check compared: vocabularies, (vocabulary, word) encodes, the encodes where the
    abstraction's IDs differ from the reference's, and the first such (merges, word, abstraction, reference)."""
    mode: str
    vocabularies: int = 0
    encodes: int = 0
    differences: int = 0
    first: tuple | None = None


def enumerated_merge_lists(bound: Bound) -> Iterator[list[Merge]]:
    """The merge lists the exhaustive checks run: every one of `merge_lists`, except that over two letters only
    those whose first merge starts with the first letter (the letters are interchangeable)."""
    for merges in merge_lists(bound.alphabet, bound.max_merges):
        if merges and merges[0][0] != bound.alphabet[0] and len(bound.alphabet) == 2:
            continue
        yield merges


def abstraction_check(bound: Bound = GATE_BOUND, mode: str = "byte_fallback", *,
                      abstraction: Callable[[list[str], list[Merge]], list[str]] = abstract_bpe) -> Agreement:
    """`abstract_bpe` over `initial_symbols` against the reference's encode, on every word and merge list the
    exhaustive check enumerates (`enumerated_merge_lists`, `_words`): the abstraction is what the reference
    computes there. `abstraction` replaces it in a control."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}")
    words = _words(bound)
    out = Agreement(mode)
    for merges in enumerated_merge_lists(bound):
        tok = reference_model(bound.alphabet, merges, mode)
        vocabulary = tok.get_vocab()
        batch = tok.encode_batch_fast(words, add_special_tokens=False)
        out.vocabularies += 1
        for w, e in zip(words, batch, strict=True):
            ids = [vocabulary[t] for t in abstraction(initial_symbols(w, vocabulary, mode), merges)]
            out.encodes += 1
            if ids != e.ids:
                out.differences += 1
                if out.first is None:
                    out.first = (merges, w, ids, e.ids)
    return out


# --- a bounded proof over the abstraction, for every merge table ----------------------------------------------

Z3_GATE_LENGTH = 6  # the gate proves every cut of every word of 2..6 symbols
Z3_PROOF_LENGTH = 8  # for a longer run (the proofs command): prove_locality(8) takes about 45 s
Z3_CONTROLS = ("junction_dropped", "table_axiom_dropped")


@dataclass(frozen=True)
class MergeTable:
    """An arbitrary merge table, uninterpreted: tokens of one sort; for a pair of tokens, whether it is a merge,
    its rank and the token it makes; for a token, its first and its last character (as tokens)."""
    token: z3.SortRef
    is_merge: z3.FuncDeclRef
    rank: z3.FuncDeclRef
    new: z3.FuncDeclRef
    first: z3.FuncDeclRef
    last: z3.FuncDeclRef


def uninterpreted_table() -> MergeTable:
    """The table's sort and functions, with no axiom: the axioms are instantiated where a pair is queried."""
    tok = z3.DeclareSort("Tok")
    return MergeTable(tok, z3.Function("IsM", tok, tok, z3.BoolSort()), z3.Function("Rank", tok, tok, z3.IntSort()),
                      z3.Function("New", tok, tok, tok), z3.Function("First", tok, tok),
                      z3.Function("Last", tok, tok))


@dataclass(frozen=True)
class Premises:
    """Which premises a query instantiates: the table axiom (a merge's token starts as its left token and ends as
    its right one) and the junction premise for the cut's characters (left, right). Dropping one is a control."""
    table_axiom: bool = True
    junction: tuple[z3.ExprRef, z3.ExprRef] | None = None


@dataclass(frozen=True)
class SymbolicState:
    """A symbolic symbol sequence: `alive[i]` whether a symbol starts at character i, `symbols[i]` that symbol."""
    symbols: list[z3.ExprRef]
    alive: list[z3.BoolRef]


def pair_facts(table: MergeTable, left: z3.ExprRef, right: z3.ExprRef, premises: Premises) -> list[z3.BoolRef]:
    """The premises instantiated on one queried pair: IsM(l, r) => First(New(l, r)) = First(l) and
    Last(New(l, r)) = Last(r); and Last(l) = x[k-1] and First(r) = x[k] => not IsM(l, r). Each is an instance of
    a statement true of every table the lemma covers, so an UNSAT query is a proof for all of them."""
    facts = []
    if premises.table_axiom:
        made = table.new(left, right)
        facts.append(z3.Implies(table.is_merge(left, right), z3.And(table.first(made) == table.first(left),
                                                                    table.last(made) == table.last(right))))
    if premises.junction is not None:
        x, y = premises.junction
        facts.append(z3.Implies(z3.And(table.last(left) == x, table.first(right) == y),
                                z3.Not(table.is_merge(left, right))))
    return facts


def _adjacent(alive: list[z3.BoolRef], i: int, j: int) -> z3.BoolRef:
    """Symbols start at i and at j and none between: j is i's right neighbour."""
    return z3.And(alive[i], alive[j], *[z3.Not(alive[t]) for t in range(i + 1, j)])


def _right_neighbour(state: SymbolicState, i: int) -> z3.ExprRef:
    """The symbol right of the one at i (the last symbol when none is alive between; unused then)."""
    n = len(state.symbols)
    neighbour = state.symbols[n - 1]
    for j in reversed(range(i + 1, n - 1)):
        neighbour = z3.If(_adjacent(state.alive, i, j), state.symbols[j], neighbour)
    return neighbour


def merge_step(table: MergeTable, state: SymbolicState, facts: list[z3.BoolRef],
               premises: Premises) -> SymbolicState:
    """One step of `abstract_bpe` on symbolic symbols: of the adjacent pairs that are merges, the one of least
    (rank, position) is merged into its left symbol's place; the state is unchanged when none is a merge. The
    premises are instantiated on every pair the step queries (appended to `facts`)."""
    n = len(state.symbols)
    right = [_right_neighbour(state, i) if i < n - 1 else None for i in range(n)]
    has = [z3.BoolVal(False)] * n
    rank = [z3.IntVal(0)] * n
    for i in range(n - 1):
        facts.extend(pair_facts(table, state.symbols[i], right[i], premises))
        has[i] = z3.And(z3.Or(*[_adjacent(state.alive, i, j) for j in range(i + 1, n)]),
                        table.is_merge(state.symbols[i], right[i]))
        rank[i] = table.rank(state.symbols[i], right[i])
    chosen = [z3.And(has[i], *[z3.Implies(has[j], z3.Or(rank[i] < rank[j], z3.And(rank[i] == rank[j], i < j)))
                               for j in range(n) if j != i]) for i in range(n)]
    symbols = [z3.If(chosen[i], table.new(state.symbols[i], right[i]), state.symbols[i]) if i < n - 1
               else state.symbols[i] for i in range(n)]
    absorbed = [z3.Or(*[z3.And(chosen[i], _adjacent(state.alive, i, j)) for i in range(j)]) if j
                else z3.BoolVal(False) for j in range(n)]
    return SymbolicState(symbols, [z3.And(state.alive[j], z3.Not(absorbed[j])) for j in range(n)])


def symbolic_bpe(table: MergeTable, chars: list[z3.ExprRef], facts: list[z3.BoolRef],
                 premises: Premises) -> SymbolicState:
    """`abstract_bpe` on symbolic characters: len(chars) - 1 steps, after which no pair is left to merge (each
    step that merges removes a symbol)."""
    state = SymbolicState(list(chars), [z3.BoolVal(True)] * len(chars))
    for _ in range(len(chars) - 1):
        state = merge_step(table, state, facts, premises)
    return state


def _same_state(whole: SymbolicState, split: SymbolicState) -> z3.BoolRef:
    """Position by position: the same symbols start at the same characters."""
    return z3.And(*[z3.And(w == s, z3.Implies(w, ws == ss)) for w, s, ws, ss
                    in zip(whole.alive, split.alive, whole.symbols, split.symbols, strict=True)])


def locality_query(n: int, k: int, control: str | None = None) -> z3.Solver:
    """The query for the cut k (0 < k < n) of a word of n symbols (tokens with First = Last = identity): the
    premises, instantiated on every queried pair, and final states of the whole word and of its two sides that
    differ. UNSAT proves the cut for every merge table; a model only shows that the asserted instances do not
    exclude a difference. `control` drops one premise (`Z3_CONTROLS`)."""
    if control not in (None, *Z3_CONTROLS):
        raise ValueError(f"unknown control {control!r}")
    table = uninterpreted_table()
    chars = [z3.Const(f"x{i}", table.token) for i in range(n)]
    facts = [z3.And(table.first(c) == c, table.last(c) == c) for c in chars]
    premises = Premises(table_axiom=control != "table_axiom_dropped",
                        junction=None if control == "junction_dropped" else (chars[k - 1], chars[k]))
    whole = symbolic_bpe(table, chars, facts, premises)
    left = symbolic_bpe(table, chars[:k], facts, premises)
    right = symbolic_bpe(table, chars[k:], facts, premises)
    split = SymbolicState(left.symbols + right.symbols, left.alive + right.alive)
    solver = z3.Solver()
    solver.add(*facts, z3.Not(_same_state(whole, split)))
    return solver


@dataclass
class LocalityProof:
    """The answer for every cut k of every length n up to `max_length` ("unsat" is proved), and seconds per n."""
    max_length: int
    control: str | None = None
    answers: dict[tuple[int, int], str] = field(default_factory=dict)
    seconds: dict[int, float] = field(default_factory=dict)

    @property
    def proved(self) -> bool:
        """Every query UNSAT."""
        return all(a == "unsat" for a in self.answers.values())

    @property
    def refuted(self) -> list[tuple[int, int]]:
        """The (n, k) whose query is SAT: what a control must show for every cut."""
        return [cut for cut, a in self.answers.items() if a == "sat"]


def prove_locality(max_length: int = Z3_GATE_LENGTH, control: str | None = None,
                   min_length: int = 2) -> LocalityProof:
    """One query per word length n in min_length..max_length and cut 0 < k < n: with every premise, all UNSAT is
    the lemma for every merge table and every word of up to max_length symbols; with `control`, SAT shows the
    dropped premise is needed."""
    out = LocalityProof(max_length, control)
    for n in range(min_length, max_length + 1):
        start = time.perf_counter()
        for k in range(1, n):
            out.answers[n, k] = str(locality_query(n, k, control).check())
        out.seconds[n] = round(time.perf_counter() - start, 2)
    return out
