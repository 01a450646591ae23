"""`corpora build [--profile small|full] [--out DIR]`: build (or reuse) the built-in corpus and print its totals."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from delta_suite.corpora.build import PROFILES, build_corpus


def _cmd(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    result = build_corpus(
        args.profile,
        Path(args.out) if args.out else None,
        sources_path=Path(args.sources) if args.sources else None,
        refresh=args.refresh,
        verify=args.verify,
    )
    m = result.manifest
    if args.json:
        print(json.dumps({k: v for k, v in m.items() if k != "fetched"}, indent=1, ensure_ascii=False))
        return 0
    state = "reused" if result.reused else "built"
    t = m["totals"]
    print(f"{state} {m['profile']} corpus in {result.out} ({time.perf_counter() - start:.1f} s): {t['shards']} shards, "
          f"{t['documents']:,} documents ({t['chats']:,} chats), {t['characters']:,} characters, {t['bytes']:,} bytes")
    for s in m["shards"]:
        top = ", ".join(f"{k} {v:,}" for k, v in sorted(s["scripts"].items(), key=lambda kv: -kv[1])[:5])
        print(f"  {s['name']:28s} {s['documents']:7,} docs {s['characters']:12,} chars  {top}")
    for d in m.get("drift", []):
        print(f"  drift: {d}")
    for s in m.get("skipped_files", []):
        print(f"  skipped {s['source']}:{s['path']}: {s['reason']}")
    for g in m.get("groups_missing", []):
        print(f"  group without documents: {g}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("build", help="fetch the committed sources and build the corpus shards and manifest",
                       description=__doc__)
    p.add_argument("--profile", choices=PROFILES, default="full",
        help="small: one shard per script group (CI); full: every source (default: %(default)s)")
    p.add_argument("--out", help="output folder (default: $DELTA_HOME/corpus/PROFILE)")
    p.add_argument("--sources", help="source list (default: the committed corpora/sources.json)")
    p.add_argument("--refresh", action="store_true", help="fetch and extract again even if cached")
    p.add_argument("--verify", action="store_true", help="re-hash shards before reusing an existing build")
    p.add_argument("--json", action="store_true", help="print the manifest")
    p.set_defaults(func=_cmd)
