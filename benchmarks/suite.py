"""The benchmark figures, one runner each, every result a ledger record of kind and level "benchmark".

Figures (checks): `benchmark.repair_vs_whole` (+ `benchmark.repair_growth`), `benchmark.chunked` (+
`benchmark.chunked_fit`), `benchmark.fallback_confinement`, `benchmark.suite_throughput`,
`benchmark.peer_repair_vs_whole` and `benchmark.peer_chunked` (or `benchmark.peer` "not installed"). Every record
says what it timed, the sizes and repetitions, median/min/max per candidate, the ratio, and how many outputs it
compared with the reference (`comparisons`, `differences`): a figure whose outputs differ is still recorded, with
its differences, never dropped.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from delta_suite.benchmarks.measure import Candidate, Timing, interleaved, machine, ratio, tokenizer_facts
from delta_suite.benchmarks.texts import appended, source, text_digest, text_of
from delta_suite.checks.battery import case_bytes, iter_battery
from delta_suite.checks.differential import ReferenceMemo, check_cut_case, check_repair_case
from delta_suite.delta.cuts import encode_chunked, encode_rows, plan_cuts
from delta_suite.delta.session import Session, SessionStats
from delta_suite.frozen.loader import FrozenTokenizer, load_tokenizer
from delta_suite.ledger.records import make_record
from delta_suite.spec.reference import check_text, reference_encode, unit_lengths
from delta_suite.spec.repair import repair_splice
from delta_suite.subjects.by_name import get_subject
from delta_suite.subjects.protocol import SubjectUnavailable

KIND = LEVEL = "benchmark"
REPO = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Plan:
    """Sizes and repetitions of one run (`DEFAULT` or `QUICK`)."""
    repair_sizes: tuple[int, ...]
    repair_appends: tuple[int, ...]
    repair_kinds: tuple[str, ...]
    repair_reps: int
    chunked_sizes: tuple[int, ...]
    chunk_counts: tuple[int, ...]
    chunk_counts_by_size: dict  # size -> chunk counts, where fewer than `chunk_counts` (time budget)
    chunked_workers: tuple[int, ...]
    chunked_reps: dict  # size -> repetitions
    fallback_size: int
    fallback_chunks: int
    fallback_reps: int
    suite_reps: int
    suite_cases: int | None  # battery cases used (None = the whole ci battery)
    peer_sizes: tuple[int, ...]
    peer_chunked_size: int
    peer_reps: int


DEFAULT = Plan(
    repair_sizes=(16_000, 100_000, 400_000, 1_000_000),
    repair_appends=(1, 400, 1_300),
    repair_kinds=("prose", "code", "chat"),
    repair_reps=3,
    chunked_sizes=(64_000, 256_000, 1_000_000, 4_000_000),
    chunk_counts=(1, 2, 4, 8, 16, 32),
    chunk_counts_by_size={4_000_000: (1, 2, 16)},  # a 4M-character encode takes ~4-15 s here: one repetition
    chunked_workers=(1, 2),
    chunked_reps={64_000: 5, 256_000: 5, 1_000_000: 3, 4_000_000: 1},
    fallback_size=1_000_000,
    fallback_chunks=16,
    fallback_reps=2,
    suite_reps=7,
    suite_cases=None,
    peer_sizes=(16_000, 100_000, 400_000, 1_000_000),
    peer_chunked_size=1_000_000,
    peer_reps=3,
)
QUICK = Plan(
    repair_sizes=(4_000, 16_000),
    repair_appends=(1, 400),
    repair_kinds=("prose", "chat"),
    repair_reps=2,
    chunked_sizes=(16_000,),
    chunk_counts=(1, 2, 4),
    chunk_counts_by_size={},
    chunked_workers=(1,),
    chunked_reps={16_000: 2},
    fallback_size=16_000,
    fallback_chunks=4,
    fallback_reps=2,
    suite_reps=1,
    suite_cases=12,
    peer_sizes=(),
    peer_chunked_size=0,
    peer_reps=1,
)


def record(check: str, tok: FrozenTokenizer | None, details: dict, comparisons: int = 0, differences: int = 0,
           unit: str = "encodes", fast_path: int | None = None, fallbacks: int | None = None,
           oracle: str | None = None) -> dict:
    """One benchmark ledger record; details always carry the machine facts. `oracle` (ledger.records.ORACLES):
    given, or by default "reference" when the figure compared outputs (every timed output of these figures is
    compared with a whole reference encode) and "none" when it compared nothing."""
    return make_record(
        KIND, LEVEL, check,
        tokenizer=tok.name if tok else None, tokenizer_sha256=tok.sha256 if tok else None,
        comparisons=comparisons, differences=differences, unit=unit, fast_path=fast_path, fallbacks=fallbacks,
        details={**machine(), **details}, oracle=oracle or ("reference" if comparisons else "none"),
    )


def _timings(timings: dict[str, Timing]) -> dict:
    return {name: t.as_json() for name, t in timings.items()}


def _source_facts(kind: str) -> dict:
    return {"text_kind": kind, "text_source": source(kind).origin}


# ---------------------------------------------------------------- (1) repair vs whole encode


def repair_vs_whole(tok: FrozenTokenizer, plan: Plan) -> list[dict]:
    """A Session holding `size` characters, extended by an append: the repair call against a whole reference
    encode of the same new text (interleaved; outputs compared each repetition)."""
    out: list[dict] = []
    for kind in plan.repair_kinds:
        growth: dict[int, dict[str, dict]] = {length: {} for length in plan.repair_appends}
        for size in plan.repair_sizes:
            old = text_of(kind, size, tok)
            base = Session(tok)
            base.encode(old)  # the stored state every repetition starts from (copied, untimed)
            for length in plan.repair_appends:
                rec = _repair_point(tok, plan, base, kind, old, length)
                growth[length][str(size)] = {k: rec["details"][k] for k in ("ratio",)} | {
                    "repair_median_s": rec["details"]["timings"]["repair"]["median_s"],
                    "whole_median_s": rec["details"]["timings"]["whole"]["median_s"]}
                out.append(rec)
        for length, by_size in growth.items():
            sizes = sorted(int(s) for s in by_size)
            first, last = by_size[str(sizes[0])], by_size[str(sizes[-1])]
            out.append(record(
                "benchmark.repair_growth", tok,
                {**tokenizer_facts(tok), "text_kind": kind, "append_chars": length, "by_context": by_size,
                 "repair_growth": last["repair_median_s"] / first["repair_median_s"],
                 "whole_growth": last["whole_median_s"] / first["whole_median_s"],
                 "context_growth": sizes[-1] / sizes[0], "ratio": last["ratio"],
                 "ratio_of": "ratio at the largest context; growth = median at largest / at smallest context"},
                unit="figures",
            ))
    return out


def _repair_point(tok: FrozenTokenizer, plan: Plan, base, kind: str, old: str, length: int) -> dict:
    """One (context, append) point of the repair figure: repair vs whole (and the splice alone), interleaved,
    outputs compared (the splice must take the session's path)."""

    def fresh_session(rep: int):
        session = copy.copy(base)
        session.ids, session.spans, session.stats = list(base.ids), list(base.spans), SessionStats()
        return session, old + appended(kind, length, rep)

    paths: Counter = Counter()
    diffs = [0]

    def compare(rep: int, results: dict) -> None:
        repaired, path = results["repair"]
        paths[path] += 1
        diffs[0] += repaired != results["whole"]

    cands = [
        Candidate("repair", lambda a: (a[0].encode(a[1]), a[0].last_path), fresh_session),
        Candidate("whole", lambda new: reference_encode(tok, new), lambda rep: old + appended(kind, length, rep)),
    ]
    t = interleaved(cands, plan.repair_reps, compare)
    # the splice alone, beside the repair call and away from the whole encode (a call right after a whole encode
    # of this size pays for the memory it released; both millisecond candidates are timed in the same conditions)
    spliced = Counter()
    beside = interleaved([
        Candidate("repair_beside_splice", lambda a: a[0].encode(a[1]), fresh_session),
        Candidate("splice", lambda d: repair_splice(tok, old, base.ids, base.spans, d).path,
                  lambda rep: appended(kind, length, rep)),
    ], plan.repair_reps, each=lambda name, out: spliced.update([out]) if name == "splice" else None)
    t.update(beside)
    diffs[0] += sum(n for p, n in spliced.items() if p not in paths)  # the splice must take the session's path
    repaired = sum(n for p, n in paths.items() if p.startswith("repaired"))
    return record(
        "benchmark.repair_vs_whole", tok,
        {**tokenizer_facts(tok), **_source_facts(kind), "figure": "repair_vs_whole",
         "context_chars": len(old), "append_chars": length, "tokens": len(base.ids),
         "text_sha256": text_digest(old), "repetitions": plan.repair_reps,
         "timed": {"repair": "Session.encode(old + append) on a session holding old",
                   "whole": "delta_suite.spec.reference.reference_encode(old + append)",
                   "splice": "delta_suite.spec.repair.repair_splice alone: the edit of the stored stream, without "
                             "confirming "
                             "the prefix and building the returned list (timed beside the repair call, "
                             "repair_beside_splice, in a second interleaved run)"},
         "timings": _timings(t), "ratio": ratio(t["whole"], t["repair"]),
         "ratio_of": "median(whole) / median(repair)", "paths": dict(paths),
         "compared": "each repetition: the repair's IDs with the whole encode's, the splice's path with the "
                     "session's paths",
         "splice_ratio": ratio(t["whole"], t["splice"]),
         "splice_ratio_of": "median(whole) / median(splice): the part that stays near constant with the context"},
        comparisons=2 * plan.repair_reps, differences=diffs[0], unit="encodes",
        fast_path=repaired, fallbacks=plan.repair_reps - repaired,
    )


# ---------------------------------------------------------------- (2) chunked encode, (3) fallback confinement


def fit_cost_model(ks: list[int], seconds: list[float], workers: int) -> dict:
    """Least-squares fit of T(k) = T1/min(k, workers) + c*k (the paper's T1/k + c*k with k capped at the cores
    that can run at once); returns T1, c and the residual."""
    a = np.array([[1.0 / min(k, workers), float(k)] for k in ks])
    y = np.array(seconds)
    coef, residual, _, _ = np.linalg.lstsq(a, y, rcond=None)
    c = float(coef[1])
    return {"T1_s": float(coef[0]), "c_s_per_chunk": c,
            "residual_s2": float(residual[0]) if len(residual) else 0.0,
            "model": "T(k) = T1/min(k, workers) + c*k",
            "reading": "c < 0: no per-chunk cost measurable; the pieces encode faster per character than the whole "
                       "text, which the model has no term for" if c < 0 else "c = the cost of one more chunk"}


def chunked_figure(tok: FrozenTokenizer, plan: Plan, workers: int) -> list[dict]:
    """encode_chunked at each chunk count against one serial reference encode of the same text, planning timed
    separately; run in a process whose Rust pool has `workers` threads."""
    out: list[dict] = []
    for size in plan.chunked_sizes:
        text = text_of("prose", size)
        reps = plan.chunked_reps.get(size, 3)
        counts = plan.chunk_counts_by_size.get(size, plan.chunk_counts)
        want = reference_encode(tok, text)  # also warms the reference's caches for both sides
        encode_chunked(tok, text[: min(size, 20_000)], chunks=2, workers=workers)  # starts the Rust pool, untimed
        diffs: Counter = Counter()

        def same(name: str, ids, want=want, diffs=diffs) -> None:
            if not name.startswith("plan"):  # serial_ids too: its IDs must equal the reference's
                diffs[name] += ids != want

        cands = [Candidate("serial", lambda t: reference_encode(tok, t), lambda rep, text=text: text),
                 Candidate("serial_ids", lambda t: encode_rows(tok, [t])[0], lambda rep, text=text: text)]
        for k in counts:
            cands.append(Candidate(f"chunked_k{k}", lambda t, k=k: encode_chunked(tok, t, chunks=k, workers=workers),
                                   lambda rep, text=text: text))
            cands.append(Candidate(f"plan_k{k}", lambda t, k=k: plan_cuts(tok, t, k), lambda rep, text=text: text))
        t = interleaved(cands, reps, each=same)
        ks, medians = [], []
        for k in counts:
            chunked, planning = t[f"chunked_k{k}"], t[f"plan_k{k}"]
            cuts = plan_cuts(tok, text, k)
            ks.append(k)
            medians.append(chunked.median)
            out.append(record(
                "benchmark.chunked", tok,
                {**tokenizer_facts(tok), "figure": "chunked", "chars": size, "chunks": k, "workers": workers,
                 "cuts_found": len(cuts), "text_kind": "prose", "text_sha256": text_digest(text),
                 "tokens": len(want), "repetitions": reps,
                 "timed": {"serial": "reference_encode(text)",
                           "serial_ids": "delta_suite.delta.cuts.encode_rows([text]): the chunked encoder's own "
                                         "library call "
                                         "(IDs only) on the whole text, serially",
                           "chunked": f"delta_suite.delta.cuts.encode_chunked(text, chunks={k}) with "
                                      f"RAYON_NUM_THREADS={workers}",
                           "plan": f"delta_suite.delta.cuts.plan_cuts(text, {k}) alone"},
                 "timings": {"serial": t["serial"].as_json(), "serial_ids": t["serial_ids"].as_json(),
                             "chunked": chunked.as_json(), "plan": planning.as_json()},
                 "ratio": ratio(t["serial"], chunked), "ratio_of": "median(serial) / median(chunked)",
                 "ratio_same_call": ratio(t["serial_ids"], chunked),
                 "ratio_same_call_of": "median(serial_ids) / median(chunked): the gain from cutting alone",
                 "planning_share": planning.median / chunked.median if chunked.median else None},
                comparisons=reps, differences=diffs[f"chunked_k{k}"], unit="encodes",
                fast_path=reps if cuts else 0, fallbacks=0 if cuts else reps,
            ))
        out.append(record(
            "benchmark.chunked_fit", tok,
            {**tokenizer_facts(tok), "chars": size, "workers": workers, "chunks": ks, "medians_s": medians,
             "serial_median_s": t["serial"].median, "fit": fit_cost_model(ks, medians, workers),
             "repetitions": reps},
            unit="figures",
        ))
        del want, t
    return out


def decomposed_document(size: int) -> str:
    """`size` characters of prose with exactly one decomposed accent (e + U+0301, not NFC) in the middle."""
    text = text_of("prose", size)
    mid = size // 2
    return text[:mid] + "e\u0301" + text[mid + 2 :]


def fallback_confinement(tok: FrozenTokenizer, plan: Plan) -> list[dict]:
    """A document with one non-NFC sequence under an NFC tokenizer, whole against cut into chunks, one core.

    The minimal implementation has no fast encoder and therefore no guard: both sides are the reference's own
    encode (the chunked side through its batch path), so there is no slow path to confine. The ratio measured
    is what chunking costs or saves on one core with such a character present, next to the same document
    without it."""
    size, k = plan.fallback_size, plan.fallback_chunks
    dirty, clean = decomposed_document(size), text_of("prose", size)
    want = reference_encode(tok, dirty)
    diffs = [0]

    def same(name: str, ids) -> None:
        if name == "cut_dirty":
            diffs[0] += ids != want

    cands = [
        Candidate("whole_dirty", lambda _: reference_encode(tok, dirty)),
        Candidate("cut_dirty", lambda _: encode_chunked(tok, dirty, chunks=k, workers=1)),
        Candidate("whole_clean", lambda _: reference_encode(tok, clean)),
        Candidate("cut_clean", lambda _: encode_chunked(tok, clean, chunks=k, workers=1)),
    ]
    t = interleaved(cands, plan.fallback_reps, each=same)
    return [record(
        "benchmark.fallback_confinement", tok,
        {**tokenizer_facts(tok), "figure": "fallback_confinement", "chars": size, "chunks": k, "workers": 1,
         "normalizer": tok.normalizer, "cuts_found": len(plan_cuts(tok, dirty, k)),
         "non_nfc_at": size // 2, "text_sha256": text_digest(dirty), "repetitions": plan.fallback_reps,
         "timings": _timings(t), "ratio": ratio(t["whole_dirty"], t["cut_dirty"]),
         "ratio_of": "median(whole_dirty) / median(cut_dirty)",
         "clean_ratio": ratio(t["whole_clean"], t["cut_clean"]),
         "dirty_cost_whole": ratio(t["whole_dirty"], t["whole_clean"]),
         "label": "no guard in the minimal implementation: nothing to confine; both sides are reference encodes, "
                  "the ratio is chunking on one core with one non-NFC character present"},
        comparisons=plan.fallback_reps, differences=diffs[0], unit="encodes",
    )]


# ---------------------------------------------------------------- (4) the suite itself


class TimedMemo:
    """A checks.differential.ReferenceMemo that times its reference encodes in place: the library call and its IDs (what
    `spec.reference.reference_encode` returns, input validation included) count as reference time; grouping into
    units and reading offsets are the suite's own work and are not counted."""

    def __new__(cls, tok: FrozenTokenizer):

        class _Timed(ReferenceMemo):
            def __init__(self, tok: FrozenTokenizer) -> None:
                super().__init__(tok)
                self.seconds = 0.0
                self.calls = 0

            def _encode(self, text: str):
                t0 = time.perf_counter()
                enc = self.tok.tokenizer.encode(check_text(text), add_special_tokens=False)
                ids = enc.ids
                self.seconds += time.perf_counter() - t0
                self.calls += 1
                return enc, ids

            def encoded(self, text: str):
                got = self._units.get(text)
                if got is None:
                    enc, ids = self._encode(text)
                    got = self._units[text] = (ids, unit_lengths(enc.word_ids))
                return got

            def with_offsets(self, text: str):
                got = self._offsets.get(text)
                if got is None:
                    enc, ids = self._encode(text)
                    got = self._offsets[text] = (ids, list(map(tuple, enc.offsets)))
                return got

        return _Timed(tok)


def suite_throughput(tok: FrozenTokenizer, plan: Plan) -> list[dict]:
    """Differential-check throughput of the cut and the repair path (characters per second per core, one
    thread), each check's time split in place into the reference encodes it needs (`TimedMemo`), the calls into the
    implementation under test (the checks' `timing`) and the rest, the suite's own overhead:
    (check - reference - subject) / reference, per repetition, median over repetitions."""
    cases = list(iter_battery(tok, "ci", stop=plan.suite_cases))
    cases_digest = hashlib.sha256(b"".join(case_bytes(c) for c in cases)).hexdigest()
    repair_cases = [c for c in cases if c.splits] or cases[:1]
    out: list[dict] = []
    for path, subset, check in (("cut", cases, check_cut_case), ("repair", repair_cases, check_repair_case)):
        chars = sum(len(c.text) for c in subset)
        split: list[dict] = []

        def run_check(_, subset=subset, check=check, split=split):
            memo, timing = TimedMemo(tok), Counter()
            start = time.perf_counter()
            results = [check(tok, c, memo=memo, timing=timing) for c in subset]
            wall = time.perf_counter() - start
            split.append({"check": wall, "reference": memo.seconds, "subject": timing["subject"],
                          "reference_calls": memo.calls})
            return results

        cands = [
            Candidate("check", run_check),
            Candidate("whole_reference", lambda _, subset=subset: [reference_encode(tok, c.text) for c in subset]),
        ]
        kept: list = []
        t = interleaved(cands, plan.suite_reps, each=lambda name, res, kept=kept: kept.append(res) if name == "check"
                        else None)
        results = kept[-1]
        t["reference"] = Timing(tuple(s["reference"] for s in split))  # timed in place, inside the check
        t["subject"] = Timing(tuple(s["subject"] for s in split))
        overheads = [(s["check"] - s["reference"] - s["subject"]) / s["reference"] for s in split]
        with_subject = [(s["check"] - s["reference"]) / s["reference"] for s in split]
        median_of = {k: statistics.median(s[k] for s in split) for k in ("check", "reference", "subject")}
        out.append(record(
            "benchmark.suite_throughput", tok,
            {**tokenizer_facts(tok), "figure": "suite_throughput", "path": path, "strings": len(subset),
             "chars": chars, "battery": "ci", "battery_cases_sha256": cases_digest,
             "reference_calls_needed": split[-1]["reference_calls"], "repetitions": plan.suite_reps, "threads": 1,
             "timings": _timings(t), "split_s": split, "split_median_s": median_of,
             "check_chars_per_s_per_core": chars / t["check"].median,
             "whole_reference_chars_per_s_per_core": chars / t["whole_reference"].median,
             "suite_overhead": statistics.median(overheads),
             "suite_overhead_of": "median over repetitions of (check - reference - subject) / reference, timed in "
                                  "place: reference = the library encode calls the check needs (with their IDs), "
                                  "subject = the calls into the implementation under test",
             "overhead_with_subject": statistics.median(with_subject),
             "subject_share": median_of["subject"] / median_of["check"],
             "ratio": ratio(t["whole_reference"], t["check"]),
             "ratio_of": "median(one whole reference encode per string) / median(check)"},
            comparisons=sum(r.comparisons for r in results), differences=sum(r.differences for r in results),
            unit="comparisons",
        ))
    return out


# ---------------------------------------------------------------- (5) a peer


def peer_figures(tok: FrozenTokenizer, plan: Plan, peer: str = "toktier") -> list[dict]:
    """The repair and chunked figures for a PyPI peer through its server process (timings include the JSON
    round trip of the text and IDs, on both sides of each ratio); "not installed" when it cannot run."""
    try:
        subject = get_subject(peer, tok)
    except SubjectUnavailable as exc:
        return [record("benchmark.peer", tok, {"peer": peer, "status": "not installed", "reason": exc.reason},
                       unit="figures")]
    try:
        return _peer_points(tok, plan, peer, subject)
    finally:
        subject.close()


def _peer_points(tok: FrozenTokenizer, plan: Plan, peer: str, subject) -> list[dict]:
    """The peer's repair and chunked points (see `peer_figures`)."""
    facts = {**tokenizer_facts(tok), "peer": peer, "peer_version": subject.version,
             "transport": "JSON lines to the peer's server process (included in every timing; `in_peer` is the "
                          "server's own time for the call, transport excluded)"}
    out: list[dict] = []
    served: dict[str, list[float]] = {}

    def in_peer(name: str) -> None:
        """Keep the server's own seconds for the call just made by candidate `name`."""
        seconds = getattr(subject.peer, "last_server_seconds", None)
        if seconds is not None:
            served.setdefault(name, []).append(seconds)

    def in_peer_ratio(num: str, den: str) -> dict:
        if not served.get(num) or not served.get(den):
            return {"in_peer_ratio": None}
        a, b = statistics.median(served[num]), statistics.median(served[den])
        return {"in_peer_median_s": {num: a, den: b}, "in_peer_ratio": a / b if b else None,
                "in_peer_ratio_of": f"median server seconds of {num} / of {den} (no transport)"}

    for size in plan.peer_sizes:
        old = text_of("prose", size)
        diffs = [0]

        def open_session(rep: int, old=old):
            session = subject.session()
            session.encode(old)
            return session, old + appended("prose", 400, rep)

        def compare(rep: int, results: dict, old=old, diffs=diffs) -> None:
            diffs[0] += results["peer_session"] != reference_encode(tok, old + appended("prose", 400, rep))

        def keep(name: str, ids):
            in_peer(name)
            return ids

        served.clear()
        cands = [
            Candidate("peer_session", lambda a: a[0].encode(a[1]), open_session),
            Candidate("peer_whole", lambda new: subject.encode(new),
                      lambda rep, old=old: old + appended("prose", 400, rep)),
        ]
        t = interleaved(cands, plan.peer_reps, compare, each=keep)
        out.append(record(
            "benchmark.peer_repair_vs_whole", tok,
            {**facts, "context_chars": size, "append_chars": 400, "repetitions": plan.peer_reps,
             "timings": _timings(t), "ratio": ratio(t["peer_whole"], t["peer_session"]),
             "ratio_of": "median(peer whole encode) / median(peer session encode)",
             **in_peer_ratio("peer_whole", "peer_session")},
            comparisons=plan.peer_reps, differences=diffs[0],
        ))
    if plan.peer_chunked_size:
        text = text_of("prose", plan.peer_chunked_size)
        want = reference_encode(tok, text)
        diffs = Counter()
        ks = (1, 2, 16)

        replies: dict[str, dict] = {}

        served.clear()

        def same(name: str, ids) -> None:
            in_peer(name)
            diffs[name] += ids != want
            if name != "peer_whole":
                replies[name] = {k: v for k, v in getattr(subject, "last_chunked", {}).items() if k != "ids"}

        cands = [Candidate("peer_whole", lambda _: subject.encode(text))]
        cands += [Candidate(f"peer_chunked_k{k}", lambda _, k=k: subject.encode_chunked(text, k)) for k in ks]
        t = interleaved(cands, plan.peer_reps, each=same)
        for k in ks:
            out.append(record(
                "benchmark.peer_chunked", tok,
                {**facts, "chars": len(text), "chunks": k, "workers": "peer default", "repetitions": plan.peer_reps,
                 "timings": _timings({"peer_whole": t["peer_whole"], "peer_chunked": t[f"peer_chunked_k{k}"]}),
                 "ratio": ratio(t["peer_whole"], t[f"peer_chunked_k{k}"]),
                 "ratio_of": "median(peer whole) / median(peer chunked)",
                 **in_peer_ratio("peer_whole", f"peer_chunked_k{k}"),
                 "peer_reply": replies.get(f"peer_chunked_k{k}", {})},
                comparisons=plan.peer_reps, differences=diffs[f"peer_chunked_k{k}"],
            ))
    return out


# ---------------------------------------------------------------- subprocess pools


def run_in_pool(figures: list[str], tokenizer: str, quick: bool, workers: int) -> list[dict]:
    """Run chunked-family figures in one fresh process whose Rust thread pool has exactly `workers` threads
    (RAYON_NUM_THREADS is read once, when the pool starts, so it must be set before the process starts)."""
    env = {**os.environ, "RAYON_NUM_THREADS": str(workers), "TOKENIZERS_PARALLELISM": "true"}
    cmd = [sys.executable, "-m", "delta_suite.benchmarks.pool_child", ",".join(figures), tokenizer, str(workers)]
    cmd += ["--quick"] if quick else []
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark child {figures} (workers={workers}) failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def child_main(figures: list[str], tokenizer: str, workers: int, quick: bool) -> list[dict]:
    """The child side of `run_in_pool`: "chunked" and/or "fallback" (the latter only at one worker)."""
    tok = load_tokenizer(tokenizer)
    plan = QUICK if quick else DEFAULT
    out: list[dict] = []
    for figure in figures:
        if figure == "chunked":
            out += chunked_figure(tok, plan, workers)
        elif figure == "fallback" and workers == 1:
            out += fallback_confinement(tok, plan)
        else:
            raise ValueError(f"unknown pool figure {figure!r} at {workers} workers")
    return out

