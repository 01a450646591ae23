"""Running the examples of the documentation (docs/ and README.md) with Sybil: every ```sh, ```console and
```python block either runs, or, when a directive before it says it cannot run inside the gate, is checked by parse.

A directive is an HTML comment on the last non-blank line before the block's fence:

    <!-- docs-test: exit 1 -->                      the block runs and must exit 1 (default: 0)
    <!-- docs-test: parse-only: WHY -->             the block does not run; each command line in it is parsed
                                                    (a WHY naming docs/PAGE.md: each line must also be in PAGE)

A shell block runs as one `bash -e -o pipefail` script in the page's own temporary folder (shared by the blocks
of one page, in order), with the suite's environment first on PATH and the gate's ledger and the main job's
output moved into that folder. A Python block runs in the page's namespace (shared by its blocks, in order).

Parse-only checks are the commands' own: a catalogued command (`fuzz`, `corpora`, `reports`, `python -m ...`) is
parsed by its argparse parser (docs/_tools/cli_catalogue.py); `./run main` by the main job's own argument loop
(`DELTA_MAIN_PARSE_ONLY=1`); `./run test` and `pytest` by pytest itself, stopped once its plugins are configured
(before any collection); `./run mutate` and `./run bench` by their parsers; shell builtins and core utilities
(`UNCHECKED`) are taken as written; any other program must be on PATH and answer `PROGRAM [SUBCOMMAND] --help`
with 0. A parse-only Python block is compiled, not run. Every block is counted as
executed or parse-checked, never both (`Tally`).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from sybil import Document, Example, Sybil
from sybil.parsers.markdown import CodeBlockParser

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
VENV_BIN = Path(sys.executable).parent
DIRECTIVE = re.compile(r"<!--\s*docs-test:\s*(?P<what>exit\s+(?P<status>\d+)|parse-only:\s*(?P<why>.+?))\s*-->")
SHELL_LANGUAGES = ("sh", "console")
BLOCK_TIMEOUT = 90  # seconds; a block is meant to take a few
UNCHECKED = {  # shell builtins and core utilities: accepted as written in a parse-only block
    ".", "source", "cd", "export", "set", "true", "mkdir", "cp", "cat", "head", "ls", "echo"}
RUN_SCRIPT = ROOT / "run"
MAIN_JOB = ROOT / "scripts" / "main-job.sh"


def _load_catalogue():
    spec = importlib.util.spec_from_file_location("docs_cli_catalogue", DOCS / "_tools" / "cli_catalogue.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


catalogue = _load_catalogue()


def pages() -> list[Path]:
    """Every page whose examples the gate runs: docs/**/*.md (not the build tools) and README.md."""
    return sorted(p for p in DOCS.rglob("*.md") if "_tools" not in p.parts) + [ROOT / "README.md"]


@dataclass(frozen=True)
class Directive:
    status: int = 0
    parse_only: str | None = None  # the reason, when the block is parse-checked only


def directive_of(example: Example) -> Directive:
    """The directive on the last non-blank line before the block's fence, or the default (run, exit 0)."""
    before = example.document.text[: example.start].rstrip().splitlines()
    m = DIRECTIVE.search(before[-1]) if before else None
    if not m:
        return Directive()
    if m.group("why"):
        return Directive(parse_only=m.group("why"))
    return Directive(status=int(m.group("status")))


class Tally(Counter):
    """Blocks per (language, "executed" | "parse-checked"); `seconds` holds (line, seconds) per block evaluated."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.seconds: list[tuple[int, float]] = []


def shell_text(block: str, language: str) -> str:
    """The script of a block: a console block keeps its `$ ` lines only."""
    if language != "console":
        return block
    return "\n".join(line[2:] for line in block.splitlines() if line.startswith("$ "))


def command_lines(script: str) -> list[list[str]]:
    """The commands of a shell script, each as argv: continuation lines joined, comments dropped, split at `&&`,
    `||`, `|` and `;`, leading VAR=value assignments dropped."""
    commands: list[list[str]] = []
    for line in script.replace("\\\n", " ").splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        current: list[str] = []
        for token in list(lexer) + [";"]:
            if token in ("&&", "||", "|", ";", "&"):
                while current and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", current[0]):
                    current.pop(0)
                if current:
                    commands.append(current)
                current = []
            else:
                current.append(token)
    return commands


def _parse_with(parser, args: list[str]) -> str | None:
    """None when `parser` accepts `args` (a --help exit counts as accepted), else its error message."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            parser.parse_args(args)
        except SystemExit as stop:
            if stop.code not in (0, None):
                return err.getvalue().strip().splitlines()[-1] if err.getvalue().strip() else f"exit {stop.code}"
    return None


def _run_quietly(argv: list[str], cwd: Path, env: dict | None = None) -> str | None:
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=BLOCK_TIMEOUT)
    if done.returncode == 0:
        return None
    return f"{shlex.join(argv)} exited {done.returncode}: {(done.stderr or done.stdout).strip()[-400:]}"


def _run_subcommands() -> set[str]:
    return set(re.findall(r"^\s+([a-z]+)\)", RUN_SCRIPT.read_text(encoding="utf-8"), re.M))


PYTEST_PARSER = """
import contextlib, io, json, sys
import pytest


class StopOnceConfigured:
    # runs after every plugin's own pytest_configure (which check their options' values), before any collection,
    # any xdist worker or any test
    @pytest.hookimpl(trylast=True)
    def pytest_configure(self, config):
        pytest.exit("arguments accepted", returncode=0)


for args in json.loads(sys.argv[1]):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = pytest.main(["-p", "no:cacheprovider", *args], plugins=[StopOnceConfigured()])
    print(json.dumps([int(code), out.getvalue()[-400:]]))
"""


def pytest_args(argv: list[str]) -> list[str] | None:
    """The arguments pytest gets from a command line (`pytest ...`, `python -m pytest ...`, `./run test ...`), or
    None for another command."""
    if argv[:1] == ["pytest"]:
        return argv[1:]
    if argv[:3] in (["python", "-m", "pytest"], ["python3", "-m", "pytest"]):
        return argv[3:]
    if argv[:2] == ["./run", "test"] or argv == ["./run"]:
        return argv[2:]
    return None


def check_pytest_args(arg_lists: list[list[str]], cwd: Path) -> list[str | None]:
    """pytest's verdict on each argument list: pytest parses it and configures every plugin (which check their
    options' values), then stops before collecting anything. None, or the error. One process for all of them."""
    env = {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run([sys.executable, "-c", PYTEST_PARSER, json.dumps(arg_lists)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=BLOCK_TIMEOUT)
    answers = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("[")]
    if done.returncode != 0 or len(answers) != len(arg_lists):
        return [f"pytest argument check failed: {done.stderr.strip()[-400:]}"] * len(arg_lists)
    return [None if code == 0 else f"pytest {shlex.join(args)} exited {code}: {text.strip()}"
            for args, (code, text) in zip(arg_lists, answers, strict=True)]


def parse_check(argv: list[str], cwd: Path) -> str | None:
    """None when the command line is one its program accepts (see the module docstring), else why not."""
    env = {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    program, args = argv[0], argv[1:]
    if program in UNCHECKED:
        return None
    found = catalogue.command_for(argv)
    if found:
        command, rest = found
        return _parse_with(catalogue.parser_of(command), rest)
    if program == "./run":
        sub, rest = (args[0], args[1:]) if args else ("test", [])
        if sub not in _run_subcommands():
            return f"./run has no subcommand {sub!r}"
        if sub == "main":
            return _run_quietly(["bash", str(MAIN_JOB), *rest], cwd, {**env, "DELTA_MAIN_PARSE_ONLY": "1"})
        if sub == "test":
            return check_pytest_args([rest], cwd)[0]
        if sub in ("mutate", "bench"):
            module = {"mutate": "mutation", "bench": "delta_suite.benchmarks"}[sub]
            return parse_check(["python", "-m", module, *(rest or (["status"] if sub == "mutate" else []))], cwd)
        return None if not rest else f"./run {sub} takes no arguments"
    if pytest_args(argv) is not None:
        return check_pytest_args([pytest_args(argv)], cwd)[0]
    if program in ("python", "python3") and args[:1] == ["-m"] and len(args) > 1:
        return _run_quietly([sys.executable, "-m", args[1], "--help"], cwd, env)
    if shutil.which(program, path=env["PATH"]) is None:
        return f"{program}: not found on PATH"
    sub = [args[0]] if args and re.fullmatch(r"[a-z][a-z-]*", args[0]) else []
    return _run_quietly([program, *sub, "--help"], cwd, env)


def page_env(folder: Path) -> dict:
    """The environment of a page's shell blocks: the suite's commands first on PATH; every output in `folder`."""
    return {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "DELTA_LEDGER_DIR": str(folder / "out" / "ledgers" / "gate"), "DELTA_OUT": str(folder / "out")}


def not_run_elsewhere(script: str, reason: str) -> list[str]:
    """A parse-only reason that names a page ("as run in docs/PAGE.md") promises the same command lines run there:
    each line of `script` that is not also in that page's text, as a problem."""
    named = re.search(r"docs/[\w/.-]+\.md", reason)
    if not named:
        return []
    text = (ROOT / named.group(0)).read_text(encoding="utf-8")
    lines = [line.split("#")[0].strip() for line in script.splitlines()]
    return [f"{line!r} is not run in {named.group(0)}" for line in lines if line and line not in text]


class ShellEvaluator:
    """Runs (or parse-checks) one shell block; `language` is the fence's."""

    def __init__(self, language: str) -> None:
        self.language = language

    def __call__(self, example: Example) -> str | None:
        directive = directive_of(example)
        folder: Path = example.namespace["__folder__"]
        tally: Tally = example.namespace["__tally__"]
        script = shell_text(example.parsed, self.language)
        where = f"{example.path}:{example.line}"
        if directive.parse_only:
            commands = command_lines(script)
            by_pytest = [argv for argv in commands if pytest_args(argv) is not None]
            verdicts = dict(zip(map(shlex.join, by_pytest),
                                check_pytest_args([pytest_args(argv) for argv in by_pytest], folder), strict=True))
            checked = [(argv, verdicts[shlex.join(argv)] if shlex.join(argv) in verdicts else parse_check(argv, folder))
                       for argv in commands]
            problems = [f"{shlex.join(argv)}: {problem}" for argv, problem in checked if problem]
            problems += not_run_elsewhere(script, directive.parse_only)
            tally[(self.language, "parse-checked")] += 1
            return f"{where}: parse-only block rejected:\n" + "\n".join(problems) if problems else None
        done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=folder, env=page_env(folder),
                              capture_output=True, text=True, timeout=BLOCK_TIMEOUT)
        tally[(self.language, "executed")] += 1
        if done.returncode != directive.status:
            return (f"{where}: exit {done.returncode}, expected {directive.status}\n--- stdout\n{done.stdout[-2000:]}"
                    f"\n--- stderr\n{done.stderr[-2000:]}")
        return None


def evaluate_python(example: Example) -> str | None:
    directive = directive_of(example)
    tally: Tally = example.namespace["__tally__"]
    code = compile(example.parsed, f"{example.path}:{example.line}", "exec")
    if directive.parse_only:
        tally[("python", "parse-checked")] += 1
        return None
    tally[("python", "executed")] += 1
    folder: Path = example.namespace["__folder__"]
    before = Path.cwd()
    os.chdir(folder)
    try:
        exec(code, example.namespace)
    finally:
        os.chdir(before)
    return None


SYBIL = Sybil(parsers=[*(CodeBlockParser(language=lang, evaluator=ShellEvaluator(lang)) for lang in SHELL_LANGUAGES),
                       CodeBlockParser(language="python", evaluator=evaluate_python)])


def document(page: Path) -> Document:
    return SYBIL.parse(page)


def run_page(page: Path, folder: Path) -> Tally:
    """Evaluate every example of `page` in order, in `folder`; the first failure raises with its location."""
    doc = document(page)
    tally = Tally()
    doc.namespace.update({"__folder__": folder, "__tally__": tally})
    for example in doc.examples():
        started = time.perf_counter()
        example.evaluate()
        tally.seconds.append((example.line, time.perf_counter() - started))
    return tally


def inventory(page: Path) -> Tally:
    """The blocks of `page` by language and by what the gate does with them, without running any."""
    tally = Tally()
    for example in document(page).examples():
        language = getattr(example.region.evaluator, "language", "python")
        tally[(language, "parse-checked" if directive_of(example).parse_only else "executed")] += 1
    return tally
