"""The one resolver of a tokenizer argument: a registry name or alias, or a user's path, to a FrozenTokenizer.

Every command that names a tokenizer (`fuzz --tokenizer`, `corpora smoke|compare|cut-gain`, the kill matrix, the
pytest plugin, the main job) resolves it here. An argument is a path when it contains a path separator or ends in
".json", or when it is no registry name or alias but exists on disk; otherwise it is a registry name or alias.

A path is a `tokenizer.json`, or a folder holding `tokenizer.json` and optionally `tokenizer_config.json` (a local
Hugging Face snapshot). It is loaded with provenance "user file": its SHA-256 and size are recorded (and stamped on
every ledger record through `frozen.user_table`), its margin and bound are computed from its own contents, and its
name is `name` when given, else the folder's name, else the file's stem (a file literally named tokenizer.json is
named after its folder). A user name is never a registry name or alias: a user file never counts as one of the
eleven. Errors: a path that does not exist, is not JSON, or is not a tokenizer configuration, a bad or taken name:
`UserFileRefused` (exit 2, naming the path and what was wrong); a path that exists but cannot be read:
`UserFileUnreadable` (exit 3).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from delta_suite.frozen.digests import sha256_bytes
from delta_suite.frozen.errors import CorruptTokenizerFile, SuiteError, UnknownTokenizer
from delta_suite.frozen.loader import FrozenTokenizer, load_tokenizer, load_user_entry
from delta_suite.frozen.registry import CONFIG_FILE, TOKENIZER_FILE, lookup, rows
from delta_suite.frozen.user_table import UserEntry, register_user_entry, user_entry

NAME_FORM = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,63}")


class UserFileRefused(SuiteError):
    """A tokenizer path that is not a tokenizer file (missing, not JSON, not a tokenizer), or a bad name for it."""


class UserFileUnreadable(SuiteError):
    """A tokenizer path that exists but cannot be read (permissions, an I/O error): the environment, exit 3."""
    exit_code = 3


def is_path_argument(arg: str) -> bool:
    """Whether `arg` names a path rather than a registry row (see the module docstring for the rule)."""
    if os.sep in arg or "/" in arg or arg.lower().endswith(".json"):
        return True
    try:
        lookup(arg)
        return False
    except UnknownTokenizer:
        return Path(arg).exists()


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise UserFileUnreadable(f"tokenizer path {path}: cannot be read ({exc.strerror or exc})") from exc


def tokenizer_files(path: Path) -> tuple[Path, Path | None]:
    """(tokenizer.json, tokenizer_config.json or None) of a file or snapshot-folder argument."""
    if path.is_dir():
        main = path / TOKENIZER_FILE
        if not main.is_file():
            raise UserFileRefused(f"tokenizer path {path}: a folder without a {TOKENIZER_FILE}; name the file, or a "
                                  f"folder holding {TOKENIZER_FILE} (and optionally {CONFIG_FILE})")
        config = path / CONFIG_FILE
        return main, config if config.is_file() else None
    if not path.exists():
        raise UserFileRefused(f"tokenizer path {path}: no such file or folder")
    return path, None


def default_name(path: Path) -> str:
    """The folder's name, or the file's stem (a file named tokenizer.json: its folder's name), made name-safe."""
    resolved = path.resolve()
    if resolved.is_dir():
        raw = resolved.name
    elif resolved.name == TOKENIZER_FILE:
        raw = resolved.parent.name or resolved.stem
    else:
        raw = resolved.stem
    safe = re.sub(r"[^A-Za-z0-9._+-]", "_", raw).lstrip("._+-")
    return safe[:64] or "user-tokenizer"


def check_name(name: str, path: Path) -> None:
    """Refuse a name that is malformed or that is a registry name or alias (a user file is never one of the 11)."""
    if not NAME_FORM.fullmatch(name):
        raise UserFileRefused(f"tokenizer name {name!r} for {path}: use letters, digits and . _ + - (at most 64)")
    taken = {r.name.lower() for r in rows()} | {r.alias.lower() for r in rows()}
    if name.lower() in taken:
        raise UserFileRefused(f"tokenizer name {name!r} for {path} is a registry name or alias; a user file is "
                              "never one of the eleven: give it another name (--name)")


def load_user_file(path: Path, name: str | None = None) -> FrozenTokenizer:
    """Load a user's tokenizer.json or snapshot folder as "user file" and enter it into the run's user table."""
    main, config = tokenizer_files(path)
    chosen = name or default_name(path)
    check_name(chosen, path)
    data = _read(main)
    config_data = _read(config) if config is not None else None
    entry = UserEntry(chosen, str(main.resolve()), sha256_bytes(data), len(data),
                      str(config.resolve()) if config is not None else None,
                      sha256_bytes(config_data) if config_data is not None else None)
    earlier = user_entry(chosen)
    if earlier is not None and (earlier.path, earlier.sha256) != (entry.path, entry.sha256):
        raise UserFileRefused(f"two tokenizers named {chosen!r} in one run ({earlier.path}, sha256 "
                              f"{earlier.sha256[:16]}…, and {entry.path}, sha256 {entry.sha256[:16]}…): give each "
                              "its own name (--name)")
    try:
        tok = load_user_entry(entry)
    except CorruptTokenizerFile as exc:
        raise UserFileRefused(f"tokenizer path {main}: {_what_was_wrong(exc, chosen)}") from exc
    register_user_entry(entry)
    return tok


def _what_was_wrong(exc: CorruptTokenizerFile, name: str) -> str:
    """The loader's reason, "not JSON: ..." or "not a tokenizer: ...", without the loader's NAME/FILE prefix."""
    text = str(exc)
    for prefix in (f"{name}/{TOKENIZER_FILE} ", f"{name}/{CONFIG_FILE} ", f"{name}: "):
        text = text.removeprefix(prefix)
    return f"not JSON: {text}" if "not valid JSON" in text else f"not a tokenizer: {text}"


def resolve_tokenizer(arg: str, name: str | None = None) -> FrozenTokenizer:
    """The tokenizer an argument names: a registry row (`name` must then be None) or a user's file or folder."""
    if is_path_argument(arg):
        return load_user_file(Path(arg).expanduser(), name)
    if name is not None:
        raise UserFileRefused(f"--name {name!r} applies to a tokenizer path; {arg!r} is a registry name")
    return load_tokenizer(arg)

