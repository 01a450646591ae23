"""Per-pattern transition sets (spec.transitions.PATTERN_PAIRS, APOSTROPHE_FREE): each pattern accepts, beyond the
floor of eight pairs, exactly the pairs its z3 proofs show sound, and the suite checks the added cuts like the
others.

- The table equals what the split-level prover finds sound outside the floor (unbounded, stage by stage), and the
  pipeline-level proof agrees to its bound (properties/test_pipeline_proof.py); a pair the prover refutes is in
  no pattern's set.
- On every provisioned tokenizer, each added pair is accepted by the default rules where the normalization
  condition allows, refused by the floor, and splits the reference exactly.
- The control `cut.pattern_pairs_of_qwen2` (qwen2's set applied to every tokenizer) is killed by an ID difference
  on a tokenizer of another pattern, and equivalent (checked) on the qwen2 pattern.
- The gain: how many more cuts the sets accept on the built-in samples, every gained cut checked on the reference.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from delta_suite.checks.pattern_pairs_gain import FLOOR, pattern_pairs_gain
from delta_suite.controls.proofs import pattern_pairs_equal
from delta_suite.corpora.samples import SAMPLES
from delta_suite.frozen.loader import load_tokenizer
from delta_suite.spec.admission import admission_of
from delta_suite.spec.classes import CLASS_NAMES
from delta_suite.spec.cut import CutRules, explain_cut, rules_for
from delta_suite.spec.patterns import SPLIT_PATTERNS
from delta_suite.spec.proofs.derive import adopted
from delta_suite.spec.proofs.prove import prove_family
from delta_suite.spec.reference import reference_encode
from delta_suite.spec.transitions import ACCEPTED_PAIRS, APOSTROPHE_FREE, PATTERN_PAIRS

from properties.conftest import ADMITTED, PROVISIONED

# one text per class pair: the cut is at 1 (a left character, then a right one, then a word that ends the text)
PAIR_TEXTS = {"L→M": "x\u0300 y", "N→N": "12 y", "N→M": "1\u0300 y", "M→N": "\u03001 y", "M→O": "\u0300! y",
              "M→S": "\u0300 y", "S→N": " 1 y", "L→'": "x' y"}


def _label(pair: tuple[int, int]) -> str:
    return f"{CLASS_NAMES[pair[0]]}→{CLASS_NAMES[pair[1]]}"


@pytest.mark.parametrize("family", list(SPLIT_PATTERNS))
def test_pattern_pairs_are_what_the_prover_finds_sound(family: str, ledger) -> None:
    """PATTERN_PAIRS[family] (and "L→'" iff the family is apostrophe-free) equals the set of pairs outside the
    floor that the split-level prover proves sound for the pattern; none of them is in the floor."""
    proof = prove_family(family)
    sound = set(proof.summary()["excluded_sound_conservative"])
    declared = {_label(p) for p in PATTERN_PAIRS[family]} | ({"L→'"} if family in APOSTROPHE_FREE else set())
    ledger.record("proof", "proofs.pattern_pairs", None, comparisons=len(sound | declared),
                  differences=len(sound ^ declared),
                  details={"family": family, "declared": sorted(declared), "proved_sound": sorted(sound)},
                  oracle="proof")
    assert not PATTERN_PAIRS[family] & ACCEPTED_PAIRS
    assert declared == sound, (sorted(declared - sound), sorted(sound - declared))
    # a derived family adopts from its proof by the same rule (spec.proofs.derive.adopted), nothing left over
    pairs, apostrophe_free, crlf_free, _ = adopted(proof)
    assert (pairs, apostrophe_free, crlf_free) == (PATTERN_PAIRS[family], family in APOSTROPHE_FREE, False)


@pytest.mark.parametrize("name", ADMITTED)
def test_added_pairs_are_accepted_and_exact(name: str, ledger) -> None:
    """For each pair of the tokenizer's pattern set: the floor refuses the cut, the default rules accept it (or an
    NFC tokenizer's normalization condition refuses it, as for any pair), and an accepted cut splits the reference
    exactly. At least one added pair is accepted on every admitted tokenizer."""
    tok = load_tokenizer(name)
    family = admission_of(tok).pattern
    labels = [_label(p) for p in sorted(PATTERN_PAIRS[family])] + (["L→'"] if family in APOSTROPHE_FREE else [])
    accepted, differences = [], []
    for label in labels:
        text = PAIR_TEXTS[label]
        assert explain_cut(tok, text, 1, FLOOR) != "accepted:transition", (label, text)
        verdict = explain_cut(tok, text, 1)
        assert verdict == "accepted:transition" or verdict.startswith("nfc_"), (label, verdict)
        if verdict == "accepted:transition":
            accepted.append(label)
            if reference_encode(tok, text[:1]) + reference_encode(tok, text[1:]) != reference_encode(tok, text):
                differences.append(label)
    ledger.record("chunked", "pattern_pairs.accepted_cuts", tok, comparisons=len(accepted),
                  differences=len(differences), details={"pattern": family, "accepted": accepted,
                                                         "pairs": labels}, oracle="reference")
    assert accepted and not differences, (accepted, differences)


def test_control_with_another_patterns_pairs_is_killed_by_ids() -> None:
    """`cut.pattern_pairs_of_qwen2` accepts "123" at 1 on a Llama 3 tokenizer (digits grouped by three there) and
    the reference IDs differ; on qwen3 the control's rules are the specification's own (pattern_pairs_equal)."""
    control = CutRules(pattern_pairs="qwen2")
    llama_names = [n for n in PROVISIONED if admission_of(load_tokenizer(n)).pattern == "llama3"]
    if not llama_names:
        pytest.skip("no provisioned tokenizer of the llama3 pattern")
    llama = load_tokenizer(llama_names[0])
    assert explain_cut(llama, "123", 1) != "accepted:transition"
    assert explain_cut(llama, "123", 1, control) == "accepted:transition"
    assert reference_encode(llama, "1") + reference_encode(llama, "23") != reference_encode(llama, "123")
    qwen_names = [n for n in PROVISIONED if admission_of(load_tokenizer(n)).pattern == "qwen2"]
    for name in qwen_names:
        assert pattern_pairs_equal(load_tokenizer(name)).holds
        assert rules_for(load_tokenizer(name), control) == rules_for(load_tokenizer(name))


@pytest.mark.parametrize("name", ADMITTED)
def test_gain_on_samples_is_exact(name: str, ledger) -> None:
    """The own set never loses a cut the floor accepts, gains only at its pattern's pairs, and every gained cut
    on the built-in samples splits the reference exactly; the record says how many cuts it gains."""
    tok = load_tokenizer(name)
    texts = [s * 3 for s in SAMPLES]
    gain = pattern_pairs_gain(tok, texts, verify=10_000)
    family = admission_of(tok).pattern
    allowed = {_label(p) for p in PATTERN_PAIRS[family]} | ({"L→'"} if family in APOSTROPHE_FREE else set())
    ledger.record("chunked", "pattern_pairs.gain", tok, comparisons=gain.verified, differences=len(gain.differences),
                  details=gain.as_dict(), oracle="reference")
    assert gain.lost == 0
    assert set(gain.by_pair) <= allowed, (set(gain.by_pair), allowed)
    assert gain.verified == gain.gained and not gain.differences, gain.differences


def _cut_gain(args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "delta_suite.corpora.cli", "cut-gain", *args], capture_output=True,
                          text=True,
                          env={**os.environ, "DELTA_NO_HUB": "1"}, timeout=300)


def test_cut_gain_command_measures_and_records(tmp_path: Path) -> None:
    """`corpora cut-gain` on a small user corpus: exit 0, one record per tokenizer with the floor and own cut counts
    and every gained cut checked; exit 2 for an unknown tokenizer, a bad budget or a corpus path that names no
    file, with a message and no traceback."""
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"text": s}) + "\n" for s in SAMPLES), encoding="utf-8")
    name = ADMITTED[0]
    proc = _cut_gain(["--corpus", str(corpus), "--tokenizer", name, "--out", str(tmp_path / "out")])
    assert proc.returncode == 0, proc.stderr
    (rec,) = [json.loads(line) for line in (tmp_path / "out" / "cut-gain-ledger.jsonl").read_text().splitlines()]
    assert rec["check"] == "pattern_pairs.gain" and rec["tokenizer"] == name
    d = rec["details"]
    assert d["own_cuts"] - d["floor_cuts"] == d["gained"] == rec["comparisons"] and rec["differences"] == 0
    for args, message in ((["--tokenizer", "qwen9"], "unknown tokenizer"), (["--max-characters", "0"], "at least 1"),
                          (["--corpus", str(tmp_path / "none*.jsonl")], "no corpus files found")):
        bad = _cut_gain(["--corpus", str(corpus), *args] if args[0] != "--corpus" else args)
        assert bad.returncode == 2 and "Traceback" not in bad.stderr and message in bad.stderr, bad.stderr
