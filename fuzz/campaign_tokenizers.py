"""The main job's campaign tokenizers: the list its plan of fuzz steps is made from.

Invariant: every installed registry row is listed when it is admitted, and when it cannot be loaded at all (its
campaign then records it as not loadable, with the remedy, and exits 2); an installed row that loads and is not
admitted is left out (a campaign would refuse it). The listing is a step of the job of its own (scripts/main-job.sh,
"list tokenizers"): a listing that fails is a failed step, never an empty loop of fuzz steps.

    python -m delta_suite.fuzz.campaign_tokenizers --out FILE

writes the names, one a line, to FILE (replaced whole, only once the list is complete) and exits 0; a failure of
the listing is exit 3 with the error (a traceback on stderr), and FILE is left absent.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from pathlib import Path

from delta_suite.frozen.errors import SuiteError
from delta_suite.frozen.loader import load_tokenizer
from delta_suite.frozen.provision import installed
from delta_suite.frozen.registry import rows
from delta_suite.spec.admission import admission_of


def campaign_tokenizers() -> list[str]:
    """Installed rows that are admitted or cannot be loaded, in registry order."""
    names = []
    for row in rows():
        if installed(row) is None:
            continue
        try:
            tok = load_tokenizer(row.name)
        except SuiteError:
            names.append(row.name)
            continue
        if admission_of(tok).admitted:
            names.append(row.name)
    return names


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m delta_suite.fuzz.campaign_tokenizers", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, type=Path, help="the file the names are written to, one a line")
    args = p.parse_args(argv)
    try:
        args.out.unlink(missing_ok=True)  # a list from an earlier run is never read as this one's
    except OSError as exc:
        print(f"error: {args.out}: {exc.strerror or exc}", file=sys.stderr)
        return 3
    try:
        names = campaign_tokenizers()
    except Exception as exc:  # noqa: BLE001 -- any failure of the listing is the failed step the job records
        traceback.print_exc()
        print(f"error: listing the campaign's tokenizers failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 3
    partial = args.out.with_name(args.out.name + ".partial")
    try:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        partial.write_text("".join(f"{n}\n" for n in names), encoding="utf-8")
        os.replace(partial, args.out)
    except OSError as exc:
        print(f"error: {args.out}: {exc.strerror or exc}", file=sys.stderr)
        return 3
    print(f"campaign tokenizers: {', '.join(names) or 'none installed'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
