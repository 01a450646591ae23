"""The mutation profile's kill tier (mutation/kill_tier.py, mutation.mutant_tests.kill_tier): its tokenizers cover
every split pattern and a normalizer; its checks find nothing on the unmutated code and find a broken session, a
broken chunked encode and a raising one; through a test server, a tier kill counts only when the tier's checks find
nothing on the unmutated module, a mutant they let through goes on (None), and a quick test's failure kills under
the small Hypothesis budget once it passes unmutated. Every command that judges mutants takes a tier mode (auto, the
default: after the covering tests quicker than the tier, before the rest; on; off).
"""

from __future__ import annotations

import json
from pathlib import Path

import delta_suite.checks.differential as differential
import pytest
from delta_suite.delta.session import Session
from delta_suite.frozen.loader import load_tokenizer, provisioned_names
from delta_suite.spec.admission import admission_of

from mutation.cli import main as mutation_main
from mutation.coverage_map import CoverageMap
from mutation.fork_server import MEMORY_VARIABLE, run_tests
from mutation.kill_tier import run_tier, tier_tokenizers
from mutation.mutant_tests import TIER_KILL_MARK, TIER_MODES, before_tier, kill_tier, tier_seconds
from mutation.session import ForkServer
from mutation.session import test_command as mutant_command
from properties.mutation_toys import TOY, toy_server

TIER = ("import sys\nfrom toy.below import below\n\n\ndef main(args):\n    ok = below(2) and not below(5)\n"
        "    print('toy tier:', 'no difference' if ok else 'difference')\n    return 0 if ok else 1\n")
CONFTEST = ("import os\nfrom hypothesis import settings\n\n"  # as the gate's conftest loads its profile
            "settings.load_profile(os.environ.get('DELTA_HYPOTHESIS_PROFILE', 'default'))\n")
ALWAYS = "def main(args):\n    return 1\n"  # a tier that finds a difference on the unmutated module too
GREEDY = "def test_greedy():\n    assert len(bytearray(3 * 2**29)) == 3 * 2**29\n"  # 1.5 GB
PASSING = "from toy.below import below\n\n\ndef test_below():\n    assert below(2) and not below(5)\n"
HYPOTHESIS = ("from hypothesis import given, settings, strategies as st\nfrom toy.below import below\n\n\n"
              "@given(st.integers(0, 2))\ndef test_small(x):\n    assert below(x)\n\n\n"
              "def test_budget():\n    assert settings.default.max_examples == 10\n")


def test_tier_tokenizers_cover_each_split_pattern_and_a_normalizer() -> None:
    """One tokenizer per admitted split pattern among the provisioned ones, and one with a normalizer."""
    names = tier_tokenizers()
    patterns = [admission_of(load_tokenizer(n)).pattern for n in names]
    every = {admission_of(load_tokenizer(n)).pattern for n in provisioned_names()
             if admission_of(load_tokenizer(n)).admitted}
    assert len(patterns) == len(set(patterns)) and set(patterns) == every
    assert any(load_tokenizer(n).normalizer not in ("none", "empty_sequence") for n in names)


@pytest.fixture
def one() -> str:
    return tier_tokenizers()[0]


def test_the_tier_finds_nothing_on_the_unmutated_code(one: str) -> None:
    tally = run_tier([one], ("short",))
    assert tally.difference is None and tally.comparisons["short"] > 100


def test_the_tier_finds_a_wrong_session(one: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A session wrong on texts ending in "a" is found among the short texts; one that raises is found too."""
    real = Session.encode
    monkeypatch.setattr(Session, "encode", lambda self, text: real(self, text)[:-1] if text.endswith("a")
                        else real(self, text))
    tally = run_tier([one], ("short",))
    assert tally.difference is not None and "Session" in tally.difference

    def raising(self, text):
        raise IndexError("planted")

    monkeypatch.setattr(Session, "encode", raising)
    tally = run_tier([one], ("short", "battery"))
    assert tally.difference is not None and "raised IndexError: planted" in tally.difference


def test_the_battery_step_finds_a_wrong_chunked_encode(one: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A chunked encode that drops the last ID of long texts passes the short texts (never cut) and is found by
    the battery's differential checks."""
    real = differential.encode_chunked
    monkeypatch.setattr(differential, "encode_chunked", lambda tok, text, **kw: list(real(tok, text, **kw))[:-1])
    tally = run_tier([one], ("short", "battery"))
    assert tally.difference is not None and tally.difference.startswith(f"battery on {one}: check_cut_case")
    assert tally.comparisons["short"] > 0


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    """A test server in a toy checkout with toy tiers (no tokenizers to load)."""
    yield from toy_server(tmp_path_factory.mktemp("tier"), {
        "toy_tier.py": TIER, "toy_always.py": ALWAYS, "test_pass.py": PASSING, "conftest.py": CONFTEST,
        "test_hypothesis.py": HYPOTHESIS, "test_greedy.py": GREEDY})


def test_a_tier_kill_counts_once_the_tier_passes_unmutated(server: ForkServer, tmp_path: Path, capfd,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The tier's checks run on the unmutated module first (once, kept with their time); a mutant they tell apart
    is killed with the tier's mark, one they let through goes on to its covering tests (None); a tier that finds a
    difference on the unmutated module too kills nothing."""
    monkeypatch.chdir(server.tree)
    module, pristine = Path("toy/below.py"), tmp_path / "pristine.py"
    pristine.write_text(TOY, encoding="utf-8")
    verified = tmp_path / "verified.json"
    try:
        module.write_text(TOY.replace("x < 3", "x < 6"), encoding="utf-8")  # below(5) now holds: told apart
        assert kill_tier(server.path, module, pristine, verified, [], 60.0, "toy_tier") == 1
        assert TIER_KILL_MARK in capfd.readouterr().out
        baseline = json.loads(verified.read_text(encoding="utf-8"))["tier"]
        assert baseline["usable"] is True and baseline["seconds"] > 0
        assert module.read_text(encoding="utf-8") == TOY.replace("x < 3", "x < 6")  # the mutant is back
        module.write_text(TOY.replace("x < 3", "x < 4"), encoding="utf-8")  # 2 and 5 as before: let through
        assert kill_tier(server.path, module, pristine, verified, [], 60.0, "toy_tier") is None
        other = tmp_path / "other.json"
        module.write_text(TOY.replace("x < 3", "x < 6"), encoding="utf-8")
        assert kill_tier(server.path, module, pristine, other, [], 60.0, "toy_always") is None
        assert json.loads(other.read_text(encoding="utf-8"))["tier"]["usable"] is False
    finally:
        module.write_text(TOY, encoding="utf-8")


def test_quick_tests_kill_under_the_small_budget(server: ForkServer, tmp_path: Path, capfd,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A mutant the tier's checks let through meets its quick covering tests under the `mutation-tier` Hypothesis
    budget (ten examples): a failing one kills it once it passes on the unmutated module under the same budget."""
    monkeypatch.chdir(server.tree)
    module, pristine = Path("toy/below.py"), tmp_path / "pristine.py"
    pristine.write_text(TOY, encoding="utf-8")
    verified = tmp_path / "verified.json"
    quick = ["test_hypothesis.py"]
    try:
        assert kill_tier(server.path, module, pristine, verified, quick, 60.0, "toy_tier") is None
        assert "2 passed" in capfd.readouterr().out  # test_budget: ten examples, the tier's budget
        module.write_text(TOY.replace("x < 3", "x < 3 and x != 1"), encoding="utf-8")  # only x = 1: Hypothesis
        assert kill_tier(server.path, module, pristine, verified, quick, 60.0, "toy_tier") == 1
        assert "its quick tests" in capfd.readouterr().out
        assert "mutation-tier:test_hypothesis.py::test_small" in json.loads(verified.read_text())["pass"]
    finally:
        module.write_text(TOY, encoding="utf-8")


def test_a_quick_test_failing_unmutated_is_left_out_of_the_tiers_later_runs(server: ForkServer, tmp_path: Path,
                                                                             capfd,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A quick test that fails on the unmutated module under the tier's budget too (a test whose subprocess cannot
    load the budget, say) kills nothing, and is left out of the tier's later runs: it no longer stops them (`-x`)
    before the quick tests after it, which still kill."""
    monkeypatch.chdir(server.tree)
    module, pristine = Path("toy/below.py"), tmp_path / "pristine.py"
    pristine.write_text(TOY, encoding="utf-8")
    verified = tmp_path / "verified.json"
    leaky = Path("test_leaky.py")
    leaky.write_text("def test_leaky():\n    assert False\n", encoding="utf-8")
    quick = [str(leaky), "test_hypothesis.py"]
    try:
        module.write_text(TOY.replace("x < 3", "x < 3 and x != 1"), encoding="utf-8")  # test_small fails
        assert kill_tier(server.path, module, pristine, verified, quick, 60.0, "toy_tier") is None
        assert "mutation-tier:test_leaky.py::test_leaky" in json.loads(verified.read_text())["fail"]
        capfd.readouterr()
        assert kill_tier(server.path, module, pristine, verified, quick, 60.0, "toy_tier") == 1
        assert "its quick tests" in capfd.readouterr().out
    finally:
        module.write_text(TOY, encoding="utf-8")
        leaky.unlink()


def test_a_mutants_tests_cannot_take_the_machines_memory(server: ForkServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """A child of the server may take MUTATION_MEMORY_LIMIT_GB of address space (default 8): a test that needs
    1.5 GB fails under a 1 GB limit (a MemoryError, not a machine out of memory) and passes under the default."""
    monkeypatch.chdir(server.tree)
    args = ["-q", "-p", "no:cacheprovider", "-p", "no:randomly", "test_greedy.py"]
    assert run_tests(server.path, args, server.tree, 60.0, env={MEMORY_VARIABLE: "1"}) == 1
    assert run_tests(server.path, args, server.tree, 60.0) == 0


@pytest.mark.parametrize("command", [["run", "--module", "spec/patterns.py"],
                                     ["sample", "--seed", "1", "--per-module", "1", "--module", "spec/patterns.py"],
                                     ["diff"]])
def test_each_command_passes_its_tier_mode_down(command: list[str], tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Each command that judges mutants runs the kill tier as `--tier` says (auto by default, on, off), and passes
    the mode down to the command each mutant runs; an unknown mode is a usage error (exit 2)."""
    asked: list[str] = []

    def judged(*args, tier: str, **kwargs):
        asked.append(tier)
        raise KeyboardInterrupt  # the command stops here: nothing is judged or written

    monkeypatch.setattr("mutation.cli.run_module", judged)
    monkeypatch.setattr("mutation.cli.run_change", judged)
    monkeypatch.setattr("mutation.cli._current_map", lambda *a, **k: (CoverageMap("x", "x", []), tmp_path))
    where = ["--work", str(tmp_path)] + ([] if command == ["diff"] else ["--results", str(tmp_path / "r.json")])
    for extra in ([], ["--tier", "on"], ["--tier", "off"]):
        assert mutation_main(command + where + extra) == 130
    assert asked == ["auto", "on", "off"]
    with pytest.raises(SystemExit) as stop:  # an unknown mode: a usage error, nothing run
        mutation_main(command + where + ["--tier", "sometimes"])
    assert stop.value.code == 2 and len(asked) == 3
    for mode in TIER_MODES:
        said = mutant_command("spec/cut.py", tmp_path / "map.json", tmp_path / "cut.py", tier=mode).split()
        assert said[said.index("--tier") + 1] == mode


def test_auto_places_the_tier_after_a_head_start_as_long_as_it(tmp_path: Path) -> None:
    """`--tier auto`: a mutant's covering tests split where the tier goes among them: first the longest prefix, in
    their order, whose measured time together is no more than the tier's checks took (10 s, the quick tests'
    bound, until those are timed), the rest after the tier; no test lost, repeated or moved."""
    seconds = {"a.py::t": 2.0, "b.py::t": 3.0, "c.py::t": 4.0, "d.py": 40.0, "e.py::t": 1.0}.__getitem__
    tests = ["a.py::t", "b.py::t", "c.py::t", "d.py", "e.py::t"]
    assert before_tier(tests, seconds, None) == (["a.py::t", "b.py::t", "c.py::t"], ["d.py", "e.py::t"])
    assert before_tier(tests, seconds, 5.0) == (["a.py::t", "b.py::t"], ["c.py::t", "d.py", "e.py::t"])
    assert before_tier(["d.py", *tests[:3]], seconds, 5.0) == ([], ["d.py", *tests[:3]])  # a slow killer first
    assert before_tier(tests, seconds, 100.0) == (tests, [])
    verified = tmp_path / "verified.json"
    assert tier_seconds(verified) is None  # not timed yet
    verified.write_text(json.dumps({"pass": [], "fail": [], "tier": {"usable": True, "seconds": 14.5}}))
    assert tier_seconds(verified) == 14.5
    verified.write_text(json.dumps({"pass": [], "fail": [], "tier": {"usable": False, "seconds": 14.5}}))
    assert tier_seconds(verified) is None  # found a difference unmutated: never run this session
