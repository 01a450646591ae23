"""The report's Performance section: the benchmark figures and their goals, built only from benchmark records read.

Each figure (repair vs whole, chunked, fallback confinement, suite throughput, scale, gate wall time, peer) is taken
from one run: the latest ledger file holding records of that figure (by the records' latest timestamp, then the file
name); older runs of the same figure are counted and named as ignored, never mixed in. A goal is "met" or "not met"
only from the records of that run, and "not measured" when the run has no point at the goal's size. Nothing here
is a constant standing in for a measurement: no benchmark record, no figure. The scale figure's only constants are
the paper's volumes (reports.scale_on_paper), priced with the run's measured rates.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from delta_suite.reports.scale_on_paper import (
    CLUSTER_CORES,
    FORMULA,
    L1_MEAN_CHARS,
    LEVEL_TITLES,
    PAPER,
    VOLUMES,
    core_hours,
    duration,
    used_efficiency,
    wall_hours,
)

NO_BENCHMARKS = "No benchmark run in these ledgers (no record of level \"benchmark\"): nothing to show."
UNKNOWN_FILE = "(records not read from a ledger file)"

# figure key -> (title, the checks whose records make it)
FIGURES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("repair", "Repair vs whole encode", ("benchmark.repair_vs_whole", "benchmark.repair_growth")),
    ("chunked", "Chunked encode", ("benchmark.chunked", "benchmark.chunked_fit")),
    ("fallback", "Fallback confinement", ("benchmark.fallback_confinement",)),
    ("suite", "The suite's own throughput", ("benchmark.suite_throughput",)),
    ("scale", "Scale: the paper's volumes at the measured per-core rate",
     ("benchmark.scale", "benchmark.scale_efficiency")),
    ("campaign", "Campaign and corpus-comparison throughput (1 and 2 workers)",
     ("benchmark.campaign", "benchmark.compare_workers")),
    ("gate", "Gate wall time and durations", ("benchmark.gate_wall", "benchmark.gate_durations")),
    ("peer", "Peer (toktier)", ("benchmark.peer_repair_vs_whole", "benchmark.peer_chunked", "benchmark.peer")),
)
ABSENT = {
    "repair": "not run: no repair figure in these ledgers",
    "chunked": "not run: no chunked figure in these ledgers",
    "fallback": "not run: no fallback-confinement figure in these ledgers",
    "suite": "not run: no suite-throughput figure in these ledgers",
    "scale": "not measured: no benchmark.scale record in these ledgers (python -m delta_suite.benchmarks --only "
             "scale), so no "
             "cost of the paper's volumes is stated",
    "campaign": "not measured: no benchmark.campaign or benchmark.compare_workers record in these ledgers (python -m "
                "benchmarks --only campaign)",
    "gate": "not measured: gate wall times and durations are recorded only by python -m delta_suite.benchmarks "
            "--with-gate",
    "peer": "not installed or not run: no peer record in these ledgers",
}
# Goals of issue 11: (context characters, minimum ratio) for repair; (characters, workers, minimum) for chunked.
REPAIR_GOALS: tuple[tuple[int, float], ...] = ((400_000, 50.0), (1_000_000, 300.0))
CHUNKED_GOAL: tuple[int, int, float] = (1_000_000, 2, 1.8)
SUITE_OVERHEAD_GOAL = 0.20
SIZE_TOLERANCE = 0.02  # a point counts for a goal's size when within 2% of it (rendered chat is not cut exactly)


@dataclass
class Goal:
    """A stated goal, its status computed from the records ("met", "not met", "not measured"), and why."""

    text: str
    status: str
    detail: str


@dataclass
class PerfTable:
    caption: str
    header: list[str]
    rows: list[list[str]]


@dataclass
class PerfFigure:
    """One figure of the section: where it came from, its goals, its tables, and the series to plot."""

    key: str
    title: str
    source: str
    ledger_file: str
    older_runs_ignored: list[str]
    goals: list[Goal]
    tables: list[PerfTable]
    notes: list[str]
    plot: dict[str, list[list[float]]] = field(default_factory=dict)  # series label -> [[x, y], ...]


@dataclass
class Performance:
    """The whole section; `points` has one line per record used (for CSV)."""

    available: bool
    note: str
    figures: list[PerfFigure]
    points: list[dict]


# --- small readers tolerant of missing fields -------------------------------------------------------------------


def _num(d: dict, key: str) -> float | None:
    v = d.get(key)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _timing(d: dict, name: str) -> dict:
    t = (d.get("timings") or {}).get(name)
    return t if isinstance(t, dict) else {}


def ms(t: dict) -> str:
    """A candidate's median in milliseconds with its min-max spread, or "not recorded"."""
    med, lo, hi = _num(t, "median_s"), _num(t, "min_s"), _num(t, "max_s")
    if med is None:
        return "not recorded"
    text = f"{med * 1e3:,.1f} ms"
    if lo is not None and hi is not None:
        text += f" ({lo * 1e3:,.1f}-{hi * 1e3:,.1f})"
    return text


def times(value: float | None) -> str:
    return "not recorded" if value is None else f"{value:,.2f}x"


def share(value: float | None) -> str:
    return "not recorded" if value is None else f"{100 * value:.1f}%"


def chars(value: object) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return "not recorded" if value is None else str(value)


def _diffs(rec: dict) -> str:
    return f"{rec['comparisons']:,} / {rec['differences']:,}" + (" DIFFERENCES" if rec["differences"] else "")


def _near(value: object, size: int) -> bool:
    return isinstance(value, (int, float)) and abs(value - size) <= SIZE_TOLERANCE * size


# --- runs --------------------------------------------------------------------------------------------------------


def _run_order(recs: list[dict], file: str) -> tuple[str, str]:
    return (max(str(r["provenance"].get("time", "")) for r in recs), file)


def latest_run(pairs: list[tuple[str, dict]]) -> tuple[str, list[dict], list[str]]:
    """(file, its records, older files ignored): the run (ledger file) whose latest record is newest, ties broken
    by file name; the others are returned by name so the report can say they were left out."""
    by_file: dict[str, list[dict]] = {}
    for file, rec in pairs:
        by_file.setdefault(file, []).append(rec)
    ordered = sorted(by_file, key=lambda f: _run_order(by_file[f], f))
    chosen = ordered[-1]
    return chosen, by_file[chosen], ordered[:-1]


def source_text(recs: list[dict], file: str, ignored: list[str]) -> str:
    """Machine cores, tokenizer and digest prefix, repetitions, the ledger file and the run's time span."""
    details = [r["details"] for r in recs]

    def values(key: str) -> str:
        found = sorted({str(d[key]) for d in details if d.get(key) is not None}, key=lambda s: (len(s), s))
        return ", ".join(found) if found else "not recorded"

    toks = sorted({(r["tokenizer"] or "", (r.get("tokenizer_sha256") or "")[:12]) for r in recs if r["tokenizer"]})
    tok = ", ".join(f"{n} (sha256 {d or 'not recorded'}…)" for n, d in toks) or "none (tokenizer-independent)"
    stamps = sorted(str(r["provenance"].get("time", "")) for r in recs)
    span = stamps[0] if stamps[0] == stamps[-1] else f"{stamps[0]} to {stamps[-1]}"
    text = (f"ledger {file}; run {span}; {values('cores')} cores; tokenizer {tok}; "
            f"repetitions {values('repetitions')}; {len(recs)} record{'s' if len(recs) != 1 else ''}")
    if ignored:
        text += f"; {len(ignored)} older run{'s' if len(ignored) > 1 else ''} of this figure ignored"
    return text


# --- figures -----------------------------------------------------------------------------------------------------


def _point(figure: str, rec: dict, file: str) -> dict:
    d = rec["details"]
    keys = ("text_kind", "context_chars", "append_chars", "chars", "chunks", "workers", "path", "run", "peer",
            "status", "ratio", "ratio_same_call", "planning_share", "overhead", "suite_overhead",
            "overhead_with_subject", "check_chars_per_s_per_core", "wall_s", "outcome", "cores", "repetitions")
    point = {"figure": figure, "check": rec["check"], "ledger_file": file, "tokenizer": rec["tokenizer"]}
    point.update({k: d.get(k) for k in keys})
    point["cpu_over_wall"] = _timing(d, "chunked").get("cpu_over_wall")
    point.update(comparisons=rec["comparisons"], differences=rec["differences"])
    return point


def _paths(d: dict) -> str:
    paths = d.get("paths")
    if not isinstance(paths, dict) or not paths:
        return "not recorded"
    return ", ".join(f"{k} x{v}" for k, v in sorted(paths.items()))


def repair_goal(points: list[dict], size: int, minimum: float) -> Goal:
    """Met iff every recorded repair point at `size` characters (every kind, every append) has a ratio >= minimum
    and no differences; the worst point is named."""
    text = f">= {minimum:g}x faster than a whole encode at {size:,} characters (worst kind and append)"
    at = [d | {"_diffs": r["differences"]} for r in points for d in [r["details"]]
          if _near(d.get("context_chars"), size) and _num(d, "ratio") is not None]
    if not at:
        return Goal(text, "not measured", f"no repair point at {size:,} characters in this run")
    worst = min(at, key=lambda d: (d["ratio"], str(d.get("text_kind")), str(d.get("append_chars"))))
    diffs = sum(d["_diffs"] for d in at)
    met = worst["ratio"] >= minimum and diffs == 0
    detail = (f"worst {worst['ratio']:,.1f}x: {worst.get('text_kind', 'kind not recorded')}, append of "
              f"{chars(worst.get('append_chars'))} chars; {len(at)} points at this size")
    if diffs:
        detail += f"; {diffs} outputs DIFFERED from the reference"
    return Goal(text, "met" if met else "not met", detail)


def repair_figure(recs: list[dict]) -> tuple[list[Goal], list[PerfTable], list[str], dict]:
    points = [r for r in recs if r["check"] == "benchmark.repair_vs_whole"]
    tables, plot = [], {}
    kinds = sorted({str(r["details"].get("text_kind", "not recorded")) for r in points})
    header = ["context chars", "append chars", "ratio (whole / repair)", "repair median (min-max)",
              "whole median (min-max)", "splice alone: ratio", "path taken", "compared / differences"]
    for kind in kinds:
        mine = sorted((r for r in points if str(r["details"].get("text_kind", "not recorded")) == kind),
                      key=lambda r: (r["details"].get("context_chars") or 0, r["details"].get("append_chars") or 0))
        rows = []
        for r in mine:
            d = r["details"]
            rows.append([chars(d.get("context_chars")), chars(d.get("append_chars")), times(_num(d, "ratio")),
                         ms(_timing(d, "repair")), ms(_timing(d, "whole")), times(_num(d, "splice_ratio")),
                         _paths(d), _diffs(r)])
            if _num(d, "ratio") is not None and _num(d, "context_chars") is not None:
                label = f"{kind}, append {chars(d.get('append_chars'))}"
                plot.setdefault(label, []).append([float(d["context_chars"]), float(d["ratio"])])
        tables.append(PerfTable(f"{kind}: ratio = median(whole) / median(repair)", header, rows))
    growth = sorted((r for r in recs if r["check"] == "benchmark.repair_growth"),
                    key=lambda r: (str(r["details"].get("text_kind")), r["details"].get("append_chars") or 0))
    if growth:
        rows = [[str(r["details"].get("text_kind", "not recorded")), chars(r["details"].get("append_chars")),
                 times(_num(r["details"], "repair_growth")), times(_num(r["details"], "whole_growth")),
                 times(_num(r["details"], "context_growth")), times(_num(r["details"], "ratio"))] for r in growth]
        tables.append(PerfTable("growth from the smallest to the largest context (median at largest / at smallest)",
                                ["text kind", "append chars", "repair time growth", "whole time growth",
                                 "context growth", "ratio at largest"], rows))
    goals = [repair_goal(points, size, minimum) for size, minimum in REPAIR_GOALS]
    return goals, tables, [], plot


def chunked_goal(points: list[dict]) -> Goal:
    """Met iff the best chunk count at the goal's size and workers has a ratio >= the goal, with no differences."""
    size, workers, minimum = CHUNKED_GOAL
    text = f">= {minimum:g}x over one serial encode with {workers} workers at {size:,} characters (best chunk count)"
    at = [r for r in points if _near(r["details"].get("chars"), size) and r["details"].get("workers") == workers
          and _num(r["details"], "ratio") is not None]
    if not at:
        return Goal(text, "not measured", f"no chunked point at {size:,} characters with {workers} workers")
    best = max(at, key=lambda r: (r["details"]["ratio"], -(r["details"].get("chunks") or 0)))
    d = best["details"]
    cpu = _timing(d, "chunked").get("cpu_over_wall")
    detail = f"best k={d.get('chunks')}: {d['ratio']:,.2f}x; {len(at)} chunk counts at this size"
    if isinstance(cpu, (int, float)):
        detail += f", cpu/wall {cpu:.2f}"
    met = d["ratio"] >= minimum and best["differences"] == 0
    if best["differences"]:
        detail += f"; {best['differences']} outputs DIFFERED from the reference"
    return Goal(text, "met" if met else "not met", detail)


def chunked_figure(recs: list[dict]) -> tuple[list[Goal], list[PerfTable], list[str], dict]:
    points = [r for r in recs if r["check"] == "benchmark.chunked"]
    key = lambda r: (r["details"].get("chars") or 0, str(r["details"].get("workers")), r["details"].get("chunks") or 0)  # noqa: E731
    tables, plot = [], {}
    header = ["workers", "chunks k", "ratio (serial / chunked)", "chunked median (min-max)",
              "serial median (min-max)", "cpu/wall", "planning share", "cuts found", "compared / differences"]
    same_call = any("ratio_same_call" in r["details"] for r in points)
    if same_call:  # newer records: the same library call on the whole text, i.e. the gain from cutting alone
        header.insert(3, "ratio (same call on the whole text / chunked)")
    for size in sorted({r["details"].get("chars") or 0 for r in points}):
        rows = []
        for r in sorted((r for r in points if (r["details"].get("chars") or 0) == size), key=key):
            d = r["details"]
            cpu = _timing(d, "chunked").get("cpu_over_wall")
            rows.append([chars(d.get("workers")), chars(d.get("chunks")), times(_num(d, "ratio")),
                         ms(_timing(d, "chunked")), ms(_timing(d, "serial")),
                         f"{cpu:.2f}" if isinstance(cpu, (int, float)) else "not recorded",
                         share(_num(d, "planning_share")), chars(d.get("cuts_found")), _diffs(r)])
            if same_call:
                rows[-1].insert(3, times(_num(d, "ratio_same_call")))
            if _num(d, "ratio") is not None and _num(d, "chunks") is not None:
                label = f"{size:,} chars, {d.get('workers')} worker{'s' if d.get('workers') != 1 else ''}"
                plot.setdefault(label, []).append([float(d["chunks"]), float(d["ratio"])])
        tables.append(PerfTable(f"{chars(size)} characters: speedup over one serial reference encode", header, rows))
    fits = sorted((r for r in recs if r["check"] == "benchmark.chunked_fit"),
                  key=lambda r: (r["details"].get("chars") or 0, str(r["details"].get("workers"))))
    if fits:
        rows = []
        for r in fits:
            d, fit = r["details"], r["details"].get("fit") or {}
            c, t1 = _num(fit, "c_s_per_chunk"), _num(fit, "T1_s")
            rows.append([chars(d.get("chars")), chars(d.get("workers")),
                         "not recorded" if t1 is None else f"{t1 * 1e3:,.1f} ms",
                         "not recorded" if c is None else f"{c * 1e3:,.3f} ms",
                         "not recorded" if _num(fit, "residual_s2") is None else f"{fit['residual_s2']:.4g}",
                         str(fit.get("model", "not recorded"))])
        tables.append(PerfTable("cost model fitted to the chunked medians",
                                ["chars", "workers", "T1", "c per chunk", "residual (s²)", "model"], rows))
    return [chunked_goal(points)], tables, [], plot


def fallback_figure(recs: list[dict]) -> tuple[list[Goal], list[PerfTable], list[str], dict]:
    rows, notes = [], []
    for r in sorted(recs, key=lambda r: (r["details"].get("chars") or 0, r["tokenizer"] or "")):
        d = r["details"]
        rows.append([chars(d.get("chars")), chars(d.get("chunks")), chars(d.get("workers")),
                     str(d.get("normalizer", "not recorded")), times(_num(d, "ratio")), ms(_timing(d, "whole_dirty")),
                     ms(_timing(d, "cut_dirty")), times(_num(d, "clean_ratio")), times(_num(d, "dirty_cost_whole")),
                     _diffs(r)])
        if d.get("label"):
            notes.append(str(d["label"]))
    header = ["chars", "chunks", "workers", "normalizer", "ratio (whole / cut, one non-NFC char)",
              "whole median (min-max)", "cut median (min-max)", "same without it", "non-NFC cost on whole",
              "compared / differences"]
    return [], [PerfTable("one decomposed accent in the middle of the document, whole vs cut", header, rows)], \
        sorted(set(notes)), {}


def suite_goal(points: list[dict]) -> Goal:
    """Met iff every path's suite overhead (above the reference encodes and the subject it checks) is <= the goal;
    records without `suite_overhead` fall back to `overhead`, which includes the subject's own time (said so)."""
    text = f"the suite's overhead above the reference encodes it needs <= {SUITE_OVERHEAD_GOAL:.0%}"
    found = []
    for r in points:
        d = r["details"]
        value, field_name = _num(d, "suite_overhead"), "suite_overhead"
        if value is None:
            value, field_name = _num(d, "overhead"), "overhead (includes the subject's time)"
        if value is not None:
            found.append((value, str(d.get("path", "path not recorded")), field_name))
    if not found:
        return Goal(text, "not measured", "no suite_throughput record carries an overhead")
    worst = max(found)
    met = worst[0] <= SUITE_OVERHEAD_GOAL
    return Goal(text, "met" if met else "not met",
                f"worst {worst[0]:.1%} on the {worst[1]} path, field {worst[2]}; {len(found)} paths")


def suite_figure(recs: list[dict]) -> tuple[list[Goal], list[PerfTable], list[str], dict]:
    rows = []
    for r in sorted(recs, key=lambda r: str(r["details"].get("path"))):
        d = r["details"]
        rate = _num(d, "check_chars_per_s_per_core")
        suite_oh = _num(d, "suite_overhead")
        with_subject = _num(d, "overhead_with_subject")
        if with_subject is None and suite_oh is None:
            with_subject = _num(d, "overhead")  # older records: check over the needed reference encodes
        reference = _timing(d, "reference") or _timing(d, "needed_reference")
        rows.append([str(d.get("path", "not recorded")), chars(d.get("strings")), chars(d.get("chars")),
                     "not recorded" if rate is None else f"{rate:,.0f}", ms(_timing(d, "check")), ms(reference),
                     ms(_timing(d, "subject")) if _timing(d, "subject") else "not recorded",
                     share(suite_oh), share(with_subject), _diffs(r)])
    header = ["path", "strings", "chars", "check chars/s/core", "check median (min-max)",
              "reference median (min-max)", "subject median (min-max)", "suite overhead (goal)",
              "overhead with subject", "compared / differences"]
    notes = ["suite overhead = (check - reference - subject) / reference; overhead with subject = (check - "
             "reference) / reference; 'not recorded' where the record predates the field."]
    return [suite_goal(recs)], [PerfTable("differential-check throughput, one thread", header, rows)], notes, {}


def _rate(value: float | None, unit: str) -> str:
    return "not measured" if value is None else f"{value:,.1f} {unit}/s/core"


def _pool_run(run: dict) -> str:
    """One pool run of the efficiency record: "2: 3.03 s (load 3.81)"."""
    wall, load = _num(run, "wall_s"), _num(run, "load_average_1m")
    text = f"{run.get('workers', '?')}: " + ("not recorded" if wall is None else f"{wall:,.2f} s")
    return text + ("" if load is None else f" (load {load:.2f})")


def _level_of(rec: dict) -> int | None:
    level = rec["details"].get("comparison_level")
    return level if level in VOLUMES else None


def scale_efficiencies(recs: list[dict]) -> dict[int, tuple[float, str]]:
    """Level -> (efficiency used, how): the level's measured `benchmark.scale_efficiency` (capped at 100%, with the
    basis the record gives), else 100% said to be assumed."""
    measured: dict[int, tuple[float, str | None]] = {}
    for r in recs:
        value, level = _num(r["details"], "efficiency"), _level_of(r)
        if r["check"] == "benchmark.scale_efficiency" and level and value is not None:
            basis = r["details"].get("efficiency_basis")
            measured[level] = (value, str(basis) if basis else None)
    return {level: used_efficiency(*measured.get(level, (None, None))) for level in VOLUMES}


def _rate_row(r: dict) -> list[str]:
    """One measured-rate row: level, document set, counts, mean document length, CPU seconds, the three rates."""
    d = r["details"]
    lengths = d.get("document_chars") if isinstance(d.get("document_chars"), dict) else {}
    mean, seconds = _num(lengths, "mean"), _num(d, "seconds")
    spread = ("not recorded" if mean is None
              else f"{mean:,.0f} ({chars(lengths.get('min'))}-{chars(lengths.get('max'))})")
    return [str(_level_of(r)), str(d.get("documents_set", "not recorded")), chars(d.get("documents")),
            chars(d.get("chars")), spread, chars(d.get("encodes")),
            "not recorded" if seconds is None else f"{seconds:,.3f} s",
            _rate(_num(d, "chars_per_s_per_core"), "chars"), _rate(_num(d, "encodes_per_s_per_core"), "encodes"),
            _rate(_num(d, "docs_per_s_per_core"), "docs"), _diffs(r)]


def scale_level_table(level: int, rates: list[dict], efficiency: tuple[float, str]) -> PerfTable:
    """The paper's volumes of `level`, each priced with every rate record of that level: core-hours = volume /
    rate / 3600, wall hours on N cores = core-hours / (N x efficiency); "not measured" without a record."""
    eff, how = efficiency
    header = ["paper's volume", "amount", "measured on", "rate per core", "core-hours"]
    header += [f"wall on {n:,} cores" for n in CLUSTER_CORES]
    body = []
    for v in VOLUMES[level]:
        for r in rates or [None]:
            d = r["details"] if r is not None else {}
            rate = _num(d, v.rate_field)
            hours = core_hours(v.amount, rate)
            body.append([v.label, v.shown, str(d.get("documents_set", "not recorded")) if d else "not measured",
                         _rate(rate, "chars" if v.unit == "characters" else "docs"),
                         "not measured" if hours is None else f"{hours:,.1f}"]
                        + [duration(wall_hours(hours, n, eff)) for n in CLUSTER_CORES])
    return PerfTable(f"{LEVEL_TITLES[level]}; efficiency {how}", header, body)


def _efficiency_row(r: dict) -> list[str]:
    """One efficiency row: the pool runs, the throughput ratio, the share of the cores the workers got, the wall and
    CPU efficiencies, the one used and why (or why nothing was measured)."""
    d = r["details"]
    runs = d.get("runs") if isinstance(d.get("runs"), list) else []
    per_wall = d.get("chars_per_wall_s") if isinstance(d.get("chars_per_wall_s"), dict) else {}
    walls = "; ".join(_pool_run(x) for x in runs if isinstance(x, dict))
    by_workers = ", ".join(f"{k}: {v:,.0f}" for k, v in per_wall.items() if isinstance(v, (int, float)))
    why = "; ".join(str(d[k]) for k in ("efficiency_basis", "efficiency_basis_why", "reason") if d.get(k))
    return [chars(d.get("comparison_level")), str(d.get("status", "not recorded")), str(d.get("shard", "not recorded")),
            chars(d.get("tasks_per_worker")), walls or "not recorded", by_workers or "not recorded",
            times(_num(d, "throughput_ratio")), share(_num(d, "cores_share")), share(_num(d, "wall_efficiency")),
            share(_num(d, "cpu_efficiency")), share(_num(d, "efficiency")), why, _diffs(r)]


def _scale_notes(rates: list[dict], effs: dict[int, tuple[float, str]]) -> list[str]:
    """The formula, the efficiency used per level, and what the rates do and do not carry over to."""
    notes = [f"Formula: {FORMULA}. Volumes from the {PAPER}; rates from the records above."]
    for level in VOLUMES:
        if not any(_level_of(r) == level for r in rates):
            notes.append(f"Level {level}: not measured (no benchmark.scale record of level {level} in this run): no "
                         "cost is stated.")
    notes.append("Efficiency used for the wall hours: "
                 + "; ".join(f"level {level} {effs[level][1]}" for level in VOLUMES) + ".")
    means = [_num(r["details"].get("document_chars") or {}, "mean") for r in rates if _level_of(r) == 1]
    if means:
        measured = ", ".join("not recorded" if m is None else f"{m:,.0f}" for m in means)
        notes.append(f"The paper's level-1 documents average {L1_MEAN_CHARS:,.0f} characters (12.3 trillion / 3.8 "
                     f"billion), the measured ones {measured}: the character rows carry over to the paper's "
                     "documents; the per-document row holds only at the measured length.")
    counts = sorted({", ".join(map(str, r["details"].get("chunk_counts") or [])) or "not recorded"
                     for r in rates if _level_of(r) == 2})
    if counts:
        notes.append("Level 2 is priced per document at the measured mean length (the paper gives the documents' "
                     "count and range, not their characters), and bounded by the range's ends at the measured "
                     "character rate; the suite's level 2 encodes each document whole once and chunked at k = "
                     f"{'; '.join(counts)}.")
    toks = sorted({str(r["tokenizer"]) for r in rates})
    if toks:
        notes.append(f"Rates measured under {', '.join(toks)} only, applied to every tokenizer of the paper's "
                     "volume; level 1's rate counts both whole encodes (subject and reference) of each document.")
    if any(r["differences"] for r in rates):
        notes.append("OUTPUTS DIFFERED from the reference in this run (see compared / differences); the rates are "
                     "shown as measured.")
    return notes


def scale_figure(recs: list[dict]) -> tuple[list[Goal], list[PerfTable], list[str], dict]:
    """The measured per-core rates of levels 1 and 2, and per level the paper's volumes priced with them: core-hours
    = volume / rate / 3600 and wall hours on N cores = core-hours / (N x efficiency). Every number is a record's,
    a paper volume, or arithmetic on them (reports.scale_on_paper); a level without a rate record says "not
    measured"."""
    rates = sorted((r for r in recs if r["check"] == "benchmark.scale" and _level_of(r)),
                   key=lambda r: (_level_of(r), str(r["details"].get("documents_set"))))
    effs = scale_efficiencies(recs)
    tables = [PerfTable("measured per-core rates (CPU seconds of one process = one core; what corpora compare runs "
                        "per unit)", ["level", "documents", "docs", "chars", "mean chars per doc (min-max)",
                                      "encodes", "CPU seconds", "chars/s/core", "encodes/s/core", "docs/s/core",
                                      "compared / differences"], [_rate_row(r) for r in rates])]
    tables += [scale_level_table(level, [r for r in rates if _level_of(r) == level], effs[level])
               for level in VOLUMES]
    eff_recs = sorted((r for r in recs if r["check"] == "benchmark.scale_efficiency"), key=lambda r: _level_of(r) or 0)
    if eff_recs:
        tables.append(PerfTable("parallel efficiency: identical units on 1 and 2 worker processes (wall efficiency = "
                                "chars per wall second with 2 workers / (2 × chars per CPU second with 1); CPU "
                                "efficiency = chars per CPU second with 2 workers / with 1)",
                                ["level", "status", "shard", "tasks per worker", "workers: wall (load average)",
                                 "chars per wall second by workers", "throughput ratio", "cores used by the workers",
                                 "wall efficiency", "CPU efficiency", "efficiency used", "basis or reason",
                                 "compared / differences"], [_efficiency_row(r) for r in eff_recs]))
    return [], tables, _scale_notes(rates, effs), {}


CAMPAIGN_GOAL_TEXT = {
    "library_share": "at least {goal:.0%} of a 1-worker campaign's checking time inside the reference library",
    "speedup": "at least {goal:.1f}x the cases per second before the array cut evaluation ({baseline})",
    "scaling_2_workers": "2 workers reach at least {goal:.1f}x the 1-worker cases per second",
}


def _baseline_text(goal: dict) -> str:
    """The speedup goal's baseline as recorded: its rate and where it was measured, or why it was not."""
    rate = goal.get("baseline_cases_per_s")
    if not isinstance(rate, (int, float)):
        return f"baseline not measured: {goal.get('baseline_error') or 'no baseline recorded'}"
    return f"{rate:.0f}/s: {goal.get('baseline') or 'source not recorded'}"


def campaign_figure(recs: list[dict]) -> tuple[list[Goal], list[PerfTable], list[str], dict]:
    """The campaign's rates per worker count, its shares of time in the reference, and its goals (computed by
    the benchmark from the same points and shown as recorded)."""
    compare = [r for r in recs if r["check"] == "benchmark.compare_workers"]
    recs = [r for r in recs if r["check"] == "benchmark.campaign"]
    rows = []
    for r in sorted(recs, key=lambda r: int(r["details"].get("workers") or 0)):
        d = r["details"]
        rows.append([str(d.get("workers")), f"{d.get('cases', 0):,}", f"{_num(d, 'cases_per_s') or 0:,.0f}",
                     f"{_num(d, 'chars_per_s') or 0:,.0f}", share(_num(d, "library_share")),
                     share(_num(d, "reference_share")), times(_num(d, "ratio_to_reference_chars_per_s")),
                     times(_num(d, "speedup_over_baseline")), _diffs(r)])
    goals = []
    recorded = recs[-1]["details"].get("goals", {}) if recs else {}
    for key, text in CAMPAIGN_GOAL_TEXT.items():
        g = recorded.get(key)
        if g is None:
            goals.append(Goal(text.format(goal=0, baseline="not measured"), "not measured", "no record"))
            continue
        status = "met" if g.get("met") else "not measured" if g.get("met") is None else "not met"
        value = g.get("value")
        detail = "not measured" if value is None else f"{value:.0%}" if key == "library_share" else f"{value:.2f}x"
        goals.append(Goal(text.format(goal=g["goal"], baseline=_baseline_text(g)), status, detail))
    ref = recs[-1]["details"].get("reference", {}) if recs else {}
    notes = [f"The reference alone encodes the same case mix at {_num(ref, 'chars_per_s') or 0:,.0f} characters per "
             "second (one thread, each text once, whole); a campaign encodes each character several times (the "
             "whole text, both sides of every accepted cut, the pieces, the chunks), so its characters per second "
             "are a fraction of that."] if ref else []
    header = ["workers", "cases", "cases/s", "chars/s", "in the reference library", "in the oracle's encodes",
              "vs the reference's chars/s", "vs before", "differences"]
    tables = [PerfTable("fuzz campaign (its own summary)", header, rows)] if rows else []
    if compare:
        crow = [[str(r["details"].get("workers")), f"{r['details'].get('units', 0):,}",
                 f"{r['details'].get('chars', 0):,}", f"{_num(r['details'], 'wall_s') or 0:,.1f} s",
                 f"{_num(r['details'], 'chars_per_s') or 0:,.0f}", _diffs(r)]
                for r in sorted(compare, key=lambda r: int(r["details"].get("workers") or 0))]
        tables.append(PerfTable("corpora compare --profile small --levels 1,2 (compared characters per wall second)",
                                ["workers", "units", "characters", "wall", "chars/s", "comparisons / differences"],
                                crow))
        g = compare[-1]["details"].get("scaling", {})
        value = g.get("value")
        goals.append(Goal(f"corpora compare: 2 workers reach at least {g.get('goal', 1.8):.1f}x the 1-worker "
                          "throughput", "met" if g.get("met") else "not measured" if g.get("met") is None
                          else "not met", "not measured" if value is None else f"{value:.2f}x"))
    return goals, tables, notes, {}


def gate_figure(recs: list[dict]) -> tuple[list[Goal], list[PerfTable], list[str], dict]:
    """The gate's wall time and, from a `benchmark.gate_durations` run, its per-test durations: the longest test,
    the total, and the wall-time bound on 64 workers, max(longest, total / 64) + collection, with its goals."""
    durations = [r for r in recs if r["check"] == "benchmark.gate_durations"]
    rows, goals, tables = [], [], []
    for r in sorted(recs, key=lambda r: str(r["details"].get("run") or r["details"].get("workers"))):
        d = r["details"]
        wall = _num(d, "wall_s")
        cmd = d.get("command")
        rows.append([str(d.get("run") or f"gate -n {d.get('workers')}"),
                     " ".join(cmd) if isinstance(cmd, list) else "not recorded",
                     "not recorded" if wall is None else f"{wall:,.1f} s ({wall / 60:.1f} min)",
                     str(d.get("outcome", "not recorded")), str(d.get("summary", ""))])
    tables.append(PerfTable("wall time of test runs", ["run", "command", "wall", "outcome", "summary"], rows))
    for r in durations:
        d = r["details"]
        longest = [[str(t["test"]), f"{t['seconds']:.1f} s"] for t in d.get("longest", [])]
        tables.append(PerfTable(
            f"gate durations ({d.get('tests', 0):,} tests, total {_num(d, 'total_test_s') or 0:,.1f} s of test time, "
            f"collection {d.get('collection_s')} s): the longest tests", ["test", "seconds"], longest))
        passed = d.get("outcome") == "passed"
        bound, longest_s = _num(d, "bound_64_s"), _num(d, "longest_s")
        goals.append(Goal(f"wall-time bound on 64 workers, {d.get('bound_of', 'max(longest, total / 64)')}, at "
                          f"most {d.get('goal_bound_s', 30):.0f} s",
                          "not measured" if bound is None else "met" if passed and bound <= d["goal_bound_s"]
                          else "not met", "not measured" if bound is None else f"{bound:.1f} s"))
        over = d.get("over_goal_longest") or []
        goals.append(Goal(f"no test over {d.get('goal_longest_s', 10):.0f} s on one worker",
                          "not measured" if longest_s is None else "met" if not over else "not met",
                          "not measured" if longest_s is None else
                          f"longest {longest_s:.1f} s ({d.get('longest_test')}); {len(over)} over the goal"))
    return goals, tables, [], {}


def peer_figure(recs: list[dict], own: list[dict]) -> tuple[list[Goal], list[PerfTable], list[str], dict]:
    """The peer's ratios next to ours at the same context and append (prose), where our run has that point."""
    tables, notes = [], []
    mine = {(d.get("context_chars"), d.get("append_chars")): d for r in own
            if r["check"] == "benchmark.repair_vs_whole" for d in [r["details"]] if d.get("text_kind") == "prose"}
    repairs = sorted((r for r in recs if r["check"] == "benchmark.peer_repair_vs_whole"),
                     key=lambda r: (r["details"].get("context_chars") or 0, r["details"].get("append_chars") or 0))
    if repairs:
        rows = []
        for r in repairs:
            d = r["details"]
            ours = mine.get((d.get("context_chars"), d.get("append_chars")))
            rows.append([f"{d.get('peer', 'peer')} {d.get('peer_version', '')}".strip(), chars(d.get("context_chars")),
                         chars(d.get("append_chars")), times(_num(d, "ratio")), times(_num(d, "in_peer_ratio")),
                         ms(_timing(d, "peer_session")), ms(_timing(d, "peer_whole")),
                         times(_num(ours, "ratio")) if ours else "not run", _diffs(r)])
        tables.append(PerfTable("peer session vs peer whole encode (prose)",
                                ["peer", "context chars", "append chars", "peer ratio (whole / session)",
                                 "inside the peer (no transport)", "peer session median", "peer whole median",
                                 "our ratio (same point)", "compared / differences"], rows))
    chunked = sorted((r for r in recs if r["check"] == "benchmark.peer_chunked"),
                     key=lambda r: (r["details"].get("chars") or 0, r["details"].get("chunks") or 0))
    if chunked:
        rows = [[f"{r['details'].get('peer', 'peer')} {r['details'].get('peer_version', '')}".strip(),
                 chars(r["details"].get("chars")), chars(r["details"].get("chunks")),
                 str(r["details"].get("workers", "not recorded")), times(_num(r["details"], "ratio")),
                 times(_num(r["details"], "in_peer_ratio")),
                 ms(_timing(r["details"], "peer_chunked")), ms(_timing(r["details"], "peer_whole")), _diffs(r)]
                for r in chunked]
        tables.append(PerfTable("peer chunked vs peer whole encode",
                                ["peer", "chars", "chunks k", "workers", "ratio (whole / chunked)",
                                 "inside the peer (no transport)", "chunked median", "whole median",
                                 "compared / differences"], rows))
    for r in recs:
        if r["check"] == "benchmark.peer":
            d = r["details"]
            notes.append(f"{d.get('peer', 'peer')}: {d.get('status', 'not recorded')}"
                         + (f" ({d['reason']})" if d.get("reason") else ""))
    if any(r["check"] != "benchmark.peer" for r in recs):
        notes.append("peer timings include the JSON round trip to the peer's process, on both sides of each ratio; "
                     "'inside the peer' is the ratio of the peer process's own times for the calls (where recorded)")
    return [], tables, sorted(notes), {}


Builder = Callable[[list[dict]], tuple[list[Goal], list[PerfTable], list[str], dict]]


def build_performance(records: list[dict], files: dict[int, str] | None = None) -> Performance:
    """The section from the benchmark records; `files` maps id(record) -> the ledger file it was read from."""
    files = files or {}
    bench = [r for r in records if r.get("level") == "benchmark"]
    if not bench:
        return Performance(False, NO_BENCHMARKS, [], [])
    figures, points = [], []
    chosen: dict[str, list[dict]] = {}
    builders: dict[str, Builder] = {"repair": repair_figure, "chunked": chunked_figure, "fallback": fallback_figure,
                                    "suite": suite_figure, "scale": scale_figure, "campaign": campaign_figure,
                                    "gate": gate_figure}
    for key, title, checks in FIGURES:
        pairs = [(files.get(id(r), UNKNOWN_FILE), r) for r in bench if r["check"] in checks]
        if not pairs:
            continue
        file, recs, ignored = latest_run(pairs)
        chosen[key] = recs
        if key == "peer":
            goals, tables, notes, plot = peer_figure(recs, chosen.get("repair", []))
        else:
            goals, tables, notes, plot = builders[key](recs)
        for series in plot.values():
            series.sort()
        figures.append(PerfFigure(key, title, source_text(recs, file, ignored), file, ignored, goals, tables, notes,
                                  dict(sorted(plot.items(), key=lambda kv: _series_order(kv[0])))))
        points += [_point(key, r, file) for r in recs]
    present = {f.key for f in figures}
    for key, title, checks in FIGURES:
        if key not in present:
            figures.append(PerfFigure(key, title, f"not in these ledgers (no {' / '.join(checks)} record)", "", [],
                                      [], [], [ABSENT[key]]))
    order = [k for k, _t, _c in FIGURES]
    figures.sort(key=lambda f: order.index(f.key))
    known = {c for _k, _t, checks in FIGURES for c in checks}
    unknown = sorted({r["check"] for r in bench} - known)
    note = f"{len(bench)} benchmark records"
    if unknown:
        note += "; checks this section does not show (see the Benchmarks rows): " + ", ".join(unknown)
    return Performance(True, note, figures, points)


def _series_order(label: str) -> tuple:
    """Series sorted by the words and numbers of their label, numbers compared as numbers ("1,300" after "400")."""
    return tuple((1, 0.0, t) if t[0].isalpha() else (0, float(t.replace(",", "")), "")
                 for t in re.findall(r"[A-Za-z]+|\d[\d,]*(?:\.\d+)?", label))
