"""The mutation profile's test server (mutation/fork_server.py): forked children run pytest as a fresh process
would, with the caller's output and exit status; a child past its time limit is killed; a server that imported a
mutated module refuses to serve; a module whose tests fail only through the server (its baseline) is run with a
process per mutant instead.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mutation.fork_server import ServerError, preload, run_tests
from mutation.session import BASELINE_CLIENT, ForkServer
from mutation.tree import tree_environment

TOY = "def below(x):\n    return x < 3\n"
PASSING = "from toy.below import below\n\n\ndef test_below():\n    assert below(2) and not below(5)\n"
FAILING = "from toy.below import below\n\n\ndef test_below():\n    assert below(5)\n"
FRESH_ONLY = "import sys\n\n\ndef test_fresh():\n    assert 'mutation.modules' not in sys.modules\n"
SLOW = ("import os\nimport time\nfrom pathlib import Path\n\n\ndef test_slow():\n"
        "    Path('slow.pid').write_text(str(os.getpid()))\n    time.sleep(600)\n")
QUICK = ["-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-p", "no:xdist"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    """A test server in a toy checkout (no frozen tokenizers to load), stopped after the module's tests."""
    tree = tmp_path_factory.mktemp("server") / "tree"
    (tree / "toy").mkdir(parents=True)
    (tree / "toy" / "__init__.py").write_text("", encoding="utf-8")
    (tree / "toy" / "below.py").write_text(TOY, encoding="utf-8")
    for name, text in [("test_pass.py", PASSING), ("test_fail.py", FAILING), ("test_fresh.py", FRESH_ONLY),
                       ("test_slow.py", SLOW)]:
        (tree / name).write_text(text, encoding="utf-8")
    env = tree_environment(tree, tree.parent / "ledgers")
    srv = ForkServer(tree.parent / "tests.sock", tree, env)
    assert srv.started(), srv.log.read_text(encoding="utf-8")
    yield srv
    srv.stop()


def _client(srv: ForkServer, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", BASELINE_CLIENT, str(srv.path), *QUICK, *args], cwd=srv.tree,
                          capture_output=True, text=True)


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


def test_baseline_through_the_server(server: ForkServer, tmp_path: Path) -> None:
    """A module's tests that pass through the server make it ready (recorded, so a resumed session skips the
    baseline); tests that fail only through it (they see the server's imports) make the session fall back to a
    process per mutant."""
    record = tmp_path / "baseline.json"
    assert server.ready(("test_pass.py",), record, "digest")
    assert record.exists()
    assert server.ready(("test_pass.py",), record, "digest")
    fresh = subprocess.run([sys.executable, "-m", "pytest", *QUICK, "test_fresh.py"], cwd=server.tree,
                           capture_output=True, text=True)
    assert fresh.returncode == 0, fresh.stdout  # in a process of its own it passes
    assert not server.ready(("test_pass.py", "test_fresh.py"), tmp_path / "other.json", "digest")


def test_no_server_is_an_error_the_client_reports(tmp_path: Path) -> None:
    with pytest.raises(ServerError, match="no test server"):
        run_tests(tmp_path / "none.sock", ["x"], tmp_path, 1.0)


def test_preload_refuses_after_a_mutated_module_was_imported(tmp_path: Path) -> None:
    """This process has imported spec/ (the conftest does): a server in its state would hand the unmutated modules
    to its children, so preloading refuses."""
    assert "spec.admission" in sys.modules
    with pytest.raises(ServerError, match="spec.admission"):
        preload(tmp_path)
