"""`corpora cut-gain`: how many more cuts each tokenizer's per-pattern transition set accepts than the floor alone, on
real text, with every gained cut checked on the reference (checks.pattern_pairs_gain).

    corpora cut-gain [--profile small | --corpus PATH|GLOB [--column C]] [--tokenizer NAME|all|PATH [--name N]]
                     [--max-characters N] [--verify N] [--out DIR]

Reads the built-in corpus (built if needed) or the given files, an equal share of --max-characters from each
shard (its first documents), and writes one record per tokenizer to DIR/cut-gain-ledger.jsonl (check
"pattern_pairs.gain": comparisons = gained cuts checked on the reference, differences = those that split it
wrongly; details: floor and own cut counts, the gain by class pair). Exit 0 when every checked cut is exact and
none is lost, 1 on a difference, 2 on a usage or input error, 3 on an environment or I/O error.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from delta_suite.checks.pattern_pairs_gain import pattern_pairs_gain
from delta_suite.corpora.build import PROFILES, build_corpus
from delta_suite.corpora.compare import shards_of_manifest
from delta_suite.corpora.compare_cli import select_tokenizers
from delta_suite.corpora.readers import expand, read_documents
from delta_suite.frozen.errors import NotProvisioned, SuiteError
from delta_suite.frozen.loader import load_tokenizer
from delta_suite.frozen.user_table import user_entry
from delta_suite.ledger.records import append_records, make_record
from delta_suite.spec.admission import admission_of
from delta_suite.spec.refusals import refusal_message

LEDGER = "cut-gain-ledger.jsonl"


def sample_texts(paths: list[Path], column: str, max_characters: int) -> list[str]:
    """An equal share of `max_characters` from each file, its first documents (bad text is skipped here: the
    corpus comparison is where refusals are recorded)."""
    share = max(1, max_characters // max(1, len(paths)))
    texts: list[str] = []
    for path in paths:
        taken = 0
        for doc in read_documents(str(path), column):
            text = doc.get("text") if isinstance(doc, dict) else None
            if not isinstance(text, str) or not text:
                continue
            texts.append(text[: share - taken])
            taken += len(texts[-1])
            if taken >= share:
                break
    return texts


def _paths(args: argparse.Namespace) -> list[Path]:
    if args.corpus:
        return expand(args.corpus)
    built = build_corpus(args.profile)
    return [Path(s.path) for s in shards_of_manifest(built.out)]


def _cmd(args: argparse.Namespace) -> int:
    if args.max_characters < 1 or args.verify < 0:
        raise SuiteError("--max-characters must be at least 1 and --verify at least 0")
    ready, missing = select_tokenizers(args.tokenizer, user_name=args.name)
    for name in ready:
        decided = admission_of(load_tokenizer(name))
        if not decided.admitted:  # a refused registry row is measured (no own cuts); a refused user file is refused
            if user_entry(name) is not None:
                raise SuiteError(f"tokenizer refused: {name}: {refusal_message(decided.reason)}")
    for n in missing:
        print(f"{n:20s} not provisioned (run: corpora tokenizers pull {n}); not measured")
    if not ready:
        raise NotProvisioned("no requested tokenizer is provisioned; nothing to measure")
    texts = sample_texts(_paths(args), args.column, args.max_characters)
    out = Path(args.out or f"out/cut-gain/{'user' if args.corpus else args.profile}")
    print(f"{len(texts):,} documents, {sum(map(len, texts)):,} characters -> {out / LEDGER}")
    print("  tokenizer            floor cuts    own cuts    gained  share  checked differ  by pair")
    failed = False
    records = []
    for name in ready:
        tok = load_tokenizer(name)
        if admission_of(tok).own_rule:  # its cuts come from its family's own rule: no pattern pairs to add
            print(f"  {name:20s} not applicable: a whole-word or piece-local family has no split pattern and no "
                  "pattern pairs (its cuts are its own rule's, checked by the corpus comparison); no record written")
            continue
        gain = pattern_pairs_gain(tok, texts, verify=args.verify)
        d = gain.as_dict()
        share = f"{d['gained_share']:6.1%}" if d["gained_share"] is not None else "     -"
        print(f"  {name:20s} {gain.floor_cuts:11,} {gain.own_cuts:11,} {gain.gained:9,} {share} {gain.verified:8,} "
              f"{len(gain.differences):6}  {d['gained_by_pair']}")
        failed |= bool(gain.differences) or gain.lost > 0
        records.append(make_record("corpus", "chunked", "pattern_pairs.gain", tokenizer=name,
                                   tokenizer_sha256=tok.sha256, comparisons=gain.verified,
                                   differences=len(gain.differences) + gain.lost, unit="gained cut", oracle="reference",
                                   details={**d, "source": args.corpus or f"profile {args.profile}"}))
    append_records(out / LEDGER, records)
    return 1 if failed else 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("cut-gain", help="cuts the per-pattern transition sets add over the floor, on real text",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--profile", choices=PROFILES, default="small",
        help="the built-in corpus (built if needed; default: %(default)s)")
    p.add_argument("--corpus", help="JSONL or Parquet files (a path or glob) instead of the built-in corpus")
    p.add_argument("--column", default="text", help="the text column of --corpus files (default: %(default)s)")
    p.add_argument("--tokenizer", default="all", help="a registry name or alias, all (default), or a path to a "
                   "tokenizer.json or a folder holding one (a user file)")
    p.add_argument("--name", help="the name of a --tokenizer path (default: the folder's name, or the file's stem)")
    p.add_argument("--max-characters", type=int, default=2_000_000, help="characters read in all (default 2,000,000)")
    p.add_argument("--verify", type=int, default=5_000,
        help="gained cuts checked on the reference per tokenizer (default: %(default)s)")
    p.add_argument("--out", help="output folder (default out/cut-gain/PROFILE)")
    p.set_defaults(func=_cmd)

