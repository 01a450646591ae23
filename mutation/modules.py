"""The modules the mutation profile mutates (every module of `spec/` and `delta/`), named by path."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MUTATED_PACKAGES = ("spec", "delta")
UNOBSERVED = frozenset({"out", "site", "build", "dist", "node_modules", "examples", "scripts"})


def observed_folders(root: Path = ROOT) -> tuple[str, ...]:
    """The top-level folders whose Python files the coverage map measures: every one holding a Python file but
    generated or hidden ones. The mutated packages are among them; the others (the tests' own folder included) are
    measured so that the tests reading a name there are known (mutation.observers)."""
    out = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        name = folder.name
        if name.startswith((".", "_")) or name in UNOBSERVED or name.endswith(".egg-info"):
            continue
        if next(folder.rglob("*.py"), None) is not None:
            out.append(name)
    return tuple(out)


INSTALLED_NAME = "delta_suite"
# The floors' folders, each installed as a subpackage of the one import name (pyproject.toml's package-dir; a test
# holds the two equal). Every other folder (this profile, the tests) is imported by its own name from the checkout.
INSTALLED_FOLDERS = frozenset({"frozen", "ledger", "spec", "delta", "subjects", "checks", "controls", "fuzz", "corpora",
                               "reports", "benchmarks"})


def import_name(folder_dotted: str) -> str:
    """The name Python imports a module of the checkout by: a floor's folder is installed under the one import
    name (`spec.cut` -> `delta_suite.spec.cut`); the repository's own folders keep theirs (`mutation.cli`)."""
    if folder_dotted.split(".", 1)[0] not in INSTALLED_FOLDERS:
        return folder_dotted
    return f"{INSTALLED_NAME}.{folder_dotted}"


def folder_name(dotted: str) -> str:
    """The inverse of `import_name`: `delta_suite.spec.cut` -> `spec.cut`."""
    return dotted.removeprefix(f"{INSTALLED_NAME}.")


def module_path(dotted: str) -> str:
    """`delta_suite.spec.cut` -> `spec/cut.py` (a package's `__init__` is not mutated: it only re-exports)."""
    return folder_name(dotted).replace(".", "/") + ".py"


def dotted_name(path: str) -> str:
    """`spec/cut.py` -> `delta_suite.spec.cut`, the name it is imported by."""
    if not path.endswith(".py"):
        raise ValueError(f"not a Python module path: {path!r}")
    return import_name(path[: -len(".py")].replace("/", "."))


def mutated_modules() -> list[str]:
    """Every module of the mutated packages, as paths, except `__init__` and `__main__` files."""
    out = []
    for pkg in MUTATED_PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            if path.name in ("__init__.py", "__main__.py"):
                continue
            out.append(path.relative_to(ROOT).as_posix())
    return out
