"""The bounded check: every short string over the abstract alphabet, cut at every accepted transition, keeps the
reference's pieces (an engine-level witness that does not trust the z3 model).

Per pattern family: every string over one representative per abstract symbol up to length 4 (3 for o200k's 28
symbols), and over the reduced representative set (spec/proofs/bounded.py says why it suffices) up to length
5. Under the `gate` profile (DELTA_HYPOTHESIS_PROFILE=gate) the full alphabet goes to length 5 (4 for o200k),
the reduced set to 6, and a provisioned tokenizer's own pre-tokenizer is used when the family has one. The
default profile runs the Split stages of spec.patterns, after checking they are byte for byte the provisioned
tokenizers' own stages; families with no provisioned tokenizer are recorded as pattern-only, "not provisioned".
"""

from __future__ import annotations

import itertools
import json
import os
from types import SimpleNamespace

import pytest
from delta_suite.frozen.loader import load_tokenizer, loaded_pre_tokenizer
from delta_suite.frozen.registry import rows
from delta_suite.spec.classes import class_table
from delta_suite.spec.patterns import SPLIT_PATTERNS, TOTAL_STAGES
from delta_suite.spec.proofs.alphabet import family_alphabet
from delta_suite.spec.proofs.bounded import bounded_check, check_strings, default_lengths
from delta_suite.spec.proofs.pieces import family_pieces, pieces_of
from delta_suite.spec.transitions import is_accepted_transition

from properties.conftest import ADMITTED, PROVISIONED

FAMILIES = list(SPLIT_PATTERNS)
THOROUGH = os.environ.get("DELTA_HYPOTHESIS_PROFILE") == "gate"


def _as_isolated(pre_tokenizer: dict) -> dict:
    """The pre-tokenizer with each Removed + inverted Split over a total stage written as the Isolated Split it is
    equal to (spec.proofs.coverage; olmo_3_7b runs the Llama 3 pattern that way)."""
    for stage in pre_tokenizer.get("pretokenizers", [pre_tokenizer]):
        if (stage.get("type"), stage.get("behavior"), stage.get("invert")) == ("Split", "Removed", True) \
                and stage["pattern"].get("Regex") in TOTAL_STAGES:
            stage.update(behavior="Isolated", invert=False)
    return pre_tokenizer


@pytest.mark.parametrize("family", FAMILIES)
def test_accepted_transitions_keep_the_pieces_on_every_short_string(family: str, ledger) -> None:
    """For every string up to the bound and every accepted transition in it, the reference's pieces of the
    string equal its pieces of the left part followed by those of the right part."""
    alphabet = family_alphabet(family)
    members = [row.name for row in rows() if row.split_pattern == family]
    provisioned = [load_tokenizer(n) for n in members if n in ADMITTED]
    configs = {json.dumps(_as_isolated(loaded_pre_tokenizer(t.tokenizer)), sort_keys=True)
               for t in provisioned}
    assert len(configs) <= 1, f"{family}: provisioned tokenizers disagree on the pre-tokenizer"
    for tok in provisioned:  # the proved stages are the tokenizer's own (then a ByteLevel that does not split)
        config = loaded_pre_tokenizer(tok.tokenizer)
        stages = tuple(p["pattern"]["Regex"] for p in config["pretokenizers"] if p["type"] == "Split")
        assert stages == SPLIT_PATTERNS[family], tok.name
    # the gate runs the tokenizer's own pre-tokenizer; the default runs the same Split stages without the ByteLevel
    # mapping (a third cheaper, and shown above to be the tokenizer's own stages)
    own = THOROUGH and provisioned
    pieces = pieces_of(provisioned[0].tokenizer.pre_tokenizer) if own else family_pieces(family)
    full_length, reduced_length = default_lengths(alphabet, THOROUGH)
    results = bounded_check(pieces, alphabet, full_length, reduced_length)
    details = {
        "family": family,
        "symbols": len(alphabet),
        "profile": "gate" if THOROUGH else "ci",
        "pre_tokenizer": provisioned[0].name if own else "Split stages of delta_suite.spec.patterns",
        "provisioned": [t.name for t in provisioned],
        "runs": [r.summary() for r in results],
    }
    transitions = sum(r.transitions for r in results)
    differences = sum(len(r.differences) for r in results)
    for r in results:
        print(f"\n{family} [{r.label}] {len(r.representatives)} symbols to length {r.max_length}: "
              f"{r.enumerated} strings ({r.strings} pre-tokenized), {r.transitions} transitions, "
              f"{len(r.differences)} differences, {r.seconds:.1f}s")
    for name in members:
        if name in PROVISIONED:
            ledger.record("exhaustive", "proofs.bounded_enumeration", load_tokenizer(name), comparisons=transitions,
                          differences=differences, unit="cuts", details=details, oracle="proof")
        else:
            ledger.record("exhaustive", "proofs.bounded_enumeration.pattern_only",
                          SimpleNamespace(name=name, sha256=None), comparisons=transitions, differences=differences,
                          unit="cuts", details={**details, "status": "not provisioned"}, oracle="proof")
    assert transitions > 0
    first = [d for r in results for d in r.differences[:3]]
    assert differences == 0, f"{family}: {differences} cuts change the reference's pieces, e.g. {first}"


def test_the_enumeration_reaches_every_string_and_checks_every_cut() -> None:
    """check_strings enumerates every string over the representatives up to the bound, pre-tokenizes every shorter
    one and every longest one with an accepted transition, checks every such cut, and finds a difference planted
    only in strings of the longest length; default_lengths takes the longest full length whose strings stay within
    the budget (10 symbols: 10^5 strings by default, 10^6 when thorough)."""
    reps, bound = ["a", "1", "!", " "], 3
    table = class_table()
    accepted = {(x, y) for x in reps for y in reps if is_accepted_transition(x, y, table)}
    assert accepted  # else no cut is checked and the test proves nothing
    texts = ["".join(t) for n in range(1, bound + 1) for t in itertools.product(reps, repeat=n)]
    cuts = {t: [p for p in range(1, len(t)) if (t[p - 1], t[p]) in accepted] for t in texts}
    checked = [t for t in texts if len(t) < bound or cuts[t]]
    result = check_strings(list, reps, bound, "one piece per character")  # always splits cleanly
    assert (result.enumerated, result.strings) == (len(texts), len(checked)) and not result.differences
    assert result.transitions == sum(len(cuts[t]) for t in checked)
    longest_wrong = check_strings(lambda t: list(t) if len(t) < bound else [t], reps, bound, "planted")
    assert {d["text"] for d in longest_wrong.differences} == {t for t in checked if len(t) == bound}
    ten = type("TenSymbols", (), {"__len__": lambda self: 10})()
    assert default_lengths(ten, False) == (5, 5) and default_lengths(ten, True) == (6, 6)
