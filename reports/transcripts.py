"""Level 3's turn-by-turn transcript replay by front end, from records, beside the paper's figures.

The figures come from corpus records of level 3 (`corpora.compare`, check corpus.session_replay) whose
`details.front_ends` hold, per variant ("clean", "accent", or "chat" for the corpus's short chats) and front end
(reference, chunked, session), the turns, fast-path and fallback counts, differences and raw costs. Medians are
taken over the raw figures of every record (never medians of medians). Two sources are kept apart: this report's
own records, and the committed results of a recorded full-set run (`results/transcript-replay-full.json`, made by
`python -m delta_suite.reports.transcripts --from LEDGER`), shown as recorded, never counted in Table 3.

The paper's figures (§4.3, "Cutting at role markers ..."): 610 transcripts, 330K characters at the median; a turn
with 250-500K characters of history takes 4.0 ms with cuts and 2.3 ms incrementally at the median; the median
transcript costs 79 and 63 ms of CPU; with one decomposed accent 363 against 64 ms over a transcript; on eight
transcripts that contain such a character on their own the cuts fall back on 257 turns and the incremental path
on 11. Its stateless path runs a fast encoder that falls back to the reference per chunk; this suite's chunked
front end encodes every chunk with the reference, so its "fallback" means only that no cut was found.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path

FRONT_ENDS = ("reference", "chunked", "session")
RESULTS_FILE = Path(__file__).resolve().parent / "results" / "transcript-replay-full.json"
RESULTS_SCHEMA = "delta-suite.transcript-results.v1"

PAPER = {
    "transcripts": "610 transcripts, 330K characters at the median",
    "ms_per_turn_250k_500k": {"chunked": 4.0, "session": 2.3},
    "cpu_ms_per_transcript": {"chunked": 79.0, "session": 63.0},
    "accent_cpu_ms_per_transcript": {"chunked": 363.0, "session": 64.0},
    "own_accent_fallback_turns": {"chunked": 257, "session": 11},
}


@dataclass(frozen=True)
class FrontEndFigures:
    """One (tokenizer, variant, front end) over every record that holds it."""

    tokenizer: str
    variant: str
    front_end: str
    transcripts: int
    turns: int
    fast_path: int | None
    fallbacks: int | None
    differences: int | None  # None for the reference (it is the oracle: cost only)
    cpu_ms_per_transcript: float | None
    ms_per_turn: float | None
    ms_per_turn_250k_500k: float | None
    turns_250k_500k: int
    special_token_cuts: int | None
    transition_cuts: int | None
    by_path: dict[str, tuple[int, float | None]] | None = None  # session: path kind -> (turns, median ms per turn)


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


def transcript_figures(records: list[dict]) -> list[FrontEndFigures]:
    """The figures of every level-3 record with `details.front_ends`, per (tokenizer, variant, front end)."""
    acc: dict[tuple[str, str, str], dict] = defaultdict(lambda: defaultdict(list))
    for rec in records:
        fronts = (rec.get("details") or {}).get("front_ends")
        if not isinstance(fronts, dict):
            continue
        for variant, ends in fronts.items():
            for name, f in (ends or {}).items():
                a = acc[(str(rec.get("tokenizer")), variant, name)]
                for key in ("turns", "fast_path", "fallbacks", "differences", "transcripts",
                            "turns_history_250k_500k"):
                    a[key].append(int(f.get(key) or 0))
                cuts = f.get("cuts") or {}
                a["special"].append(int(cuts.get("special_token", 0)))
                a["transition"].append(int(cuts.get("transition", 0)) + int(cuts.get("free_pair", 0)))
                a["cpu"].extend(f.get("cpu_seconds_per_transcript") or [])
                a["turn_ms"].extend(f.get("ms_per_turn") or [])
                a["band_ms"].extend(f.get("ms_per_turn_history_250k_500k") or [])
                for kind, ms in (f.get("ms_per_turn_by_path") or {}).items():
                    a[f"path:{kind}"].extend(ms)
    out = []
    order = {v: i for i, v in enumerate(("clean", "accent", "chat"))}
    for (tok, variant, name), a in sorted(acc.items(), key=lambda kv: (kv[0][0], order.get(kv[0][1], 9),
                                                                       FRONT_ENDS.index(kv[0][2])
                                                                       if kv[0][2] in FRONT_ENDS else 9)):
        oracle = name == "reference"
        cpu = statistics.median(a["cpu"]) if a["cpu"] else None  # seconds, unrounded until shown in ms
        out.append(FrontEndFigures(
            tokenizer=tok, variant=variant, front_end=name, transcripts=sum(a["transcripts"]), turns=sum(a["turns"]),
            fast_path=None if oracle else sum(a["fast_path"]), fallbacks=None if oracle else sum(a["fallbacks"]),
            differences=None if oracle else sum(a["differences"]),
            cpu_ms_per_transcript=round(cpu * 1000, 2) if cpu is not None else None,
            ms_per_turn=_median(a["turn_ms"]), ms_per_turn_250k_500k=_median(a["band_ms"]),
            turns_250k_500k=sum(a["turns_history_250k_500k"]),
            special_token_cuts=sum(a["special"]) if name == "chunked" else None,
            transition_cuts=sum(a["transition"]) if name == "chunked" else None,
            by_path={k.removeprefix("path:"): (len(v), _median(v)) for k, v in sorted(a.items())
                     if k.startswith("path:")} or None,
        ))
    return out


def figure_rows(figures: list[FrontEndFigures]) -> list[list[str]]:
    """The figures as table cells (the Markdown and HTML reports share them)."""
    def num(x, fmt="{:,}") -> str:
        return "-" if x is None else fmt.format(x)
    rows = []
    for f in figures:
        cuts = (f"{f.special_token_cuts:,} / {f.transition_cuts:,}" if f.special_token_cuts is not None else "-")
        paths = "; ".join(f"{k} {n:,}: {num(m, '{:,.2f}')}" for k, (n, m) in (f.by_path or {}).items()) or "-"
        rows.append([f.tokenizer, f.variant, f.front_end, num(f.transcripts), num(f.turns), num(f.fast_path),
                     num(f.fallbacks), "oracle" if f.differences is None else num(f.differences),
                     num(f.cpu_ms_per_transcript, "{:,.1f}"), num(f.ms_per_turn, "{:,.2f}"),
                     num(f.ms_per_turn_250k_500k, "{:,.2f}")
                     + (f" ({f.turns_250k_500k:,})" if f.turns_250k_500k else ""),
                     cuts, paths])
    return rows


FIGURE_HEADER = ["tokenizer", "variant", "front end", "transcripts", "turns", "fast path", "fell back", "differences",
                 "CPU ms / transcript (median)", "ms / turn (median)", "ms / turn, 250-500K history (turns)",
                 "cuts at markers / at transitions or free pairs", "session turns by path: count: ms (median)"]


PAPER_SENTENCE = (
    "The paper (610 transcripts, 330K characters at the median): a turn with 250-500K characters of history takes "
    "4.0 ms with cuts and 2.3 ms incrementally (medians); the median transcript costs 79 and 63 ms of CPU; with one "
    "decomposed accent in the first message, 363 against 64 ms; on eight transcripts with such a character of their "
    "own the cuts fall back on 257 turns and the incremental path on 11.")


@dataclass(frozen=True)
class Recorded:
    """The committed results of a recorded full-set run: how it was run, and its figures."""

    path: str
    about: dict
    figures: list[FrontEndFigures]


def recorded_sentence(rec: Recorded) -> str:
    """One line on where the recorded figures come from and what they counted."""
    a = rec.about
    return (f"From {Path(rec.path).parent.name}/{Path(rec.path).name}: {a.get('records')} records, "
            f"{a.get('comparisons', 0):,} comparisons, {a.get('differences', 0):,} differences, "
            f"{a.get('characters_encoded_by_reference', 0):,} characters; reference {a.get('reference_version')}. "
            f"{a.get('note', '')}").rstrip()


def read_results(path: Path = RESULTS_FILE) -> Recorded | None:
    """The committed results file, or None when there is none (a report then says so)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    if not isinstance(data, dict) or data.get("schema") != RESULTS_SCHEMA:
        return None
    figures = [FrontEndFigures(**{**f, "by_path": {k: tuple(v) for k, v in (f.get("by_path") or {}).items()} or None})
               for f in data.get("figures", [])]
    return Recorded(str(path), data.get("about", {}), figures)


def write_results(ledger: Path, out: Path, note: str = "") -> Path:
    """Summarize a level-3 corpus ledger (the full transcript set's run) into the committed results file."""
    records = [json.loads(line) for line in ledger.read_text(encoding="utf-8").splitlines() if line.strip()]
    records = [r for r in records if (r.get("details") or {}).get("front_ends")
               and str((r.get("details") or {}).get("shard", "")).startswith("full-")]
    if not records:
        raise ValueError(f"{ledger}: no level-3 records of the full transcript set")
    d0 = records[0]["details"]
    about = {
        "what": "the full transcript set (delta_suite.corpora.transcripts profile full) replayed turn by turn through "
                "three "
                "front ends; every turn of the chunked and session front ends compared with the whole reference",
        "records": len(records), "parts": sorted(r["details"]["shard"] for r in records),
        "tokenizers": sorted({r["tokenizer"] for r in records}),
        "comparisons": sum(r["comparisons"] for r in records), "differences": sum(r["differences"] for r in records),
        "characters_encoded_by_reference": sum(r["details"]["characters"] for r in records),
        "suite_digest": d0.get("suite_digest"), "reference_version": d0.get("reference_version"),
        "machine": f"{platform.machine()}, {platform.python_implementation()} {platform.python_version()}",
        "note": note,
    }
    payload = {"schema": RESULTS_SCHEMA, "about": about,
               "figures": [asdict(f) for f in transcript_figures(records)]}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m delta_suite.reports.transcripts",
                                     description="Write the committed results file of a full transcript-set run.")
    parser.add_argument("--from", dest="ledger", required=True, help="the run's corpus-ledger.jsonl")
    parser.add_argument("--to", default=str(RESULTS_FILE), help=f"results file (default {RESULTS_FILE})")
    parser.add_argument("--note", default="", help="how the run was made (machine load, workers)")
    args = parser.parse_args(argv)
    try:
        path = write_results(Path(args.ledger), Path(args.to), args.note)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 3
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
