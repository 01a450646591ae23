"""A toy checkout with a test server, for the mutation profile's server and kill-tier tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from mutation.session import ForkServer
from mutation.tree import tree_environment

TOY = "def below(x):\n    return x < 3\n"  # the toy module the mutants change: toy/below.py


def toy_checkout(root: Path, files: dict[str, str], module: str = TOY) -> Path:
    """`root` made a toy checkout: the package `toy` with `module` as `toy/below.py`, and `files` (tests) beside."""
    (root / "toy").mkdir(parents=True)
    (root / "toy" / "__init__.py").write_text("", encoding="utf-8")
    (root / "toy" / "below.py").write_text(module, encoding="utf-8")
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def toy_server(folder: Path, files: dict[str, str]) -> Iterator[ForkServer]:
    """A test server started in a toy checkout under `folder` (`toy/below.py` and `files`, no frozen tokenizers
    to load); stopped when the iteration ends (a fixture's body)."""
    tree = toy_checkout(folder / "tree", files)
    srv = ForkServer(folder / "tests.sock", tree, tree_environment(tree, folder / "ledgers"))
    assert srv.started(), srv.log.read_text(encoding="utf-8")
    try:
        yield srv
    finally:
        srv.stop()
