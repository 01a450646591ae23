"""`corpora`: the tokenizer registry and provisioning, building the corpus, comparing it with the reference at
levels 1-3, the cut gain of the per-pattern transitions, and the smoke check on built-in samples."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from delta_suite.corpora import build_cli, compare_cli, cut_gain, smoke
from delta_suite.frozen import provision
from delta_suite.frozen.errors import run_command
from delta_suite.frozen.registry import lookup, rows


def _cmd_pull(args: argparse.Namespace) -> int:
    """Pull each target; the first line of a row says what happened (installed, re-installed, already
    provisioned), sources tried and not used are listed under it as such, never as the outcome. Exit 1 when a
    row stays missing or corrupt (unless --allow-missing), else 0."""
    targets = rows() if args.all or not args.names else [lookup(n) for n in args.names]
    mirror = Path(args.mirror) if args.mirror else None
    if mirror is not None and not mirror.is_dir():
        raise provision.SourceUnavailable(f"mirror folder {mirror} does not exist")
    failed = 0
    for row in targets:
        res = provision.pull(row, mirror=mirror, force=args.force)
        if res.outcome == "failed":
            failed += 1
            tried = "every source refused: " + " | ".join(res.refusals)
            if res.status == "corrupt":
                print(f"{row.name:20s} corrupt          {res.replaced}, and not re-installed; {tried}",
                      file=sys.stderr)
            else:
                print(f"{row.name:20s} missing          {tried}", file=sys.stderr)
            continue
        cfg = res.files.get("tokenizer_config.json", {}).get("status")
        extra = f"; tokenizer_config.json {cfg}" if cfg and cfg != res.status else ""
        if res.outcome == "kept":
            done = f"already provisioned from {res.source}{extra}"
        elif res.replaced:
            done = f"re-installed from {res.source}{extra} ({res.replaced})"
        else:
            done = f"installed from {res.source}{extra}"
        print(f"{row.name:20s} {res.status:16s} {done}")
        for r in res.refusals:
            print(f"{'':20s} source not used  {r}")
        for n in res.notes:
            print(f"{'':20s} note             {n}")
    if failed and not args.allow_missing:
        print(f"{failed} of {len(targets)} tokenizers could not be provisioned", file=sys.stderr)
        return 1
    return 0


def _cmd_status(args: argparse.Namespace) -> int:
    """Print every row; exit 2 when a provisioned row is corrupt (a file changed or missing since install: an
    input the suite refuses), each named on stderr with its remedy; missing rows alone are information (exit 0)."""
    lines = provision.status(rehash=not args.fast)
    if args.json:
        print(json.dumps(lines, indent=1))
    else:
        for line in lines:
            files = ", ".join(f"{k}: {v}" for k, v in line.get("files", {}).items())
            digest = line["sha256"][:16] + "…" if line["sha256"] else ""
            where = line["source"] or line.get("reason", "")
            remedy = f"  run: {line['remedy']}" if "remedy" in line else ""
            print(f"{line['name']:20s} {line['alias']:15s} {line['status']:32s} {digest:18s} {where}  {files}{remedy}")
    corrupt = [line for line in lines if "remedy" in line]
    for line in corrupt:
        print(f"error: {line['name']} is {line['status']}; the loader refuses it; run: {line['remedy']}",
              file=sys.stderr)
    return 2 if corrupt else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="corpora", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    tok = sub.add_parser("tokenizers", help="the registry of the eleven frozen tokenizers")
    tsub = tok.add_subparsers(dest="action", required=True)
    pull = tsub.add_parser("pull", help="install tokenizer files into the cache, digest-checked")
    pull.add_argument("names", nargs="*", help="names or aliases (default: all)")
    pull.add_argument("--all", action="store_true", help="all eleven rows")
    pull.add_argument("--from", dest="mirror", help=f"local mirror folder (default: ${provision.MIRROR_ENV})")
    pull.add_argument("--force", action="store_true", help="re-install even if provisioned")
    pull.add_argument("--allow-missing", action="store_true", help="exit 0 even if some rows stay missing")
    pull.set_defaults(func=_cmd_pull)
    st = tsub.add_parser("status", help="all eleven rows: provisioned (exact|sibling), missing, or corrupt "
                                          "(exit 2 when a provisioned row is corrupt, else 0)")
    st.add_argument("--json", action="store_true", help="print the rows as one JSON list")
    st.add_argument("--fast", action="store_true",
                    help="compare each installed file's size and mtime with those recorded at install instead of "
                         "re-hashing it; a file whose mtime alone changed, or a row installed before they were "
                         "recorded, is re-hashed")
    st.set_defaults(func=_cmd_status)
    for register in (build_cli.register, compare_cli.register, cut_gain.register, smoke.register):
        register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    return run_command(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
