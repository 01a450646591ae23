"""A test server for one mutation session: loads the frozen tokenizers once, then forks a fresh pytest run per mutant.

Every pytest process of the suite first loads the provisioned tokenizers (the conftest's parameter lists need
them): about 25 s of a mutant's run on this machine, more than most killing tests take. The server pays it once.
It imports only what no mutant can change (the ground floor `frozen`, the third-party libraries, pytest) and
loads the tokenizers through `frozen.loader`'s per-process cache; each request forks a child that runs
`pytest.main` in a new session, importing `spec/`, `delta/` and everything above them from disk, so the child sees
the mutant cosmic-ray has just written exactly as a fresh process would. `preload` refuses to serve if any module
of the mutated packages got imported (the child would inherit the unmutated one).

Protocol (one request per connection, over a Unix socket): the client sends its stdout and stderr descriptors
with one JSON line (`{"args": [...], "cwd": "...", "env": {...}, "call": null}`: pytest's arguments, or with
`call` a module whose `main(args)` runs instead; `env` added to the child's environment); the server forks,
answers `{"pid": N}`, and when the child ends, `{"status": S}`. A client that goes away (cosmic-ray's timeout) gets
its child killed; a client that runs out of time kills the child's process group itself (mutation.mutant_tests).
Each connection is served by a process of its own (forked from the server, which goes on accepting), so requests
run side by side: a mutant's covering tests split over the cores (mutation.mutant_tests.through_server_parts).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import resource
import select
import signal
import socket
import sys
import threading
import time
from pathlib import Path

from delta_suite.frozen.loader import provisioned_names

from mutation.modules import MUTATED_PACKAGES, folder_name

MEMORY_VARIABLE = "MUTATION_MEMORY_LIMIT_GB"  # the address space each mutant's tests may take (default 8 GB)
DEFAULT_MEMORY_GB = 8.0


def memory_limit_bytes() -> int:
    """The address-space limit of a mutant's tests: a mutant can make a loop grow a list without end (seen: 13.6 GB
    before a run's time limit) and take the machine down with every other session; past the limit its allocation
    fails, its tests fail, and it counts as killed like a mutant that loops. MUTATION_MEMORY_LIMIT_GB sets it
    (0: none)."""
    try:
        gigabytes = float(os.environ.get(MEMORY_VARIABLE, DEFAULT_MEMORY_GB))
    except ValueError:
        gigabytes = DEFAULT_MEMORY_GB
    return int(gigabytes * 2**30) if gigabytes > 0 else resource.RLIM_INFINITY


def limit_memory() -> None:
    """Apply memory_limit_bytes to this process (and so to what it starts)."""
    limit, hard = memory_limit_bytes(), resource.getrlimit(resource.RLIMIT_AS)[1]
    if hard != resource.RLIM_INFINITY:
        limit = hard if limit == resource.RLIM_INFINITY else min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


SERVER_VARIABLE = "MUTATION_TEST_SERVER"  # the socket path, in the environment of cosmic-ray's test command
# libraries imported before forking (import time only; pytest and its plugins are left to each child, so that
# they start as in a fresh process)
THIRD_PARTY = ("tokenizers", "regex", "unicodedata2", "z3", "jinja2", "pyarrow", "rich")


class ServerError(RuntimeError):
    """The server cannot serve: a mutated module was imported before forking, or the socket is unusable."""


def preload(tree: Path) -> list[str]:
    """Import the libraries and, when `tree` is a copy of this suite (it has `frozen/`), load every provisioned
    frozen tokenizer into this process's cache; the names loaded. ServerError if that imported a module of the
    mutated packages."""
    for name in THIRD_PARTY:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    loaded = provisioned_names() if (tree / "frozen" / "loader.py").exists() else []
    leaked = mutated_imports()
    if leaked:
        raise ServerError(f"preloading imported modules a mutant can change: {', '.join(leaked)}")
    return loaded


def mutated_imports() -> list[str]:
    """The modules of the mutated packages imported in this process (by their installed names, `delta_suite.spec`
    and below, or by their folders' names, as a toy checkout's are)."""
    return sorted(m for m in sys.modules if folder_name(m).split(".")[0] in MUTATED_PACKAGES)


def _child(request: dict, fds: list[int], listener: socket.socket, conn: socket.socket) -> None:
    """In the forked child: a session of its own, the client's stdout and stderr, the default signal handlers, the
    requested working directory; pytest's exit status as the process's."""
    status = 3
    try:
        listener.close()
        conn.close()
        os.setsid()
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD):
            signal.signal(sig, signal.SIG_DFL)
        os.dup2(fds[0], 1)
        os.dup2(fds[1], 2)
        for fd in fds:
            os.close(fd)
        os.chdir(request["cwd"])
        sys.path.insert(0, request["cwd"])
        os.environ.update({str(k): str(v) for k, v in (request.get("env") or {}).items()})
        limit_memory()
        if request.get("call"):  # a module's `main(args)` instead of pytest (mutation.kill_tier)
            status = int(importlib.import_module(str(request["call"])).main(list(request["args"])))
            return
        import pytest  # here, not in the server: each child loads pytest and its plugins as a fresh process does

        # pytest marks the suite's own packages for assertion rewriting; `frozen` and this package are already
        # imported here, which only costs their (non-test) asserts the detailed messages: not worth a warning
        status = int(pytest.main(["-W", "ignore::pytest.PytestAssertRewriteWarning", *request["args"]]))
    except BaseException as exc:  # anything escaping pytest must still end this child, never return to the loop
        with contextlib.suppress(Exception):
            print(f"mutation.fork_server: the child failed: {exc!r}", file=sys.stderr)
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(status)


def _receive(conn: socket.socket) -> tuple[dict, list[int]]:
    """One request: its JSON line and the two descriptors sent with it."""
    msg, fds, _, _ = socket.recv_fds(conn, 1 << 16, 2)
    while not msg.endswith(b"\n"):
        more = conn.recv(1 << 16)
        if not more:
            break
        msg += more
    if len(fds) != 2:
        for fd in fds:
            os.close(fd)
        raise ServerError("a request without its stdout and stderr")
    return json.loads(msg), fds


_RUNNING: set[int] = set()  # the children forked and not yet reaped (each the leader of a session of its own)
_HANDLERS: set[int] = set()  # in the server: the processes serving one connection each (mutation.fork_server.serve)


def _serve_one(listener: socket.socket, conn: socket.socket) -> None:
    request, fds = _receive(conn)
    pid = os.fork()
    if pid == 0:
        _child(request, fds, listener, conn)
    _RUNNING.add(pid)
    try:
        _answer(conn, fds, pid)
    finally:
        _RUNNING.discard(pid)


def _answer(conn: socket.socket, fds: list[int], pid: int) -> None:
    """Send the client its child's pid, then the child's exit status; a client that goes away takes its child."""
    for fd in fds:
        os.close(fd)
    conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            conn.sendall(json.dumps({"status": os.waitstatus_to_exitcode(status)}).encode() + b"\n")
            return
        readable, _, _ = select.select([conn], [], [], 0.2)
        if readable and not conn.recv(1):  # the client went away: its child goes too
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return


def _terminated(_signum: int, _frame) -> None:
    """SIGTERM: the tests of a running child stop with the server (SIGKILL to its session; in the server, SIGTERM to
    each connection's handler, which does the same for its child), then the loop ends."""
    for pid in list(_RUNNING):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
    for pid in list(_HANDLERS):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    for pid in list(_HANDLERS):
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
    sys.exit(0)


def _reap_handlers() -> None:
    """Reap the connections' handlers that have ended."""
    for pid in list(_HANDLERS):
        with contextlib.suppress(ChildProcessError):
            done, _ = os.waitpid(pid, os.WNOHANG)
            if not done:
                continue
        _HANDLERS.discard(pid)


def _handle(listener: socket.socket, conn: socket.socket) -> None:
    """Serve one connection in a process of its own, so that requests run side by side (a mutant's tests split
    over the cores, mutation.mutant_tests): it forks the pytest child and answers as the server did; SIGTERM stops
    its child (_terminated)."""
    pid = os.fork()
    if pid:
        _HANDLERS.add(pid)
        return
    status = 0
    try:
        listener.close()
        _HANDLERS.clear()
        signal.signal(signal.SIGTERM, _terminated)
        _serve_one(listener, conn)
    except (OSError, ServerError, ValueError) as exc:
        print(f"mutation.fork_server: request dropped: {exc}", file=sys.stderr, flush=True)
    except BaseException:  # SystemExit from _terminated, or anything else: this process ends here, never loops
        status = 1
    finally:
        os._exit(status)


def serve(path: Path) -> None:
    """Serve requests on the Unix socket at `path` until terminated (SIGTERM ends the loop cleanly; SIGINT is
    ignored, so that a child's tests are stopped through their client, then the server by its session)."""
    path.unlink(missing_ok=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(4)
    signal.signal(signal.SIGTERM, _terminated)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C: the session stops the tests, then the server
    print(f"serving on {path}", flush=True)
    try:
        while True:
            conn, _ = listener.accept()
            with conn:
                _reap_handlers()
                _handle(listener, conn)
    finally:
        listener.close()
        path.unlink(missing_ok=True)


class _Lines:
    """The JSON lines of a connection, read without buffering past what `select` can see."""

    def __init__(self, conn: socket.socket) -> None:
        self.conn, self.buffer = conn, b""

    def next(self, timeout: float | None = None) -> dict | None:
        """The next line as JSON; None when `timeout` seconds pass first. ServerError when the connection ends."""
        while b"\n" not in self.buffer:
            if timeout is not None:
                readable, _, _ = select.select([self.conn], [], [], max(0.0, timeout))
                if not readable:
                    return None
            more = self.conn.recv(1 << 12)
            if not more:
                raise ServerError("the test server closed the connection")
            self.buffer += more
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)


STOPPED = -1  # what run_tests returns when its `stop` event was set: the tests were stopped, not judged


def run_tests(path: Path, args: list[str], cwd: Path, limit: float | None, env: dict[str, str] | None = None,
              call: str | None = None, stop: threading.Event | None = None) -> int | None:
    """Run pytest with `args` in `cwd` through the server at `path` (or, with `call`, that module's `main(args)`),
    with `env` added to the child's environment, this process's stdout and stderr being the tests'; the exit
    status, or None when the tests outlive `limit` seconds (their process group is then killed; None: no limit),
    or STOPPED once `stop` is set (another part of the same mutant's tests has failed: these are killed).
    ServerError when the server cannot be reached or the connection breaks."""
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(str(path))
    except OSError as exc:
        raise ServerError(f"no test server at {path}: {exc}") from exc
    with conn:
        request = {"args": args, "cwd": str(cwd), "env": env or {}, "call": call}
        socket.send_fds(conn, [json.dumps(request).encode() + b"\n"], [1, 2])
        lines = _Lines(conn)
        pid = int((lines.next() or {})["pid"])
        deadline = None if limit is None else time.monotonic() + limit
        while True:
            wait = STOP_POLL_SECONDS if stop is not None else None
            if deadline is not None:
                left = deadline - time.monotonic()
                wait = left if wait is None else min(wait, left)
            answer = lines.next(timeout=None if wait is None else max(0.0, wait))
            if answer is not None:
                return int(answer["status"])
            if stop is not None and stop.is_set():
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pid, signal.SIGKILL)
                return STOPPED
            if deadline is not None and time.monotonic() >= deadline:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pid, signal.SIGKILL)
                return None


STOP_POLL_SECONDS = 0.2  # how often a request watched by a `stop` event looks at it


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m mutation.fork_server", description=__doc__.split("\n\n")[0])
    p.add_argument("--socket", type=Path, required=True)
    args = p.parse_args(argv)
    try:
        loaded = preload(Path.cwd())
        print(f"loaded {len(loaded)} tokenizers: {' '.join(loaded)}", flush=True)
        serve(args.socket)
    except ServerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 3
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
