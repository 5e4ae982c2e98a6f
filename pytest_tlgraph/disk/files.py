"""File handling shared by the snapshot extensions and the results folder: atomic
writes that never follow a symbolic link, and file names that fit the file system.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from pytest_tlgraph.disk.nofollow import (
    FileInTheWay,
    Folder,
    LinkRefused,
    NotRegular,
    open_folder,
)
from pytest_tlgraph.errors import TlgraphError

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


class SnapshotWriteError(TlgraphError, OSError):
    """A snapshot or results file could not be written; the message names the file,
    the cause and the remedy (``path`` and ``reason`` hold the first two, when known:
    ``reason`` is the OS error's text, ``None`` for a write refused before the OS was
    asked, a link or a FIFO in the way)."""

    def __init__(
        self,
        message: str,
        path: Path | None = None,
        reason: str | None = None,
        link: Path | None = None,
    ) -> None:
        super().__init__(message)
        self.path = path
        self.reason = reason
        #: The symbolic link the write refused, when it was one (``path`` or a folder).
        self.link = link


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


def atomic_write(path: Path, data: bytes, *, anchor: Path | None = None) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and
    ``os.replace``: a reader (or a killed run) sees the old file or the new one, never
    a truncated one. No symbolic link is followed: not ``path``, nor any folder from
    ``anchor`` (default: ``path``'s folder) down to it (``nofollow.open_folder``).

    Raises :class:`SnapshotWriteError` naming the file (or the link) and the remedy.
    """
    atomic_write_all([(path, data)], anchor=anchor)


def atomic_write_all(files: Sequence[tuple[Path, bytes]], *, anchor: Path | None = None) -> None:
    """Write every one of ``files`` or none (a snapshot's ``.gv`` and ``.png``).

    Each is first written in full to a temporary file next to it; only when all are
    written are they renamed over their targets, each old file kept as a hard link (or
    a copy) until every rename succeeded. A failure at any step leaves every target as
    it was and raises :class:`SnapshotWriteError` naming the file and the OS error. (A
    process killed between two renames can still leave one new file next to one old:
    a PNG so left records another DOT, and the next run says it is stale.) Every
    folder from ``anchor`` down is opened without following a link, and every file is
    made and renamed inside its open folder.
    """
    folders: dict[Path, Folder] = {}
    staged: list[tuple[Folder, str, Path]] = []
    backups: dict[Path, str] = {}
    try:
        for path, data in files:
            folder = folders.get(path.parent)
            if folder is None:
                folder = folders[path.parent] = _open(path, anchor)
            try:
                folder.refuse_special(path.name)
            except (LinkRefused, NotRegular) as error:
                raise _refused(path, error) from None
            except OSError as error:
                raise _write_error(path, error) from error
            staged.append((folder, _write_temp(folder, path, data), path))
        if len(staged) > 1:
            for folder, _, path in staged:
                if folder.lstat(path.name) is not None:
                    backups[path] = _backup(folder, path)
        replaced: list[Path] = []
        for folder, tmp, path in staged:
            try:
                folder.replace(tmp, path.name)
            except OSError as error:
                _restore(replaced, backups, folders)
                raise _write_error(path, error) from error
            replaced.append(path)
    finally:
        for folder, tmp, _ in staged:
            with contextlib.suppress(OSError):
                folder.unlink(tmp)
        for path, tmp in backups.items():
            with contextlib.suppress(OSError):
                folders[path.parent].unlink(tmp)
        for folder in folders.values():
            folder.close()


def _open(path: Path, anchor: Path | None) -> Folder:
    """The folder of ``path``, opened from ``anchor`` without following a link."""
    top = path.parent if anchor is None or not path.parent.is_relative_to(anchor) else anchor
    try:
        return open_folder(path.parent, top)
    except LinkRefused as error:
        raise _refused(path, error) from None
    except FileInTheWay as error:
        raise SnapshotWriteError(f"could not write {path}: {error}", path) from None
    except OSError as error:
        raise _write_error(path, error) from error


def _refused(path: Path, error: LinkRefused | NotRegular) -> SnapshotWriteError:
    if isinstance(error, LinkRefused):
        return SnapshotWriteError(str(LinkRefused(error.link, path)), path, link=error.link)
    return SnapshotWriteError(str(error), path)


def _write_temp(folder: Folder, path: Path, data: bytes) -> str:
    """``data`` in a new temporary file next to ``path``, flushed to disk; its name."""
    for _ in range(100):
        name = f".tlgraph-{secrets.token_hex(8)}.tmp"
        try:
            handle = folder.create(name, _file_mode())
            break
        except FileExistsError:
            continue
        except OSError as error:
            raise _write_error(path, error) from error
    else:  # pragma: no cover - a hundred clashes of 64 random bits
        raise _write_error(path, FileExistsError(17, "no free temporary name"))
    try:
        with os.fdopen(handle, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except OSError as error:
        with contextlib.suppress(OSError):
            folder.unlink(name)
        raise _write_error(path, error) from error
    return name


def _backup(folder: Folder, path: Path) -> str:
    """A second name for the current ``path`` (a hard link; a copy where links are not
    supported), so a failed rename of its pair can put it back."""
    name = f".tlgraph-{secrets.token_hex(8)}.tmp"
    try:
        folder.link(path.name, name)
        return name
    except OSError:
        pass
    try:
        data = folder.read(path.name)
    except OSError as error:
        raise _write_error(path, error) from error
    return _write_temp(folder, path, data)


def _restore(
    replaced: Sequence[Path], backups: dict[Path, str], folders: dict[Path, Folder]
) -> None:
    """Undo the renames done before one failed: old files back, new ones removed."""
    for path in replaced:
        folder = folders[path.parent]
        with contextlib.suppress(OSError):
            if path in backups:
                folder.replace(backups.pop(path), path.name)
            else:
                folder.unlink(path.name)


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
