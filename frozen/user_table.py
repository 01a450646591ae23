"""The user tokenizers named in this run: a table carried in the environment, so spawned workers see it too.

A tokenizer a user names by path (`frozen.user_files.resolve_tokenizer`) is entered here under its name with the
path, SHA-256 and size of its tokenizer.json (and the config's digest when a folder holds one). Every process the
run starts (spawned pool workers, pytest-xdist workers, the commands of the main job) inherits the table through
the environment variable `DELTA_USER_TOKENIZERS` (a JSON object, name -> entry), so `load_tokenizer(NAME)` finds
the file everywhere and re-checks its digest: a file that changed after it was named is refused, never loaded as
the same tokenizer. The ledger (`ledger.records.make_record`) reads the same variable to stamp every record of a
user tokenizer with the file's digest and size.

Invariant: a name in the table is never a registry name or alias (the resolver refuses those), so a record of a
user file can never be counted as one of the eleven.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass

USER_TABLE_ENV = "DELTA_USER_TOKENIZERS"
USER_FILE = "user file"  # the provenance of a FrozenTokenizer loaded from a user's path


@dataclass(frozen=True)
class UserEntry:
    """One user tokenizer: its name, where its tokenizer.json is (absolute), that file's SHA-256 and size, and the
    config file beside it when a folder was named (None otherwise)."""
    name: str
    path: str
    sha256: str
    size: int
    config_path: str | None = None
    config_sha256: str | None = None


def user_table() -> dict[str, UserEntry]:
    """The user tokenizers named in this run (empty when none, or when the variable is not a valid table)."""
    raw = os.environ.get(USER_TABLE_ENV)
    if not raw:
        return {}
    try:
        parsed = json.loads(raw)
        return {name: UserEntry(**entry) for name, entry in parsed.items()}
    except (ValueError, TypeError, AttributeError):
        return {}


def user_entry(name: str) -> UserEntry | None:
    """The user tokenizer named `name`, or None."""
    return user_table().get(name)


def tokenizer_key(name: str) -> str:
    """`name` for a registry row; NAME@SHA12 for a user tokenizer, so that what is keyed by it (a corpus unit's
    stored record) is never re-used for a changed file of the same name."""
    entry = user_entry(name)
    return f"{name}@{entry.sha256[:12]}" if entry is not None else name


def register_user_entry(entry: UserEntry) -> None:
    """Enter `entry` into this process's table (and so into every process it starts)."""
    table = user_table()
    table[entry.name] = entry
    os.environ[USER_TABLE_ENV] = json.dumps({n: asdict(e) for n, e in sorted(table.items())}, sort_keys=True)
