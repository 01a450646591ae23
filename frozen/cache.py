"""Where provisioned files live: `$DELTA_HOME`, else `$XDG_CACHE_HOME/delta-suite`, else ~/.cache/delta-suite."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from delta_suite.frozen.errors import CacheNotWritable


def cache_root() -> Path:
    """The root of the suite's cache (not created here)."""
    if os.environ.get("DELTA_HOME"):
        return Path(os.environ["DELTA_HOME"]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg).expanduser() / "delta-suite"


PROVENANCE = "provenance.json"  # beside each provisioned row's files: where they came from, what was verified


def tokenizers_dir(root: Path | None = None) -> Path:
    """The folder holding one sub-folder per provisioned tokenizer."""
    return (root or cache_root()) / "tokenizers"


def ensure_writable(path: Path) -> Path:
    """Create `path` if needed and prove it is writable; `CacheNotWritable` with the reason otherwise."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        # a name of its own: the threads of one process may probe the same folder at once
        fd, probe = tempfile.mkstemp(dir=path, prefix=".write-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise CacheNotWritable(
            f"cache folder {path} is not writable ({exc.strerror or exc}); set DELTA_HOME to a writable folder"
        ) from exc
    return path
