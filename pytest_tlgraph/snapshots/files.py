"""File handling shared by the snapshot extensions and the results folder: atomic
writes that never follow a symbolic link, and file names that fit the file system.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from pathlib import Path
from typing import Final

__all__ = ["NAME_BUDGET", "SnapshotWriteError", "atomic_write", "fitted_name"]

#: Bytes a snapshot name may take in a file name. File systems allow 255; the rest is
#: left for the longest suffix any artifact adds (``-expected.png``, ``.dot.diff``,
#: ``-graphdiff.png``, ...).
NAME_BUDGET: Final = 200
_HASH_CHARS: Final = 16


class SnapshotWriteError(OSError):
    """A snapshot or results file could not be written; the message names the file,
    the cause and the remedy."""


def fitted_name(name: str, budget: int = NAME_BUDGET) -> str:
    """``name`` when its UTF-8 form fits ``budget`` bytes, else a prefix of it with a
    stable hash of the whole name: ``test_x[aaaa~0123456789abcdef]``.

    The same name always gives the same result, and two long names with a common
    prefix give different ones. A closing ``]`` is kept, so the result still reads as
    a named snapshot.
    """
    if len(name.encode("utf-8", "surrogatepass")) <= budget:
        return name
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_CHARS]
    tail = "~" + digest + ("]" if name.endswith("]") else "")
    room = budget - len(tail)
    prefix, used = [], 0
    for char in name:
        size = len(char.encode("utf-8", "surrogatepass"))
        if used + size > room:
            break
        prefix.append(char)
        used += size
    return "".join(prefix) + tail


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and
    ``os.replace``: a reader (or a killed run) sees the old file or the new one, never
    a truncated one. A ``path`` that is a symbolic link is refused, never followed.

    Raises :class:`SnapshotWriteError` naming the file and the remedy.
    """
    if path.is_symlink():
        raise SnapshotWriteError(
            f"refusing to write {path}: it is a symbolic link (to {os.readlink(path)}), and "
            "writing through it would change a file elsewhere; delete the link and run "
            "again to write a regular file in its place"
        )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tlgraph-", suffix=".tmp")
    except OSError as error:
        raise _write_error(path, error) from error
    try:
        with os.fdopen(handle, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, _file_mode())  # mkstemp makes 0600; a snapshot is an ordinary file
        os.replace(tmp, path)
    except OSError as error:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise _write_error(path, error) from error


def _file_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _write_error(path: Path, error: OSError) -> SnapshotWriteError:
    reason = error.strerror or str(error)
    return SnapshotWriteError(
        f"could not write {path}: {reason}; make its folder writable (or free space) and run again"
    )
