"""Table 3 as one self-contained HTML page: inline CSS, inline SVG plots, no script and no external resource."""

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
from delta_suite.reports.plots import comparisons_per_tokenizer, kill_heatmap, performance_plot, throughput_plot
from delta_suite.reports.provenance import provenance_items
from delta_suite.reports.render_md import LEGEND
from delta_suite.reports.table3 import (
    MOSTLY_FELL_BACK_BELOW,
    NO_SUBJECTS,
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
from jinja2 import Environment, StrictUndefined
from markupsafe import Markup

CSS = """
body { font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; font-size: 13px; color: #222; margin: 24px;
       max-width: 1500px; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 32px; border-bottom: 1px solid #ccc; }
h3 { font-size: 15px; margin-top: 20px; }
table { border-collapse: collapse; margin: 8px 0 16px 0; }
th, td { border: 1px solid #ccc; padding: 3px 6px; vertical-align: top; text-align: left; }
th { background: #f2f2f2; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.np { color: #888; background: #f6f6f6; font-style: italic; }
td.nr { color: #8a6d00; background: #fff8e1; font-style: italic; }
td.na { color: #888; }
td.diff, span.diff { color: #b00020; font-weight: bold; }
td.killed { background: #e3f4e0; } td.survived { background: #fde0e0; font-weight: bold; }
td.redundant { background: #e0ecf8; }
td.s-ok { background: #e3f2e1; }
td.s-FAILED { background: #f8d7da; font-weight: bold; }
td.state { text-align: center; white-space: nowrap; }
p.verdict.pass { color: #1a6b1a; }
p.verdict.fail { color: #b00020; }
td.open-finding { background: #f4f0e0; }
td.fellback { color: #6b5900; }
code { font-size: 12px; }
.scroll { overflow-x: auto; max-width: 100%; }
.breakdown td, .breakdown th, .kill td, .kill th { font-size: 11px; }
.breakdown td:first-child { white-space: nowrap; }
.note { color: #555; }
.warn { background: #fde0e0; padding: 6px 10px; border-left: 4px solid #b00020; }
td.met { background: #e3f4e0; font-weight: bold; } td.notmet { background: #fde0e0; font-weight: bold; }
td.unmeasured { color: #8a6d00; background: #fff8e1; font-style: italic; }
p.caption { font-style: italic; margin: 10px 0 2px 0; }
figure { margin: 8px 0 20px 0; } svg { max-width: 100%; height: auto; }
"""

TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Table 3: what was checked, how much, and what differed</title>
<style>{{ css }}</style>
</head>
<body>
<h1>Table 3: what was checked, how much, and what differed</h1>
<p class="verdict {{ 'pass' if verdict.passed else 'fail' }}"><strong>{{ verdict.line }}</strong></p>
<h2 id="glance">Table 3 at a glance</h2>
<table class="glance"><thead><tr><th>level</th><th>what</th><th>checks</th><th>comparisons with the reference</th>
<th>other checks (by oracle)</th><th>differences</th>
<th>tokenizers</th></tr></thead><tbody>{% for r in glance %}<tr><td>{{ r.level }}</td><td>{{ r.what }}</td>
<td class="num">{{ r.checks }}</td><td class="num">{{ "{:,}".format(r.reference) }}</td><td>{{ r.other }}</td>
<td class="num{{ ' diff' if r.differences else '' }}">{{ "{:,}".format(r.differences) }}</td>
<td class="num">{{ r.tokenizers }}</td></tr>{% endfor %}</tbody></table>
<p>What this report does not cover:</p><ul class="missing">{% for m in missing %}<li>{{ m }}</li>{% endfor %}</ul>
<p>Built from {{ records }} records in {{ files }} ledger files; {{ nrows }} rows; {{ diffs }} differences outside the
controls.</p>
{% if errors %}<p class="warn">{{ errors|length }} ledger lines could not be used; they are listed at the end.</p>
{% endif %}
{% if duplicates %}<p class="warn">{{ duplicates }} records repeat one already read (same identity and
outcome: a ledger copied twice, a batch written by two runs); each was counted once.</p>{% endif %}
{% if survivors %}<p class="warn">Controls that survived (a finding): {{ survivors|join(", ") }}.</p>{% endif %}
{% for u in unloadable %}<p class="warn">Tokenizer {{ u.tokenizer }} could not be loaded and was skipped:
{{ u.reason }} (remedy: <code>{{ u.remedy }}</code>).</p>{% endfor %}
{% if refused %}<p class="warn">{{ "{:,}".format(refused.count) }} corpus documents were refused for bad text and not
compared{{ refused_first }}.</p>{% endif %}
{% if skipped %}<p>{{ skipped_line }}</p>{% endif %}
{% if bad_steps %}<p class="warn">Job steps that did not finish clean: {% for st in bad_steps %}{{ st.step }}:
{{ st.outcome }}{{ "; " if not loop.last else "" }}{% endfor %}. This report covers what the other steps recorded.</p>
{% endif %}
{% if job_steps %}<table class="glance"><thead><tr><th>job step</th><th>exit status</th><th>outcome</th>
<th>seconds</th></tr></thead><tbody>{% for st in job_steps %}<tr><td>{{ st.step }}</td>
<td class="num">{{ "-" if st.status in (-1, -2) else st.status }}</td><td>{{ st.outcome }}</td>
<td class="num">{{ "-" if st.seconds is none else "%.1f"|format(st.seconds) }}</td></tr>{% endfor %}</tbody></table>
{% endif %}

<h2 id="table3">Table 3</h2>
{% for sec in sections %}
<h3>{{ sec.title }}</h3>
{% if not sec.rows %}<p class="note">No records of this level.</p>{% else %}
<table class="table3">
<thead><tr><th>check</th><th>what</th><th>unit</th><th>compared with</th><th>comparisons</th><th>differences</th>
<th>tokenizers</th><th>fast path</th><th>also counted</th></tr></thead>
<tbody>
{% for r in sec.rows %}<tr>
<td><code>{{ r.check }}</code></td><td>{{ r.title }}</td><td>{{ r.unit }}</td><td>{{ r.oracle }}</td>
<td class="num">{{ r.comparisons }}</td>
<td class="num {{ r.diff_class }}">{{ r.differences }}</td><td>{{ r.covered }}</td>
<td class="{{ 'fellback' if r.fell_back else '' }}">{{ r.fast }}</td><td>{{ r.counts }}</td>
</tr>
{% endfor %}</tbody>
</table>
{% for n in sec.notes %}<p class="note">{{ n }}</p>{% endfor %}
{% endif %}
{% endfor %}

<h2 id="paper">The paper beside us</h2>
<p>The paper's Table 3 (§4.7) next to what this report counted; the gap is the scale, not a result.</p>
<table><thead><tr><th>level</th><th>check</th><th>the paper</th><th>this report</th><th>scale gap</th></tr></thead>
<tbody>{% for b in paper %}<tr><td>{{ b.level }}</td><td>{{ b.check }}</td><td>{{ b.paper }}</td><td>{{ b.ours }}</td>
<td>{{ b.gap }}</td></tr>{% endfor %}</tbody></table>

<h2 id="transcripts">Level 3: chat transcripts replayed turn by turn, by front end</h2>
<p>Every turn through three front ends: the whole reference encode (the oracle: its cost only), the stateless chunked
encode cut at role markers first, and a session that repairs; the last two are compared with the whole reference on
every turn. Chunked fast path = the plan had a cut (each chunk is still encoded by the reference); session fast path =
the turn was repaired (Qwen3's template drops the empty think block of earlier assistant turns once a user message
follows, so every user turn starts the session over; the last column splits the session's turns by path).</p>
{% if transcripts %}<div class="scroll"><table><thead><tr>
{% for h in transcript_header %}<th>{{ h }}</th>{% endfor %}</tr></thead>
<tbody>{% for r in transcripts %}<tr>{% for c in r %}<td>{{ c }}</td>{% endfor %}</tr>{% endfor %}</tbody></table></div>
{% else %}<p>No level-3 record with per-front-end figures in this report.</p>{% endif %}
<h3>The recorded full transcript set (a committed results file: shown, not counted in Table 3)</h3>
{% if recorded %}<p>{{ recorded_about }}</p>
<div class="scroll"><table><thead><tr>
{% for h in transcript_header %}<th>{{ h }}</th>{% endfor %}</tr></thead>
<tbody>{% for r in recorded %}<tr>{% for c in r %}<td>{{ c }}</td>{% endfor %}</tr>{% endfor %}</tbody></table></div>
{% else %}<p>No results file of a full-set run is committed.</p>{% endif %}
<p class="note">{{ transcript_paper }}</p>

<h2 id="breakdown">Per-tokenizer breakdown</h2>
<p class="note">{{ legend }}</p>
{% for sec in sections if sec.rows %}
<h3>{{ sec.title }}</h3>
<div class="scroll"><table class="breakdown">
<thead><tr><th>check</th>{% for h in columns %}<th title="{{ h.name }}">{{ h.alias }}</th>{% endfor %}</tr></thead>
<tbody>
{% for r in sec.rows %}<tr>
<td><code>{{ r.check }}</code><br>
<span class="note">{% if r.control %}{{ r.control }} · {% endif %}{{ r.unit }}</span></td>
{% for c in r.breakdown %}<td class="{{ c.cls }}">{{ c.text }}</td>{% endfor %}</tr>
{% endfor %}</tbody>
</table></div>
{% endfor %}
<figure>{{ plot_comparisons }}</figure>

<h2 id="kill-matrix">Kill matrix of the controls</h2>
{% if kill.controls %}
<div class="scroll"><table class="kill">
<thead><tr><th>control</th>{% for h in kill.columns %}<th>{{ h }}</th>{% endfor %}<th>killed by</th></tr></thead>
<tbody>
{% for line in kill.lines %}<tr><td>{{ line.name }}</td>
{% for c in line.cells %}<td class="{{ c.cls }}">{{ c.text }}</td>{% endfor %}<td>{{ line.killers }}</td></tr>
{% endfor %}</tbody>
</table></div>
{% for n in kill.notes %}<p class="note">{{ n }}</p>{% endfor %}
<figure>{{ plot_kill }}</figure>
{% else %}<p class="note">No control records.</p>{% endif %}

<h2 id="throughput">Campaign throughput</h2>
{% if plot_throughput %}<figure>{{ plot_throughput }}</figure>
<table><thead><tr><th>campaign</th><th>batches</th><th>cases</th><th>seconds</th><th>cases/s</th></tr></thead><tbody>
{% for s in throughput %}<tr><td>{{ s.name }}</td><td class="num">{{ s.segments }}</td>
<td class="num">{{ s.cases }}</td>
<td class="num">{{ s.seconds }}</td><td class="num">{{ s.rate }}</td></tr>
{% endfor %}</tbody></table>
{% else %}<p class="note">{{ no_throughput }}</p>{% endif %}

<h2 id="performance">Performance (benchmarks)</h2>
{% if not perf.available %}<p class="note">{{ perf.note }}</p>{% else %}
<p class="note">{{ perf.note }}. Each figure shows the latest run (ledger file) holding it; older runs are counted,
not mixed in.</p>
{% for fig in perf.figures %}
<h3>{{ fig.title }}</h3>
<p class="note">Source: {{ fig.source }}.{% if fig.older_runs_ignored %} Older runs ignored:
{{ fig.older_runs_ignored|join(", ") }}.{% endif %}</p>
{% if fig.goals %}<table class="goals"><thead><tr><th>goal</th><th>status</th><th>from the records</th></tr></thead>
<tbody>{% for g in fig.goals %}<tr><td>{{ g.text }}</td><td class="{{ g.cls }}">{{ g.status }}</td>
<td>{{ g.detail }}</td></tr>
{% endfor %}</tbody></table>{% endif %}
{% if fig.svg %}<figure>{{ fig.svg }}</figure>{% endif %}
{% for t in fig.tables %}<p class="caption">{{ t.caption }}</p>
<div class="scroll"><table class="performance"><thead><tr>{% for h in t.header %}<th>{{ h }}</th>{% endfor %}</tr>
</thead><tbody>
{% for row in t.rows %}<tr>{% for c in row %}<td>{{ c }}</td>{% endfor %}</tr>
{% endfor %}</tbody></table></div>
{% endfor %}
{% for n in fig.notes %}<p class="note">{{ n }}</p>{% endfor %}
{% endfor %}
{% endif %}

<h2 id="mutation">{{ mutation_title }}</h2>
<p class="note">{{ mutation_sentence }}</p>
{% if mutation_rows %}<div class="scroll"><table><thead><tr>{% for h in mutation_header %}<th>{{ h }}</th>{% endfor %}
</tr></thead><tbody>{% for r in mutation_rows %}<tr>{% for c in r %}<td>{{ c }}</td>{% endfor %}</tr>
{% endfor %}</tbody></table></div>{% endif %}
{% if sample_rows %}<p class="caption">Stated samples (estimates with 95% intervals, apart from the complete runs)</p>
<div class="scroll"><table><thead><tr>{% for h in sample_header %}<th>{{ h }}</th>{% endfor %}</tr></thead>
<tbody>{% for r in sample_rows %}<tr>{% for c in r %}<td>{{ c }}</td>{% endfor %}</tr>
{% endfor %}</tbody></table></div>{% endif %}
{% if survivor_rows %}<p class="caption">Surviving mutants and their verdicts (mutation/verdicts.toml)</p>
<div class="scroll"><table><thead><tr>{% for h in survivor_header %}<th>{{ h }}</th>{% endfor %}</tr></thead>
<tbody>{% for r in survivor_rows %}<tr>{% for c in r %}<td>{{ c }}</td>{% endfor %}</tr>
{% endfor %}</tbody></table></div>{% endif %}

<h2 id="subjects">Subjects</h2>
{% if subjects_ran or subjects_unavailable %}
{% if subjects_ran %}<div class="scroll"><table class="subjects"><thead><tr>
{% for h in subject_header %}<th>{{ h }}</th>{% endfor %}</tr></thead><tbody>
{% for r in subjects_ran %}<tr>{% for c in r %}<td>{{ c }}</td>{% endfor %}</tr>
{% endfor %}</tbody></table></div>{% endif %}
{% if subjects_unavailable %}<p class="note">Not installed (nothing compared; never counted as passed):</p>
<div class="scroll"><table class="subjects-unavailable"><thead><tr>{% for h in subject_header %}<th>{{ h }}</th>
{% endfor %}</tr></thead><tbody>
{% for r in subjects_unavailable %}<tr>{% for c in r %}<td>{{ c }}</td>{% endfor %}</tr>
{% endfor %}</tbody></table></div>{% endif %}
{% else %}<p class="note">{{ no_subjects }}</p>{% endif %}

<h2 id="obligations">Proof obligations</h2>
{% if obligations.available %}<p class="note">{{ obligations.note }}</p>
<p class="note">One cell per tokenizer: {% for state, short in short_states %}<code>{{ short }}</code> {{ state
}}{{ ", " if not loop.last }}{% endfor %}; the statement is on each obligation (hover) and listed below.</p>
<table class="obligations"><thead><tr>{% for c in grid_header %}<th>{{ c }}</th>{% endfor %}</tr></thead><tbody>
{% for r in grid_rows %}<tr><td title="{{ grid_statements[loop.index0][1] }}"><code>{{ r[0] }}</code></td>
{% for c in r[1:] %}<td class="state s-{{ c|replace(' ', '-')|replace('/', '') }}">{{ c }}</td>{% endfor %}</tr>
{% endfor %}</tbody></table>
{% for tok, what in reconstructed %}<p class="note"><code>{{ reconstruction_mark }}</code> {{ tok }}: split pattern
{{ what }}.</p>{% endfor %}
{% if pattern_rows %}<p class="note">Split patterns (z3 proofs of the transition set per pattern, from the
records):</p>
<div class="scroll"><table class="patterns"><thead><tr>{% for h in pattern_header %}<th>{{ h }}</th>{% endfor %}
</tr></thead><tbody>{% for r in pattern_rows %}<tr>{% for c in r %}<td>{{ c }}</td>{% endfor %}</tr>
{% endfor %}</tbody></table></div>
<p class="note">Refuted pairs, and how deep each counterexample reaches on the pattern's provisioned tokenizers
(IDs: a chunked encode would differ; units: equal IDs grouped differently; pieces: split pieces only; "excluded,
conservative": no ID-changing witness within the search bound):</p>
<div class="scroll"><table class="refuted"><thead><tr>{% for h in refuted_header %}<th>{{ h }}</th>{% endfor %}
</tr></thead><tbody>{% for r in refuted_rows %}<tr>{% for c in r %}<td>{{ c }}</td>{% endfor %}</tr>
{% endfor %}</tbody></table></div>{% endif %}
{% for line in sampled_evidence %}<p class="note">Sampled evidence: {{ line }}.</p>{% endfor %}
{% if failed_cells %}<p class="warn">Failed cells, with their first difference:</p><ul>{% for f in failed_cells %}
<li>{{ f }}</li>{% endfor %}</ul>{% endif %}
<dl class="statements">{% for ident, statement, how in grid_statements %}<dt><code>{{ ident }}</code></dt>
<dd>{{ statement }} <span class="note">Discharged by: {{ how }}.</span></dd>{% endfor %}</dl>
{% else %}<p class="note">{{ obligations.note }}.</p>{% endif %}

<h2 id="tokenizers">Tokenizers</h2>
<table class="tokenizers"><thead><tr><th>name</th><th>alias</th><th>here</th><th>provisioned sha256</th>
<th>sha256 in records</th><th>note</th></tr></thead><tbody>
{% for t in tokenizers %}<tr><td>{{ t.name }}</td><td>{{ t.alias }}</td>
<td class="{{ 'np' if not t.provisioned else '' }}">{{ t.status }}</td><td><code>{{ t.cache_sha256[:16] }}</code></td>
<td><code>{{ t.record_sha256|map('truncate', 19, True, '…', 0)|join(', ') }}</code></td>
<td>{{ t.digest_note }}</td></tr>
{% endfor %}</tbody></table>

<h2 id="provenance">Provenance (from the records)</h2>
<table class="provenance"><tbody>
{% for k, v in provenance %}<tr><th>{{ k }}</th><td>{{ v }}</td></tr>
{% endfor %}</tbody></table>
<p class="note">Ledger files read:
{% for f in ledger_files %}<code>{{ f }}</code>{% if not loop.last %}, {% endif %}{% endfor %}</p>

<h2 id="ledger-errors">Ledger lines that could not be used</h2>
{% if errors %}<table class="ledger-errors"><thead><tr><th>file</th><th>line</th><th>reason</th></tr></thead><tbody>
{% for e in errors %}<tr><td><code>{{ e.file }}</code></td><td class="num">{{ e.line or "whole file" }}</td>
<td>{{ e.reason }}</td></tr>
{% endfor %}</tbody></table>
{% else %}<p class="note">None: every line of every ledger file was a usable record.</p>{% endif %}
</body>
</html>
"""

_CELL_CLASS = {"not provisioned": "np", "not run": "nr", "tokenizer-independent": "na"}
_GOAL_CLASS = {"met": "met", "not met": "notmet", "not measured": "unmeasured"}


def _breakdown_cells(row, columns: list[str], provisioned: frozenset[str] = frozenset()) -> list[dict]:
    out = []
    for c in columns:
        cell = row.cells[c]
        cls = _CELL_CLASS.get(cell.status, "num")
        if cell.figures is not None and cell.figures.differences and row.level != "control":
            cls += " diff"
        share = cell.figures.fast_share if cell.figures is not None else None
        if share is not None and share < MOSTLY_FELL_BACK_BELOW:
            cls += " fellback"
        out.append({"text": cell_text(cell, row, c in provisioned), "cls": cls})
    return out


def _context(model: Table3) -> dict:
    provisioned = frozenset(t.name for t in model.tokenizers if t.provisioned)
    sections = []
    for sec in model.sections:
        if not sec.rows and sec.key in ("other", "benchmark", "harness"):
            continue
        rows = []
        notes = []
        for r in sec.rows:
            diff = num(r.total.differences)
            diff_class = "diff" if r.total.differences and r.level != "control" else ""
            if r.level == "control":
                diff += CONTROL_OUTCOME[r.control_status or "survived"]
                diff_class = (r.control_status or "survived").replace(" ", "-")
            if r.total.failed_records:
                diff += f", {r.total.failed_records} failed test records"
            rows.append({
                "check": r.check, "title": r.title, "unit": r.unit, "oracle": row_oracle_text(r),
                "comparisons": num(r.total.comparisons),
                "differences": diff, "diff_class": diff_class, "covered": covered_text(r),
                "fast": fast_path_text(r), "fell_back": r.mostly_fell_back, "counts": counts_text(r),
                "control": r.control, "breakdown": _breakdown_cells(r, model.columns, provisioned),
            })
            if r.fallback_reasons:
                notes.append(f"{r.check} fallback reasons: "
                             + ", ".join(f"{k} {num(v)}" for k, v in r.fallback_reasons.items()))
            if r.pointers:
                notes.append(f"{r.check} differed at: " + ", ".join(r.pointers))
        notes += sampling_notes(sec.rows)
        sections.append({"title": sec.title, "rows": rows, "notes": notes})
    aliases = {t.name: t.alias for t in model.tokenizers}
    km = model.kill_matrix
    kill_lines = []
    for name in km.controls:
        cells = km.cells[name]
        kill_lines.append({
            "name": name,
            "cells": [{"text": kill_text(cells[c]),
                       "cls": _CELL_CLASS.get(cells[c].status, cells[c].status.replace(" ", "-"))}
                      for c in km.columns],
            "killers": ", ".join(sorted({k for cell in cells.values() for k in cell.killed_by})) or "nothing",
        })
    throughput = [
        {"name": t["series"], "segments": t["batches"], "cases": num(t["cases"]),
         "seconds": f"{t['seconds']:,.1f} ({t['x']})", "rate": rate_text(t)}
        for t in throughput_summary(model.throughput)
    ]
    perf = model.performance
    perf_figures = []
    for fig in perf.figures if perf is not None else []:
        svg = performance_plot(fig)
        perf_figures.append({
            "title": fig.title, "source": fig.source, "older_runs_ignored": fig.older_runs_ignored,
            "goals": [{"text": g.text, "status": g.status, "detail": g.detail, "cls": _GOAL_CLASS.get(g.status, "")}
                      for g in fig.goals],
            "tables": fig.tables, "notes": fig.notes, "svg": Markup(svg) if svg else "",
        })
    kill_svg = kill_heatmap(model)
    throughput_svg = throughput_plot(model)
    return {
        "verdict": verdict(model),
        "paper": beside(model),
        "transcripts": figure_rows(model.transcripts),
        "transcript_header": FIGURE_HEADER,
        "recorded": figure_rows(model.transcripts_recorded.figures) if model.transcripts_recorded else [],
        "recorded_about": recorded_sentence(model.transcripts_recorded) if model.transcripts_recorded else "",
        "transcript_paper": PAPER_SENTENCE,
        "mutation_title": MUTATION_TITLE,
        "mutation_sentence": mutation_sentence(model.mutation),
        "mutation_header": MUTATION_HEADER,
        "mutation_rows": mutation_rows(model.mutation) if model.mutation and "error" not in model.mutation else [],
        "sample_header": SAMPLE_HEADER,
        "sample_rows": sample_rows(model.mutation) if model.mutation and "error" not in model.mutation else [],
        "survivor_header": SURVIVOR_HEADER,
        "survivor_rows": survivor_rows(model.mutation) if model.mutation and "error" not in model.mutation else [],
        "glance": levels(model),
        "missing": missing(model),
        "grid_header": obligation_grid(model)[0],
        "grid_rows": obligation_grid(model)[1],
        "grid_statements": obligation_grid(model)[2],
        "short_states": list(SHORT_STATE.items()),
        "reconstructed": list(reconstructed_tokenizers(model).items()),
        "reconstruction_mark": RECONSTRUCTION_MARK,
        "pattern_header": PATTERN_HEADER,
        "pattern_rows": pattern_rows(model),
        "refuted_header": REFUTED_HEADER,
        "refuted_rows": refuted_rows(model),
        "failed_cells": failed_cells(model),
        "sampled_evidence": sampled_evidence(model),
        "css": Markup(CSS),
        "records": num(model.provenance.records),
        "files": len(model.ledger_files),
        "nrows": len(model.rows),
        "diffs": num(sum(r.total.differences for r in model.rows if r.level != "control")),
        "errors": model.ledger_errors,
        "survivors": km.survivors,
        "duplicates": model.duplicate_records,
        "unloadable": model.unloadable,
        "refused": model.refused_documents,
        "refused_first": refused_first(model),
        "skipped": model.skipped_documents,
        "skipped_line": skipped_line(model),
        "job_steps": model.job_steps,
        "bad_steps": [st for st in model.job_steps if st.get("status") not in (0, -2)],
        "sections": sections,
        "legend": LEGEND,
        "columns": [{"name": c, "alias": aliases.get(c, c)} for c in model.columns],
        "kill": {"controls": km.controls, "columns": [aliases.get(c, c) for c in km.columns], "lines": kill_lines,
                 "notes": km.notes + ([f"Survivors (no check killed them): {', '.join(km.survivors)}"]
                                      if km.survivors else [])},
        "plot_comparisons": Markup(comparisons_per_tokenizer(model)),
        "plot_kill": Markup(kill_svg) if kill_svg else "",
        "plot_throughput": Markup(throughput_svg) if throughput_svg else "",
        "throughput": throughput,
        "perf": {"available": perf is not None and perf.available,
                 "note": perf.note if perf is not None else "No benchmark run in these ledgers.",
                 "figures": perf_figures},
        "no_throughput": NO_THROUGHPUT,
        "obligations": model.obligations,
        "subject_header": SUBJECT_HEADER,
        "subjects_ran": subject_rows(model)[0],
        "subjects_unavailable": subject_rows(model)[1],
        "no_subjects": NO_SUBJECTS,
        "tokenizers": model.tokenizers,
        "provenance": provenance_items(model.provenance),
        "ledger_files": model.ledger_files,
    }


def render_html(model: Table3) -> str:
    """The whole report as one HTML page; deterministic for a given model."""
    env = Environment(autoescape=True, undefined=StrictUndefined, keep_trailing_newline=True)
    return env.from_string(TEMPLATE).render(**_context(model))

