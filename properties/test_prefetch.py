"""The background build of peer environments (`subjects.prefetch`) and the gate's hook that starts it.

Invariants: a spec is a known peer with an optional non-empty version, checked before anything is built (exit 2
otherwise); an environment already built is found ready without pip; one that cannot be built is reported and
the command exits 3, never raising; the gate starts the command once, only when it collected a test that asks
for a peer, never with DELTA_PREFETCH=0, and stops it with its process group if it outlives the run.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from delta_suite.subjects import envs as E
from delta_suite.subjects import prefetch as P
from delta_suite.subjects.envs import MARKER, env_dir, requirements
from delta_suite.subjects.protocol import SubjectUnavailable

import properties.conftest as gate


def _built(home: Path, name: str, version: str) -> None:
    """A peer environment as `ensure_env` leaves it: its marker written last, with the requirements."""
    target = env_dir(name, version)
    target.mkdir(parents=True)
    (target / MARKER).write_text(json.dumps({"requirements": requirements(P.PEERS[name], version)}))


def test_a_built_environment_is_found_ready_and_a_failure_is_exit_3(tmp_path: Path, monkeypatch, capsys) -> None:
    """A built environment is ready without pip (exit 0); a peer whose build fails is named with pip's reason and
    the command exits 3; the other specs are still built."""
    monkeypatch.setenv("DELTA_HOME", str(tmp_path))
    _built(tmp_path, "fastokens", "0.1.2")
    assert P.prefetch(["fastokens==0.1.2"]) == [("fastokens==0.1.2", "ready fastokens-0.1.2")]
    assert P.main(["fastokens==0.1.2"]) == 0
    assert "fastokens==0.1.2: ready fastokens-0.1.2" in capsys.readouterr().out

    def no_pip(name: str, version: str) -> Path:
        raise SubjectUnavailable(name, "not installable here: pip failed")

    monkeypatch.setattr(P, "ensure_env", no_pip)
    monkeypatch.setattr(P, "resolve_version", lambda name, version: version or "9.9")
    assert P.prefetch(["toktier", "fastokens==0.1.2"]) == [
        ("toktier", "not built: not installable here: pip failed"),
        ("fastokens==0.1.2", "not built: not installable here: pip failed")]
    assert P.main(["toktier"]) == 3


@pytest.mark.parametrize("spec", ["nosuchpeer", "fastokens==", "==1.0"])
def test_a_bad_spec_is_a_usage_error_before_anything_is_built(spec: str, monkeypatch, capsys) -> None:
    """An unknown peer or an empty version: exit 2 with the known peers named, and nothing built."""
    built = []
    monkeypatch.setattr(P, "ensure_env", lambda name, version: built.append(name))
    assert P.main(["fastokens==0.1.2", spec]) == 2
    assert "not a peer spec" in capsys.readouterr().err and built == []


class FakePopen:
    started: list[list[str]] = []

    def __init__(self, args: list[str], **kw) -> None:
        FakePopen.started.append(args)
        self.pid = 0

    def poll(self) -> int:
        return 0


def test_the_gate_starts_the_prefetch_once_and_only_for_peer_tests(tmp_path: Path, monkeypatch) -> None:
    """Started once, with GATE_PEERS at the lowest priority, when the collected ids include a peer test file; not
    for other tests; not with DELTA_PREFETCH=0."""
    monkeypatch.setenv("DELTA_HOME", str(tmp_path))
    monkeypatch.delenv("DELTA_PREFETCH", raising=False)
    monkeypatch.setattr(gate.subprocess, "Popen", FakePopen)
    monkeypatch.setattr(gate, "_PREFETCH", None)
    FakePopen.started = []
    assert gate.start_peer_prefetch(["properties/test_cut_map.py::test_x"]) is None
    monkeypatch.setenv("DELTA_PREFETCH", "0")
    assert gate.start_peer_prefetch(["properties/test_subjects.py::test_y[qwen3_8b]"]) is None
    monkeypatch.delenv("DELTA_PREFETCH")
    assert FakePopen.started == []
    first = gate.start_peer_prefetch(["properties/test_cut_map.py::a", "properties/test_subject_wiring.py::b"])
    assert first is not None and gate.start_peer_prefetch(["properties/test_subjects.py::c"]) is None
    assert FakePopen.started == [[*gate.lowest_priority(), sys.executable, "-m", "delta_suite.subjects.prefetch",
                                  *gate.GATE_PEERS]]
    assert gate.lowest_priority()[1:] == ["-n", "19"]  # nice is on every machine the gate runs on
    assert (tmp_path / "subject-envs" / "logs" / "prefetch.log").is_file()
    assert all(P.parse_spec(s)[0] in P.PEERS for s in gate.GATE_PEERS)


def test_peer_environments_are_built_with_uv_unless_pip_is_asked_for(monkeypatch: pytest.MonkeyPatch,
                                                                      tmp_path: Path) -> None:
    """`uv_command`: the uv beside this interpreter when there is one, else the one on PATH, else None (pip);
    `DELTA_PEER_INSTALLER=pip` asks for pip whatever is installed."""
    beside = tmp_path / "bin"
    beside.mkdir()
    (beside / "uv").write_text("")
    monkeypatch.setattr(E.sys, "executable", str(beside / "python"))
    monkeypatch.delenv("DELTA_PEER_INSTALLER", raising=False)
    assert E.uv_command() == str(beside / "uv")
    monkeypatch.setenv("DELTA_PEER_INSTALLER", "pip")
    assert E.uv_command() is None
    monkeypatch.delenv("DELTA_PEER_INSTALLER")
    (beside / "uv").unlink()
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert E.uv_command() is None
