"""The report's plots as deterministic inline SVG (matplotlib): comparisons per tokenizer, kill matrix, throughput,
benchmark figures.

Determinism: each figure gets its own `svg.hashsalt` (so ids are stable and distinct between figures on one
page), the SVG carries no date, text is emitted as text in a fixed font family, and the XML prologue and the
metadata block are stripped so the SVG can be inlined in HTML.
"""

from __future__ import annotations

import io
import math
import re

import matplotlib

matplotlib.use("Agg")

from delta_suite.reports.performance import CHUNKED_GOAL, REPAIR_GOALS, PerfFigure  # noqa: E402
from delta_suite.reports.table3 import NO_TOKENIZER, Cell, Table3  # noqa: E402
from matplotlib import rc_context  # noqa: E402
from matplotlib.colors import ListedColormap  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

FONT = "DejaVu Sans"
SECTION_COLORS = {
    "encoder": "#4c72b0",
    "chunked": "#55a868",
    "repair": "#c44e52",
    "proof": "#8172b2",
    "exhaustive": "#937860",
    "harness": "#da8bc3",
    "benchmark": "#8c8c8c",
    "other": "#ccb974",
}


def to_svg(fig: Figure, salt: str) -> str:
    """The figure as an SVG fragment for inlining: byte-stable for the same figure and salt."""
    buf = io.StringIO()
    with rc_context({"svg.hashsalt": salt, "svg.fonttype": "none", "font.family": FONT}):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": "delta-suite reports"})
    svg = buf.getvalue()
    svg = re.sub(r"<\?xml[^>]*\?>\s*", "", svg)
    svg = re.sub(r"<!DOCTYPE[^>]*>\s*", "", svg)
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.S)
    return svg.strip() + "\n"


def _figure(width: float, height: float) -> Figure:
    with rc_context({"font.family": FONT, "font.size": 9}):
        return Figure(figsize=(width, height), dpi=100, layout="constrained")


def _comparisons(cell: Cell) -> int:
    return cell.figures.comparisons if cell.figures is not None else 0


def comparisons_per_tokenizer(model: Table3) -> str:
    """Horizontal bars, one group per tokenizer, one bar per section (log scale); missing ones labelled."""
    sections = [s for s in model.sections if any(r.total.comparisons for r in s.rows)]
    names = model.columns
    labels = [t.alias for t in model.tokenizers] + [NO_TOKENIZER]
    with rc_context({"font.family": FONT, "font.size": 9}):
        fig = _figure(9.0, 0.42 * len(names) + 1.4)
        ax = fig.add_subplot()
        height = 0.8 / max(1, len(sections))
        peak = 1
        for i, sec in enumerate(sections):
            values = [sum(_comparisons(r.cells[n]) for r in sec.rows) for n in names]
            peak = max(peak, *values)
            ys = [y - 0.4 + height * (i + 0.5) for y in range(len(names))]
            ax.barh(ys, [v if v > 0 else math.nan for v in values], height=height,
                    color=SECTION_COLORS.get(sec.key, "#777777"), label=sec.key)
        ax.set_xscale("log")
        ax.set_xlim(0.8, peak * 3)
        ax.set_yticks(range(len(names)), labels)
        ax.set_ylim(len(names) - 0.5, -0.5)
        for y, name in enumerate(names):
            has = any(r.cells[name].status == "figures" for r in model.rows)
            if not has:
                t = next((t for t in model.tokenizers if t.name == name), None)
                note = "not provisioned" if t is not None and t.in_registry and not t.provisioned else "not run"
                ax.text(1.0, y, note, va="center", fontsize=8, color="#777777", style="italic")
        ax.set_xlabel("comparisons recorded (log scale; each row counts its own unit)")
        ax.set_title("Comparisons per tokenizer and level")
        if sections:
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, title="level")
        ax.grid(axis="x", color="#dddddd", linewidth=0.5)
    return to_svg(fig, "comparisons")


def kill_heatmap(model: Table3) -> str | None:
    """Controls by tokenizer: green = killed (darker = larger failing share), red = survived, grey = not run."""
    km = model.kill_matrix
    if not km.controls:
        return None
    independent_ran = any(km.cells[n][NO_TOKENIZER].status in ("killed", "survived", "redundant", "open finding")
                          for n in km.controls)
    cols = [c for c in km.columns if c != NO_TOKENIZER or independent_ran]
    aliases = {t.name: t.alias for t in model.tokenizers}
    # value scale: 0 = not run / not provisioned, 1 = survived, 2..6 = killed with increasing failing share
    # 7 = declared redundant (not killable), 8 = a stated open finding (neutral: not a failure of the suite)
    cmap = ListedColormap(["#eeeeee", "#d62728", "#c7e9c0", "#a1d99b", "#74c476", "#31a354", "#006d2c", "#c6dbef",
                           "#efe6c8"])
    grid = []
    for name in km.controls:
        line = []
        for c in cols:
            cell = km.cells[name][c]
            if cell.status == "survived":
                line.append(1)
            elif cell.status == "redundant":
                line.append(7)
            elif cell.status == "open finding":
                line.append(8)
            elif cell.status == "killed":
                share = cell.failing_share or 0.0
                line.append(2 + min(4, int(share * 5)))
            else:
                line.append(0)
        grid.append(line)
    with rc_context({"font.family": FONT, "font.size": 8}):
        fig = _figure(max(6.0, 0.85 * len(cols) + 2.5), 0.45 * len(km.controls) + 1.6)
        ax = fig.add_subplot()
        ax.pcolormesh(grid, cmap=cmap, vmin=0, vmax=8, edgecolors="white", linewidth=1.5)
        ax.invert_yaxis()
        ax.set_xticks([x + 0.5 for x in range(len(cols))], [aliases.get(c, c) for c in cols], rotation=35, ha="right")
        ax.set_yticks([y + 0.5 for y in range(len(km.controls))], km.controls)
        for y, name in enumerate(km.controls):
            for x, c in enumerate(cols):
                cell = km.cells[name][c]
                if cell.status == "killed":
                    label = f"{cell.strings_to_first_kill:,}" if cell.strings_to_first_kill is not None else "killed"
                elif cell.status == "survived":
                    label = "survived"
                elif cell.status == "redundant":
                    label = "redundant"
                elif cell.status == "open finding":
                    label = "open"
                else:
                    label = "n/p" if cell.status == "not provisioned" else "–"
                color = "white" if grid[y][x] in (1, 5, 6) else "#222222"
                ax.text(x + 0.5, y + 0.5, label, ha="center", va="center", fontsize=7, color=color)
        ax.set_title("Kill matrix: strings to first kill (green killed, darker = larger failing share; red survived; "
                     "blue declared redundant)")
    return to_svg(fig, "kill-matrix")


def throughput_plot(model: Table3) -> str | None:
    """Cases per second against cumulative campaign seconds, one line per fuzz series."""
    if not model.throughput:
        return None
    series: dict[str, list] = {}
    for p in model.throughput:
        series.setdefault(p.series, []).append(p)
    with rc_context({"font.family": FONT, "font.size": 9}):
        fig = _figure(9.0, 3.6)
        ax = fig.add_subplot()
        for name, pts in series.items():
            shown = [p for p in pts if p.cases_per_s is not None]
            ax.plot([p.at_s for p in shown], [p.cases_per_s for p in shown], marker="o", markersize=3,
                    linewidth=0.8, label=f"{name} ({pts[0].x_kind})")
        ax.set_xlabel("campaign seconds")
        ax.set_ylabel("cases per second (per batch)")
        ax.set_title("Campaign throughput over time")
        ax.grid(color="#dddddd", linewidth=0.5)
        ax.set_ylim(bottom=0)
        ax.set_xlim(left=0)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return to_svg(fig, "throughput")


def performance_plot(figure: PerfFigure) -> str | None:
    """A benchmark figure's series as lines: ratio vs context (repair, log-log, goals marked) or speedup vs chunk
    count (chunked, log2 x, goal line); None when the figure has nothing to plot."""
    series = {label: pts for label, pts in figure.plot.items() if pts}
    if not series:
        return None
    with rc_context({"font.family": FONT, "font.size": 9}):
        fig = _figure(9.0, 4.2)
        ax = fig.add_subplot()
        firsts = list(dict.fromkeys(label.split(", ")[0] for label in series))
        seconds = list(dict.fromkeys(label.split(", ", 1)[-1] for label in series))
        palette = ["#4c72b0", "#c44e52", "#55a868", "#8172b2", "#937860", "#da8bc3", "#8c8c8c", "#ccb974"]
        styles = ["-", "--", ":", "-."]
        for label, pts in series.items():
            color = palette[firsts.index(label.split(", ")[0]) % len(palette)]
            style = styles[seconds.index(label.split(", ", 1)[-1]) % len(styles)]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=3, linewidth=1.1,
                    linestyle=style, color=color, label=label)
        if figure.key == "repair":
            ax.set_xscale("log")
            ax.set_yscale("log")
            for size, minimum in REPAIR_GOALS:
                ax.plot([size], [minimum], marker="_", markersize=22, markeredgewidth=2, color="#b00020")
                ax.annotate(f"goal {minimum:g}x", (size, minimum), textcoords="offset points", xytext=(-52, -4),
                            fontsize=8, color="#b00020")
            ax.set_xlabel("context characters (log scale)")
            ax.set_ylabel("median whole / median repair (log scale)")
            ax.set_title("Repair vs whole encode: ratio by context size")
        else:
            ax.set_xscale("log", base=2)
            ax.axhline(CHUNKED_GOAL[2], color="#b00020", linewidth=0.8, linestyle=":")
            ax.axhline(1.0, color="#888888", linewidth=0.6)
            ax.annotate(f"goal {CHUNKED_GOAL[2]:g}x ({CHUNKED_GOAL[1]} workers, {CHUNKED_GOAL[0]:,} chars)",
                        (1, CHUNKED_GOAL[2]), textcoords="offset points", xytext=(2, 3), fontsize=8, color="#b00020")
            ax.set_xlabel("chunk count k (log2 scale)")
            ax.set_ylabel("median serial / median chunked")
            ax.set_title("Chunked encode: speedup over one serial encode by chunk count")
            ax.set_ylim(bottom=0)
        xs = sorted({p[0] for pts in series.values() for p in pts})
        ax.set_xticks(xs, [_size_label(x) for x in xs])
        ax.minorticks_off()
        ax.grid(color="#dddddd", linewidth=0.5)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return to_svg(fig, f"performance-{figure.key}")


def _size_label(x: float) -> str:
    """16000 -> 16K, 1000000 -> 1M, 8 -> 8."""
    for scale, suffix in ((1e6, "M"), (1e3, "K")):
        if x >= scale:
            return f"{x / scale:g}{suffix}"
    return f"{x:g}"
