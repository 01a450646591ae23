"""The suite's side of an `exec:` subject: start the command, say hello, and ask for IDs over JSON lines.

The protocol is `subjects.exec_protocol` (version 1). One server process answers every call, in order; a
session is a server-side object that receives the growing transcript. Invariant: every call returns the IDs the
server sent for exactly that request, or raises `SubjectFault` (crash, timeout, malformed) naming the request;
after a timeout or a crash that killed the server, the next call starts a new server (and its hello), so a
campaign goes on. A server that cannot start or fails its hello is `SubjectUnavailable`.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from delta_suite.subjects.envs import envs_root
from delta_suite.subjects.exec_protocol import answer_ids, check_hello, hello, parse_answer
from delta_suite.subjects.protocol import SubjectFault, SubjectUnavailable
from delta_suite.subjects.user_inputs import tokenizer_files

if TYPE_CHECKING:
    from delta_suite.frozen.loader import FrozenTokenizer


class _Server:
    """One running server process with a reader thread feeding its answer lines into a queue."""

    def __init__(self, command: list[str], log: Path) -> None:
        self.log = open(log, "a", encoding="utf-8")  # noqa: SIM115 - closed with the server
        try:
            self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
                                         text=True, encoding="utf-8", bufsize=1, start_new_session=True)
        except OSError as exc:
            self.log.close()
            raise SubjectUnavailable(" ".join(command), f"cannot start {command[0]}: {exc.strerror or exc}") from exc
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)  # end of output: the server exited

    def ask(self, request: dict, timeout: float) -> str:
        """Send one request line and wait for one answer line (raw); SubjectFault on timeout or exit."""
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(request, ensure_ascii=True) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise SubjectFault("crash", f"the server is gone (exit {self.proc.poll()}): {exc}") from exc
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise SubjectFault("timeout", f"no answer to {request['op']} within {timeout:g} s") from None
        if line is None:
            code = self.proc.wait(timeout=5)
            raise SubjectFault("crash", f"the server exited with status {code} during {request['op']}")
        return line

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, 9)
            except ProcessLookupError:
                pass
            self.proc.wait(timeout=10)
        self.log.close()


class ExecSubject:
    """A subject served by `command` over the exec: protocol, bound to one tokenizer."""

    def __init__(self, tok: FrozenTokenizer, spec: str, command: list[str], timeout: float) -> None:
        self.tok, self.spec, self.command, self.timeout = tok, spec, command, timeout
        files = tokenizer_files(tok)
        self._hello = hello(files["name"], files["sha256"], files["tokenizer_json"], files["tokenizer_config_json"])
        log_dir = envs_root() / "logs"
        log_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = log_dir / f"exec-{os.getpid()}-{id(self)}.log"
        self.generation = 0
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._start()
        if "session" in self.paths:
            self.session = self._session
        if "encode_chunked" in self.paths:
            self.encode_chunked = self._encode_chunked

    def _start(self) -> None:
        server = _Server(self.command, self.log_path)
        try:
            answer = parse_answer(server.ask(self._hello, max(self.timeout, 60.0)), "hello")
            self.name, self.version, self.paths = check_hello(answer)
        except (SubjectFault, ValueError) as exc:
            server.stop()
            raise SubjectUnavailable(self.spec, f"hello failed: {exc} (server log {self.log_path})") from exc
        self._server, self.generation = server, self.generation + 1

    def _ask(self, request: dict) -> dict:
        with self._lock:
            if self._server is None or self._server.proc.poll() is not None:
                self._start()  # the last server died or was killed after a timeout: a new one, new hello
            assert self._server is not None
            try:
                return parse_answer(self._server.ask(request, self.timeout), request["op"])
            except SubjectFault as fault:
                if fault.kind == "timeout" or self._server.proc.poll() is not None:
                    self._server.stop()
                    self._server = None
                raise

    def encode(self, text: str) -> list[int]:
        return answer_ids(self._ask({"op": "encode", "text": text}), "encode")

    def _encode_chunked(self, text: str, chunks: int | None = None) -> list[int]:
        return answer_ids(self._ask({"op": "encode_chunked", "text": text, "chunks": int(chunks or 2)}),
                          "encode_chunked")

    def _session(self) -> _ExecSession:
        answer = self._ask({"op": "session_open"})
        if not isinstance(answer.get("session"), int):
            raise SubjectFault("malformed", f"answer to session_open has no integer 'session': {answer}")
        return _ExecSession(self, answer["session"], self.generation)

    def close(self) -> None:
        with self._lock:
            if self._server is not None:
                try:
                    self._server.ask({"op": "bye"}, 5.0)
                except SubjectFault:
                    pass
                self._server.stop()
                self._server = None


class _ExecSession:
    def __init__(self, owner: ExecSubject, sid: int, generation: int) -> None:
        self.owner, self.sid, self.generation = owner, sid, generation

    def encode(self, text: str) -> list[int]:
        if self.generation != self.owner.generation:
            raise SubjectFault("crash", "the session's server was restarted; the session is gone")
        return answer_ids(self.owner._ask({"op": "session_encode", "session": self.sid, "text": text}),
                          "session_encode")

    def close(self) -> None:
        if self.generation == self.owner.generation:
            try:
                self.owner._ask({"op": "session_close", "session": self.sid})
            except SubjectFault:
                pass
