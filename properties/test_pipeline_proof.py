"""The pipeline-level proof (spec/proofs/pipeline_proof.py): the whole pre-tokenizer of each pattern family, every
Split stage in order then the byte-level stage, proved by z3 to keep its pieces at every accepted cut (end of
input and right side) for every string up to the gate's length bound, with its encoding checked against the
reference engine first. The gate runs `python -m delta_suite.spec.proofs FAMILY` itself and records its output in the
ledger.

Each broken variant of the encoding or of the transition set makes the prover fail: lookaheads dropped (the
`(?!\\S)` of `\\s+(?!\\S)`), later stages not isolated to the earlier pieces (DeepSeek's three stages), an
unproved pair added (L->L), and a pattern whose lookahead reads across the cut.
"""

from __future__ import annotations

from itertools import product

import pytest
import z3
from delta_suite.spec.patterns import RECONSTRUCTED, SPLIT_PATTERNS
from delta_suite.spec.proofs.__main__ import main as proofs_main
from delta_suite.spec.proofs.alphabet import family_alphabet, partition
from delta_suite.spec.proofs.obligations import PIPELINE_PROOF_CHECK
from delta_suite.spec.proofs.pieces import family_pieces, pieces_of, stages_pre_tokenizer
from delta_suite.spec.proofs.pipeline import ConcreteAlgebra, Pipeline, StageSemantics, Z3Algebra, pieces_to_boundaries
from delta_suite.spec.proofs.pipeline_proof import (
    family_resync,
    prove_family_pipeline,
    prove_pipeline,
    prove_resync,
    side_of,
)
from delta_suite.spec.proofs.prove import prove_family
from delta_suite.spec.proofs.regex import atoms, parse

from properties.conftest import bound_note, pipeline_bound

RESYNC_CHECK = "proofs.resync_z3.pattern"
# every string of up to GATE_BOUND abstract symbols (17^k to 28^k strings): 4 in the default run, 5 with
# DELTA_EXHAUSTIVE=full (conftest.pipeline_bound; python -m delta_suite.spec.proofs defaults to 8)
GATE_BOUND = pipeline_bound()
CONTROL_BOUND = 4
FAMILIES = list(SPLIT_PATTERNS)


def _bounded(bound: int) -> dict:
    """The record's `sampled` note when the proof stopped short of the full bound (the report lists it)."""
    note = bound_note(bound)
    return {"sampled": note} if note else {}


@pytest.mark.parametrize("family", FAMILIES)
def test_cut_keeps_the_pieces_of_the_whole_pipeline(family: str, ledger, capsys) -> None:
    """`python -m delta_suite.spec.proofs FAMILY --pipeline-bound GATE_BOUND` exits 0 and its output is recorded; the
    pipeline proof
    holds: both sides proved to the bound, the encoding agrees with the reference, every excluded pair is sound to
    the bound or refuted by a reference-confirmed cut; and the pipeline-level verdicts agree with the split-level
    ones (a pair proved sound stage by stage is sound here, a refuted one is refuted here)."""
    code = proofs_main([family, "--pipeline-bound", str(GATE_BOUND)])
    output = capsys.readouterr().out
    proof = prove_family_pipeline(family, GATE_BOUND)  # cached: the run the command just printed
    s = proof.summary()
    split = prove_family(family).summary()
    ledger.record(
        "proof",
        PIPELINE_PROOF_CHECK,
        None,
        comparisons=sum(r.proved_to >= 2 for r in proof.accepted.values()) + len(proof.pairs),
        differences=int(not proof.holds) + int(code != 0),
        unit="pipeline queries",
        details={**s, "reconstruction": RECONSTRUCTED.get(family), "exit_code": code,
                 "spec_proofs_output": output.splitlines(), **_bounded(GATE_BOUND)}, oracle="proof",
    )
    print(output)
    assert code == 0, output
    assert proof.faithfulness.faithful, s["faithfulness_mismatches"]
    assert proof.accepted_proved, s["sides"]
    assert not s["unconfirmed_refutations"], s["unconfirmed_refutations"]
    assert set(s["excluded_sound_to_bound"]) == set(split["excluded_sound_conservative"]), (s, split)
    assert set(s["excluded_refuted"]) == set(split["counterexamples"])


@pytest.mark.parametrize("family", FAMILIES)
def test_pieces_resynchronize_after_a_common_boundary(family: str, ledger) -> None:
    """The re-synchronization lemma (spec.proofs.pipeline_proof.prove_resync) holds for the pattern to the gate's
    bound: a piece boundary shared by a text and one of its windows fixes every later piece."""
    resync = family_resync(family, GATE_BOUND)
    d = resync.as_dict(family_alphabet(family))
    ledger.record("proof", RESYNC_CHECK, None, comparisons=d["proved_to"] - 2 + 1, differences=int(not d["holds"]),
                  unit="lengths", details={**d, "reconstruction": RECONSTRUCTED.get(family), **_bounded(GATE_BOUND)},
                  oracle="proof")
    assert d["holds"], d


def test_resync_is_refuted_where_a_later_stage_splits_differently() -> None:
    """Control: letter triples, then pairs inside each triple ("aaaaaa": aa|a|aa|a; its window from 1: aa|a|aa)
    share the boundary 3 and differ after it; the lemma's query finds such a string."""
    stages = (r"\p{L}{3}", r"\p{L}{2}")
    asts = tuple(parse(s) for s in stages)
    alphabet = partition("triples", [a for ast in asts for a in atoms(ast)])
    resync = prove_resync(Pipeline(alphabet, asts), "triples", 6)
    assert resync.witness is not None and resync.proved_to < 6
    text = alphabet.concretize(resync.witness)
    pieces = pieces_of(stages_pre_tokenizer(stages))
    w, b = resync.window_start, resync.common
    whole = [x for x in pieces_to_boundaries(pieces(text)) if x >= b]
    window = [x + w for x in pieces_to_boundaries(pieces(text[w:])) if x + w >= b]
    assert whole[0] == window[0] == b and whole != window  # confirmed on the reference


def test_encoding_drops_no_lookahead() -> None:
    """Control: the encoding with lookaheads dropped reads `\\s+(?!\\S)` as `\\s+`; the faithfulness check finds a
    string on which it disagrees with the reference (two spaces before a letter) and the proof does not hold."""
    proof = prove_pipeline("qwen2_no_lookahead", SPLIT_PATTERNS["qwen2"], CONTROL_BOUND,
                           semantics=StageSemantics(lookaheads=False), alphabet=family_alphabet("qwen2"))
    assert not proof.faithfulness.faithful and not proof.holds
    assert any("  " in m["text"] for m in proof.faithfulness.mismatches)


def test_encoding_isolates_earlier_pieces() -> None:
    """Control: DeepSeek's later stages run across the earlier stages' pieces; the encoding then disagrees with the
    reference (a digit group followed by letters) and the proof does not hold."""
    proof = prove_pipeline("deepseek_not_isolated", SPLIT_PATTERNS["deepseek"], CONTROL_BOUND,
                           semantics=StageSemantics(pieces_isolated=False), alphabet=family_alphabet("deepseek"))
    assert not proof.faithfulness.faithful and not proof.holds


def test_unproved_pair_added_is_refuted() -> None:
    """Control: L->L added to the accepted set; z3 finds a cut that changes the pieces (two letters) and the
    reference confirms it."""
    proof = prove_pipeline("qwen2_with_LL", SPLIT_PATTERNS["qwen2"], CONTROL_BOUND, accepted_extra=("L→L",),
                           alphabet=family_alphabet("qwen2"))
    assert not proof.accepted_proved and not proof.holds
    cx = proof.accepted_counterexample
    assert cx is not None and cx.confirmed and cx.pieces_whole != cx.pieces_split


def test_lookahead_read_at_the_cut_is_refuted_on_the_end_of_input_side() -> None:
    """A pattern whose letter run looks ahead for a digit (`\\p{L}+(?!\\p{N})`) makes L->N depend on the end of
    input: the pipeline prover refutes the accepted set on the end-of-input side, confirmed on the reference."""
    proof = prove_pipeline("broken_lookahead", (r"\p{L}+(?!\p{N})|\p{L}|\p{N}| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+",),
                           CONTROL_BOUND)
    assert proof.accepted["end_of_input"].witness is not None
    cx = proof.accepted_counterexample
    assert cx is not None and cx.confirmed and cx.side in ("end_of_input", "both")


@pytest.mark.parametrize("family", ["deepseek", "o200k"])
def test_encoding_is_the_reference_on_chosen_strings(family: str) -> None:
    """The concrete encoding against the reference on strings that exercise each stage's clauses: digit groups,
    CJK runs, punctuation before letters, trailing whitespace runs, contractions."""
    alphabet = family_alphabet(family)
    pipeline = Pipeline(alphabet, tuple(parse(s) for s in SPLIT_PATTERNS[family]))
    pieces = family_pieces(family)
    for text in ["12345abc", "中文abc", "!Hello  world", "a \n\n b", "don't'S", "x  ", "  \r\n1", "é́x", "'ll9"]:
        word = tuple(alphabet.symbol_of(ord(c)) for c in text)
        concrete = alphabet.concretize(word)
        mine = [i for i, b in enumerate(pipeline.boundaries(ConcreteAlgebra(word), 0, len(word))) if b]
        assert mine == pieces_to_boundaries(pieces(concrete)), (text, concrete, pieces(concrete))


# patterns whose bounded repetitions are entered at more than one position of one match attempt (after
# alternatives or options of different lengths), so one item is tried at one position with different counts
SYNTHETIC_PATTERNS = ("(?:[ab]{2}|[ab])b{1,2}", "[ab]?b{1,2}a?", "(?:a|ab)(?:b{2}|b)c?", "a+(?:ba)?b{0,2}")


@pytest.mark.parametrize("pattern", SYNTHETIC_PATTERNS)
def test_encoding_is_the_reference_on_synthetic_patterns(pattern: str, ledger) -> None:
    """The concrete encoding equals the reference engine's pieces on every string of up to 7 characters over "abc"
    for patterns beyond the families: bounded repetitions reached at one position with different iteration
    counts (the match memo must tell the counts apart, spec/proofs/pipeline.py `_key`), options and alternatives
    of different lengths, greedy loops followed by optional tails."""
    ast = parse(pattern)
    alphabet = partition(f"synthetic {pattern}", atoms(ast))
    pipeline = Pipeline(alphabet, (ast,))
    pieces = pieces_of(stages_pre_tokenizer((pattern,)))
    texts = ["".join(t) for n in range(1, 8) for t in product("abc", repeat=n)]
    differ = []
    for text in texts:
        word = tuple(alphabet.symbol_of(ord(c)) for c in text)
        mine = [i for i, b in enumerate(pipeline.boundaries(ConcreteAlgebra(word), 0, len(word))) if b]
        if mine != pieces_to_boundaries(pieces(alphabet.concretize(word))):
            differ.append(text)
    ledger.record("proof", "proofs.pipeline_encoding.synthetic", None, comparisons=len(texts),
                  differences=len(differ), unit="strings", details={"pattern": pattern, "first": differ[:3]},
                  oracle="proof")
    assert differ == [], differ[:5]


def test_the_symbolic_characters_range_over_the_alphabet_only() -> None:
    """Every symbolic character of the z3 encoding takes exactly the alphabet's symbols 0..n-1: a model with any
    other value would be a counterexample string that names no block and cannot be concretized (the alphabet has
    no block n), so the domain admits each symbol and nothing else, at every position."""
    alphabet = family_alphabet("qwen2")
    n = len(alphabet)
    alg = Z3Algebra(3, n)
    for position, c in enumerate(alg.chars):
        for value in (-1, 0, n - 1, n, n + 1):
            solver = z3.Solver()
            solver.add(*alg.domain, c == value)
            assert (solver.check() == z3.sat) == (0 <= value < n), (position, value)
    alphabet.concretize((n - 1,))
    with pytest.raises(IndexError):
        alphabet.concretize((n,))


def test_side_of_names_where_the_pieces_change() -> None:
    """side_of: a cut inside a letter run changes both sides, one at an accepted transition neither, and a
    lookahead read at the cut (a letter run that must not be followed by a digit) only the left side."""
    pieces = family_pieces("qwen2")
    assert side_of(pieces, "ab", 1) == "both"
    assert side_of(pieces, "a!", 1) == "none"
    lookahead = pieces_of(stages_pre_tokenizer((r"\p{L}+(?!\p{N})|\p{L}|\p{N}",)))
    assert side_of(lookahead, "ab1", 2) == "end_of_input"
