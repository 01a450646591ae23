"""The gate's power on synthetic tokenizers alone, whichever frozen tokenizers are provisioned (issue 21, item 2).

With the frozen tokenizers, a broken oracle (post-processing inside every reference encode) shows only through
llama_3_1_8b, the one whose post-processor adds a token; a guard removed from condition 1 only on a tokenizer
without NFC (under NFC the normalization window refuses every cut next to a marker); the apostrophe carve-out
only on gpt_oss_120b (o200k letter runs carry "'s"); the normalization condition only on an NFC tokenizer. Here
the same comparisons run on the four synthetic tokenizers of `properties.synthetic.power_config`, each admitted
by the spec and each with one of those features:

1. the unbroken implementation passes: `check_cut_case` over the `ci` battery finds no difference, and the
   chunked and post-processing comparisons (`chunked_differences`) find none;
2. each mutant is killed by the same comparison functions: the cut controls `cut.no_guard`,
   `cut.no_apostrophe_carveout` and `cut.no_normalization` by `check_cut_case` (on a worked example and on the
   battery), and the broken oracle (`broken_oracle`: add_special_tokens=True) by `chunked_differences` and by
   `check_cut_case` whose reference encodes go through it;
3. every test records what it compared in the gate's ledger.

And `fuzz --tokenizer all` covers an NFC and a non-NFC tokenizer whenever both kinds are provisioned.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path

import pytest
from delta_suite.checks.battery import BatteryCase, battery, battery_digest
from delta_suite.checks.differential import Difference, ReferenceMemo, check_cut_case, first_difference
from delta_suite.controls import get
from delta_suite.delta.cuts import encode_chunked, encode_planned, split_at
from delta_suite.frozen.loader import FrozenTokenizer, load_tokenizer
from delta_suite.fuzz.campaign import CampaignSpec, schedule
from delta_suite.fuzz.cli import resolve_tokenizers
from delta_suite.spec.admission import admission_of
from delta_suite.spec.classes import class_table
from delta_suite.spec.cut import ACCEPTED_TRANSITION, DEFAULT_CUT_RULES, CutRules, explain_cut, pair_verdict
from delta_suite.spec.guard import special_touches
from delta_suite.spec.normalization import anchors_around
from delta_suite.spec.patterns import SPLIT_PATTERNS
from delta_suite.spec.reference import post_process, reference_encode, reference_encode_full, unit_lengths

from properties.conftest import ADMITTED
from properties.synthetic import BOS, CHAT_MARKERS, PATTERN_OF, POWER_KINDS, power_tokenizer

CHUNKS = 4
Oracle = Callable[[FrozenTokenizer, str], list[int]]

# (control, synthetic tokenizer, worked example, cut): the spec refuses the cut, the control accepts it, and the
# two encodes of the pieces differ from the whole encode. On a tokenizer without NFC the guard is the only thing
# between a marker's interior and a cut, so `cut.no_guard` there is exactly "condition 1 removed".
CUT_KILLS = (
    ("cut.no_guard", "specials_next_to_letters", "user<think>ok", 10),  # <think | >: L->O inside the marker
    ("cut.no_apostrophe_carveout", "o200k_contractions", "He's here", 2),  # He | 's: one o200k pre-token
    ("cut.no_normalization", "nfc", "\u0958/", 1),  # NFC: KA NUKTA | "/" -- NUKTA and "/" are one pre-token
    # the three clauses of the NFC condition, one at a time
    ("cut.nfc_no_equation", "nfc", "e\u0301", 1),  # e | acute: NFC composes across the cut
    ("cut.nfc_no_recheck", "nfc", "\u0958/", 1),  # KA NUKTA | /: NFC decomposes it, the normalized pair M->O
    ("cut.nfc_window_is_pair", "nfc", "a\u0316\u0301", 1),  # a | grave-below acute: a+acute compose past b+1
)


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> dict[str, FrozenTokenizer]:
    """The four synthetic tokenizers, written once per module and loaded as FrozenTokenizers."""
    folder: Path = tmp_path_factory.mktemp("synthetic_power")
    return {kind: power_tokenizer(kind, folder) for kind in POWER_KINDS}


def broken_oracle(tok: FrozenTokenizer, text: str) -> list[int]:
    """The oracle mutant: the reference encode with add_special_tokens=True, so the post-processor's tokens are
    inside every encode instead of applied once to the assembled sequence."""
    return tok.tokenizer.encode(text, add_special_tokens=True).ids


class BrokenOracleMemo(ReferenceMemo):
    """`check_cut_case`'s reference encodes (IDs and unit lengths) through `broken_oracle`."""

    def encoded(self, text: str) -> tuple[list[int], list[int]]:
        enc = self.tok.tokenizer.encode(text, add_special_tokens=True)
        return enc.ids, unit_lengths(enc.word_ids)


@dataclass
class Tally:
    """What a comparison function compared: comparisons, the differences found (per comparison, and the first
    few), and how many texts were cut (fast path) or served whole (fallbacks)."""
    comparisons: int = 0
    differences: int = 0
    fast_path: int = 0
    fallbacks: int = 0
    by_comparison: Counter = field(default_factory=Counter)
    first: list[dict] = field(default_factory=list)

    def note(self, what: str, text: str, diff: Difference | None) -> None:
        self.comparisons += 1
        if diff is not None:
            self.differences += 1
            self.by_comparison[what] += 1
            if len(self.first) < 3:
                self.first.append({"comparison": what, "text": text[:80], **diff.as_json()})


def chunked_differences(tok: FrozenTokenizer, texts: list[str], oracle: Oracle = reference_encode) -> Tally:
    """The chunked path and post-processing compared with `oracle`, per text S:
    encode_chunked(S, 4) == oracle(S); the oracle's encodes of the planned chunks, concatenated, == oracle(S) (when
    S was cut); post_process(oracle(S)) == reference_encode_full(S); and encode_chunked(S, 4,
    add_special_tokens=True) == reference_encode_full(S)."""
    out = Tally()
    for text in texts:
        expected = oracle(tok, text)
        chunked, cuts = encode_planned(tok, text, CHUNKS, workers=1)
        out.note("encode_chunked", text, first_difference(expected, chunked))
        if cuts:
            out.fast_path += 1
            joined = [i for piece in split_at(text, cuts) for i in oracle(tok, piece)]
            out.note("chunks_concatenated", text, first_difference(expected, joined))
        else:
            out.fallbacks += 1
        full = reference_encode_full(tok, text)
        out.note("post_process", text, first_difference(full, post_process(tok, expected)))
        with_specials = encode_chunked(tok, text, chunks=CHUNKS, workers=1, add_special_tokens=True)
        out.note("encode_chunked_post_processed", text, first_difference(full, with_specials))
    return out


@dataclass
class BatteryRun:
    """`check_cut_case` over a battery: strings checked and failed, comparisons, differences, the first failure."""
    strings: int = 0
    failing: int = 0
    comparisons: int = 0
    differences: int = 0
    unit_differences: int = 0
    fast_path: int = 0
    fallbacks: int = 0
    first_kill: int | None = None
    first: dict | None = None


def run_battery(tok: FrozenTokenizer, cases: list[BatteryCase], rules: CutRules = DEFAULT_CUT_RULES,
                memo: ReferenceMemo | None = None) -> BatteryRun:
    """`check_cut_case(tok, case, rules)` on every case (one memo: each piece encoded once)."""
    memo = memo or ReferenceMemo(tok)
    out = BatteryRun()
    for n, case in enumerate(cases, 1):
        result = check_cut_case(tok, case, rules, memo=memo)
        out.strings += 1
        out.comparisons += result.comparisons
        out.differences += result.differences
        out.unit_differences += result.unit_differences
        out.fast_path += result.fast_path
        out.fallbacks += result.fallbacks
        if result.failed:
            out.failing += 1
            if out.first_kill is None:
                out.first_kill = n
                out.first = {"case": case.index, "hazard": case.hazard, "text": case.text[-120:],
                             **(result.first.as_json() if result.first else {})}
    return out


def example_case(text: str, b: int) -> BatteryCase:
    """A one-string battery case whose only candidate cut is b."""
    return BatteryCase(0, "example", text, (b,), ())


# --- the synthetic tokenizers are what they claim -----------------------------------------------------------------


@pytest.mark.parametrize("kind", POWER_KINDS)
def test_synthetic_tokenizer_admitted_with_its_feature(synthetic: dict[str, FrozenTokenizer], kind: str,
                                                       ledger) -> None:
    """Each synthetic tokenizer is admitted by the spec, under the split pattern it was built with, and has the
    feature it stands for: a post-processor that adds BOS once; chat markers with an accepted class transition
    inside them on a tokenizer without NFC; the o200k pattern, whose letter runs take "'s" along; NFC."""
    tok = synthetic[kind]
    admission = admission_of(tok)
    family = next(f for f, stages in SPLIT_PATTERNS.items() if stages == (PATTERN_OF[kind],))
    has_feature = {
        "post_processor": reference_encode_full(tok, "hello")
        == [tok.tokenizer.token_to_id(BOS), *reference_encode(tok, "hello")],
        "specials_next_to_letters": not tok.is_nfc and all(
            any(pair_verdict(m[i - 1], m[i], class_table(), DEFAULT_CUT_RULES) == ACCEPTED_TRANSITION
                for i in range(1, len(m))) for m in CHAT_MARKERS) and set(CHAT_MARKERS) <= set(tok.special_strings),
        "o200k_contractions": family == "o200k" and len(tok.tokenizer.pre_tokenizer.pre_tokenize_str("He's")) == 1,
        "nfc": tok.is_nfc,
    }[kind]
    ok = admission.admitted and admission.pattern == family and has_feature
    ledger.record("harness", "synthetic.admitted_with_feature", tok, comparisons=1, differences=int(not ok),
                  unit="tokenizers", details={"admission": admission.reason, "pattern": admission.pattern},
                  oracle="premise")
    assert admission.admitted, admission.reason
    assert admission.pattern == family
    assert has_feature, kind


# --- 1. the unbroken implementation passes ------------------------------------------------------------------------


@pytest.mark.parametrize("kind", POWER_KINDS)
def test_unbroken_cut_battery(synthetic: dict[str, FrozenTokenizer], kind: str, ledger) -> None:
    """On each synthetic tokenizer, every cut the specification accepts in the ci battery splits the reference
    encode exactly (IDs and units), all accepted cuts together do too, and encode_chunked equals the reference."""
    tok = synthetic[kind]
    cases = battery(tok, "ci")
    run = run_battery(tok, cases)
    ledger.record("battery", "synthetic.battery.cut", tok, comparisons=run.comparisons, differences=run.differences,
                  fast_path=run.fast_path, fallbacks=run.fallbacks,
                  details={"strings": run.strings, "failing": run.failing, "unit_differences": run.unit_differences,
                           "first": run.first, "battery_digest": battery_digest(tok, "ci")}, oracle="reference")
    assert run.comparisons > run.strings
    assert run.differences == 0 and run.unit_differences == 0, run.first


@pytest.mark.parametrize("kind", POWER_KINDS)
def test_unbroken_chunked_and_post_processing(synthetic: dict[str, FrozenTokenizer], kind: str, ledger) -> None:
    """On each synthetic tokenizer and every ci battery string S: encode_chunked(S, 4) and the concatenated
    encodes of its chunks equal the reference, post_process of the reference equals the reference's own
    post-processed encode, and encode_chunked(S, 4, add_special_tokens=True) equals it too."""
    tok = synthetic[kind]
    tally = chunked_differences(tok, [c.text for c in battery(tok, "ci")])
    ledger.record("chunked", "synthetic.chunked_and_post_processing", tok, comparisons=tally.comparisons,
                  differences=tally.differences, fast_path=tally.fast_path, fallbacks=tally.fallbacks,
                  details={"first": tally.first}, oracle="reference")
    assert tally.fast_path > 0
    assert tally.differences == 0, tally.first


# --- 2. every mutant is killed on a synthetic tokenizer -----------------------------------------------------------


@pytest.mark.parametrize(("control", "kind", "text", "b"), CUT_KILLS, ids=[c[0] for c in CUT_KILLS])
def test_cut_control_killed(synthetic: dict[str, FrozenTokenizer], control: str, kind: str, text: str, b: int,
                            ledger) -> None:
    """The control's rules accept a cut the specification refuses, and `check_cut_case` (the comparison the
    unbroken battery passes) finds an ID difference there: on the worked example, and on the ci battery."""
    tok = synthetic[kind]
    rules = get(control).rules
    assert rules is not None
    spec_verdict, control_verdict = explain_cut(tok, text, b), explain_cut(tok, text, b, rules)
    unbroken = check_cut_case(tok, example_case(text, b))
    broken = check_cut_case(tok, example_case(text, b), rules)
    whole = reference_encode(tok, text)
    pieces = reference_encode(tok, text[:b]) + reference_encode(tok, text[b:])
    run = run_battery(tok, battery(tok, "ci"), rules)
    killed = broken.differences > 0 and run.differences > 0
    ledger.record(
        "control", f"synthetic.control.{control}", tok, comparisons=run.strings, differences=run.failing,
        unit="battery strings",
        details={"control": control, "path": "cut", "status": "killed" if killed else "survived", "killed": killed,
                 "strings_to_first_kill": run.first_kill, "failing_share": round(run.failing / run.strings, 6),
                 "first": run.first, "battery_digest": battery_digest(tok, "ci"),
                 "example": {"text": text, "cut": b, "spec": spec_verdict, "control": control_verdict,
                             "whole": whole, "pieces": pieces}}, oracle="reference")
    assert not spec_verdict.startswith("accepted") and control_verdict.startswith("accepted")
    assert unbroken.differences == 0 and unbroken.paths["accepted"] == 0
    assert broken.differences > 0 and whole != pieces, (whole, pieces)
    assert run.differences > 0, f"{control} survives the ci battery on {tok.name}"


def test_guard_needs_a_tokenizer_without_nfc(synthetic: dict[str, FrozenTokenizer], ledger) -> None:
    """Why `specials_next_to_letters` has no NFC: on the NFC tokenizer, with the same markers, every cut inside a
    marker at an accepted transition has a normalization window that touches the marker, so a guard removed from
    condition 1 alone changes no verdict there (qwen3_8b's blind spot); without NFC the same cuts are accepted as
    soon as the guard is gone (`cut.no_guard`), which the kill above shows changes the IDs."""
    nfc, plain = synthetic["nfc"], synthetic["specials_next_to_letters"]
    no_guard = get("cut.no_guard").rules
    assert no_guard is not None
    table = class_table()
    interior = [("user" + m + "ok", 4 + i) for m in CHAT_MARKERS for i in range(1, len(m))
                if pair_verdict(m[i - 1], m[i], table, DEFAULT_CUT_RULES) == ACCEPTED_TRANSITION]
    unmasked = []
    for text, b in interior:
        a, c = anchors_around(text, b, table)
        if a is None or c is None or special_touches(nfc, text, a, c) is None:
            unmasked.append((text, b))
    accepted_without_guard = [(t, b) for t, b in interior if explain_cut(plain, t, b, no_guard) == ACCEPTED_TRANSITION]
    ledger.record("harness", "synthetic.marker_interior_window_masking", nfc, comparisons=len(interior),
                  differences=len(unmasked), unit="cuts",
                  details={"unmasked": unmasked[:5], "accepted_without_guard": len(accepted_without_guard)},
                  oracle="spec")
    assert interior and not unmasked, unmasked
    assert accepted_without_guard == interior


def test_broken_oracle_killed(synthetic: dict[str, FrozenTokenizer], ledger) -> None:
    """An oracle that encodes with add_special_tokens=True is caught on the post-processor tokenizer by the same
    comparisons the unbroken implementation passes: encode_chunked and the concatenated chunks differ from it,
    post_process of its answer differs from the reference's post-processed encode, and `check_cut_case` with its
    reference encodes through it finds differences in the ci battery. On the three synthetic tokenizers without a
    post-processor the same oracle changes nothing: the post-processor tokenizer is what makes it visible."""
    tok = synthetic["post_processor"]
    cases = battery(tok, "ci")
    texts = [c.text for c in cases]
    tally = chunked_differences(tok, texts, broken_oracle)
    run = run_battery(tok, cases, memo=BrokenOracleMemo(tok))
    invisible = {k: chunked_differences(synthetic[k], texts[:40], broken_oracle).differences
                 for k in POWER_KINDS if k != "post_processor"}
    killed = tally.differences > 0 and run.differences > 0
    ledger.record(
        "control", "synthetic.control.oracle_encodes_with_special_tokens", tok, comparisons=tally.comparisons,
        differences=tally.differences, unit="comparisons",
        details={"control": "oracle.add_special_tokens", "path": "harness",
                 "status": "killed" if killed else "survived", "killed": killed,
                 "by_comparison": dict(tally.by_comparison), "first": tally.first,
                 "battery": {"strings": run.strings, "failing": run.failing, "strings_to_first_kill": run.first_kill,
                             "first": run.first},
                 "differences_without_post_processor": invisible}, oracle="reference")
    assert tally.by_comparison["encode_chunked"] == len(texts)  # BOS missing from every chunked answer
    assert tally.by_comparison["chunks_concatenated"] == tally.fast_path > 0  # one BOS per chunk
    assert tally.by_comparison["post_process"] == len(texts)  # BOS twice
    assert tally.by_comparison["encode_chunked_post_processed"] == 0  # does not go through the oracle
    assert run.differences > 0  # ref(S[:b]) + ref(S[b:]) holds BOS twice, ref(S) once
    assert invisible == dict.fromkeys(invisible, 0), invisible


# --- campaigns over every tokenizer cover both normalizer kinds ---------------------------------------------------


def test_fuzz_all_covers_nfc_and_non_nfc(ledger) -> None:
    """`fuzz --tokenizer all` resolves to every provisioned admitted tokenizer, so when an NFC and a non-NFC one are
    provisioned both are in the campaign, and its schedule gives each (tokenizer, path) a batch in the first round
    (before any tokenizer gets a second one)."""
    kinds = {load_tokenizer(n).is_nfc for n in ADMITTED}
    if kinds != {True, False}:
        pytest.skip(f"NFC and non-NFC tokenizers are not both provisioned (admitted: {ADMITTED})")
    names, _ = resolve_tokenizers("all")
    covered = {load_tokenizer(n).is_nfc for n in names}
    spec = CampaignSpec(campaign="t", tokenizers=names, paths=["cut", "repair"], budget=1.0)
    first_round = {(t, p) for w in range(2) for _, t, p, batch in islice(schedule(spec, w, 2), len(spec.streams))
                   if batch == 0}
    ok = covered == {True, False} and set(names) == set(ADMITTED) and first_round == set(spec.streams)
    ledger.record("harness", "synthetic.fuzz_all_covers_both_kinds", None, comparisons=len(names),
                  differences=int(not ok), unit="tokenizers",
                  details={"tokenizers": names, "nfc": [n for n in names if load_tokenizer(n).is_nfc]}, oracle="self")
    assert set(names) == set(ADMITTED)
    assert covered == {True, False}
    assert first_round == set(spec.streams)

