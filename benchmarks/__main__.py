"""`python -m delta_suite.benchmarks`: run the benchmark figures and append their records to a ledger.

Figures: repair (repair vs whole encode), chunked (chunked encode at 1 and 2 workers, each in its own process),
fallback (fallback confinement), suite (differential-check throughput; with --with-gate also the exhaustive
the gate's per-test durations and its 64-worker bound), peer (toktier, where installed),
scale (per-core throughput of corpus levels 1 and 2, for the paper's volumes), campaign (a `fuzz` campaign at 1 and
2 workers: cases/s, reference share, ratio to the reference's speed), whole-word (a whole-word tokenizer, named by
--tokenizer as a registry name or a path: chunked encode and repair against a whole encode, and the share of free
pairs, `benchmarks.whole_word`; run only when named with --only). Ratios only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

from delta_suite.benchmarks import campaign, gate_durations, scale, suite, whole_word
from delta_suite.frozen.errors import SuiteError
from delta_suite.frozen.loader import load_tokenizer
from delta_suite.ledger.records import append_records

FIGURES = ("repair", "chunked", "fallback", "suite", "peer", "scale", "campaign")
ON_REQUEST = ("whole-word",)  # run only when named by --only
DEFAULT_OUT = Path("out/ledgers/benchmarks")
NFC_FALLBACK_TOKENIZER = "qwen3_8b"


def build_parser() -> argparse.ArgumentParser:
    """The command line of `python -m delta_suite.benchmarks`."""
    parser = argparse.ArgumentParser(prog="python -m delta_suite.benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes and few repetitions (for tests)")
    parser.add_argument("--only", choices=FIGURES + ON_REQUEST, action="append",
                        help="run only this figure (repeatable)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="ledger directory (default %(default)s)")
    parser.add_argument("--with-gate", action="store_true",
                        help="also run the default gate once at -n 2 and record its per-test durations, the longest "
                             "test and the wall-time bound on 64 workers (about 10 minutes)")
    parser.add_argument("--tokenizer", default="qwen3_8b", help="tokenizer (default %(default)s)")
    return parser


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    return build_parser().parse_args(argv)


def figure_runners(args: argparse.Namespace) -> dict[str, Callable[[], list[dict]]]:
    """Figure name -> a call returning its records."""
    if args.only and set(args.only) <= set(ON_REQUEST):  # a whole-word file: a path, resolved in the child
        return {"whole-word": lambda: whole_word.whole_word_figures(args.tokenizer, args.quick)}
    tok = load_tokenizer(args.tokenizer)
    plan = suite.QUICK if args.quick else suite.DEFAULT
    nfc_name = tok.name if tok.is_nfc else NFC_FALLBACK_TOKENIZER
    workers = plan.chunked_workers

    def suite_figure() -> list[dict]:
        return suite.suite_throughput(tok, plan) + (gate_durations.gate_durations(2) if args.with_gate else [])

    def pooled() -> list[dict]:
        """chunked at each worker count; fallback (one worker) in the same process when the tokenizer is NFC."""
        chosen = args.only or FIGURES
        out: list[dict] = []
        together = "fallback" in chosen and nfc_name == tok.name
        for w in workers if "chunked" in chosen else ():
            figures = ["chunked", "fallback"] if together and w == 1 else ["chunked"]
            out += suite.run_in_pool(figures, tok.name, args.quick, w)
        if "fallback" in chosen and not (together and 1 in workers and "chunked" in chosen):
            out += suite.run_in_pool(["fallback"], nfc_name, args.quick, 1)
        return out

    return {
        "repair": lambda: suite.repair_vs_whole(tok, plan),
        "pooled": pooled,
        "suite": suite_figure,
        "peer": lambda: suite.peer_figures(tok, plan),
        "scale": lambda: scale.scale_figures(tok, args.quick),
        "campaign": lambda: campaign.campaign_figures(tok, args.quick),
        "whole-word": lambda: whole_word.whole_word_figures(args.tokenizer, args.quick),
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        runners = figure_runners(args)
    except SuiteError as exc:
        print(f"benchmarks: {exc}", file=sys.stderr)
        return 2
    ledger = args.out / f"benchmarks-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}.jsonl"
    chosen = args.only or FIGURES
    groups = [g for g in ("repair", "pooled", "suite", "peer", "scale", "campaign", "whole-word")
              if g in chosen or (g == "pooled" and {"chunked", "fallback"} & set(chosen))]
    for name in groups:
        if args.quick and name == "peer":
            continue  # a peer starts its own environment and process: not for the quick run
        start = time.perf_counter()
        try:
            records = runners[name]()
        except SuiteError as exc:
            print(f"benchmarks: {name}: {exc}", file=sys.stderr)
            return 2
        append_records(ledger, records)
        print(f"{name}: {len(records)} records in {time.perf_counter() - start:.1f}s -> {ledger}", flush=True)
        for rec in records:
            print("  " + summary_line(rec), flush=True)
    return 0


def summary_line(rec: dict) -> str:
    """One line per record: its check, parameters and ratio."""
    d = rec["details"]
    keys = ("text_kind", "context_chars", "append_chars", "chars", "chunks", "workers", "path", "run", "status")
    params = " ".join(f"{k}={d[k]}" for k in keys if k in d)
    extra = ""
    if "chunked" in d.get("timings", {}) and d["timings"]["chunked"].get("cpu_over_wall") is not None:
        extra += f" cpu/wall={d['timings']['chunked']['cpu_over_wall']:.2f}"
    if "splice_ratio" in d:
        extra += f" splice_ratio={d['splice_ratio']:.0f}x"
    if d.get("in_peer_ratio"):
        extra += f" in_peer={d['in_peer_ratio']:.2f}x"
    if "ratio_same_call" in d:
        extra += f" same_call={d['ratio_same_call']:.2f}x"
    if "planning_share" in d:
        extra += f" planning={d['planning_share']:.1%}"
    if "fit" in d:
        extra += f" c={d['fit']['c_s_per_chunk'] * 1e3:.3f}ms T1={d['fit']['T1_s']:.3f}s"
    if "suite_overhead" in d:
        extra += (f" suite_overhead={d['suite_overhead']:.1%} with_subject={d['overhead_with_subject']:.1%}"
                  f" check={d['check_chars_per_s_per_core']:.0f}chars/s/core")
    if "repair_growth" in d:
        extra += f" repair_growth={d['repair_growth']:.1f}x whole_growth={d['whole_growth']:.1f}x" \
                 f" over context_growth={d['context_growth']:.1f}x"
    if "clean_ratio" in d:
        extra += f" clean_ratio={d['clean_ratio']:.2f}x [{d['label']}]"
    if d.get("figure") == "campaign":
        g = d["goals"]
        extra += (f" cases/s={d['cases_per_s'] or 0:.0f} chars/s={d['chars_per_s'] or 0:.0f}"
                  f" library_share={d['library_share'] or 0:.0%} oracle_share={d['reference_share'] or 0:.0%}"
                  f" vs_reference={d['ratio_to_reference_chars_per_s'] or 0:.2f}x"
                  f" speedup={d['speedup_over_baseline'] or 0:.2f}x"
                  f" baseline={(d.get('baseline') or {}).get('cases_per_s') or 0:.0f}cases/s"
                  + "".join(f" {k}:{'met' if v['met'] else 'not met' if v['met'] is False else 'n/a'}"
                            for k, v in g.items()))
    if d.get("figure") == "gate_durations":
        extra += (f" tests={d.get('tests')} total={d.get('total_test_s')}s longest={d.get('longest_s')}s"
                  f" bound64={d.get('bound_64_s')}s goal={'met' if d.get('goal_met') else 'not met'}")
    if "wall_s" in d:
        extra += f" wall={d['wall_s']:.1f}s rc={d['returncode']}"
    if d.get("figure") == "whole_word_free_share":
        extra += f" free_pairs={d['free_share']:.1%} accepted={d['accepted_share']:.1%}"
    ratio = f" ratio={d['ratio']:.2f}x" if isinstance(d.get("ratio"), float) else ""
    diffs = f" DIFFERENCES={rec['differences']}" if rec["differences"] else ""
    return f"{rec['check']} {params}{ratio}{extra}{diffs}"


if __name__ == "__main__":
    raise SystemExit(main())
