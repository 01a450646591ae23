"""The modules the mutation profile mutates (every module of `spec/` and `delta/`), named by path."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MUTATED_PACKAGES = ("spec", "delta")


def module_path(dotted: str) -> str:
    """`spec.cut` -> `spec/cut.py` (a package's `__init__` is not mutated: it only re-exports)."""
    return dotted.replace(".", "/") + ".py"


def dotted_name(path: str) -> str:
    """`spec/cut.py` -> `spec.cut`."""
    if not path.endswith(".py"):
        raise ValueError(f"not a Python module path: {path!r}")
    return path[: -len(".py")].replace("/", ".")


def mutated_modules() -> list[str]:
    """Every module of the mutated packages, as paths, except `__init__` and `__main__` files."""
    out = []
    for pkg in MUTATED_PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            if path.name in ("__init__.py", "__main__.py"):
                continue
            out.append(path.relative_to(ROOT).as_posix())
    return out
