"""The kill matrix in the ci profile: every control is killed or proven on each tokenizer, the real thing is clean.

For each provisioned admitted tokenizer the ci battery runs once against the unbroken cut and repair paths and
every control (`controls.kill_matrix.run_matrix`). Per tokenizer: one ledger record per control (level
"control", details control, killed, strings_to_first_kill, failing_share, strings) and one per unbroken path
(level "battery"). One test per tokenizer (so that no two workers build the same matrix, under any number of
workers): where a control survives, it must be "survives-by-proof" (a proof in `controls.proofs`,
tested in test_control_proofs.py) or "not applicable" (its condition does not exist there, e.g. normalization
controls on non-NFC tokenizers). A survival without a proof is a finding and fails here unless listed in
OPEN_FINDINGS, as does a kill where a proof claims redundancy.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from delta_suite.controls import get, names
from delta_suite.controls.findings import OPEN_FINDINGS, open_finding
from delta_suite.controls.kill_matrix import KillRow, ledger_records, run_matrix
from delta_suite.frozen.errors import NotProvisioned
from delta_suite.frozen.loader import FrozenTokenizer, load_tokenizer
from delta_suite.frozen.registry import rows as registry_rows

from properties.conftest import ADMITTED, PROVISIONED


def _rows(tok: FrozenTokenizer) -> dict[str, KillRow]:
    """The ci kill matrix of one tokenizer, by row name (the unbroken paths and every control)."""
    return {r.control: r for r in run_matrix(tok, names(), "ci", 0)}


def record_rows(ledger, tok: FrozenTokenizer, rows: dict[str, KillRow]) -> None:
    """Record a matrix's rows in the gate ledger: the unbroken paths, then every control with a row."""
    unbroken = [rows["unbroken.cut"], rows["unbroken.repair"]]
    for rec in ledger_records(unbroken + [rows[n] for n in names() if n in rows], kind="gate"):
        ledger.record(rec["level"], rec["check"], tok, comparisons=rec["comparisons"], differences=rec["differences"],
                      fast_path=rec["fast_path"], fallbacks=rec["fallbacks"], unit=rec["unit"], details=rec["details"],
                      oracle=rec["oracle"])


def unbroken_problems(rows: dict[str, KillRow]) -> list[str]:
    """The unbroken cut and repair paths show no ID and no unit difference on any ci battery string, and the fast
    path served some of them (else nothing was tested)."""
    problems = []
    for path in ("unbroken.cut", "unbroken.repair"):
        row = rows[path]
        if not (row.strings > 0 and row.comparisons > 0):
            problems.append(f"{path}: nothing compared ({row.strings} strings, {row.comparisons} comparisons)")
        elif row.fast_path == 0:
            problems.append(f"{path}: nothing was served by the fast path, so nothing was tested")
        if (row.failing, row.unit_failing) != (0, 0):
            problems.append(f"{path} differs from the reference: {row.first or row.first_unit}")
    return problems


def control_problems(tok: FrozenTokenizer, rows: dict[str, KillRow]) -> list[str]:
    """Every control has a row; killed rows name their first kill; proven-redundant controls are not killed (a kill
    there refutes the proof); harness faults are always detected."""
    problems = []
    for name in names():
        if name not in rows:
            problems.append(f"{name}: no row")
            continue
        row, control = rows[name], get(name)
        if row.status not in ("killed", "survived", "survives-by-proof", "not applicable"):
            problems.append(f"{name}: unknown status {row.status!r}")
        if row.status == "not applicable":
            if control.applies(tok) or row.strings != 0:
                problems.append(f"{name}: 'not applicable' although it applies or ran ({row.strings} strings)")
            continue
        if row.strings == 0:
            problems.append(f"{name}: ran on no string")
        if row.killed:
            if not (row.strings_to_first_kill or row.strings_to_first_unit_kill):
                problems.append(f"{name}: killed, but no first kill is named")
            if control.redundant_on(tok):
                problems.append(f"{name} is killed on {tok.name} although {control.proof} claims it redundant: "
                                f"{row.first}")
        if control.path == "harness":
            if row.fallbacks != 0:
                problems.append(f"{name}: {row.fallbacks} planted faults escaped the comparison")
            if not (row.comparisons > 0 and row.differences == row.comparisons):
                problems.append(f"{name}: {row.differences} of {row.comparisons} planted faults detected")
    return problems


def survival_problems(tok: FrozenTokenizer, rows: dict[str, KillRow]) -> list[str]:
    """On this tokenizer, a control that applies is killed or proven redundant; any other survival is a finding
    and must be listed, with what is known, in OPEN_FINDINGS (a new one fails by name), and a listed finding that
    no longer survives here must be taken off the list.

    Across tokenizers this also gives "every control is killed on some tokenizer or proven, except stated
    findings": a control never killed anywhere survives somewhere, and every survival is proven or listed."""
    unproven = {(r.control, r.tokenizer) for r in rows.values() if r.status == "survived"}
    listed = {k for k in OPEN_FINDINGS if k[1] == tok.name}
    problems = []
    if unproven - listed:
        problems.append(f"new controls surviving without a proof on {tok.name}: {sorted(unproven - listed)}")
    if listed - unproven:
        problems.append(f"listed findings no longer survive on {tok.name} (killed or proven now): "
                        f"{sorted(listed - unproven)}; update OPEN_FINDINGS")
    return problems


def open_finding_problems(tok: FrozenTokenizer, rows: dict[str, KillRow]) -> list[str]:
    """No provisioned tokenizer has an open finding: no control of its matrix survives, listed or not (a survival
    listed in OPEN_FINDINGS passes `survival_problems`, so this is what keeps the list empty for them)."""
    listed = sorted(n for n, r in rows.items() if r.status == "survived" and open_finding(n, tok.name))
    return [f"open findings on {tok.name} (surviving, listed in OPEN_FINDINGS): {listed}"] if listed else []


def test_kill_matrix(tok, ledger) -> None:
    """One tokenizer's ci kill matrix (built once, here: about 15 s on 2 cores; one test per tokenizer, so that no
    two workers build the same matrix): every row recorded; the unbroken paths clean (`unbroken_problems`);
    every control consistent (`control_problems`); no survival without a proof (`survival_problems`)."""
    rows = _rows(tok)
    record_rows(ledger, tok, rows)
    problems = (unbroken_problems(rows) + control_problems(tok, rows) + survival_problems(tok, rows)
                + open_finding_problems(tok, rows))
    assert not problems, "\n".join(problems)


def test_open_findings_resolved(monkeypatch: pytest.MonkeyPatch) -> None:
    """No provisioned tokenizer has an open finding: `test_kill_matrix` checks each tokenizer's own matrix with
    `open_finding_problems`, which names a survival listed in OPEN_FINDINGS (one `survival_problems` lets pass)
    and passes a matrix where every control is killed or proven."""
    if not ADMITTED:
        pytest.skip("no tokenizer provisioned")
    tok = load_tokenizer(ADMITTED[0])
    good = _consistent_rows(tok)
    assert open_finding_problems(tok, good) == []
    name = next(n for n in names() if good[n].status == "killed")
    survived = {**good, name: replace(good[name], status="survived", failing=0, strings_to_first_kill=None)}
    monkeypatch.setitem(OPEN_FINDINGS, (name, tok.name), "planted: listed with what is known")
    assert survival_problems(tok, survived) == []
    found = open_finding_problems(tok, survived)
    assert len(found) == 1 and name in found[0], found


def test_unprovisioned_tokenizers_reported(ledger) -> None:
    """Tokenizers of the registry that are not provisioned get a "not provisioned" record (never a silent pass),
    and loading them raises NotProvisioned."""
    missing = [row.name for row in registry_rows() if row.name not in PROVISIONED]
    for name in missing:
        with pytest.raises(NotProvisioned):
            load_tokenizer(name)
        ledger.record("control", "control.kill_matrix", None, comparisons=0, differences=0, unit="battery strings",
                      details={"tokenizer": name, "status": "not provisioned", "controls": names(), "killed": False},
                      oracle="none")
    assert len(missing) + len(PROVISIONED) == len(registry_rows())


def _consistent_rows(tok: FrozenTokenizer) -> dict[str, KillRow]:
    """A matrix as a consistent run would give it, built without running the battery: unbroken paths clean with a
    fast path; every control not applicable where it does not apply, survives-by-proof where proven, else killed
    at its first string (harness faults all detected)."""
    def row(name: str, path: str, status: str, **counts) -> KillRow:
        return KillRow(name, path, tok.name, tok.sha256, status, **counts)

    rows = {p: row(p, p.split(".")[1], "clean", strings=3, comparisons=3, fast_path=3)
            for p in ("unbroken.cut", "unbroken.repair")}
    for name in names():
        control = get(name)
        if not control.applies(tok):
            rows[name] = row(name, control.path, "not applicable")
        elif control.redundant_on(tok):
            rows[name] = row(name, control.path, "survives-by-proof", strings=3, comparisons=3)
        else:
            rows[name] = row(name, control.path, "killed", strings=3, failing=1, strings_to_first_kill=1,
                             comparisons=3, differences=3 if control.path == "harness" else 1, killed_by="ids")
    return rows


def test_the_matrix_checks_fail_on_each_broken_row() -> None:
    """The checks of `test_kill_matrix` pass a consistent matrix and name each planted inconsistency: an unbroken
    path that differs or never took the fast path, a killed control without its first kill, a kill where a proof
    claims redundancy, an escaped harness fault, a 'not applicable' row that applies, an unlisted survival."""
    if not ADMITTED:
        pytest.skip("no tokenizer provisioned")
    tok = load_tokenizer(ADMITTED[0])
    good = _consistent_rows(tok)

    def problems(rows: dict[str, KillRow]) -> list[str]:
        return unbroken_problems(rows) + control_problems(tok, rows) + survival_problems(tok, rows)

    assert problems(good) == []
    by_status = {r.status: n for n, r in good.items() if n in names()}
    harness = next(n for n in names() if get(n).path == "harness" and good[n].status == "killed")
    plants = {
        "differs from the reference": ("unbroken.cut", {"failing": 1, "first": {"case": 0}}),
        "nothing was served by the fast path": ("unbroken.repair", {"fast_path": 0}),
        "no first kill is named": (by_status["killed"], {"strings_to_first_kill": None}),
        "planted faults escaped": (harness, {"fallbacks": 1}),
        "surviving without a proof": (by_status["killed"], {"status": "survived", "failing": 0}),
    }
    if "survives-by-proof" in by_status:
        plants["claims it redundant"] = (by_status["survives-by-proof"], {"status": "killed", "failing": 1,
                                                                          "strings_to_first_kill": 1})
    applies = [n for n in names() if get(n).applies(tok)]
    plants["'not applicable' although it applies"] = (applies[0], {"status": "not applicable", "strings": 0})
    for said, (name, change) in plants.items():
        broken = dict(good)
        broken[name] = replace(good[name], **change)
        found = problems(broken)
        assert len(found) >= 1 and any(said in p for p in found), (said, found)
