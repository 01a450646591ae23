"""delta-suite: the one import name of everything the suite installs.

The repository keeps one folder per floor (`spec/`, `delta/`, `fuzz/`, ...); installed, each is a subpackage of
this one (`delta_suite.spec`, `delta_suite.fuzz`, ...), so the suite claims no name but this in a user's
environment. A wheel holds them inside this package (`[tool.setuptools.package-dir]` in `pyproject.toml`).

In a checkout, this package's path also holds the checkout's root, so `delta_suite.spec` is the `spec/` folder
next to this one: a fresh clone runs `python -m delta_suite.fuzz.cli` without an install, and a copy of the
checkout first on PYTHONPATH (the mutation profile's scratch copy) imports its own folders, never those of the
checkout an editable install points at. Nothing else is imported here: the pytest plugin
(`delta_suite.pytest_plugin`) is loaded in every pytest run of an environment that has the suite installed, and
must not load the suite until one of its options asks for it.
"""

from os import path as _path

_parent = _path.dirname(_path.dirname(_path.abspath(__file__)))
# the checkout's root when running from one, else None (an installed wheel: the floors are inside this package)
CHECKOUT: str | None = None
if _path.isfile(_path.join(_parent, "pyproject.toml")) and _path.isfile(_path.join(_parent, "spec", "__init__.py")):
    CHECKOUT = _parent
    __path__.append(_parent)  # noqa: F821 (a package's __path__, set by the import system)
