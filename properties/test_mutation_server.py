"""The mutation profile's test server (mutation/fork_server.py): forked children run pytest as a fresh process
would, with the caller's output and exit status; a child past its time limit is killed; a server that imported a
mutated module refuses to serve; a kill through the server counts once the killing test passes there on the
unmutated module, else the mutant's tests run in a process of their own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from mutation.coverage_map import CoverageMap, save_map
from mutation.fork_server import SERVER_VARIABLE, ServerError, preload, run_tests
from mutation.mutant_tests import (
    Overrun,
    killers_first,
    note_killers,
    split_tests,
    through_server,
    through_server_parts,
)
from mutation.session import CLIENT, ForkServer
from properties.mutation_toys import TOY, toy_server

ROOT = Path(__file__).resolve().parents[1]

PASSING = "from toy.below import below\n\n\ndef test_below():\n    assert below(2) and not below(5)\n"
FAILING = "from toy.below import below\n\n\ndef test_below():\n    assert below(5)\n"
FRESH_ONLY = "import sys\n\n\ndef test_fresh():\n    assert 'mutation.modules' not in sys.modules\n"
SLOW = ("import os\nimport time\nfrom pathlib import Path\n\n\ndef test_slow():\n"
        "    Path('slow.pid').write_text(str(os.getpid()))\n    time.sleep(600)\n")
QUICK = ["-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-p", "no:xdist"]
MEET = ("import time\nfrom pathlib import Path\n\n\ndef test_meet():\n    Path('{me}.flag').write_text('1')\n"
        "    for _ in range(300):\n        if Path('{other}.flag').exists():\n            return\n"
        "        time.sleep(0.1)\n    raise AssertionError('the other request never ran beside this one')\n")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    """A test server in a toy checkout (no frozen tokenizers to load), stopped after the module's tests."""
    yield from toy_server(tmp_path_factory.mktemp("server"), {
        "test_pass.py": PASSING, "test_also.py": PASSING, "test_fail.py": FAILING, "test_fresh.py": FRESH_ONLY,
        "test_slow.py": SLOW,
        "test_meet_a.py": MEET.format(me="a", other="b"), "test_meet_b.py": MEET.format(me="b", other="a")})


def _client(srv: ForkServer, *args: str) -> subprocess.CompletedProcess:
    # the client imports the profile, which is not installed: the server's environment holds it on the path
    return subprocess.run([sys.executable, "-c", CLIENT, str(srv.path), *QUICK, *args], cwd=srv.tree,
                          env=srv.env, capture_output=True, text=True)


def test_children_report_pytests_status_and_output(server: ForkServer) -> None:
    """A passing file exits 0, a failing one 1, a missing one 4 (pytest's statuses), each child's report on the
    client's own output; the module edited between two requests is the one the next child imports."""
    ok = _client(server, "test_pass.py")
    assert ok.returncode == 0 and "1 passed" in ok.stdout
    bad = _client(server, "test_fail.py")
    assert bad.returncode == 1 and "1 failed" in bad.stdout
    assert _client(server, "test_missing.py").returncode == 4
    module = server.tree / "toy" / "below.py"
    module.write_text(TOY.replace("x < 3", "x > 3"), encoding="utf-8")  # as cosmic-ray writes a mutant
    try:
        assert _client(server, "test_pass.py").returncode == 1
        assert _client(server, "test_fail.py").returncode == 0
    finally:
        module.write_text(TOY, encoding="utf-8")


def test_a_child_past_its_limit_is_killed(server: ForkServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """run_tests returns None when the tests outlive the limit, and their process is gone (not left running)."""
    monkeypatch.chdir(server.tree)
    pid_file = server.tree / "slow.pid"
    pid_file.unlink(missing_ok=True)
    assert run_tests(server.path, [*QUICK, "test_slow.py"], server.tree, 5.0) is None
    pid = int(pid_file.read_text(encoding="utf-8"))
    for _ in range(300):  # the server reaps it; at most 30 s
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"the timed-out child {pid} is still running")
    assert _client(server, "test_pass.py").returncode == 0  # the server serves on


# slow tier: two real pytest runs of the opt-in mutation profile's fork server (about 26 s)
@pytest.mark.slow
def test_a_kill_counts_once_its_test_passes_unmutated(server: ForkServer, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the server, a failing test kills the mutant only once it has passed on the unmutated module there
    (checked once, then known); a test that fails there too (it sees the server's imports) sends the mutant to a
    process of its own (None); a passing run is a survivor (0)."""
    monkeypatch.chdir(server.tree)
    module, pristine = Path("toy/below.py"), tmp_path / "pristine.py"
    pristine.write_text(TOY, encoding="utf-8")
    verified = tmp_path / "verified.json"
    args = [*QUICK, "test_pass.py"]
    assert through_server(server.path, args, module, pristine, verified, 60.0) == 0
    module.write_text(TOY.replace("x < 3", "x > 3"), encoding="utf-8")  # the mutant
    try:
        assert through_server(server.path, args, module, pristine, verified, 60.0) == 1
        assert module.read_text(encoding="utf-8") != TOY  # the mutant is back in place after the check
        known = json.loads(verified.read_text(encoding="utf-8"))
        assert (known["pass"], known["fail"]) == (["test_pass.py::test_below"], [])
        assert known["killers"] == ["test_pass.py::test_below"]  # the next mutant of the session runs it first
        assert through_server(server.path, args, module, pristine, verified, 60.0) == 1
        fresh = subprocess.run([sys.executable, "-m", "pytest", *QUICK, "test_fresh.py"], capture_output=True,
                               text=True)
        assert fresh.returncode == 0, fresh.stdout  # in a process of its own it passes
        assert through_server(server.path, [*QUICK, "test_fresh.py"], module, pristine, verified, 60.0) is None
        assert "test_fresh.py::test_fresh" in json.loads(verified.read_text(encoding="utf-8"))["fail"]
        # a mutant that breaks the import fails the file at collection: collecting it unmutated is the check
        module.write_text("def below(x):\n    return x <\n", encoding="utf-8")
        assert through_server(server.path, args, module, pristine, verified, 60.0) == 2
        assert "test_pass.py" in json.loads(verified.read_text(encoding="utf-8"))["pass"]
        assert json.loads(verified.read_text(encoding="utf-8"))["killers"] == ["test_pass.py::test_below",
                                                                              "test_pass.py"]
        assert through_server(tmp_path / "none.sock", args, module, pristine, verified, 60.0) is None
    finally:
        module.write_text(TOY, encoding="utf-8")


def test_requests_run_side_by_side(server: ForkServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each connection is served by a process of its own: two requests run at once (each test waits for the
    other's flag, which a server serving one request at a time never lets it see)."""
    monkeypatch.chdir(server.tree)
    for flag in ("a.flag", "b.flag"):
        Path(flag).unlink(missing_ok=True)
    statuses: dict[str, int | None] = {}
    threads = [threading.Thread(target=lambda n=n: statuses.__setitem__(
        n, run_tests(server.path, [*QUICK, f"test_meet_{n}.py"], server.tree, 120.0))) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert statuses == {"a": 0, "b": 0}


def _gone(pid: int) -> bool:
    for _ in range(300):  # at most 30 s
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def test_a_mutants_tests_split_in_parts_stop_at_the_first_failure(server: ForkServer, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Split over two children, a mutant's tests are judged as in one: every part passing is a survivor (0); a part
    failing kills the mutant once its test passes unmutated (1), and the other part, still running, is stopped."""
    monkeypatch.chdir(server.tree)
    module, pristine = Path("toy/below.py"), tmp_path / "pristine.py"
    pristine.write_text(TOY, encoding="utf-8")
    verified = tmp_path / "verified.json"
    assert through_server_parts(server.path, [["test_pass.py"], ["test_also.py"]], module, pristine, verified,
                                60.0) == 0
    module.write_text(TOY.replace("x < 3", "x > 3"), encoding="utf-8")  # the mutant
    pid_file = server.tree / "slow.pid"
    pid_file.unlink(missing_ok=True)
    try:
        # past 60 s the slow part would end as a budget's overrun (0): the failing part must stop it first
        assert through_server_parts(server.path, [["test_slow.py"], ["test_pass.py"]], module, pristine, verified,
                                    60.0, over=Overrun("unfinished", 0)) == 1
        assert json.loads(verified.read_text(encoding="utf-8"))["pass"] == ["test_pass.py::test_below"]
        assert json.loads(verified.read_text(encoding="utf-8"))["killers"] == ["test_pass.py::test_below"]
    finally:
        module.write_text(TOY, encoding="utf-8")
    assert _gone(int(pid_file.read_text(encoding="utf-8"))), "the slow part was not stopped"


def test_tests_split_into_parts_of_about_equal_time() -> None:
    """The longest first, each to the part with the least time so far; each part fastest first; no empty part."""
    seconds = {"a": 9.0, "b": 5.0, "c": 4.0, "d": 1.0}.__getitem__
    assert split_tests(["a", "b", "c", "d"], seconds, 2) == [["d", "a"], ["c", "b"]]
    assert split_tests(["a", "b"], seconds, 4) == [["a"], ["b"]]
    assert split_tests(["a"], seconds, 1) == [["a"]]


def test_the_latest_killers_run_first(tmp_path: Path) -> None:
    """A session's killers, named without parameters and the latest last, lead each later mutant's tests: the latest
    killer first, then a whole file holding one, then the rest in their order (fastest first); the same tests."""
    verified = tmp_path / "verified.json"
    note_killers(verified, ["a.py::t[1]", "a.py::t[2]"])
    note_killers(verified, ["b.py::u"])
    note_killers(verified, ["a.py::t[3]"])
    killers = json.loads(verified.read_text(encoding="utf-8"))["killers"]
    assert killers == ["b.py::u", "a.py::t"]
    tests = ["c.py::v", "b.py::u", "d.py", "a.py::t", "e.py::w"]
    assert killers_first(tests, killers) == ["a.py::t", "b.py::u", "c.py::v", "d.py", "e.py::w"]
    assert killers_first(tests, ["d.py::gone"]) == ["d.py", "c.py::v", "b.py::u", "a.py::t", "e.py::w"]
    assert killers_first(tests, []) == tests == killers_first(tests, ["x.py::elsewhere"])


def test_a_mutants_tests_list_the_sessions_killers_first(tmp_path: Path) -> None:
    """The command a mutant runs lists its tests (`.mutant-tests`) fastest first, the session's killers ahead."""
    (tmp_path / "m.py").write_text(TOY, encoding="utf-8")
    (tmp_path / "pristine.py").write_text(TOY, encoding="utf-8")
    for name in ("a", "b"):
        (tmp_path / f"test_{name}.py").write_text(f"import m\n\n\ndef test_{name}():\n    assert m.below(2)\n",
                                                  encoding="utf-8")
    save_map(CoverageMap("d", "c", [("test_a.py::test_a", 1.0), ("test_b.py::test_b", 5.0)], {"m.py": {2: [0, 1]}}),
             tmp_path / "map.json")
    (tmp_path / "m.py").write_text(TOY.replace("x < 3", "x <= 3"), encoding="utf-8")
    command = [sys.executable, "-m", "mutation.mutant_tests", "--map", str(tmp_path / "map.json"), "--module", "m.py",
               "--pristine", str(tmp_path / "pristine.py")]
    env = {k: v for k, v in os.environ.items() if k != SERVER_VARIABLE}
    listed = []
    for killers in ([], ["test_b.py::test_b"]):
        verified = tmp_path / "verified.json"
        verified.write_text(json.dumps({"pass": killers, "fail": [], "killers": killers}), encoding="utf-8")
        done = subprocess.run([*command, "--verified", str(verified)], cwd=tmp_path, capture_output=True, text=True,
                              env=dict(env, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)])))
        assert done.returncode == 0, done.stdout + done.stderr  # the mutant survives both tests
        listed.append((tmp_path / ".mutant-tests").read_text(encoding="utf-8").split())
    assert listed == [["test_a.py::test_a", "test_b.py::test_b"], ["test_b.py::test_b", "test_a.py::test_a"]]


def test_no_server_is_an_error_the_client_reports(tmp_path: Path) -> None:
    with pytest.raises(ServerError, match="no test server"):
        run_tests(tmp_path / "none.sock", ["x"], tmp_path, 1.0)


def test_preload_refuses_after_a_mutated_module_was_imported(tmp_path: Path) -> None:
    """This process has imported spec/ (the conftest does): a server in its state would hand the unmutated modules
    to its children, so preloading refuses."""
    assert "delta_suite.spec.admission" in sys.modules
    with pytest.raises(ServerError, match="delta_suite.spec.admission"):
        preload(tmp_path)
