"""The `exec:` subject protocol, version 1: JSON lines between the suite and a tokenizer server in any language.

The suite starts the server (`--subject exec:COMMAND`), writes one JSON object per line to its standard input and
reads one JSON object per line from its standard output, strictly in turn (one request, then its answer). The
server's standard error is kept in a log file, never read as protocol. Text is JSON strings (UTF-8 on the wire);
IDs are JSON integers. The machine-readable schema is `exec-protocol-v1.schema.json` next to this module.

Requests (the suite sends):
  {"op": "hello", "protocol": 1, "tokenizer": {"name": STR, "sha256": HEX, "tokenizer_json": PATH,
                                               "tokenizer_config_json": PATH | null}}
  {"op": "encode", "text": STR}                          whole encode, no sequence-level post-processing
  {"op": "encode_chunked", "text": STR, "chunks": INT}   the server's chunked encode (if offered)
  {"op": "session_open"}                                 a session (if offered) -> {"session": INT}
  {"op": "session_encode", "session": INT, "text": STR}  the session's encode of the whole grown text
  {"op": "session_close", "session": INT}
  {"op": "bye"}                                          the server exits (also on end of input)

Answers (the server writes):
  to hello: {"ok": true, "protocol": 1, "name": STR, "version": STR, "paths": [subset of "encode",
            "encode_chunked", "session"]}   ("encode" is required)
  to encode, encode_chunked, session_encode: {"ok": true, "ids": [INT, ...]}
  to session_open: {"ok": true, "session": INT}; to session_close and bye: {"ok": true}
  any error: {"ok": false, "error": TYPE, "message": STR}   (the request failed; the server stays up)

The suite's reading of an answer: `ok: false` to an encode is a crash on that input; no answer within the
per-call timeout is a timeout (the server is killed and restarted); a line that is not JSON, an answer of the
wrong shape or IDs that are not integers are malformed output; the server exiting is a crash. Each is recorded
with the input, never as a pass and never as an ID difference (`subjects.protocol.SubjectFault`).
"""

from __future__ import annotations

import json
from pathlib import Path

from delta_suite.subjects.protocol import SubjectFault

PROTOCOL = 1
PATHS = ("encode", "encode_chunked", "session")
SCHEMA_FILE = Path(__file__).resolve().with_name("exec-protocol-v1.schema.json")


def schema() -> dict:
    """The JSON schema of protocol version 1 (requests and answers)."""
    return json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))


def hello(name: str, sha256: str, tokenizer_json: str, tokenizer_config_json: str | None) -> dict:
    return {"op": "hello", "protocol": PROTOCOL, "tokenizer": {
        "name": name, "sha256": sha256, "tokenizer_json": tokenizer_json,
        "tokenizer_config_json": tokenizer_config_json}}


def parse_answer(line: str, op: str) -> dict:
    """One answer line, checked for shape: a dict with a boolean `ok`; SubjectFault("malformed") otherwise, and
    SubjectFault("crash") for `ok: false` (the server's own error message kept)."""
    try:
        answer = json.loads(line)
    except json.JSONDecodeError as exc:
        raise SubjectFault("malformed", f"answer to {op} is not JSON ({exc}): {line[:120]!r}") from exc
    if not isinstance(answer, dict) or not isinstance(answer.get("ok"), bool):
        raise SubjectFault("malformed", f"answer to {op} is not an object with a boolean 'ok': {line[:120]!r}")
    if not answer["ok"]:
        raise SubjectFault("crash", f"{op} failed: {answer.get('error', 'error')}: {answer.get('message', '')}")
    return answer


def answer_ids(answer: dict, op: str) -> list[int]:
    """The `ids` of an answer, a list of integers, or SubjectFault("malformed")."""
    ids = answer.get("ids")
    if not isinstance(ids, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in ids):
        raise SubjectFault("malformed", f"answer to {op} has no list of integer 'ids': {str(ids)[:120]}")
    return ids


def check_hello(answer: dict) -> tuple[str, str, tuple[str, ...]]:
    """(name, version, paths) of a hello answer; ValueError naming what is wrong."""
    if answer.get("protocol") != PROTOCOL:
        raise ValueError(f"the server speaks protocol {answer.get('protocol')!r}, the suite speaks {PROTOCOL}")
    paths = answer.get("paths")
    if not isinstance(paths, list) or "encode" not in paths or not set(paths) <= set(PATHS):
        raise ValueError(f"hello must list the paths it offers, 'encode' among them, from {PATHS}; got {paths!r}")
    name, version = answer.get("name"), answer.get("version")
    if not isinstance(name, str) or not name or not isinstance(version, str):
        raise ValueError("hello must give a non-empty string 'name' and a string 'version'")
    return name, version, tuple(paths)
