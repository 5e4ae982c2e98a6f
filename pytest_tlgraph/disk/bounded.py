"""The one reader of a stored or recorded file: a regular file of bounded size.

A stored ``.gv``/``.png``, a failure record, a manifest, an image ``tlgraph report``
inlines, a file given to ``tlgraph diff``: any of them can be replaced by a FIFO (an
open that waits forever), a device (``/dev/zero`` reads without end) or a huge file.
:func:`read_regular` opens without blocking, refuses anything but a regular file
(:class:`NotAFile`), and reads at most :data:`~pytest_tlgraph.limits.MAX_FILE_BYTES`
(:class:`TooLarge`); both are ``OSError``, so every caller's handling of an unreadable
file covers them. ``follow=False`` also refuses a symbolic link (the plugin's own
bookkeeping files: a manifest, a record).
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from pathlib import Path
from typing import BinaryIO, Final

from pytest_tlgraph.disk.nofollow import kind_of
from pytest_tlgraph.errors import TlgraphError
from pytest_tlgraph.limits import MAX_FILE_BYTES

__all__ = ["NotAFile", "TooLarge", "is_regular", "read_regular", "read_stream"]

_NONBLOCK: Final = getattr(os, "O_NONBLOCK", 0)
_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_BINARY: Final = getattr(os, "O_BINARY", 0)
_CHUNK: Final = 1 << 20


class NotAFile(TlgraphError, OSError):
    """A FIFO, device, socket, folder (or, not followed, a link) where a file is read."""

    def __init__(self, path: Path, kind: str) -> None:
        super().__init__(
            errno.EINVAL,
            f"refusing to read {path}: it is a {kind}, not a regular file (reading it could "
            "block or never end); give a regular file",
        )
        self.path = path
        self.kind = kind

    def __str__(self) -> str:
        return str(self.strerror)


class TooLarge(TlgraphError, OSError):
    """A file over :data:`~pytest_tlgraph.limits.MAX_FILE_BYTES`."""

    def __init__(self, path: Path, limit: int) -> None:
        super().__init__(
            errno.EFBIG,
            f"refusing to read {path}: it is over {limit // (1024 * 1024)} MB "
            "(pytest_tlgraph.limits.MAX_FILE_BYTES), larger than any file tlgraph writes; "
            "give the file tlgraph wrote",
        )
        self.path = path

    def __str__(self) -> str:
        return str(self.strerror)


def read_regular(
    path: str | os.PathLike[str], *, follow: bool = True, head: int | None = None
) -> bytes:
    """The bytes of the regular file ``path``, read without blocking and at most
    :data:`~pytest_tlgraph.limits.MAX_FILE_BYTES` of them (only its first ``head``
    bytes when given: a file's header, whatever its size). Raises
    ``FileNotFoundError`` when it is missing, :class:`NotAFile` for anything but a
    regular file (a link too, when not ``follow``), :class:`TooLarge` past the limit."""
    shown = Path(path)
    flags = os.O_RDONLY | _NONBLOCK | _BINARY | (0 if follow else _NOFOLLOW)
    if not follow and os.path.islink(path):
        raise NotAFile(shown, "symbolic link")
    try:
        fd = os.open(path, flags)
    except OSError as error:
        if error.errno == errno.ELOOP and not follow:
            raise NotAFile(shown, "symbolic link") from None
        raise
    with os.fdopen(fd, "rb") as handle:
        found = os.fstat(fd)
        kind = kind_of(found.st_mode)
        if kind is not None:
            raise NotAFile(shown, kind)
        if head is not None:
            return handle.read(min(head, MAX_FILE_BYTES))
        if found.st_size > MAX_FILE_BYTES:
            raise TooLarge(shown, MAX_FILE_BYTES)
        return _capped(handle, shown)


def read_stream(stream: BinaryIO | None = None, name: str = "standard input") -> bytes:
    """At most :data:`~pytest_tlgraph.limits.MAX_FILE_BYTES` of ``stream`` (standard
    input by default); :class:`TooLarge` past it."""
    source = sys.stdin.buffer if stream is None else stream
    return _capped(source, Path(name))


def _capped(handle: BinaryIO, shown: Path) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = handle.read(min(_CHUNK, MAX_FILE_BYTES + 1 - total))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > MAX_FILE_BYTES:
            raise TooLarge(shown, MAX_FILE_BYTES)


def is_regular(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` (not followed) is a regular file."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False
