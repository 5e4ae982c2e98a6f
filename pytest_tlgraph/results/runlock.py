"""An exclusive, non-blocking lock on a file, held by a live pytest run.

The operating system releases it when the process ends, however it ends (a crash or
``kill -9`` leaves no stale lock). ``flock`` on POSIX, ``msvcrt.locking`` on Windows;
two opens in one process conflict too, so a run started from inside another run's
test sees it live.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import Final

from pytest_tlgraph.disk.nofollow import LinkRefused, NotRegular, kind_of

__all__ = ["RunLock"]

_TRIES: Final = 3
_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK: Final = getattr(os, "O_NONBLOCK", 0)


def _lock(fd: int) -> bool:
    """Take the lock on ``fd`` without waiting; ``False`` when another holds it."""
    try:
        if sys.platform == "win32":
            import msvcrt

            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        else:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # BlockingIOError on POSIX, PermissionError on Windows: held
        return False
    return True


def _open(path: Path) -> int:
    """The lock file, made when missing, opened without following a link or blocking."""
    flags = os.O_RDWR | os.O_CREAT | _NOFOLLOW | _NONBLOCK
    if not _NOFOLLOW and path.is_symlink():  # no O_NOFOLLOW (Windows): checked first
        raise LinkRefused(path)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as error:
        if path.is_symlink():
            raise LinkRefused(path) from None
        raise error from None
    kind = kind_of(os.fstat(fd).st_mode)
    if kind is not None:
        os.close(fd)
        raise NotRegular(path, kind)
    return fd


class RunLock:
    """A held lock on ``path``; :meth:`release` gives it back and removes the file."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, path: Path) -> RunLock | None:
        """The lock on ``path`` (created when missing), or ``None`` when a live run
        holds it.

        Raises ``OSError`` when the file cannot be made (a read-only folder):
        ``nofollow.LinkRefused`` when it is a symbolic link (never followed: the run
        would make the link's target), ``nofollow.NotRegular`` for a FIFO, device or
        socket (never opened blocking)."""
        for _ in range(_TRIES):
            fd = _open(path)
            if not _lock(fd):
                os.close(fd)
                return None
            try:
                same = os.fstat(fd).st_ino == os.stat(path).st_ino
            except OSError:
                same = False
            if same:
                return cls(path, fd)
            # Its holder removed the file while this run waited on it: try the new one.
            os.close(fd)
        return None

    def release(self) -> None:
        """Remove the lock file, then give the lock back (idempotent)."""
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            self.path.unlink()
        with contextlib.suppress(OSError):
            os.close(self._fd)
        self._fd = None
