"""File handling shared by the snapshot extensions and the results folder: atomic
writes that never follow a symbolic link, and file names that fit the file system.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Final

__all__ = [
    "NAME_BUDGET",
    "SnapshotWriteError",
    "atomic_write",
    "atomic_write_all",
    "fitted_name",
]

#: Bytes a snapshot name may take in a file name. File systems allow 255; the rest is
#: left for the longest suffix any artifact adds (``-expected.png``, ``.dot.diff``,
#: ``-graphdiff.png``, ...).
NAME_BUDGET: Final = 200
_HASH_CHARS: Final = 16


class SnapshotWriteError(OSError):
    """A snapshot or results file could not be written; the message names the file,
    the cause and the remedy (``path`` and ``reason`` hold the first two, when known)."""

    def __init__(self, message: str, path: Path | None = None, reason: str | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.reason = reason


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
    atomic_write_all([(path, data)])


def atomic_write_all(files: Sequence[tuple[Path, bytes]]) -> None:
    """Write every one of ``files`` or none (a snapshot's ``.gv`` and ``.png``).

    Each is first written in full to a temporary file next to it; only when all are
    written are they renamed over their targets, each old file kept as a hard link (or
    a copy) until every rename succeeded. A failure at any step leaves every target as
    it was and raises :class:`SnapshotWriteError` naming the file and the OS error. (A
    process killed between two renames can still leave one new file next to one old:
    a PNG so left records another DOT, and the next run says it is stale.)
    """
    staged: list[tuple[str, Path]] = []
    backups: dict[Path, str] = {}
    try:
        for path, data in files:
            _refuse_link(path)
            staged.append((_write_temp(path, data), path))
        if len(staged) > 1:
            for _, path in staged:
                if path.exists():
                    backups[path] = _backup(path)
        replaced: list[Path] = []
        for tmp, path in staged:
            try:
                os.replace(tmp, path)
            except OSError as error:
                _restore(replaced, backups)
                raise _write_error(path, error) from error
            replaced.append(path)
    finally:
        for tmp in [tmp for tmp, _ in staged] + list(backups.values()):
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _refuse_link(path: Path) -> None:
    if path.is_symlink():
        raise SnapshotWriteError(
            f"refusing to write {path}: it is a symbolic link (to {os.readlink(path)}), and "
            "writing through it would change a file elsewhere; delete the link and run "
            "again to write a regular file in its place"
        )


def _write_temp(path: Path, data: bytes) -> str:
    """``data`` in a new temporary file next to ``path``, flushed to disk; its name."""
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
    except OSError as error:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise _write_error(path, error) from error
    return tmp


def _backup(path: Path) -> str:
    """A second name for the current ``path`` (a hard link; a copy where links are not
    supported), so a failed rename of its pair can put it back."""
    name = str(path.parent / f".tlgraph-{secrets.token_hex(8)}.tmp")
    try:
        os.link(path, name)
        return name
    except OSError:
        pass
    try:
        data = path.read_bytes()
    except OSError as error:
        raise _write_error(path, error) from error
    return _write_temp(path, data)


def _restore(replaced: Sequence[Path], backups: dict[Path, str]) -> None:
    """Undo the renames done before one failed: old files back, new ones removed."""
    for path in replaced:
        with contextlib.suppress(OSError):
            if path in backups:
                os.replace(backups.pop(path), path)
            else:
                os.unlink(path)


def _file_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _write_error(path: Path, error: OSError) -> SnapshotWriteError:
    reason = error.strerror or str(error)
    return SnapshotWriteError(
        f"could not write {path}: {reason}; make its folder writable (or free space) and run again",
        path,
        reason,
    )
