"""The whole-word family's figures (`python -m delta_suite.benchmarks --only whole-word --tokenizer PATH`).

Three figures, every output compared with one whole reference encode of the same text:
- `benchmark.whole_word_chunked`: `delta.encode_chunked` at k chunks in a process whose Rust pool has 2 threads,
  against one whole reference encode (serial), at 100K, 1M and 4M characters of prose, code and CJK text;
- `benchmark.whole_word_repair`: a session holding 1M characters, one append of 400 characters repaired from one
  cut (`spec.whole_word_repair`), against a whole encode of the new text;
- `benchmark.whole_word_free_share`: the share of a text's offsets that a rule accepts (free pair, special-token
  edge), per text kind, every offset's array verdict compared with the spec's.
In a whole-word file BPE runs over each stretch between added tokens as one word, and its cost per character grows
with the word's length, so cutting pays beyond the core count: that is what the ratios measure. Ratios only;
nothing is asserted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter

import numpy as np
from delta_suite.benchmarks.measure import Candidate, interleaved, machine, ratio, tokenizer_facts
from delta_suite.benchmarks.texts import PLAIN_KINDS, appended, plain_text, text_digest
from delta_suite.delta.cut_map import FREE_PAIR, SPECIAL, cut_map
from delta_suite.delta.cuts import encode_chunked, plan_cuts
from delta_suite.delta.session import Session
from delta_suite.frozen.errors import SuiteError
from delta_suite.frozen.loader import FrozenTokenizer
from delta_suite.frozen.user_files import resolve_tokenizer
from delta_suite.ledger.records import make_record
from delta_suite.spec.admission import admission_of
from delta_suite.spec.cut import ACCEPTED_VERDICTS, explain_cut
from delta_suite.spec.reference import reference_encode

SIZES = (100_000, 1_000_000, 4_000_000)
QUICK_SIZES = (20_000,)
CHUNKS = (2, 8, 32)
REPS = {100_000: 5, 1_000_000: 3, 4_000_000: 1}
WORKERS = 2
REPAIR_CONTEXT, REPAIR_APPEND, REPAIR_REPS = 1_000_000, 400, 5
SHARE_CHARS = 100_000


def _record(check: str, tok: FrozenTokenizer, details: dict, comparisons: int, differences: int,
            unit: str = "encodes", oracle: str = "reference") -> dict:
    return make_record("benchmark", "benchmark", check, tokenizer=tok.name, tokenizer_sha256=tok.sha256,
                       comparisons=comparisons, differences=differences, unit=unit,
                       details={**machine(), **tokenizer_facts(tok), **details}, oracle=oracle)


def chunked_points(tok: FrozenTokenizer, sizes: tuple[int, ...]) -> list[dict]:
    """`benchmark.whole_word_chunked` for every kind and size."""
    out = []
    for kind in PLAIN_KINDS:
        for size in sizes:
            text = plain_text(kind, size)
            want = reference_encode(tok, text)
            encode_chunked(tok, text[:20_000], chunks=2, workers=WORKERS)  # starts the Rust pool, untimed
            diffs: Counter = Counter()

            def same(name: str, ids, want=want, diffs=diffs) -> None:
                diffs[name] += ids != want

            cands = [Candidate("whole", lambda t: reference_encode(tok, t), lambda rep, text=text: text)]
            cands += [Candidate(f"chunked_k{k}", lambda t, k=k: encode_chunked(tok, t, chunks=k, workers=WORKERS),
                                lambda rep, text=text: text) for k in CHUNKS]
            reps = REPS.get(size, 2)
            timings = interleaved(cands, reps, each=same)
            for k in CHUNKS:
                got = timings[f"chunked_k{k}"]
                out.append(_record("benchmark.whole_word_chunked", tok, {
                    "figure": "whole_word_chunked", "text_kind": kind, "chars": size, "chunks": k,
                    "workers": WORKERS, "cuts_found": len(plan_cuts(tok, text, k)), "repetitions": reps,
                    "text_sha256": text_digest(text), "tokens": len(want),
                    "timed": {"whole": "reference_encode(text): one whole encode",
                              "chunked": f"delta.encode_chunked(text, chunks={k}) with RAYON_NUM_THREADS={WORKERS}"},
                    "timings": {"whole": timings["whole"].as_json(), "chunked": got.as_json()},
                    "ratio": ratio(timings["whole"], got), "ratio_of": "median(whole) / median(chunked)"},
                    comparisons=2 * reps, differences=diffs[f"chunked_k{k}"] + diffs["whole"]))
    return out


def repair_point(tok: FrozenTokenizer, context: int) -> list[dict]:
    """`benchmark.whole_word_repair`: one append to a session of `context` characters."""
    old = plain_text("prose", context)
    delta = appended("prose", REPAIR_APPEND, 1)
    new = old + delta
    want = reference_encode(tok, new)
    sessions: dict[int, Session] = {}
    paths: Counter = Counter()

    def fresh(rep: int) -> Session:
        session = Session(tok)
        session.encode(old)  # untimed: the stored state a serving front end already holds
        sessions[rep] = session
        return session

    def repaired(session: Session) -> list[int]:
        ids = session.encode(new)
        paths[session.last_path] += 1
        return ids

    diffs: Counter = Counter()

    def same(name: str, ids) -> None:
        diffs[name] += ids != want

    timings = interleaved([Candidate("whole", lambda t: reference_encode(tok, t), lambda rep: new),
                           Candidate("repair", repaired, fresh)], REPAIR_REPS, each=same)
    return [_record("benchmark.whole_word_repair", tok, {
        "figure": "whole_word_repair", "text_kind": "prose", "context_chars": context,
        "append_chars": REPAIR_APPEND, "repetitions": REPAIR_REPS, "paths": dict(paths),
        "timed": {"whole": "reference_encode(old + append)", "repair": "Session.encode(old + append) after "
                  "Session.encode(old), untimed"},
        "timings": {name: t.as_json() for name, t in timings.items()},
        "ratio": ratio(timings["whole"], timings["repair"]), "ratio_of": "median(whole) / median(repair)"},
        comparisons=2 * REPAIR_REPS, differences=sum(diffs.values()))]


def free_share(tok: FrozenTokenizer, size: int) -> list[dict]:
    """`benchmark.whole_word_free_share` per text kind: accepted offsets over all offsets, from the array verdicts,
    each offset's verdict also compared with the spec's (`spec.cut.explain_cut`)."""
    out = []
    for kind in PLAIN_KINDS:
        text = plain_text(kind, size)
        cmap = cut_map(tok, text)
        verdicts = cmap.verdicts
        offsets = len(verdicts)
        free, special = int(np.sum(verdicts == FREE_PAIR)), int(np.sum(verdicts == SPECIAL))
        disagree = sum(cmap.name(b) != _accepted(explain_cut(tok, text, b)) for b in range(1, len(text)))
        out.append(_record("benchmark.whole_word_free_share", tok, {
            "figure": "whole_word_free_share", "text_kind": kind, "chars": size, "offsets": offsets,
            "free_pair": free, "special_token": special, "free_share": free / offsets if offsets else None,
            "accepted_share": (free + special) / offsets if offsets else None},
            comparisons=len(text) - 1, differences=disagree, unit="offsets", oracle="spec"))
    return out


def _accepted(verdict: str) -> str | None:
    return verdict if verdict in ACCEPTED_VERDICTS else None


def child_main(tokenizer: str, quick: bool) -> list[dict]:
    """Every figure, in this process (its Rust pool started with RAYON_NUM_THREADS set by the parent)."""
    tok = resolve_tokenizer(tokenizer)
    if not admission_of(tok).whole_word:
        raise SuiteError(f"{tok.name} is not an admitted whole-word tokenizer: {admission_of(tok).reason}")
    sizes = QUICK_SIZES if quick else SIZES
    return [*free_share(tok, min(SHARE_CHARS, sizes[-1])), *chunked_points(tok, sizes),
            *repair_point(tok, min(REPAIR_CONTEXT, sizes[-1]))]


def whole_word_figures(tokenizer: str, quick: bool) -> list[dict]:
    """Run `child_main` in a fresh process whose Rust pool has `WORKERS` threads."""
    env = {**os.environ, "RAYON_NUM_THREADS": str(WORKERS), "TOKENIZERS_PARALLELISM": "true"}
    cmd = [sys.executable, "-m", "delta_suite.benchmarks.whole_word", tokenizer, *(["--quick"] if quick else [])]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SuiteError(f"whole-word benchmark child failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    sys.stdout.write(json.dumps(child_main(sys.argv[1], "--quick" in sys.argv[2:]), ensure_ascii=False) + "\n")
