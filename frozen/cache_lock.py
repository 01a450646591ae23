"""One computation per cache file across the processes of a run.

Cached files (engine masks, derivations) are written atomically, but two processes that miss the same file at the
same moment would both compute it: at the start of a gate run both workers and the commands their tests start need
the same class masks. `computing(path)` holds an exclusive lock (`fcntl.flock` on `PATH.lock`) while the caller
checks the cache again, computes and writes, so a second process waits for the first and then reads its file.
Invariant: the lock never changes what is computed or read, only when; where the lock file cannot be created
(a read-only cache) the caller computes without it, as before.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def computing(path: Path) -> Iterator[None]:
    """Hold the lock of cache file `path` for the duration of the block (none if it cannot be created)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path.with_name(path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
