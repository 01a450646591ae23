"""`python -m delta_suite.frozen.export_user_files PATH|NAME=PATH...`: the user table of these files, as JSON to export.

    export DELTA_USER_TOKENIZERS=$(python -m delta_suite.frozen.export_user_files gpt4o=path/to/snapshot/)
    ./run test      # the gate's per-tokenizer properties run on the admitted ones too

Each file is loaded and checked as by `frozen.resolve_tokenizer` (exit 2 for a path that is not a tokenizer file
or a bad name, 3 for one that cannot be read); the printed table is what every command of the run inherits.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from delta_suite.frozen.errors import SuiteError
from delta_suite.frozen.user_files import load_user_file
from delta_suite.frozen.user_table import USER_TABLE_ENV


def is_named(arg: str) -> bool:
    """Whether `arg` is NAME=PATH (the main job's rule for `--tokenizer`): it has an "=", the part before it holds
    no "/", and `arg` as a whole is not an existing path (a folder or file whose name holds "=" stays a PATH). A
    NAME that is also the name of a folder in the current one (`mine=mine/`) is still a name."""
    name, sep, _path = arg.partition("=")
    return bool(sep) and "/" not in name and os.sep not in name and not Path(arg).expanduser().exists()


def export_table(args: list[str]) -> str:
    """The user table (`DELTA_USER_TOKENIZERS`) naming each PATH or NAME=PATH of `args`, as the JSON to export."""
    for arg in args:
        name, sep, path = arg.partition("=")
        if is_named(arg):
            load_user_file(Path(path).expanduser(), name)
        else:
            load_user_file(Path(arg).expanduser())
    return os.environ.get(USER_TABLE_ENV, "{}")


def main(argv: list[str] | None = None) -> int:
    """Print the user table of the files named (see the module docstring); 0, or the error's exit status."""
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print("usage: python -m delta_suite.frozen.export_user_files PATH|NAME=PATH...", file=sys.stderr)
        return 2
    try:
        print(export_table(args))
    except SuiteError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
