"""Table 3 as Markdown, for pasting into a paper draft or a pull request (pipe tables, no HTML)."""

from __future__ import annotations

from delta_suite.reports.glance import (
    PATTERN_HEADER,
    RECONSTRUCTION_MARK,
    REFUTED_HEADER,
    SHORT_STATE,
    failed_cells,
    levels,
    missing,
    obligation_grid,
    pattern_rows,
    reconstructed_tokenizers,
    refuted_rows,
    sampled_evidence,
)
from delta_suite.reports.mutation_score import (
    MUTATION_HEADER,
    SAMPLE_HEADER,
    SURVIVOR_HEADER,
    mutation_rows,
    mutation_sentence,
    sample_rows,
    survivor_rows,
)
from delta_suite.reports.mutation_score import TITLE as MUTATION_TITLE
from delta_suite.reports.oracles import row_oracle_text
from delta_suite.reports.paper import beside
from delta_suite.reports.provenance import provenance_items
from delta_suite.reports.table3 import (
    NO_SUBJECTS,
    NO_TOKENIZER,
    SUBJECT_HEADER,
    Table3,
    subject_rows,
    throughput_summary,
)
from delta_suite.reports.text import (
    CONTROL_OUTCOME,
    NO_THROUGHPUT,
    cell_text,
    counts_text,
    covered_text,
    fast_path_text,
    kill_text,
    num,
    rate_text,
    refused_first,
    sampling_notes,
    skipped_line,
)
from delta_suite.reports.transcripts import FIGURE_HEADER, PAPER_SENTENCE, figure_rows, recorded_sentence
from delta_suite.reports.verdict import verdict

LEGEND = (
    "Breakdown cells read `comparisons / differences`, with the fast-path share where the path applies; "
    "`not provisioned` = the tokenizer's files are not in this cache and no record names it; `provisioned but "
    "not run` = provisioned, but no record of this row names it (`not run` for a column outside the registry or "
    "the tokenizer-independent one); `n/a` = the check is "
    "tokenizer-independent (figures in the last column)."
)


def _esc(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(_esc(h) for h in header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(_esc(c) for c in row) + " |" for row in rows]
    return out


def _summary(model: Table3) -> list[str]:
    rows = model.rows
    diffs = sum(r.total.differences for r in rows if r.level != "control")
    out = [
        f"Built from {num(model.provenance.records)} records in {len(model.ledger_files)} ledger files; "
        f"{len(rows)} rows; {num(diffs)} differences outside the controls.",
    ]
    if model.ledger_errors:
        out.append(f"**{len(model.ledger_errors)} ledger lines could not be used; they are listed at the end.**")
    if model.duplicate_records:
        out.append(f"**{model.duplicate_records} records repeat one already read (same identity and outcome: a ledger "
                   "copied twice, a batch written by two runs); each was counted once.**")
    if model.kill_matrix.survivors:
        out.append(f"**Controls that survived (a finding): {', '.join(model.kill_matrix.survivors)}.**")
    for u in model.unloadable:
        out.append(f"**Tokenizer {u['tokenizer']} could not be loaded and was skipped: {u['reason']} "
                   f"(remedy: `{u['remedy']}`).**")
    if model.refused_documents:
        out.append(f"**{model.refused_documents['count']:,} corpus documents were refused for bad text and not "
                   f"compared{refused_first(model)}.**")
    if model.skipped_documents:
        out.append(skipped_line(model))
    bad_steps = [st for st in model.job_steps if st.get("status") not in (0, -2)]
    if bad_steps:
        out.append("**Job steps that did not finish clean: " + "; ".join(
            f"{st['step']}: {st['outcome']}" for st in bad_steps) + ". This report covers what the other steps "
            "recorded.**")
    out += gate_lines(model)
    if model.job_steps:
        out += ["", *_table(["job step", "exit status", "outcome", "seconds"], [
            [str(st["step"]), "-" if st["status"] in (-1, -2) else str(st["status"]), str(st["outcome"]),
             "-" if st.get("seconds") is None else f"{st['seconds']:.1f}"] for st in model.job_steps])]
    return out


def gate_lines(model: Table3) -> list[str]:
    """The gate sessions behind the records (collected, ran, failed, exit status) and why they cannot PASS."""
    out = [f"**Gate run incomplete or failing: {p}.**" for p in model.gate.problems]
    for s in model.gate.sessions:
        out.append(f"Gate session {s.get('gate_run')}: {s.get('ran')} of {s.get('collected')} collected tests ran "
                   f"({s.get('passed')} passed, {s.get('skipped')} skipped, {s.get('failed')} failed, "
                   f"{s.get('errors')} errors), pytest exit status {s.get('exitstatus')}.")
    return out


def _main_table(model: Table3) -> list[str]:
    out: list[str] = []
    header = ["check", "what", "unit", "compared with", "comparisons", "differences", "tokenizers", "fast path",
              "also counted"]
    for sec in model.sections:
        if not sec.rows and sec.key in ("other", "benchmark", "harness"):
            continue
        out += ["", f"### {sec.title}", ""]
        if not sec.rows:
            out.append("No records of this level.")
            continue
        body = []
        for r in sec.rows:
            diff = num(r.total.differences)
            if r.level == "control":
                diff += CONTROL_OUTCOME[r.control_status or "survived"]
            elif r.total.differences:
                diff = f"**{diff}**"
            if r.total.failed_records:
                diff += f", {r.total.failed_records} failed test records"
            body.append(
                [f"`{r.check}`", r.title, r.unit, row_oracle_text(r), num(r.total.comparisons), diff, covered_text(r),
                 fast_path_text(r), counts_text(r)]
            )
        out += _table(header, body)
        notes = [
            f"- `{r.check}` fallback reasons: " + ", ".join(f"{k} {num(v)}" for k, v in r.fallback_reasons.items())
            for r in sec.rows
            if r.fallback_reasons
        ]
        notes += [f"- `{r.check}` differed at: " + ", ".join(r.pointers) for r in sec.rows if r.pointers]
        notes += [f"- {n}" for n in sampling_notes(sec.rows)]
        if notes:
            out += [""] + notes
    return out


def _breakdown(model: Table3) -> list[str]:
    out = ["", "## Per-tokenizer breakdown", "", LEGEND]
    aliases = {t.name: t.alias for t in model.tokenizers}
    header = ["check"] + [aliases[c] for c in model.columns if c != NO_TOKENIZER] + [NO_TOKENIZER]
    provisioned = {t.name for t in model.tokenizers if t.provisioned}
    for sec in model.sections:
        if not sec.rows:
            continue
        out += ["", f"### {sec.title}", ""]
        body = [
            [f"`{r.check}`" + (f" ({r.control})" if r.control else "") + f" [{r.unit}]"]
            + [cell_text(r.cells[c], r, c in provisioned) for c in model.columns]
            for r in sec.rows
        ]
        out += _table(header, body)
    return out


def _kill_matrix(model: Table3) -> list[str]:
    km = model.kill_matrix
    out = ["", "## Kill matrix of the controls", ""]
    if not km.controls:
        return out + ["No control records."]
    aliases = {t.name: t.alias for t in model.tokenizers}
    header = ["control"] + [aliases.get(c, c) for c in km.columns] + ["killed by"]
    body = []
    for name in km.controls:
        cells = km.cells[name]
        killers = sorted({c for cell in cells.values() for c in cell.killed_by})
        body.append([name] + [kill_text(cells[c]) for c in km.columns] + [", ".join(killers) or "nothing"])
    out += _table(header, body)
    out += [""] + [f"- {n}" for n in km.notes]
    if km.survivors:
        out.append(f"- Survivors (no check killed them): {', '.join(km.survivors)}")
    return out


def _throughput(model: Table3) -> list[str]:
    out = ["", "## Campaign throughput", ""]
    if not model.throughput:
        return out + [NO_THROUGHPUT]
    body = [
        [t["series"], str(t["batches"]), num(t["cases"]), f"{t['seconds']:,.1f} ({t['x']})", rate_text(t)]
        for t in throughput_summary(model.throughput)
    ]
    return out + _table(["campaign", "batches", "cases", "seconds", "cases/s"], body)


GOAL_MARK = {"met": "**met**", "not met": "**NOT MET**", "not measured": "not measured"}


def _performance(model: Table3) -> list[str]:
    """The benchmark figures: where each came from, its goals with met/not met, its tables."""
    out = ["", "## Performance (benchmarks)", ""]
    perf = model.performance
    if perf is None or not perf.available:
        return out + [perf.note if perf is not None else "No benchmark run in these ledgers."]
    out.append(perf.note + ". Each figure shows the latest run (ledger file) holding it; older runs are counted, "
               "not mixed in.")
    for fig in perf.figures:
        out += ["", f"### {fig.title}", "", f"Source: {fig.source}."]
        if fig.older_runs_ignored:
            out.append("Older runs ignored: " + ", ".join(f"`{f}`" for f in fig.older_runs_ignored) + ".")
        if fig.goals:
            out += [""] + [f"- Goal {g.text}: {GOAL_MARK.get(g.status, g.status)} ({g.detail})" for g in fig.goals]
        for table in fig.tables:
            out += ["", f"*{table.caption}*", ""] + _table(table.header, table.rows)
        if fig.notes:
            out += [""] + [f"- {n}" for n in fig.notes]
    return out


def _subjects(model: Table3) -> list[str]:
    out = ["", "## Subjects", ""]
    ran, unavailable = subject_rows(model)
    if not ran and not unavailable:
        return out + [NO_SUBJECTS]
    if ran:
        out += _table(SUBJECT_HEADER, ran)
    if unavailable:
        out += ["", "Not installed (nothing compared; never counted as passed):", ""]
        out += _table(SUBJECT_HEADER, unavailable)
    return out


def _obligations(model: Table3) -> list[str]:
    ob = model.obligations
    out = ["", "## Proof obligations", ""]
    if not ob.available:
        return out + [ob.note + "."]
    header, rows, statements = obligation_grid(model)
    legend = ", ".join(f"`{short}` {state}" for state, short in SHORT_STATE.items())
    out += [ob.note + "; one cell per tokenizer: " + legend + ".", ""] + _table(header, rows)
    rebuilt = reconstructed_tokenizers(model)
    if rebuilt:
        out += [""] + [f"`{RECONSTRUCTION_MARK}` {tok}: split pattern {what}." for tok, what in rebuilt.items()]
    if ob.patterns:
        out += ["", "Split patterns (z3 proofs of the transition set per pattern, from the records):", ""]
        out += _table(PATTERN_HEADER, pattern_rows(model))
        out += ["", "Refuted pairs, and how deep each counterexample reaches on the pattern's provisioned tokenizers "
                "(IDs: a chunked encode would differ; units: equal IDs grouped differently; pieces: split pieces "
                "only; \"excluded, conservative\": no ID-changing witness within the search bound):", ""]
        out += _table(REFUTED_HEADER, refuted_rows(model))
    sampled = sampled_evidence(model)
    if sampled:
        out += [""] + [f"Sampled evidence: {line}." for line in sampled]
    failed = failed_cells(model)
    if failed:
        out += ["", "Failed cells, with their first difference:", ""] + [f"- {line}" for line in failed]
    out += ["", "Statements, and what discharges each:", ""]
    out += [f"- `{ident}`: {statement} Discharged by: {how}." for ident, statement, how in statements]
    return out


def _glance(model: Table3) -> list[str]:
    """Table 3 by level (rows = levels, as in the paper) and what the report does not cover."""
    out = ["## Table 3 at a glance", ""]
    out += _table(["level", "what", "checks", "comparisons with the reference", "other checks (by oracle)",
                   "differences", "tokenizers"],
                  [[r.level, r.what, str(r.checks), f"{r.reference:,}", r.other, f"{r.differences:,}",
                    str(r.tokenizers)] for r in levels(model)])
    out += ["", "What this report does not cover:", ""] + [f"- {m}" for m in missing(model)] + [""]
    return out


def _tokenizers(model: Table3) -> list[str]:
    out = ["", "## Tokenizers", ""]
    body = [
        [t.name, t.alias, t.status, t.cache_sha256[:16] or "", ", ".join(d[:16] for d in t.record_sha256),
         t.digest_note]
        for t in model.tokenizers
    ]
    return out + _table(["name", "alias", "here", "provisioned sha256", "sha256 in records", "note"], body)


def _provenance(model: Table3) -> list[str]:
    out = ["", "## Provenance (from the records)", ""]
    out += _table(["item", "value"], [[k, v] for k, v in provenance_items(model.provenance)])
    out += ["", "Ledger files read: " + ", ".join(f"`{f}`" for f in model.ledger_files)]
    return out


def _errors(model: Table3) -> list[str]:
    out = ["", "## Ledger lines that could not be used", ""]
    if not model.ledger_errors:
        return out + ["None: every line of every ledger file was a usable record."]
    body = [[e.file, str(e.line) if e.line else "whole file", e.reason] for e in model.ledger_errors]
    return out + _table(["file", "line", "reason"], body)


def _paper(model: Table3) -> list[str]:
    """The paper's Table 3 rows beside this run's counts, with the scale gap."""
    lines = ["## The paper beside us", "",
             "The paper's Table 3 (§4.7) next to what this report counted; the gap is the scale, not a result.", "",
             "| level | check | the paper | this report | scale gap |", "|---|---|---|---|---|"]
    for b in beside(model):
        lines.append(f"| {b.level} | {b.check} | {b.paper} | {b.ours} | {b.gap} |")
    return [*lines, ""]


def _transcripts(model: Table3) -> list[str]:
    """Level 3 by front end: this report's records, the recorded full set, and the paper's figures."""
    out = ["## Level 3: chat transcripts replayed turn by turn, by front end", "",
           "Every turn through three front ends: the whole reference encode (the oracle: its cost only), the "
           "stateless chunked encode cut at role markers first, and a session that repairs. The chunked and session "
           "front ends are compared with the whole reference on every turn. Chunked fast path = the plan had a cut "
           "(every chunk is still encoded by the reference: this suite has no fast encoder, so the paper's per-chunk "
           "fallback has no counterpart); session fast path = the turn was repaired (a first turn, or a turn whose "
           "template rewrote the history, is neither: Qwen3's template drops the empty think block of earlier "
           "assistant turns once a user message follows, so every user turn starts the session over; the last column "
           "splits the session's turns by path).", ""]
    if model.transcripts:
        out += _table(FIGURE_HEADER, figure_rows(model.transcripts))
    else:
        out += ["No level-3 record with per-front-end figures in this report."]
    rec = model.transcripts_recorded
    out += ["", "### The recorded full transcript set (a committed results file: shown, not counted in Table 3)", ""]
    if rec is None:
        out += ["No results file of a full-set run is committed."]
    else:
        out += [recorded_sentence(rec), ""]
        out += _table(FIGURE_HEADER, figure_rows(rec.figures))
    out += ["", PAPER_SENTENCE, ""]
    return out


def _mutation(model: Table3) -> list[str]:
    """The committed mutation-profile results (reports.mutation_score)."""
    s = model.mutation
    out = [f"## {MUTATION_TITLE}", "", mutation_sentence(s), ""]
    if s and "error" not in s:
        out += _table(MUTATION_HEADER, mutation_rows(s))
        if s.get("samples"):
            out += ["", "Stated samples (estimates with their 95% intervals, apart from the complete runs):", ""]
            out += _table(SAMPLE_HEADER, sample_rows(s))
        if s.get("survivor_list"):
            out += ["", "Surviving mutants and their verdicts (mutation/verdicts.toml):", ""]
            out += _table(SURVIVOR_HEADER, survivor_rows(s))
        out += [""]
    return out


def render_markdown(model: Table3) -> str:
    """The whole report as Markdown; deterministic for a given model."""
    lines = ["# Table 3: what was checked, how much, and what differed", "", f"**{verdict(model).line}**", ""]
    lines += _glance(model)
    lines += _summary(model)
    lines += _main_table(model)
    lines += _paper(model)
    lines += _transcripts(model)
    lines += _breakdown(model)
    lines += _kill_matrix(model)
    lines += _throughput(model)
    lines += _performance(model)
    lines += _mutation(model)
    lines += _subjects(model)
    lines += _obligations(model)
    lines += _tokenizers(model)
    lines += _provenance(model)
    lines += _errors(model)
    return "\n".join(lines).rstrip("\n") + "\n"
