"""Peer environments built ahead of the tests that need them (`python -m delta_suite.subjects.prefetch SPEC...`).

A fresh machine builds each PyPI peer's environment the first time a test asks for it, and that test's worker
waits for pip (20 to 40 s a peer). The gate starts this command in the background when it collects peer tests
(`properties/conftest.py`), so the environments are built while the other tests run. It changes no result:
`ensure_env` serializes creation with a lock per peer and version, so a test that asks for an environment being
built waits for it and then reuses it, and a test that asks first builds it itself. A peer that cannot be built
here is reported and left to the tests, which record it as not installed.

Exit status: 0 every environment ready, 2 a malformed or unknown spec, 3 some environment could not be built
(the index or pip failed: the machine, not the input), 130 interrupted.
"""

from __future__ import annotations

import argparse
import sys

from delta_suite.frozen.errors import SuiteError, run_command
from delta_suite.subjects.envs import PEERS, ensure_env, resolve_version
from delta_suite.subjects.protocol import SubjectUnavailable


def parse_spec(spec: str) -> tuple[str, str | None]:
    """NAME or NAME==VERSION of a PyPI peer; a name not in `PEERS` or an empty version is a usage error."""
    name, sep, version = spec.partition("==")
    if name not in PEERS or (sep and not version):
        raise SuiteError(f"not a peer spec: {spec!r} (NAME or NAME==VERSION, NAME one of {', '.join(PEERS)})")
    return name, version or None


def prefetch(specs: list[str]) -> list[tuple[str, str]]:
    """Build (or find ready) the environment of each spec in order: (spec, "ready NAME-VERSION" or the reason it
    could not be built). Every spec is parsed before anything is built."""
    parsed = [(spec, *parse_spec(spec)) for spec in specs]
    outcomes = []
    for spec, name, version in parsed:
        try:
            resolved = resolve_version(name, version)
            ensure_env(name, resolved)
            outcomes.append((spec, f"ready {name}-{resolved}"))
        except SubjectUnavailable as exc:
            outcomes.append((spec, f"not built: {exc.reason}"))
    return outcomes


def _run(args: argparse.Namespace) -> int:
    outcomes = prefetch(args.specs)
    for spec, outcome in outcomes:
        print(f"{spec}: {outcome}", flush=True)
    return 0 if all(o.startswith("ready ") for _, o in outcomes) else 3


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m delta_suite.subjects.prefetch",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("specs", nargs="+", metavar="SPEC", help="NAME or NAME==VERSION of a PyPI peer")
    parser.set_defaults(func=_run)
    return run_command(parser, argv)


if __name__ == "__main__":
    sys.exit(main())
