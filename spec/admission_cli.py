"""`python -m delta_suite.spec.admission_cli TOKENIZER [--name N]`: what admission decides for a tokenizer, and why.

TOKENIZER is a registry name or alias, or a path to a tokenizer.json or a folder holding one (a user file,
`frozen.resolve_tokenizer`). Prints one line: the tokenizer's name, provenance, SHA-256, size, margin and bound,
and "admitted (split family F)", "admitted (whole-word family bpe-whole-word:D, prefix scheme P)", or the
refusal in words (`spec.refusals.refusal_message`: the stage, the premise it breaks, the reason code).
Exit 0 admitted, 2 refused or not a tokenizer file, 3 unreadable.
"""

from __future__ import annotations

import argparse
import sys

from delta_suite.frozen.errors import run_command
from delta_suite.frozen.user_files import resolve_tokenizer
from delta_suite.spec.admission import admission_of
from delta_suite.spec.piece_local import piece_local_rules
from delta_suite.spec.refusals import refusal_message
from delta_suite.spec.whole_word import whole_word_rules


def _cmd(args: argparse.Namespace) -> int:
    tok = resolve_tokenizer(args.tokenizer, args.name)
    decided = admission_of(tok)
    if decided.whole_word:
        said = f"admitted (whole-word family {decided.family}, prefix scheme {whole_word_rules(tok).shape.prefix})"
    elif decided.piece_local:
        separators = "".join(sorted(piece_local_rules(tok).separators)).encode("unicode_escape").decode("ascii")
        said = f"admitted (piece-local family {decided.family}, separators {separators})"
    elif decided.admitted:
        family = decided.pattern + (f", normalizer {tok.normalizer}" if tok.is_nfc else "")
        said = f"admitted (split family {family})"
    else:
        said = refusal_message(decided.reason)
    size = f", {tok.size:,} bytes" if tok.size is not None else ""
    print(f"{tok.name} ({tok.provenance}, sha256 {tok.sha256}{size}, margin {tok.margin}, bound {tok.bound}): "
          f"{said}")
    return 0 if decided.admitted else 2


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m delta_suite.spec.admission_cli", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("tokenizer", help="registry name or alias, or a path to a tokenizer.json or a folder holding one")
    p.add_argument("--name", help="the name of a path (default: the folder's name, or the file's stem)")
    p.set_defaults(func=_cmd)
    return p


def main(argv: list[str] | None = None) -> int:
    return run_command(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
