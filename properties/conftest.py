"""Shared fixtures of the gate: the provisioned tokenizers, Hypothesis profiles, and the gate's own ledger.

Hypothesis profiles: `ci` (default, fast) and `gate` (thorough, for `pytest -n 64`), chosen by
`DELTA_HYPOTHESIS_PROFILE` or pytest's `--hypothesis-profile`. Every check that compares IDs records what it
compared through the `ledger` fixture; records go to `$DELTA_LEDGER_DIR` (default `out/ledgers/gate`), one file
per xdist worker, so `reports` can count what actually ran.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from frozen.loader import FrozenTokenizer, load_tokenizer, provisioned_names
from ledger.records import append_records, make_record
from spec.admission import admission_of
from spec.proofs.obligations import declare

settings.register_profile(
    "ci",
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
settings.register_profile(
    "gate",
    max_examples=2000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
settings.load_profile(os.environ.get("DELTA_HYPOTHESIS_PROFILE", "ci"))

REPO = Path(__file__).resolve().parent.parent


def exhaustive_stride() -> int:
    """1 (every scalar value), or k from DELTA_EXHAUSTIVE_STRIDE: the per-code-point tests then check every k-th
    scalar value only, and each exhaustive record says so (`details.sampled`)."""
    try:
        return max(1, int(os.environ.get("DELTA_EXHAUSTIVE_STRIDE", "1")))
    except ValueError:
        return 1


PROVISIONED = provisioned_names()


def admitted_names() -> list[str]:
    return [n for n in PROVISIONED if admission_of(load_tokenizer(n)).admitted]


ADMITTED = admitted_names()


@pytest.fixture(params=ADMITTED or [pytest.param(None, marks=pytest.mark.skip(reason="no tokenizer provisioned"))])
def tok(request: pytest.FixtureRequest) -> FrozenTokenizer:
    """Each provisioned, admitted tokenizer in turn."""
    return load_tokenizer(request.param)


def _ledger_dir() -> Path:
    return Path(os.environ.get("DELTA_LEDGER_DIR", REPO / "out" / "ledgers" / "gate"))


def pytest_sessionstart(session: pytest.Session) -> None:
    """The ledger folder holds the latest run only (`reports table3 --gate` renders it): the controller removes the
    gate ledgers of earlier runs before any test writes."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    folder = _ledger_dir()
    if folder.is_dir():
        for old in folder.glob("gate-*.jsonl"):
            old.unlink(missing_ok=True)


def _ledger_path() -> Path:
    folder = _ledger_dir()
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    return folder / f"gate-{worker}-{os.getpid()}-{uuid.uuid4().hex[:8]}.jsonl"


class GateLedger:
    """Collects the gate's records during a test and appends them when the test ends."""

    def __init__(self, test_id: str) -> None:
        self.test_id = test_id
        self.records: list[dict] = []

    def record(self, level: str, check: str, tok: FrozenTokenizer | None = None, **counts) -> dict:
        rec = make_record(
            "gate",
            level,
            check,
            tokenizer=tok.name if tok is not None else None,
            tokenizer_sha256=tok.sha256 if tok is not None else None,
            **counts,
        )
        rec["details"]["test"] = self.test_id
        declare(rec)  # the obligations this record is evidence for (spec.proofs.obligations.declared)
        if level == "exhaustive" and exhaustive_stride() > 1:
            rec["details"]["sampled"] = f"every {exhaustive_stride()}th scalar value (DELTA_EXHAUSTIVE_STRIDE)"
        self.records.append(rec)
        return rec


_LEDGER_FILE: Path | None = None


@pytest.fixture
def ledger(request: pytest.FixtureRequest):
    """Record what a check compared; written to the gate ledger when the test finishes (pass or fail)."""
    global _LEDGER_FILE
    gl = GateLedger(request.node.nodeid)
    yield gl
    if gl.records:
        rep = getattr(request.node, "rep_call", None)
        outcome = "passed"
        if rep is not None and rep.failed:
            outcome = "failed"
        elif rep is not None and rep.skipped:
            outcome = "skipped"
        for rec in gl.records:
            rec["details"]["outcome"] = outcome
        if _LEDGER_FILE is None:
            _LEDGER_FILE = _ledger_path()
        append_records(_LEDGER_FILE, gl.records)


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    rep = outcome.get_result()
    if rep.when == "call":
        item.rep_call = rep  # type: ignore[attr-defined]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked `slow` (long sweeps, peers installed on demand) run only with DELTA_SLOW=1 or `-m slow`."""
    if os.environ.get("DELTA_SLOW") == "1" or "slow" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason="slow: run with DELTA_SLOW=1 or -m slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
