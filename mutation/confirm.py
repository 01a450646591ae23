"""Checking the 'killed' verdicts: each named test fails on its survivor's mutant and passes without it.

A "killed" verdict claims that a test added after a module's session kills one of its survivors. Until the
module's next session counts that kill, nothing else checks the claim, and a claim nobody checks is a hard-coded
expectation. `confirm_killed` checks every such claim in a scratch copy of the checkout:
- the survivor's diff applied to the copy's module (`git apply`; a diff that no longer applies means the module
  changed since its session, and the claim cannot be checked until the module runs again: "stale");
- the named test run there (pytest, a process of its own): it must fail ("confirmed"), or outlive the time limit
  (a timeout counts as a kill, as in a session); passing means the verdict is wrong ("passes on the mutant");
- the same test on the unmutated copy, once per test: it must pass, or its failure on the mutant says nothing
  ("fails unmutated"); a test pytest cannot find is an error of the verdicts file ("no such test").
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mutation.coverage_map import PYTEST_ARGS
from mutation.results import all_survivors
from mutation.tree import copy_tree, tree_environment
from mutation.verdicts import Key, Verdict, find_verdict, mutated_line

CONFIRM_LIMIT_SECONDS = 900.0  # one test's run on one mutant (a timeout counts as a kill)
PYTEST_NOT_FOUND = (4, 5)  # pytest's usage error (no such file or test) and "no tests collected"
OUTCOMES = ("confirmed", "passes on the mutant", "stale", "fails unmutated", "no such test")


@dataclass(frozen=True)
class Confirmation:
    """What checking one 'killed' verdict on one survivor found."""

    module: str
    line_number: int
    column: int
    operator: str
    mutant: str  # the mutated line, or "" when the mutant only removes lines
    diff: str  # the survivor's diff as its session recorded it (a record counts only for that mutant)
    test: str
    outcome: str  # one of OUTCOMES
    detail: str

    @property
    def held(self) -> bool:
        return self.outcome == "confirmed"


Claim = tuple[str, dict, Verdict]  # module, survivor, its 'killed' verdict


def killed_claims(data: dict, verdicts: dict[Key, Verdict], module: str | None = None) -> list[Claim]:
    """Every survivor (of finished modules and unfinished sessions) whose verdict is 'killed', with its verdict."""
    out = []
    for m, survivor, _finished in all_survivors(data):
        v = find_verdict(verdicts, m, survivor)
        if v is not None and v.verdict == "killed" and (module is None or m == module):
            out.append((m, survivor, v))
    return out


def run_test(tree: Path, test: str, log: Path, limit: float = CONFIRM_LIMIT_SECONDS) -> int | None:
    """Run one test (a node id or a file) in `tree`, its output into `log`; pytest's exit status, or None when it
    outlived `limit` seconds (its process group is then killed)."""
    env = tree_environment(tree, tree.parent / "ledgers")
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # a mutant of the same size within the same second must not reuse a .pyc
    with log.open("w", encoding="utf-8") as out:
        proc = subprocess.Popen([sys.executable, "-m", "pytest", *PYTEST_ARGS, test], cwd=tree, env=env,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            return proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            return None
        finally:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


HUNK = re.compile(r"^@@ -(\d+),(\d+) \+(\d+),(\d+) @@")


def _patch(diff: str, length: int) -> str:
    """The survivor's diff as `git apply` reads it, for a module of `length` lines: the session's title line
    removed, the last line ended, and a hunk reaching past the module's end cut back to it (a session splits the
    source at each newline, so its diffs near the end carry one empty line the file does not have)."""
    lines = diff.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("--- a/")), len(lines))
    lines = lines[start:]
    head = next((i for i, line in enumerate(lines) if HUNK.match(line)), None)
    if head is not None:
        old_start, old_count, new_start, new_count = map(int, HUNK.match(lines[head]).groups())
        if old_start - 1 + old_count > length and lines[-1] in ("", " "):
            lines = lines[:-1]
            lines[head] = f"@@ -{old_start},{old_count - 1} +{new_start},{new_count - 1} @@"
    return "".join(line + "\n" for line in lines)


def apply_mutant(tree: Path, diff: str) -> str:
    """Write the mutant into the copy; "" when done, else why not (the module changed since the session)."""
    module = next((line[6:] for line in diff.splitlines() if line.startswith("--- a/")), "")
    if not module or not (tree / module).is_file():
        return "the survivor has no diff of a module in the checkout"
    patch = _patch(diff, len((tree / module).read_text(encoding="utf-8").splitlines()))
    if not patch:
        return "the survivor has no diff"
    env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(tree.parent)}  # the copy alone, never a repository above it
    done = subprocess.run(["git", "apply", "-p1", "-"], cwd=tree, input=patch, text=True, capture_output=True, env=env)
    return "" if done.returncode == 0 else (done.stderr.strip().splitlines() or ["git apply failed"])[-1]


def confirm_killed(data: dict, verdicts: dict[Key, Verdict], root: Path, work: Path, module: str | None = None,
                   limit: float = CONFIRM_LIMIT_SECONDS,
                   progress: Callable[[str], None] = lambda _line: None) -> list[Confirmation]:
    """Check every 'killed' verdict (of one module, or all) as the module docstring says; one Confirmation each.
    The copy is made once (`work/tree`) and each module restored after its mutant; logs go to `work/logs`."""
    claims = killed_claims(data, verdicts, module)
    tree, logs = work / "tree", work / "logs"
    copy_tree(root, tree)
    logs.mkdir(parents=True, exist_ok=True)
    unmutated: dict[str, tuple[str, str]] = {}  # test -> (outcome if not fine, detail)
    out = []
    for i, (m, survivor, v) in enumerate(claims, 1):
        where = f"{m}:{survivor['line_number']}:{survivor['column']} {survivor['operator']}"
        if v.test not in unmutated:
            progress(f"[{i}/{len(claims)}] {v.test} on the unmutated copy")
            rc = run_test(tree, v.test, logs / f"unmutated-{len(unmutated)}.log", limit)
            unmutated[v.test] = (("", "passes") if rc == 0 else
                                 ("no such test", f"pytest exit {rc}") if rc in PYTEST_NOT_FOUND else
                                 ("fails unmutated", "timeout" if rc is None else f"pytest exit {rc}"))
        bad, detail = unmutated[v.test]
        if not bad:
            source = tree / m
            before = source.read_bytes()
            try:
                why = apply_mutant(tree, survivor.get("diff", ""))
                if why:
                    bad, detail = "stale", why
                else:
                    progress(f"[{i}/{len(claims)}] {v.test} on {where}")
                    log = logs / f"mutant-{i}.log"
                    rc = run_test(tree, v.test, log, limit)
                    bad, detail = (("confirmed", "timeout") if rc is None else
                                   ("passes on the mutant", "pytest exit 0") if rc == 0 else
                                   ("no such test", f"pytest exit {rc}") if rc in PYTEST_NOT_FOUND else
                                   ("confirmed", f"pytest exit {rc}"))
            finally:
                source.write_bytes(before)
        out.append(Confirmation(m, survivor["line_number"], survivor["column"], survivor["operator"],
                                mutated_line(survivor.get("diff", "")), survivor.get("diff", ""), v.test, bad,
                                detail))
    return out


def exit_status(found: list[Confirmation]) -> int:
    """0 every claim held; 2 a verdict names a test that does not exist (the verdicts file is wrong); 3 a named test
    fails on the unmutated copy (nothing can be concluded); else 1 when a claim does not hold or cannot be checked
    against the module as it is (stale)."""
    outcomes = {c.outcome for c in found}
    if "no such test" in outcomes:
        return 2
    if "fails unmutated" in outcomes:
        return 3
    return 1 if outcomes - {"confirmed"} else 0
