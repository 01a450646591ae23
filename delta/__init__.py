"""The minimal conforming implementation: cut planner, chunked encode, session store with repair.

Names are re-exported lazily (PEP 562): `delta.plan_cuts`, `delta.encode_chunked`, `delta.Session`,
`delta.SessionStore`, `delta.render`, `delta.render_turns`.
"""

from __future__ import annotations

from importlib import import_module

_EXPORTS = {
    "plan_cuts": "delta_suite.delta.cuts",
    "encode_chunked": "delta_suite.delta.cuts",
    "default_chunks": "delta_suite.delta.cuts",
    "Session": "delta_suite.delta.session",
    "SessionStats": "delta_suite.delta.session",
    "SessionStore": "delta_suite.delta.store",
    "render": "delta_suite.delta.chat",
    "render_turns": "delta_suite.delta.chat",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'delta' has no attribute {name!r}")
