"""`lint-imports` on a checkout, under the import names the wheel installs.

The contracts in `pyproject.toml` name `delta_suite.spec`, `delta_suite.fuzz`, ...: each floor's folder at the top
of the checkout, installed as a subpackage of `delta_suite`. import-linter finds a package's modules by walking the
folder the import system reports for it, and in a checkout `delta_suite/` holds only the package's own modules,
so this builds the wheel's layout as a view: a temporary `delta_suite/` whose floor folders are links to the
checkout's (nothing is copied, so a violation's file and line are the checkout's own), first on the import path
(the working folder of the run), with the checkout after it for the repository's own packages (`mutation`,
`properties`). Exit status and output are lint-imports' own.

    python scripts/lint_imports.py [CHECKOUT] [lint-imports options...]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def floor_folders(root: Path) -> list[str]:
    """The folders the wheel installs under `delta_suite`: the package-dir mapping of `pyproject.toml`."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10: the same parser, published as tomli
        import tomli as tomllib
    mapping = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-dir"]
    return sorted(folder for name, folder in mapping.items() if name.startswith("delta_suite."))


def build_view(root: Path, into: Path) -> Path:
    """`into/delta_suite/`: the checkout's `delta_suite/__init__.py` linked, and a link per floor folder."""
    view = into / "delta_suite"
    view.mkdir()
    for entry in (root / "delta_suite").iterdir():
        if entry.suffix == ".py":
            (view / entry.name).symlink_to(entry)
    for folder in floor_folders(root):
        (view / folder).symlink_to(root / folder, target_is_directory=True)
    return into


def lint_imports(root: Path, *options: str) -> subprocess.CompletedProcess:
    """lint-imports on the checkout at `root` (its `pyproject.toml`), captured."""
    root = root.resolve()
    if "--no-cache" not in options and not any(o.startswith("--cache-dir") for o in options):
        options = ("--cache-dir", str(root / ".import_linter_cache"), *options)
    with tempfile.TemporaryDirectory(prefix="delta-import-view-") as tmp:
        view = build_view(root, Path(tmp))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(view), str(root)])}
        code = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"
        # lint-imports puts its working folder first on the import path: the view's, so `delta_suite` is the view
        return subprocess.run([sys.executable, "-c", code, *options, str(root / "pyproject.toml")],
                              cwd=view, env=env, capture_output=True, text=True, timeout=300)


def main(argv: list[str]) -> int:
    root = Path(argv[0]) if argv and not argv[0].startswith("-") else HERE
    options = argv[1:] if argv and not argv[0].startswith("-") else argv
    done = lint_imports(root, *options)
    sys.stdout.write(done.stdout)
    sys.stderr.write(done.stderr)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
