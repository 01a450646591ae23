"""A JSON-lines encode server run with a peer environment's python: one process serves a whole session.

Run as `PEER_PYTHON peer_server.py`; it reads one JSON request per line on stdin and writes one JSON answer per
line on the original stdout (the peer's own prints go to stderr, so they cannot corrupt the protocol). It
imports only the standard library and the peer package, never the suite, because it runs in the peer's
environment. Requests:
  {"op": "load", "adapter": NAME, "tokenizer_json": PATH, "config_json": PATH|null, "family": STR, "home": DIR}
  {"op": "encode", "text": S}                      whole encode (add_special_tokens=False) on the served object
  {"op": "encode_many", "texts": [S, ...]}         the same, for many texts in order
  {"op": "encode_fresh", "text": S}                whole encode on a newly constructed object (peer with state)
  {"op": "session_open"} -> {"sid": N}             a session: one object that receives growing texts
  {"op": "session_open", "in_process": true}       (fastokens) the session's object built in this process instead
  {"op": "session_encode", "sid": N, "text": S}    the session's encode of the whole grown text
  {"op": "session_close", "sid": N}                end a session (its object, or its process, goes away)
  {"op": "chunked", "text": S, "chunks": K|null}   the peer's chunked encode
  {"op": "info"}                                   versions and the peer's own facts (admission, routes)
Every answer is {"ok": true, ...} or {"ok": false, "error": TYPE, "message": MSG}.

fastokens sessions are forked (`ForkedSessions`): building a fastokens object parses the whole tokenizer.json
(about 1.8 s for Qwen3), which would cost a fuzz campaign that long per repair case. At `load`, before anything is
built or encoded here, the server forks a template process that builds ONE object and never encodes; each session
is a fork of that template, so it starts as an exact copy of a never-used object in a process that has done nothing
else, and receives every call of its session, in order, with no unrelated call in between.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import sys
import time
import traceback
from collections import OrderedDict
from importlib.metadata import version

PROTOCOL_FDS: list[int] = []  # the server's protocol descriptors, closed in every forked process
MAX_OPEN_SESSIONS = 64


def _version(dist: str) -> str:
    try:
        return version(dist)
    except Exception:  # noqa: BLE001 - metadata may be absent; report rather than fail
        return "unknown"


class ForkedSessions:
    """Sessions as forks of a template process holding one freshly built, never-used object.

    The template is forked from the server before the server builds or encodes anything, builds the object with
    `build()`, reports ready, then only forks: per `open()`, one session process that owns a copy of the untouched
    object and answers that session's encodes (`encode(obj, text) -> ids`) over a socket of its own, in order.
    """

    def __init__(self, build, encode) -> None:
        self.open_sockets: OrderedDict[int, tuple[socket.socket, object]] = OrderedDict()
        self.closed: set[int] = set()
        self.next_sid = 1
        mine, theirs = socket.socketpair()
        pid = os.fork()
        if pid == 0:  # the template process: never returns
            mine.close()
            _run_template(theirs, build, encode)
        theirs.close()
        self.control = mine
        ready = json.loads(_recv_line(mine) or '{"ok": false, "message": "the template process died"}')
        if not ready.get("ok"):
            raise RuntimeError(f"the session template could not build the tokenizer: {ready.get('message')}")

    def open(self) -> int:
        self.control.sendall(b"fork\n")
        msg, fds, _flags, _addr = socket.recv_fds(self.control, 64, 1)
        if not fds:
            raise RuntimeError(f"the session template did not fork a session ({msg!r})")
        sock = socket.socket(fileno=fds[0])
        sid, self.next_sid = self.next_sid, self.next_sid + 1
        self.open_sockets[sid] = (sock, sock.makefile("rw", encoding="utf-8", newline="\n"))
        while len(self.open_sockets) > MAX_OPEN_SESSIONS:  # bound the live processes; a closed sid is refused
            old, _ = next(iter(self.open_sockets.items()))
            self.close(old)
        return sid

    def encode(self, sid: int, text: str) -> dict:
        if sid not in self.open_sockets:
            why = "unknown" if sid not in self.closed else (
                f"closed (by session_close, or because more than {MAX_OPEN_SESSIONS} sessions were open at once)")
            raise KeyError(f"session {sid} is {why}")
        _sock, fh = self.open_sockets[sid]
        fh.write(json.dumps({"text": text}) + "\n")
        fh.flush()
        line = fh.readline()
        if not line:
            raise RuntimeError(f"the process of session {sid} died")
        answer = json.loads(line)
        if not answer.get("ok"):
            raise RuntimeError(f"session {sid}: {answer.get('error')}: {answer.get('message')}")
        return {"ids": answer["ids"], "session_pid": answer["pid"]}

    def close(self, sid: int) -> None:
        entry = self.open_sockets.pop(sid, None)
        if entry is not None:
            sock, fh = entry
            fh.close()
            sock.close()  # the session process reads end-of-file and exits
            self.closed.add(sid)


def _recv_line(sock: socket.socket) -> str:
    """One line from `sock`, read byte by byte so that nothing after it is consumed (descriptors may follow)."""
    out = bytearray()
    while not out.endswith(b"\n"):
        b = sock.recv(1)
        if not b:
            break
        out += b
    return out.decode("utf-8")


def _run_template(control: socket.socket, build, encode) -> None:
    """The template process: build the object, say ready, then fork one session process per request; never returns."""
    code = 0
    try:
        for fd in PROTOCOL_FDS:
            os.close(fd)
        os.close(0)
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # session processes are reaped automatically
        try:
            template = build()
        except Exception as exc:  # noqa: BLE001 - reported to the server, which refuses the load
            control.sendall((json.dumps({"ok": False, "message": f"{type(exc).__name__}: {exc}"}) + "\n").encode())
            os._exit(1)
        control.sendall(b'{"ok": true}\n')
        reader = control.makefile("r", encoding="utf-8", newline="\n")
        for _line in reader:
            mine, theirs = socket.socketpair()
            pid = os.fork()
            if pid == 0:
                reader.close()
                control.close()
                mine.close()
                _serve_session(theirs, template, encode)
            theirs.close()
            socket.send_fds(control, [b"forked\n"], [mine.fileno()])
            mine.close()
    except BaseException:  # noqa: BLE001 - a forked process must never fall back into the server's loop
        traceback.print_exc(file=sys.stderr)
        code = 1
    os._exit(code)


def _serve_session(sock: socket.socket, obj, encode) -> None:
    """One session process: answer each text with `encode(obj, text)` until the server closes the socket."""
    code = 0
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        fh = sock.makefile("rw", encoding="utf-8", newline="\n")
        pid = os.getpid()
        for line in fh:
            try:
                answer = {"ok": True, "ids": encode(obj, json.loads(line)["text"]), "pid": pid}
            except Exception as exc:  # noqa: BLE001 - answered, the session keeps serving
                answer = {"ok": False, "error": type(exc).__name__, "message": str(exc)[:2000]}
            fh.write(json.dumps(answer) + "\n")
            fh.flush()
    except BaseException:  # noqa: BLE001
        traceback.print_exc(file=sys.stderr)
        code = 1
    os._exit(code)


class FastokensAdapter:
    """fastokens: `Tokenizer.from_file`; a session is one object fed the whole transcript on every call.

    Sessions are forks of a template holding a never-used object (`ForkedSessions`); `in_process` sessions build
    their object here instead (slow; kept to show both give the same IDs). Whole encodes use a served object built
    on first use, after the template was forked.
    """

    def __init__(self, req: dict) -> None:
        import fastokens  # the peer: installed only in its own environment

        self.mod = fastokens
        self.path = req["tokenizer_json"]
        self.forked = ForkedSessions(lambda: fastokens.Tokenizer.from_file(self.path), self._ids)
        self._served = None
        self.sessions: dict[int, object] = {}  # in-process sessions, by negative sid

    @property
    def served(self):
        if self._served is None:
            self._served = self.mod.Tokenizer.from_file(self.path)
        return self._served

    @staticmethod
    def _ids(obj, text: str) -> list[int]:
        return list(obj.encode(text, add_special_tokens=False).ids)

    def encode(self, text: str) -> dict:
        return {"ids": self._ids(self.served, text)}

    def encode_fresh(self, text: str) -> dict:
        return {"ids": self._ids(self.mod.Tokenizer.from_file(self.path), text)}

    def session_open(self, in_process: bool = False) -> int:
        if not in_process:
            return self.forked.open()
        sid = -(len(self.sessions) + 1)
        self.sessions[sid] = self.mod.Tokenizer.from_file(self.path)
        return sid

    def session_encode(self, sid: int, text: str) -> dict:
        if sid < 0:
            return {"ids": self._ids(self.sessions[sid], text), "session_pid": os.getpid()}
        return self.forked.encode(sid, text)

    def session_close(self, sid: int) -> None:
        if sid < 0:
            self.sessions.pop(sid, None)
        else:
            self.forked.close(sid)

    def info(self) -> dict:
        return {"distribution": "fastokens", "version": _version("fastokens"), "sessions": "forked from a template"}


class GigatokenAdapter:
    """gigatoken: `Tokenizer(path)`; whole encodes only (its cache of pre-tokenized pieces is process state)."""

    def __init__(self, req: dict) -> None:
        import gigatoken  # the peer: installed only in its own environment

        self.mod = gigatoken
        self.path = req["tokenizer_json"]
        self.served = gigatoken.Tokenizer(self.path)

    def encode(self, text: str) -> dict:
        return {"ids": [int(i) for i in self.served.encode(text)]}

    def encode_fresh(self, text: str) -> dict:
        return {"ids": [int(i) for i in self.mod.Tokenizer(self.path).encode(text)]}

    def encode_many(self, texts: list[str]) -> list[list[int]]:
        rows = self.served.encode_batch_list(texts) if hasattr(self.served, "encode_batch_list") else None
        if rows is None:
            return [[int(i) for i in self.served.encode(t)] for t in texts]
        return [[int(i) for i in row] for row in rows]

    def info(self) -> dict:
        return {"distribution": "gigatoken", "version": _version("gigatoken")}


class TokTierAdapter:
    """toktier: `toktier.load(family, manifest=...)` over files staged into its own artifact cache."""

    def __init__(self, req: dict) -> None:
        os.environ["TOKTIER_HOME"] = req["home"]
        os.environ["TOKTIER_OFFLINE"] = "1"
        os.environ["TOKTIER_DISABLE_GPU"] = "1"
        import toktier  # the peer: installed only in its own environment
        from toktier.artifacts.manifest import ArtifactManifest
        from toktier.artifacts.store import ArtifactStore, sha256_file
        from toktier.config import Config

        self.mod = toktier
        staged = req["staged"]  # {"family", "repo_id", "revision", "files": {name: path}}
        self.family = staged["family"]
        files = {}
        for name, path in staged["files"].items():
            digest, size = sha256_file(__import__("pathlib").Path(path))
            files[name] = {"sha256": digest, "size": size}
        entry = {"repo_id": staged["repo_id"], "revision": staged["revision"], "files": files}
        manifest = ArtifactManifest.from_mapping({self.family: entry}, source="delta-suite staging")
        store = ArtifactStore(manifest, config=Config.resolve())
        directory = store.directory(self.family)
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        for name, path in staged["files"].items():
            target = directory / name
            if not target.is_file() or sha256_file(target)[0] != files[name]["sha256"]:
                shutil.copyfile(path, target)
        store.verify(self.family)  # toktier's own digest check of the staged files
        self.staged_files = files
        self.tok = toktier.load(self.family, manifest=manifest, device="cpu")
        self.sessions: dict[int, tuple[object, object, str]] = {}
        self._exits: list = []

    def encode(self, text: str) -> dict:
        return {"ids": list(self.tok.encode(text, lookup="off").ids)}

    def encode_many(self, texts: list[str]) -> list[list[int]]:
        return [list(self.tok.encode(t, lookup="off").ids) for t in texts]

    def session_open(self) -> int:
        sid = len(self.sessions) + 1
        ctx = self.tok.session(session_id=f"delta-suite-{os.getpid()}-{sid}")
        sess = ctx.__enter__()
        self._exits.append(ctx)
        self.sessions[sid] = (ctx, sess, "")
        return sid

    def session_encode(self, sid: int, text: str) -> dict:
        ctx, sess, held = self.sessions[sid]
        if text.startswith(held):
            update = sess.append(text[len(held) :])
            ids, replace_from = list(update.all_ids), update.replace_from
        else:  # not an extension: toktier's contract is append-only, so open a new session over this text
            ctx = self.tok.session(session_id=f"delta-suite-{os.getpid()}-{sid}-r{len(self._exits)}", text=text)
            sess = ctx.__enter__()
            self._exits.append(ctx)
            ids, replace_from = list(sess.ids), 0
        self.sessions[sid] = (ctx, sess, text)
        return {"ids": ids, "replace_from": replace_from}

    def chunked(self, text: str, chunks: int | None) -> dict:
        from toktier import chunked  # the peer: installed only in its own environment

        enc = chunked.encode(self.tok, text, k=chunks)
        return {
            "ids": list(enc.ids),
            "chunks": enc.chunks,
            "cuts": list(enc.cuts),
            "serial_reason": enc.serial_reason,
            "cut_misses": enc.cut_misses,
        }

    def info(self) -> dict:
        from toktier import chunked  # the peer: installed only in its own environment

        plan = self.tok.plan
        facts: dict = {"distribution": "toktier", "version": _version("toktier"), "family": self.family}
        facts["staged_files"] = self.staged_files
        facts["plan_backend"] = str(getattr(plan, "backend", None))
        facts["fallback_chain"] = [str(b) for b in getattr(plan, "fallback_chain", ())]
        facts["plan_reasons"] = [
            {"backend": str(getattr(r, "backend", "")), "code": str(getattr(getattr(r, "code", None), "value", r))}
            for r in getattr(plan, "reasons", ())
        ]
        try:
            facts["chunked_admission"] = _jsonable(chunked.admission(self.tok))
        except Exception as exc:  # noqa: BLE001 - an admission refusal is a fact to report
            facts["chunked_admission"] = {"error": repr(exc)}
        try:
            facts["explain"] = _jsonable(self.tok.explain(summary=True))
        except Exception as exc:  # noqa: BLE001
            facts["explain"] = {"error": repr(exc)}
        return facts


class ParallelTokenizerAdapter:
    """paralleltokenizer: `ParallelTokenizer` over a transformers fast tokenizer built from the staged files."""

    def __init__(self, req: dict) -> None:
        from parallel_tokenizer import ParallelTokenizer  # the peer: installed only in its own environment
        from transformers import PreTrainedTokenizerFast  # the peer's own dependency, in its environment

        inner = PreTrainedTokenizerFast(tokenizer_file=req["tokenizer_json"])
        self.inner = inner
        self.cls = ParallelTokenizer
        self.pools: dict[tuple[int, int], object] = {}

    def make(self, chunk: int, overlap: int):
        key = (chunk, overlap)
        if key not in self.pools:
            self.pools[key] = self.cls(
                tokenizer=self.inner,
                num_processes=1,
                chunk_size=chunk,
                overlap_length=overlap,
                concat_keys=["input_ids"],
            )
        return self.pools[key]

    def encode(self, text: str) -> dict:
        return {"ids": list(self.inner(text, add_special_tokens=False)["input_ids"])}

    def chunked(self, text: str, chunks: int | None, chunk_size: int | None = None, overlap: int = 512) -> dict:
        size = chunk_size or (max(1, -(-len(text) // chunks)) if chunks else 40960)
        pt = self.make(size, overlap)
        out = pt(text, add_special_tokens=False)
        return {"ids": [int(i) for i in out["input_ids"]], "chunk_size": size, "overlap": overlap}

    def info(self) -> dict:
        return {"distribution": "paralleltokenizer", "version": _version("paralleltokenizer")}


ADAPTERS = {
    "fastokens": FastokensAdapter,
    "gigatoken": GigatokenAdapter,
    "toktier": TokTierAdapter,
    "paralleltokenizer": ParallelTokenizerAdapter,
}


def _jsonable(obj):
    return json.loads(json.dumps(obj, default=str))


def handle(state: dict, req: dict) -> dict:
    """Answer one request; the adapter is built by the first `load`."""
    op = req.get("op")
    if op == "load":
        state["adapter"] = ADAPTERS[req["adapter"]](req)
        return {"info": state["adapter"].info()}
    adapter = state.get("adapter")
    if adapter is None:
        raise RuntimeError("no adapter loaded; send op=load first")
    if op == "encode":
        return adapter.encode(req["text"])
    if op == "encode_many":
        if hasattr(adapter, "encode_many"):
            return {"rows": adapter.encode_many(req["texts"])}
        return {"rows": [adapter.encode(t)["ids"] for t in req["texts"]]}
    if op == "encode_fresh":
        return adapter.encode_fresh(req["text"])
    if op == "session_open":
        return {"sid": adapter.session_open(**({"in_process": True} if req.get("in_process") else {}))}
    if op == "session_encode":
        return adapter.session_encode(int(req["sid"]), req["text"])
    if op == "session_close":
        close = getattr(adapter, "session_close", None)
        if callable(close):
            close(int(req["sid"]))
        return {}
    if op == "chunked":
        extra = {k: req[k] for k in ("chunk_size", "overlap") if k in req}
        return adapter.chunked(req["text"], req.get("chunks"), **extra)
    if op == "info":
        return {"info": adapter.info()}
    raise ValueError(f"unknown op {op!r}")


def main() -> int:
    proto = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    PROTOCOL_FDS.append(proto.fileno())
    os.dup2(2, 1)  # the peer's own prints now go to stderr
    sys.stdout = sys.stderr
    state: dict = {}
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
            start = time.perf_counter()
            answer = {"ok": True, **handle(state, req)}
            answer["server_seconds"] = time.perf_counter() - start  # the call alone, without the JSON transport
        except Exception as exc:  # noqa: BLE001 - every failure is answered, the server keeps serving
            answer = {"ok": False, "error": type(exc).__name__, "message": str(exc)[:2000]}
            traceback.print_exc(file=sys.stderr)
        proto.write(json.dumps(answer) + "\n")
        proto.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
