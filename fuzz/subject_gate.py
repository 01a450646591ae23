"""The tests `delta_suite.fuzz.subject_plugin` runs against a user's subject (`--delta-subject`), per provisioned
tokenizer.

Propositions, each against the reference (`spec.reference.reference_encode`, no sequence-level post-processing):
- property: for Hypothesis seam texts x (special-token fragments, NFC-sensitive text, CR/LF, contractions, digits,
  CJK, emoji, every engine class, the Unicode-version skew), subject.encode(x) == ref(x);
- battery: on every `ci` battery string, the whole encode, and where offered the chunked encode and a session
  given S then S + D, equal the reference;
- campaign: a seeded fuzz campaign per path (`fuzz.campaign`) finds no difference and no fault.
Every test writes what it compared (and the first counterexample or fault) to the ledger before asserting.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from delta_suite.checks.battery import battery
from delta_suite.frozen.errors import SuiteError
from delta_suite.frozen.loader import FrozenTokenizer, load_tokenizer
from delta_suite.fuzz.campaign import CampaignSpec, new_campaign_id, run_campaign
from delta_suite.fuzz.checker import opened_subject
from delta_suite.fuzz.generate import generator_digest
from delta_suite.fuzz.strategies import seam_texts
from delta_suite.ledger.records import append_records
from delta_suite.spec.reference import reference_encode
from delta_suite.subjects.protocol import SubjectFault, SubjectUnavailable
from delta_suite.subjects.records import subject_record, unavailable_record
from delta_suite.subjects.replay import first_difference
from delta_suite.subjects.wiring import check_on_subject, supports
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


def _ledger(config: pytest.Config) -> Path:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    return Path(config.getoption("--delta-ledger")) / f"subject-gate-{worker}.jsonl"


@pytest.fixture
def tok(delta_tokenizer: str) -> FrozenTokenizer:
    return load_tokenizer(delta_tokenizer)


@pytest.fixture
def subject(request: pytest.FixtureRequest, tok: FrozenTokenizer):
    """The user's subject bound to `tok`; one that cannot run is recorded "not installed" and fails the test."""
    spec = request.config.getoption("--delta-subject")
    try:
        return opened_subject(spec, tok)
    except SubjectUnavailable as exc:
        append_records(_ledger(request.config), [unavailable_record(spec, tok, "encoder", "subject.gate",
                                                                     exc.reason)])
        pytest.fail(f"subject {spec} is not installed: {exc.reason}", pytrace=False)


def _fault_record(subject, tok: FrozenTokenizer, level: str, check: str, text: str, fault: SubjectFault,
                  comparisons: int, differences: int) -> dict:
    """A subject that raised: the fault counted apart (`faults`), with the differences seen before it."""
    return subject_record(subject, tok, level, check, comparisons=comparisons, differences=differences,
                          counterexample={"text": text, "error": str(fault)}, faults={fault.kind: 1})


def test_whole_encode_property(request: pytest.FixtureRequest, subject, tok: FrozenTokenizer) -> None:
    """subject.encode(x) == ref(x) for Hypothesis seam texts x (shrunk to a minimal x on failure)."""
    seen = {"n": 0, "differing": 0}
    bad: dict = {}
    examples = request.config.getoption("--delta-examples")

    @settings(max_examples=examples, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def prop(data) -> None:
        text = data.draw(seam_texts(tok), label="text")
        seen["n"] += 1
        try:
            got = subject.encode(text)
        except SubjectFault as fault:
            bad.clear()
            bad.update(text=text, error=str(fault), kind=fault.kind)  # the last one is Hypothesis' minimal example
            raise
        want = reference_encode(tok, text)
        if got != want:
            seen["differing"] += 1
            p = first_difference(got, want)
            bad.clear()
            bad.update(text=text, position=p, subject_ids=got[p:p + 3], reference_ids=want[p:p + 3])
            raise AssertionError(f"first difference at token {p} on {text!r}")

    ledger = _ledger(request.config)
    try:
        prop()
    except (SubjectFault, AssertionError):
        fault = {bad["kind"]: 1} if "kind" in bad else {}
        append_records(ledger, [subject_record(
            subject, tok, "encoder", "subject.property", comparisons=seen["n"], differences=seen["differing"],
            counterexample={k: v for k, v in bad.items() if k != "kind"}, unit="texts", faults=fault)])
        raise
    append_records(ledger, [subject_record(subject, tok, "encoder", "subject.property", comparisons=seen["n"],
                                           differences=seen["differing"], unit="texts")])


def test_battery(request: pytest.FixtureRequest, subject, tok: FrozenTokenizer) -> None:
    """Every `ci` battery string: whole encode, and the chunked encode and a session where the subject offers them."""
    paths = [p for p in ("encoder", "chunked", "repair") if supports(subject, p)]
    counts = {p: [0, 0, None] for p in paths}
    faults: list[tuple[str, str, SubjectFault]] = []
    for case in battery(tok, "ci"):
        for path in paths:
            try:
                n, d, bad = check_on_subject(subject, tok, case.text, path, splits=case.splits[:1], chunks=2)
            except SubjectFault as fault:
                faults.append((path, case.text, fault))
                continue
            counts[path][0] += n
            counts[path][1] += d
            counts[path][2] = counts[path][2] or bad
    level = {"encoder": "encoder", "chunked": "chunked", "repair": "repair"}
    records = [subject_record(subject, tok, level[p], f"subject.battery.{p}", comparisons=c[0], differences=c[1],
                              counterexample=c[2], unit="encodes") for p, c in counts.items()]
    records += [_fault_record(subject, tok, level[p], f"subject.battery.{p}", text, fault, 0, 0)
                for p, text, fault in faults[:5]]
    append_records(_ledger(request.config), records)
    differing = {p: c[1] for p, c in counts.items() if c[1]}
    assert not differing and not faults, (
        f"differences {differing}, faults {[(p, str(f)) for p, _, f in faults[:3]]}; first counterexample "
        f"{next((c[2] for c in counts.values() if c[2]), None)}")


@pytest.mark.parametrize("path", ["cut", "repair"])
def test_campaign(request: pytest.FixtureRequest, subject, tok: FrozenTokenizer, path: str) -> None:
    """A seeded campaign on `path` (cut: the chunked encode, or the whole encode when none is offered; repair: a
    session) finds no difference and no fault; its ledger goes under the ledger folder."""
    if path == "repair" and not supports(subject, "repair"):
        pytest.skip("the subject offers no session (repair path)")
    spec_text = request.config.getoption("--delta-subject")
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    out = Path(request.config.getoption("--delta-ledger")) / "campaigns" / f"{tok.name}-{path}-{worker}"
    spec = CampaignSpec(campaign=new_campaign_id(0), tokenizers=[tok.name], paths=[path], seed=0,
                        examples=request.config.getoption("--delta-examples"), subject=spec_text,
                        regressions=str(out / "regressions"), generator=generator_digest())
    try:
        result = run_campaign(spec, out)
    except SuiteError as exc:
        pytest.fail(f"campaign could not run: {exc}", pytrace=False)
    t = result.totals
    assert t.cases > 0
    assert not t.differences and not t.faults, (
        f"{t.differences} differences and faults {dict(t.faults)} in {t.cases} cases; shrunk cases in "
        f"{out / 'regressions'}")
