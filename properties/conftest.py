"""Shared fixtures of the gate: the provisioned tokenizers, Hypothesis profiles, and the gate's own ledger.

Hypothesis profiles: `ci` (default, fast) and `gate` (thorough, for `pytest -n 64`), chosen by
`DELTA_HYPOTHESIS_PROFILE` or pytest's `--hypothesis-profile`. Every check that compares IDs records what it
compared through the `ledger` fixture; records go to `$DELTA_LEDGER_DIR` (default `out/ledgers/gate`), one file
per xdist worker, so `reports` can count what actually ran.
"""

from __future__ import annotations

import math
import os
import shutil
import signal
import subprocess
import sys
import uuid
from functools import lru_cache
from pathlib import Path

import delta_suite.frozen.user_table as user_table_module
import pytest
from delta_suite.checks.battery import hazard_code_points
from delta_suite.frozen.loader import FrozenTokenizer, load_tokenizer, provisioned_names
from delta_suite.ledger.gate import RUN_KEY, did_not_pass, failed_test_record, new_run_id, session_record
from delta_suite.ledger.records import append_records, make_record
from delta_suite.spec.admission import admission_of
from delta_suite.spec.classes import class_table
from delta_suite.spec.proofs.obligations import declare
from delta_suite.subjects.envs import envs_root
from hypothesis import HealthCheck, settings

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


# Planes 4 to 13 (U+40000..U+DFFFF, 655,360 code points, 59% of the scalar values): no code point in them is
# assigned. The premise that makes a sample of them stand for all of them (every one alike in every input the
# per-code-point checks depend on) is itself checked over every one of them: test_cut_exhaustive.py,
# `test_unassigned_planes_are_alike`.
UNASSIGNED_PLANES = (0x40000, 0xE0000)
UNASSIGNED_STRIDE = 16


def unassigned_stride() -> int:
    """How the default run samples the unassigned planes: every 16th code point of U+40000..U+DFFFF (about 300 s
    less test time on 2 cores); 1 (every one) with DELTA_EXHAUSTIVE=full, the switch of the large-machine gate and
    of the main job's --full."""
    return 1 if os.environ.get("DELTA_EXHAUSTIVE") == "full" else UNASSIGNED_STRIDE


FULL_PIPELINE_BOUND, DEFAULT_PIPELINE_BOUND = 5, 4


def pipeline_bound() -> int:
    """The length bound of the gate's z3 pipeline proofs (every string of up to that many abstract symbols): 4 in
    the default run (the proof file took 88 s wall against 107 s at 5, with -n 2), 5 with DELTA_EXHAUSTIVE=full.
    Every excluded pair of the admitted families is refuted within 4 symbols, so the default run still checks each
    verdict (test_cut_keeps_the_pieces_of_the_whole_pipeline compares them with the split-level ones)."""
    return FULL_PIPELINE_BOUND if os.environ.get("DELTA_EXHAUSTIVE") == "full" else DEFAULT_PIPELINE_BOUND


def bound_note(bound: int) -> str | None:
    """What a pipeline-proof record says about the lengths it left out (None when it proved to the full bound)."""
    if bound >= FULL_PIPELINE_BOUND:
        return None
    return (f"proved to {bound} abstract symbols, not {FULL_PIPELINE_BOUND}; "
            f"DELTA_EXHAUSTIVE=full proves to {FULL_PIPELINE_BOUND}")


# The code points no sample leaves out (a stratified sample): the carve-out code points of the cut rules (LF, CR and
# the apostrophe), every code point whose class (spec.classes) differs from its predecessor's, and every hazard code
# point the battery names (checks.battery.hazard_code_points). A strided per-code-point check adds them to its
# multiples of the stride, and its record says so (`stride_note`, `sampling_note`).
CARVE_OUTS = (0x0A, 0x0D, 0x27)


@lru_cache(maxsize=1)
def class_changes() -> tuple[int, ...]:
    """Every scalar value whose class differs from its predecessor's (about 2,000)."""
    table = class_table()
    return tuple(cp for cp in range(1, len(table)) if table[cp] != table[cp - 1] and not 0xD800 <= cp <= 0xDFFF)


@lru_cache(maxsize=1)
def stratum() -> tuple[int, ...]:
    """The code points every strided sample includes, sorted: CARVE_OUTS, `class_changes()` and the battery's hazard
    code points (surrogates never: they are not scalar values)."""
    cps = set(CARVE_OUTS) | set(class_changes()) | hazard_code_points()
    return tuple(sorted(cp for cp in cps if not 0xD800 <= cp <= 0xDFFF))


def with_stratum(sampled: list[int], lo: int, hi: int, kept) -> list[int]:
    """`sampled` (sorted scalar values of [lo, hi) that `kept(cp)` says a stride keeps) with every `stratum()` code
    point of [lo, hi) the stride left out, in order."""
    extra = [cp for cp in stratum() if lo <= cp < hi and not kept(cp)]
    return sorted(sampled + extra) if extra else sampled


def checked_scalars(lo: int, hi: int) -> list[int]:
    """The scalar values of [lo, hi) a per-code-point test checks: the multiples of `exhaustive_stride()` (every
    one by default), and in the unassigned planes only the multiples of lcm(that stride, `unassigned_stride()`);
    when either samples, also every code point of `stratum()` in the range (a stratified sample)."""
    stride = exhaustive_stride()
    sparse = math.lcm(stride, unassigned_stride())
    u_lo, u_hi = UNASSIGNED_PLANES
    out: list[int] = []
    for a, b, step in ((lo, min(hi, u_lo), stride), (max(lo, u_lo), min(hi, u_hi), sparse),
                       (max(lo, u_hi), hi, stride)):
        start = -(-a // step) * step  # the first multiple of step at or after a
        out += [cp for cp in range(start, b, step) if not 0xD800 <= cp <= 0xDFFF]
    if sparse == 1:
        return out
    return with_stratum(out, lo, hi, lambda cp: cp % (sparse if u_lo <= cp < u_hi else stride) == 0)


def stratified_scalars(lo: int = 0, hi: int = 0x110000) -> list[int]:
    """Every `exhaustive_stride()`-th scalar value of [lo, hi) (no plane sampling), plus every code point of
    `stratum()` in it when the stride is above 1 (a stratified sample); every scalar value at stride 1."""
    stride = exhaustive_stride()
    out = [cp for cp in range(-(-lo // stride) * stride, hi, stride) if not 0xD800 <= cp <= 0xDFFF]
    return out if stride == 1 else with_stratum(out, lo, hi, lambda cp: cp % stride == 0)


def stratum_note() -> str:
    """How a strided record names the code points it adds to its multiples (`stratum`)."""
    return (f"stratified: plus the {len(stratum()):,} code points of the stratum (the carve-outs U+000A, U+000D, "
            f"U+0027, the {len(class_changes()):,} code points whose class differs from their predecessor's, and "
            "the battery's hazard code points)")


def stride_note() -> str | None:
    """What a record over every `exhaustive_stride()`-th scalar value of the whole code space (no plane sampling:
    `stratified_scalars`) says it left out; None at stride 1."""
    stride = exhaustive_stride()
    return f"every {stride}th scalar value (DELTA_EXHAUSTIVE_STRIDE), {stratum_note()}" if stride > 1 else None


def sampling_note(lo: int = 0, hi: int = 0x110000) -> str | None:
    """What a per-code-point record over [lo, hi) says about the code points it left out (None: it left none out
    but the surrogates, which every record names apart)."""
    notes = [stride_note()] if stride_note() else []
    u_lo, u_hi = UNASSIGNED_PLANES
    if unassigned_stride() > 1 and lo < u_hi and u_lo < hi:
        every = math.lcm(exhaustive_stride(), unassigned_stride())
        notes.append(f"in the unassigned planes 4-13 (U+{u_lo:04X}..U+{u_hi - 1:04X}) every {every}th code point "
                     "and any code point of the stratum there; "
                     "each is alike in every input of the check (test_unassigned_planes_are_alike); "
                     "DELTA_EXHAUSTIVE=full checks all")
    return "; ".join(notes) or None


@lru_cache(maxsize=1)
def provisioned() -> list[str]:
    """The provisioned registry names, each loaded (and so cached) in this process: on first use, not at import, so
    a process that imports this file and checks nothing (the xdist controller, about 9 s of loading before its
    workers start) never loads a tokenizer."""
    return provisioned_names()


@lru_cache(maxsize=1)
def admitted_names() -> list[str]:
    """The admitted provisioned rows, then the admitted user files named in DELTA_USER_TOKENIZERS (exported by
    `python -m delta_suite.frozen.export_user_files PATH...`: the gate's per-tokenizer properties run on them too).
    Byte-level families only: the per-tokenizer properties state the byte-level propositions (classes, windows,
    units); a whole-word file is checked by properties/test_whole_word.py and the campaigns."""
    names = provisioned() + sorted(user_table_module.user_table())
    return [n for n in names if (a := admission_of(load_tokenizer(n))).admitted and not a.whole_word]


def __getattr__(name: str) -> list[str]:
    """PROVISIONED and ADMITTED, computed on first use (PEP 562)."""
    if name == "PROVISIONED":
        return provisioned()
    if name == "ADMITTED":
        return admitted_names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@pytest.fixture
def tok(request: pytest.FixtureRequest) -> FrozenTokenizer:
    """Each provisioned, admitted tokenizer in turn (parametrized by pytest_generate_tests)."""
    return load_tokenizer(request.param)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test using `tok` runs once per admitted tokenizer (skipped when none is provisioned)."""
    if "tok" in metafunc.fixturenames:
        names = admitted_names()
        skip = pytest.param(None, marks=pytest.mark.skip(reason="no tokenizer provisioned"))
        metafunc.parametrize("tok", names or [skip], indirect=True)


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
        # each record that sampled names its own sampling (`sampling_note`, `stride_note`, `bound_note`): a record
        # of a check that never samples (the bounded enumeration, the alphabet's atoms) is never marked sampled
        self.records.append(rec)
        return rec


_LEDGER_FILE: Path | None = None


def _append(records: list[dict]) -> None:
    """Append records to this process's gate ledger file (one file per process: per xdist worker)."""
    global _LEDGER_FILE
    if _LEDGER_FILE is None:
        _LEDGER_FILE = _ledger_path()
    append_records(_LEDGER_FILE, records)


@pytest.fixture
def ledger(request: pytest.FixtureRequest):
    """Record what a check compared; written to the gate ledger when the test finishes (pass or fail), every
    record carrying the test's outcome (`_write_test_records`)."""
    gl = GateLedger(request.node.nodeid)
    request.node.gate_ledger = gl
    return gl


# --- every test's outcome, and one record of the session (ledger.gate) ----------------------------------------

_GATE_RUN: str | None = None  # this pytest run's identity; xdist workers get the controller's (workerinput)
_REPORTS: dict[str, list[pytest.TestReport]] = {}  # node id -> the reports of a test still running, this process
_TALLY: dict[str, dict] = {}  # the controller's tally of every test's reports: node id -> {"ran", "outcome"}
_WORKER = False  # whether this process is an xdist worker (the controller tallies and writes the session record)


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def pytest_configure(config: pytest.Config) -> None:
    """Each record of this run carries one run identity: the controller's (or the single process's)."""
    global _GATE_RUN, _WORKER
    worker = getattr(config, "workerinput", None)
    _WORKER = worker is not None
    _GATE_RUN = worker.get("delta_gate_run") if worker else new_run_id()


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    """xdist controller: hand the run identity to each worker."""
    node.workerinput["delta_gate_run"] = _GATE_RUN


def outcome_of_reports(reports: list[pytest.TestReport], interrupted: bool = False) -> tuple[str, str]:
    """(outcome, phase) of a test from its reports: "error" when setup or teardown failed, "failed" when the call
    did, "interrupted" when it never reached its teardown, else "skipped" or "passed"."""
    for rep in reports:
        if rep.failed:
            return ("failed" if rep.when == "call" else "error"), rep.when
    if interrupted:  # stopped in the phase after the last one reported
        return "interrupted", "call" if any(r.when == "setup" for r in reports) else "setup"
    return ("skipped" if any(rep.skipped for rep in reports) else "passed"), "call"


def _write_test_records(item: pytest.Item, reports: list[pytest.TestReport], interrupted: bool = False) -> None:
    """Write the records a test made, each with the test's outcome, and for a test that did not pass one record
    that says so (ledger.gate.failed_test_record) whether or not it recorded anything before it failed."""
    outcome, phase = outcome_of_reports(reports, interrupted)
    gl: GateLedger | None = getattr(item, "gate_ledger", None)
    records = list(gl.records) if gl is not None else []
    for rec in records:
        rec["details"]["outcome"] = outcome
        rec["details"][RUN_KEY] = _GATE_RUN
    if did_not_pass(outcome):
        failing = next((r for r in reports if r.failed), None)
        message = str(failing.longrepr)[-2000:] if failing is not None and failing.longrepr else ""
        callspec = getattr(item, "callspec", None)
        tok = callspec.params.get("tok") if callspec is not None else None
        obligations = [o for rec in records for o in rec["details"].get("obligations") or []]
        records.append(failed_test_record(_GATE_RUN, item.nodeid, outcome, phase, obligations, message,
                                          tokenizer=tok if isinstance(tok, str) else None))
    if records:
        _append(records)


def skip_exhaustive(items: list[pytest.Item]) -> None:
    """DELTA_EXHAUSTIVE=0 switches off every test marked `exhaustive` (the per-code-point files, the alphabet's
    and the coverage's whole-space checks, the control proofs' full runs): each is skipped, saying why."""
    if os.environ.get("DELTA_EXHAUSTIVE") != "0":
        return
    skip = pytest.mark.skip(reason="exhaustive tests switched off with DELTA_EXHAUSTIVE=0")
    for item in items:
        if item.get_closest_marker("exhaustive") is not None:
            item.add_marker(skip)


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """Every phase's report of the test is kept; at its teardown (every fixture finalized, so every record made)
    its records are written with its outcome."""
    outcome = yield
    rep = outcome.get_result()
    _REPORTS.setdefault(item.nodeid, []).append(rep)
    if rep.when == "teardown":
        _write_test_records(item, _REPORTS.pop(item.nodeid))


def _flush_interrupted(session: pytest.Session) -> None:
    """The tests this process started and never finished (Ctrl-C): their records say "interrupted"."""
    items = {item.nodeid: item for item in session.items}
    for nodeid, reports in list(_REPORTS.items()):
        if nodeid in items:
            _write_test_records(items[nodeid], reports, interrupted=True)
        _REPORTS.pop(nodeid, None)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """The controller (or the single process) tallies every test's reports, its workers' included."""
    if _WORKER:
        return
    entry = _TALLY.setdefault(report.nodeid, {"ran": False, "outcome": "passed"})
    if report.failed and entry["outcome"] not in ("failed", "error"):
        entry["outcome"] = "failed" if report.when == "call" else "error"
    elif report.skipped and entry["outcome"] == "passed":
        entry["outcome"] = "skipped"
    if report.when == "teardown":
        entry["ran"] = True


def _write_session_record(session: pytest.Session, exitstatus: int) -> None:
    """One record of the whole session (ledger.gate.session_record), by the controller or the single process."""
    failing = {n: e["outcome"] for n, e in _TALLY.items() if e["outcome"] in ("failed", "error")}
    ran = [e for e in _TALLY.values() if e["ran"]]
    workers = getattr(session.config.option, "numprocesses", None) or 0
    rec = session_record(_GATE_RUN, exitstatus=int(exitstatus), collected=session.testscollected,
                         ran=len(ran), passed=sum(e["outcome"] == "passed" for e in ran),
                         skipped=sum(e["outcome"] == "skipped" for e in ran), failing=failing,
                         workers=workers if isinstance(workers, int) else 0)
    folder = _ledger_dir()
    append_records(folder / f"gate-session-{os.getpid()}-{uuid.uuid4().hex[:8]}.jsonl", [rec])


# the per-code-point test that computes an observation, and the test that reads the same one (test_cut_exhaustive.py:
# `context_marks`, the code points after "A" and "1"): (test, its parameters' values that name the observation)
SHARED_OBSERVATION_WRITER = "test_classes_agree_with_reference_pretokenizer"
SHARED_OBSERVATION_READER = "test_every_accepted_transition_is_a_boundary"


def _observation_key(item: pytest.Item) -> tuple | None:
    """(file, family, range start) of a class test or of a right-side transition test, else None."""
    callspec = getattr(item, "callspec", None)
    name = getattr(item, "originalname", None)
    if callspec is None or name not in (SHARED_OBSERVATION_WRITER, SHARED_OBSERVATION_READER):
        return None
    if name == SHARED_OBSERVATION_READER and callspec.params.get("side") != "right":
        return None
    return (item.nodeid.split("::")[0], callspec.params.get("family"), callspec.params.get("lo"))


def keep_shared_observations_together(items: list[pytest.Item]) -> None:
    """Place each right-side transition test of a family and range right after the class test of that family and
    range (in place; the same items, in one order on every worker). xdist's load scheduling sends consecutive items
    to one worker, so both usually run in one process, which computes their shared observation once; apart, the
    second waits for the first's file, and the wait counts as its test time. A reader without a writer stays where
    it is."""
    writers = {_observation_key(i) for i in items if getattr(i, "originalname", None) == SHARED_OBSERVATION_WRITER}
    readers: dict[tuple, list[pytest.Item]] = {}
    for item in items:
        key = _observation_key(item)
        if key is not None and item.originalname == SHARED_OBSERVATION_READER and key in writers:
            readers.setdefault(key, []).append(item)
    if not readers:
        return
    moved = {id(i) for group in readers.values() for i in group}
    ordered: list[pytest.Item] = []
    for item in items:
        if id(item) in moved:
            continue
        ordered.append(item)
        if getattr(item, "originalname", None) == SHARED_OBSERVATION_WRITER:
            ordered.extend(readers.pop(_observation_key(item), []))
    items[:] = ordered


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked `slow` (long sweeps, peers installed on demand) run only with DELTA_SLOW=1 or `-m slow`; tests
    marked `exhaustive` are skipped with DELTA_EXHAUSTIVE=0 (`skip_exhaustive`); the tests that read one shared
    observation are placed together (`keep_shared_observations_together`)."""
    skip_exhaustive(items)
    keep_shared_observations_together(items)
    if os.environ.get("DELTA_SLOW") == "1" or "slow" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason="slow: run with DELTA_SLOW=1 or -m slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


# --- peer environments built in the background --------------------------------------------------------------

# The PyPI peers the default gate's tests ask for (test_subjects.py, test_subject_wiring.py); a name without a
# version is the newest release, as `get_subject` resolves it. A peer missing here is still built on demand.
GATE_PEERS = ("fastokens==0.1.2", "toktier", "gigatoken", "fastokens==0.3.5", "fastokens==0.3.3")
PEER_TEST_FILES = ("properties/test_subjects.py", "properties/test_subject_wiring.py")
_PREFETCH: subprocess.Popen | None = None


def lowest_priority() -> list[str]:
    """The command prefix that runs a process at the lowest CPU priority (`nice -n 19`), or none where `nice` is
    missing: the prefetch's pip then takes only CPU time the tests leave idle, and a test waiting for an
    environment frees its core for it."""
    nice = shutil.which("nice")
    return [nice, "-n", "19"] if nice else []


def start_peer_prefetch(test_ids: list[str]) -> subprocess.Popen | None:
    """Start `python -m delta_suite.subjects.prefetch GATE_PEERS` in the background (once per run) when the run
    collected a
    test of PEER_TEST_FILES, so the peers' environments are built while other tests run instead of while a
    worker waits (about 2 minutes of pip on a fresh machine), at the lowest priority. Off with DELTA_PREFETCH=0.
    Its output goes to `$DELTA_HOME/subject-envs/logs/prefetch.log`; a failure only leaves the building to the
    tests."""
    global _PREFETCH
    if _PREFETCH is not None or os.environ.get("DELTA_PREFETCH") == "0":
        return None
    if not any(t.split("::")[0].endswith(PEER_TEST_FILES) for t in test_ids):
        return None
    try:
        logs = envs_root() / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        with open(logs / "prefetch.log", "a") as log:
            _PREFETCH = subprocess.Popen([*lowest_priority(), sys.executable, "-m", "delta_suite.subjects.prefetch",
                                          *GATE_PEERS],
                                         cwd=REPO,
                                         stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                         start_new_session=True)
    except OSError:
        return None
    return _PREFETCH


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node, ids: list[str]) -> None:
    """With xdist: the controller starts the prefetch when the first worker has collected."""
    start_peer_prefetch(ids)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Without xdist: the one process starts the prefetch after collecting (xdist workers leave it to the
    controller)."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        start_peer_prefetch([item.nodeid for item in session.items])


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Every test this process left unfinished writes its records as interrupted; the controller (or the single
    process) writes the session's one record. A prefetch still running when the run ends is stopped with its pip
    processes (an environment it leaves half-built has no marker, so the next use builds it again)."""
    _flush_interrupted(session)
    if not _is_worker(session.config) and not session.config.option.collectonly:  # --collect-only runs nothing
        _write_session_record(session, exitstatus)
    if _PREFETCH is not None and _PREFETCH.poll() is None and not os.environ.get("PYTEST_XDIST_WORKER"):
        try:
            os.killpg(_PREFETCH.pid, signal.SIGTERM)
            _PREFETCH.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            pass
