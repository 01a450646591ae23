"""What a user subject is given (`subjects.user`, `subjects.exec_subject`): plain data, never the suite's objects.

`tokenizer_files(tok)` = {"tokenizer_json": PATH, "tokenizer_config_json": PATH or None, "name": the registry name,
"sha256": the tokenizer.json digest}: the suite's own digest-checked files. `registry_row(tok)` = the tokenizer's
registry row as a dict. `timeout_seconds()` = the per-call timeout (`DELTA_SUBJECT_TIMEOUT`, default 30 s).
"""

from __future__ import annotations

import os
from dataclasses import asdict, is_dataclass
from typing import TYPE_CHECKING, Any

from delta_suite.frozen.registry import lookup
from delta_suite.subjects.peer_client import config_file, staged_tokenizer_file

if TYPE_CHECKING:
    from delta_suite.frozen.loader import FrozenTokenizer


def timeout_seconds() -> float:
    """The per-call timeout of a user subject (`DELTA_SUBJECT_TIMEOUT`, seconds, default 30)."""
    try:
        return max(0.1, float(os.environ.get("DELTA_SUBJECT_TIMEOUT", "30")))
    except ValueError:
        return 30.0


def tokenizer_files(tok: FrozenTokenizer) -> dict[str, Any]:
    """The plain data a user subject is given: the frozen files' paths, the registry name and the digest."""
    config = config_file(tok)
    return {"tokenizer_json": str(staged_tokenizer_file(tok)),
            "tokenizer_config_json": str(config) if config is not None else None,
            "name": tok.name, "sha256": tok.sha256}


def registry_row(tok: FrozenTokenizer) -> dict[str, Any]:
    """The tokenizer's registry row as plain data (empty for a tokenizer outside the registry)."""
    try:
        row = lookup(tok.name)
    except Exception:  # noqa: BLE001 - a synthetic tokenizer has no row
        return {"name": tok.name}
    data = asdict(row) if is_dataclass(row) else dict(vars(row))
    return _plain(data)


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if is_dataclass(value):
        return _plain(asdict(value))
    return str(value)
