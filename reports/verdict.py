"""The one-line verdict of a report, whose first word says what the run shows: PASS, PARTIAL or FAIL.

FAIL when anything the suite owns failed: nothing was compared; a difference outside the controls; a failed test
record; a control that survives without a kill, a proof or a stated open finding; a failed obligation cell; an
unusable ledger line; a corpus document refused; a tokenizer that could not be loaded; a job step that failed, was
interrupted or did not run, or a planned step without a row (ledger.job.step_rows: the job writes its plan first,
so a step it meant to run and lost is named); a gate run behind the records that was killed, interrupted, ran
fewer tests than it collected or had a failed test (reports.gate).
PASS only when nothing failed, every applicable obligation cell is discharged, no step was left out, and a whole
gate run (its complete session record) stands behind the checks.
PARTIAL when nothing failed but the run shows less than that: obligations open (neither discharged nor failed),
steps left out on purpose (`DELTA_MAIN_STEPS`, `--only`), or no gate run behind the checks (a campaign, a corpus
comparison or a user file's `--only` job alone). Its line begins "PARTIAL: D of A obligations discharged; what ran
was clean: ..." and ends with why it is partial, so a reader of first words never takes part of a run for the
whole. `--require-pass` refuses a run with open obligations unless `--allow-open` is given, and accepts a PARTIAL
whose only shortfall is the gate or the steps left out (exit statuses keep their meaning).
The line counts what ran (`N tokenizers, M comparisons with the reference, D differences`, then the checks
against the spec, the self-consistency checks, the premise and proof checks and any of unknown oracle, each with
its own number: reports/oracles.py), the controls killed or proven out of all (open findings named apart), and the
obligation cells discharged out of those that apply to provisioned tokenizers and to user files (a user file's
column has the premises of its kind of family, and its cells are also counted apart: "(user files: D of A)"; a
report of user files alone, with no record of a registry tokenizer, counts theirs only). Third-party subjects are
outside it (their own section).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from delta_suite.ledger.job import NOT_SELECTED
from delta_suite.reports.oracles import comparisons_phrase
from delta_suite.reports.table3 import Table3

DONE_CONTROL = ("killed", "redundant", "not applicable", "not run", "not provisioned")
PASS, PARTIAL, FAIL = "PASS", "PARTIAL", "FAIL"


@dataclass(frozen=True)
class Verdict:
    """Whether the run passes, its one line, and each reason it does not."""

    passed: bool
    line: str
    problems: list[str] = field(default_factory=list)
    open_obligations: int = 0  # applicable obligation cells neither discharged nor failed (PARTIAL says how many)
    partial: list[str] = field(default_factory=list)  # why a run where nothing failed is not a whole PASS

    @property
    def word(self) -> str:
        """The line's first word: FAIL, PARTIAL or PASS."""
        return FAIL if not self.passed else PARTIAL if self.partial else PASS

    @property
    def discharged(self) -> bool:
        """PASS with every applicable obligation discharged: what `--require-pass` asks for without `--allow-open`."""
        return self.passed and not self.open_obligations


@dataclass(frozen=True)
class ObligationCounts:
    """Obligation cells over the provisioned registry tokenizers and the user files: discharged, applicable, the
    failed ones as "premise on tokenizer", and the user files' own discharged and applicable cells."""

    discharged: int
    applicable: int
    failed: list[str]
    user_discharged: int = 0
    user_applicable: int = 0


def _obligation_counts(model: Table3) -> ObligationCounts:
    """The obligation cells that apply to provisioned tokenizers and to user files (each column with the premises
    of its kind; "not applicable" cells are not counted). A report whose records name user files and no registry
    tokenizer (the main job's `--only`, a campaign on a user file) counts the user files' cells alone: the eleven
    were left out of that run, and their cells, all open, would say nothing about it (the table still shows them)."""
    users = {t.name for t in model.tokenizers if t.user_file is not None}
    registry = [t.name for t in model.tokenizers if t.provisioned and t.name not in users]
    with_figures = {c for r in model.rows for c, cell in r.cells.items() if cell.status == "figures"}
    if users and not with_figures.intersection(registry):
        registry = []
    columns = registry + [t.name for t in model.tokenizers if t.name in users]
    discharged = applicable = user_discharged = user_applicable = 0
    failed: list[str] = []
    for row in model.obligations.rows if model.obligations.available else []:
        for name in columns:
            state = row.get(name, "")
            if state in ("", "not applicable"):
                continue
            applicable += 1
            discharged += state == "discharged"
            if name in users:
                user_applicable += 1
                user_discharged += state == "discharged"
            if state.startswith("failed"):
                failed.append(f"{row.get('id', '?')} on {name}{state[len('failed'):]}")
    return ObligationCounts(discharged, applicable, failed, user_discharged, user_applicable)


def verdict(model: Table3) -> Verdict:
    """The verdict of a report model (see the module docstring for what PASS needs)."""
    own_rows = [r for r in model.rows if r.level != "control"]
    comparisons = sum(r.total.comparisons for r in own_rows)
    differences = sum(r.total.differences for r in own_rows)
    failed_records = sum(r.total.failed_records for r in model.rows)
    provisioned = {t.name for t in model.tokenizers if t.provisioned or t.user_file is not None}
    users = {t.name for t in model.tokenizers if t.user_file is not None}  # counted, never as one of the eleven
    ran = {c for r in own_rows for c, cell in r.cells.items() if cell.status == "figures" and c in provisioned}
    km = model.kill_matrix
    killed = [n for n in km.controls if all(c.status in DONE_CONTROL for c in km.cells[n].values())
              and any(c.status in ("killed", "redundant") for c in km.cells[n].values())]
    findings = sorted({n for n in km.controls for c in km.cells[n].values() if c.status == "open finding"})
    counts = _obligation_counts(model)
    discharged, applicable, failed_cells = counts.discharged, counts.applicable, counts.failed
    problems = []
    if comparisons == 0:
        problems.append("nothing was compared")
    if differences:
        problems.append(f"{differences:,} differences outside the controls")
    if failed_records:
        problems.append(f"{failed_records} records of failed tests")
    if km.survivors:
        problems.append("controls surviving without a kill, a proof or a stated finding: " + ", ".join(km.survivors))
    if failed_cells:
        problems.append(f"{len(failed_cells)} obligation cells failed: " + ", ".join(failed_cells[:5]))
    problems.extend(model.gate.problems)  # a gate run killed, interrupted, incomplete or failing (reports.gate)
    if model.ledger_errors:
        problems.append(f"{len(model.ledger_errors)} unusable ledger lines")
    if model.refused_documents:
        problems.append(f"{model.refused_documents['count']:,} corpus documents refused for bad text (not compared)")
    for u in model.unloadable:
        problems.append(f"tokenizer {u['tokenizer']} could not be loaded and was skipped")
    for st in model.job_steps:
        if st.get("status") not in (0, NOT_SELECTED):  # NOT_SELECTED: left out on purpose
            problems.append(f"step {st.get('step')}: {st.get('outcome')}")
    passed = not problems
    open_part = f" ({len(findings)} open findings: {', '.join(findings)})" if findings else ""
    still_open = applicable - discharged - len(failed_cells)
    left_out = [str(st.get("step")) for st in model.job_steps if st.get("status") == NOT_SELECTED]
    partial = _partial_reasons(still_open, left_out, bool(model.gate.sessions)) if passed else []
    user_part = f" (of which {len(ran & users)} user files)" if ran & users else ""
    ran_part = (f"{len(ran)} tokenizers{user_part}, {comparisons_phrase(own_rows)}; "
                f"controls killed or proven {len(killed)}/{len(km.controls)}{open_part}")
    users_apart = (f" (user files: {counts.user_discharged} of {counts.user_applicable})"
                   if counts.user_applicable and counts.user_applicable != applicable else "")
    if partial:
        line = (f"{PARTIAL}: {discharged} of {applicable} obligations discharged{users_apart}; what ran was clean: "
                f"{ran_part} -- partial: {'; '.join(partial)}")
    else:
        line = f"{FAIL if problems else PASS}: {ran_part}; obligations discharged {discharged} of {applicable}"
        line += users_apart
    if problems:
        line += " -- " + "; ".join(problems)
    return Verdict(passed, line, problems, still_open if passed else 0, partial)


def _partial_reasons(still_open: int, left_out: list[str], gate_ran: bool) -> list[str]:
    """Why a run where nothing failed is not a whole PASS (empty: it is one)."""
    reasons = []
    if still_open:
        reasons.append(f"{still_open} obligations open")
    if left_out:
        reasons.append(f"steps not selected: {', '.join(left_out)}")
    if not gate_ran:
        reasons.append("no gate run behind the checks")
    return reasons
