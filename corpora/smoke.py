"""`corpora smoke`: a short real differential check of every provisioned tokenizer on the built-in samples.

Compares the reference's single encode with its batch path, and `post_process` applied once with the
reference's own post-processed encode, and writes one ledger record per tokenizer.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from delta_suite.corpora.samples import SAMPLES
from delta_suite.frozen.errors import NotProvisioned, SuiteError
from delta_suite.frozen.loader import load_tokenizer
from delta_suite.frozen.registry import rows
from delta_suite.frozen.user_files import resolve_tokenizer
from delta_suite.ledger.records import append_records, make_record, unloadable_record
from delta_suite.spec.admission import admission_of
from delta_suite.spec.proofs.obligations import declare
from delta_suite.spec.reference import post_process, reference_encode, reference_encode_batch, reference_encode_full


def run_smoke(out: Path, skipped: list[str] | None = None, tokenizers: list[str] | None = None,
              name: str | None = None) -> int:
    """Run the check on every provisioned tokenizer (or on `tokenizers`: registry names, aliases or paths of user
    files, a path named `name`); print a line each; return the number of differences.

    A provisioned tokenizer that cannot be loaded is recorded as "not loadable" (with the remedy), named in
    `skipped`, and the others still run. A named tokenizer that cannot be loaded is an error (`SuiteError`)."""
    total_diff = 0
    records = []
    chosen = [resolve_tokenizer(t, name) for t in tokenizers] if tokenizers else None
    for row in chosen or rows():
        if chosen is not None:
            tok = row
        else:
            try:
                tok = load_tokenizer(row.name)
            except NotProvisioned:
                print(f"{row.name:20s} not provisioned")
                continue
            except SuiteError as exc:
                print(f"{row.name:20s} cannot be loaded: {exc}", file=sys.stderr)
                records.append(unloadable_record("smoke", "samples.load", row.name, str(exc),
                                                 f"corpora tokenizers pull {row.alias} --force"))
                if skipped is not None:
                    skipped.append(row.name)
                continue
        batch = reference_encode_batch(tok, list(SAMPLES))
        diffs = 0
        for text, ids in zip(SAMPLES, batch, strict=True):
            single = reference_encode(tok, text)
            diffs += single != ids
            diffs += post_process(tok, single) != reference_encode_full(tok, text)
        total_diff += diffs
        n = 2 * len(SAMPLES)
        admitted = "admitted" if admission_of(tok).admitted else f"refused:{admission_of(tok).reason}"
        print(f"{tok.name:20s} {tok.provenance:8s} {admitted:10s} compared {n} encodes, {diffs} differ")
        records.append(
            declare(make_record("smoke", "encoder", "samples.single_vs_batch_and_postprocess", tokenizer=tok.name,
                                tokenizer_sha256=tok.sha256, comparisons=n, differences=diffs, unit="encodes",
                                oracle="self"))
        )
    append_records(out / "smoke.jsonl", records)
    return total_diff


def _cmd(args: argparse.Namespace) -> int:
    """Exit 1 on a difference, else 2 if a provisioned tokenizer could not be loaded, else 0."""
    skipped: list[str] = []
    if args.name is not None and len(args.tokenizer or []) > 1:
        raise SuiteError("--name names one --tokenizer path; give one --tokenizer with it")
    if run_smoke(Path(args.out), skipped, args.tokenizer, args.name):
        return 1
    if skipped:
        print(f"error: {len(skipped)} provisioned tokenizer(s) could not be loaded and were skipped: "
              f"{', '.join(skipped)}", file=sys.stderr)
        return 2
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("smoke", help="short differential check of the provisioned tokenizers on built-in samples",
                       description=__doc__)
    p.add_argument("--out", default="out/ledgers/main", help="ledger folder (default: %(default)s)")
    p.add_argument("--tokenizer", action="append", help="only this tokenizer (repeatable): a registry name or alias, "
                   "or a path to a tokenizer.json or a folder holding one (a user file); default every provisioned one")
    p.add_argument("--name", help="the name of a --tokenizer path (default: the folder's name, or the file's stem)")
    p.set_defaults(func=_cmd)
