"""Writing a file all or nothing (the contract tools' outputs, MCP hosts' configuration files), and
taking turns with other processes editing it."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def write_atomic(path: Path, text: str, mode: int | None = None) -> None:
    """A temporary file beside `path`, renamed over it; `mode` (default: what the umask allows)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on `path` (created if missing) for the block: processes editing the
    same file take turns. A lock file beside the edited one, as the edited file is replaced (renamed
    over), which would leave a lock on its old inode."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as handle:
        if sys.platform == "win32":
            import msvcrt

            handle.seek(0)
            msvcrt.locking(handle.fileno(), msvcrt.LK_LOCK, 1)  # retries for 10 s, then raises OSError
        else:
            import fcntl

            fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file closes
        yield
