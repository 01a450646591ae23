"""One writer per output folder: an OS-level lock (`flock`) on `<folder>/.lock`, released by the kernel when the
holding process ends, however it ends (exit, Ctrl-C, SIGKILL).

Invariant: while a campaign folder or a comparison output folder is locked by one process, no other process
appends records to it; a second writer is refused at once (never blocks) with the holder's pid, so a concurrent
`fuzz --resume` or a second `corpora compare --out` cannot run batches or units twice. A caller that shares what the
holder makes (`FolderLock(folder, wait=S)`: the mutation profile's coverage map, measured once for the commands that
run beside each other) waits up to S seconds for the lock instead, then is refused the same way.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

LOCK_NAME = ".lock"


class FolderBusy(Exception):
    """Another live process holds the folder's lock; `pid` is the holder's process id (None if it wrote none)."""

    def __init__(self, folder: Path, pid: int | None) -> None:
        held = f"process {pid}" if pid else "another process"
        super().__init__(f"{folder} is in use by {held} (lock {folder / LOCK_NAME}); wait for it to finish or stop "
                         "it, then run again")
        self.folder, self.pid = folder, pid


def _holder(path: Path) -> int | None:
    try:
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() else None


class FolderLock:
    """`with FolderLock(folder):` holds the folder for this process; FolderBusy if another process holds it.

    The lock file stays behind (it is harmless: a lock on it is what counts, not its existence); it holds the pid
    of the last holder, for the refusal message."""

    def __init__(self, folder: Path, wait: float | None = None) -> None:
        self.folder = Path(folder)
        self.path = self.folder / LOCK_NAME
        self.wait = wait  # seconds to wait for another holder to finish; None: refused at once
        self._fd: int | None = None

    def acquire(self) -> FolderLock:
        self.folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + (self.wait or 0.0)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if self.wait is None or time.monotonic() >= deadline:
                    os.close(fd)
                    raise FolderBusy(self.folder, _holder(self.path)) from None
                time.sleep(0.5)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode("ascii"))
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> FolderLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()
