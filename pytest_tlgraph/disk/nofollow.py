"""Folders opened without following a link: every write of the plugin goes through one.

A snapshot folder, the results folder and the lock live in a project that anyone can
put a symbolic link into (``tlgraph-results/test_m -> ../__snapshots__/test_m``). A
write that follows it changes a file elsewhere: a baseline, a file outside the project.

:func:`open_folder` walks from an *anchor* (the folder above ``__snapshots__``, the
results folder) down to the folder of a file, one part at a time, each opened with
``O_NOFOLLOW`` relative to the one above it (``dir_fd``), and makes the missing ones
the same way: a part that is a link is refused, and once a folder is open nothing can
swap a link in above it. Every file is then made, replaced or removed relative to that
open folder, never by its path. Where the system has no ``dir_fd`` (Windows), each part
is checked with ``lstat`` before it is used: the same refusal, with a race left open.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from pytest_tlgraph.errors import TlgraphError

__all__ = [
    "FileInTheWay",
    "Folder",
    "LinkRefused",
    "NotRegular",
    "file_in_the_way",
    "in_the_way",
    "kind_of",
    "open_folder",
]

_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY: Final = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK: Final = getattr(os, "O_NONBLOCK", 0)
_BINARY: Final = getattr(os, "O_BINARY", 0)
#: Folders can be opened and files made relative to an open folder.
_AT: Final = os.open in os.supports_dir_fd and bool(_DIRECTORY) and bool(_NOFOLLOW)


class LinkRefused(TlgraphError, OSError):
    """A symbolic link where the plugin writes ``file`` (the file itself, or a folder
    on its path); the message names it, where it leads, and the remedy."""

    def __init__(self, link: Path, file: Path | None = None) -> None:
        try:
            target = f" (to {os.readlink(link)})"
        except OSError:
            target = ""
        file = link if file is None else file
        where = "it is" if file == link else f"{link} on its path is"
        super().__init__(
            f"refusing to write {file}: {where} a symbolic link{target}, and writing through "
            "it would change a file elsewhere; delete the link and run again"
        )
        self.link = link
        self.file = file


class NotRegular(TlgraphError, OSError):
    """A FIFO, device, socket or folder where the plugin writes a file."""

    def __init__(self, path: Path, kind: str) -> None:
        super().__init__(
            f"refusing to write {path}: it is a {kind}, not a regular file (opening it could "
            "block the run or write to a device); remove it or give a regular file"
        )
        self.path = path
        self.kind = kind


def in_the_way(shown: str, then: str = "run again") -> str:
    """The one line refusing a file that stands where a folder belongs (``shown``: the
    file as the reader sees it; ``then``: what to do once it is moved)."""
    return f"{shown} is a file where a folder belongs: move it away (or delete it), then {then}"


def file_in_the_way(location: Path) -> Path | None:
    """The first existing non-folder on the way to ``location`` (a regular file where
    ``__snapshots__/test_m`` belongs), or ``None``; links are left to the link check."""
    for folder in reversed(location.parents):
        if folder.is_symlink() or not folder.exists():
            continue
        if not folder.is_dir():
            return folder
    return None


class FileInTheWay(TlgraphError, NotADirectoryError):
    """A file where a folder on the path of a write belongs."""

    def __init__(self, path: Path) -> None:
        super().__init__(errno.ENOTDIR, in_the_way(str(path)))
        self.path = path

    def __str__(self) -> str:
        return str(self.strerror)


def kind_of(mode: int) -> str | None:
    """What a file of ``mode`` is when it is not a regular file (``None`` when it is)."""
    for test, name in (
        (stat.S_ISFIFO, "FIFO (named pipe)"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
        (stat.S_ISSOCK, "socket"),
        (stat.S_ISDIR, "folder"),
        (stat.S_ISLNK, "symbolic link"),
    ):
        if test(mode):
            return name
    return None if stat.S_ISREG(mode) else "special file"


class Folder:
    """One folder, opened without following a link (a file descriptor where the system
    allows it); files inside are named by their last part only."""

    def __init__(self, path: Path, fd: int | None) -> None:
        self.path = path
        self._fd = fd

    def close(self) -> None:
        """Give the folder back (idempotent)."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None

    def _at(self, name: str) -> str:
        return name if self._fd is not None else str(self.path / name)

    def lstat(self, name: str) -> os.stat_result | None:
        """The entry ``name`` as it is (a link as a link), ``None`` when missing."""
        try:
            return os.stat(self._at(name), dir_fd=self._fd, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def refuse_link(self, name: str) -> None:
        """Raise :class:`LinkRefused` when ``name`` is a symbolic link."""
        found = self.lstat(name)
        if found is not None and stat.S_ISLNK(found.st_mode):
            raise LinkRefused(self.path / name)

    def refuse_special(self, name: str) -> None:
        """Raise :class:`LinkRefused` or :class:`NotRegular` unless ``name`` is missing
        or a regular file."""
        found = self.lstat(name)
        if found is None:
            return
        kind = kind_of(found.st_mode)
        if kind == "symbolic link":
            raise LinkRefused(self.path / name)
        if kind is not None:
            raise NotRegular(self.path / name, kind)

    def create(self, name: str, mode: int = 0o666) -> int:
        """A new file ``name`` (it must not exist), open for writing; its descriptor."""
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _BINARY
        return os.open(self._at(name), flags, mode, dir_fd=self._fd)

    def append(self, name: str, mode: int = 0o666) -> int:
        """``name`` open for appending (made when missing), never through a link and
        never blocking; refused unless it is a regular file."""
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW | _NONBLOCK | _BINARY
        self.refuse_link(name)
        try:
            fd = os.open(self._at(name), flags, mode, dir_fd=self._fd)
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise LinkRefused(self.path / name) from None
            raise
        kind = kind_of(os.fstat(fd).st_mode)
        if kind is not None:
            os.close(fd)
            raise NotRegular(self.path / name, kind)
        return fd

    def replace(self, source: str, target: str) -> None:
        """Rename ``source`` over ``target``, both in this folder."""
        os.replace(self._at(source), self._at(target), src_dir_fd=self._fd, dst_dir_fd=self._fd)

    def link(self, source: str, target: str) -> None:
        """A hard link ``target`` to the file ``source`` (never to a link's target)."""
        os.link(
            self._at(source),
            self._at(target),
            src_dir_fd=self._fd,
            dst_dir_fd=self._fd,
            follow_symlinks=False,
        )

    def unlink(self, name: str) -> None:
        """Remove the entry ``name`` (a link itself, never its target)."""
        os.unlink(self._at(name), dir_fd=self._fd)

    def read(self, name: str) -> bytes:
        """The bytes of the regular file ``name`` (a link is refused)."""
        flags = os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _BINARY
        self.refuse_link(name)
        fd = os.open(self._at(name), flags, dir_fd=self._fd)
        with os.fdopen(fd, "rb") as handle:
            kind = kind_of(os.fstat(fd).st_mode)
            if kind is not None:
                raise NotRegular(self.path / name, kind)
            return handle.read()


def _parts(folder: Path, anchor: Path) -> Iterator[str]:
    if folder == anchor:
        return iter(())
    return iter(folder.relative_to(anchor).parts)


def open_folder(folder: Path, anchor: Path, *, create: bool = True) -> Folder:
    """``folder`` opened part by part from ``anchor`` (which may itself be reached by a
    link: it is where the user put the project or the results), none followed; missing
    parts are made when ``create``. ``folder`` must be ``anchor`` or inside it.

    Raises :class:`LinkRefused` naming the first part that is a link, ``OSError`` for
    everything else (``NotADirectoryError`` for a file in the way)."""
    if _AT:
        fd = os.open(anchor, os.O_RDONLY | _DIRECTORY)
        here = anchor
        try:
            for part in _parts(folder, anchor):
                here = here / part
                child = _step(fd, part, here, create=create)
                os.close(fd)
                fd = child
        except BaseException:
            os.close(fd)
            raise
        return Folder(folder, fd)
    here = anchor
    for part in _parts(folder, anchor):
        here = here / part
        if here.is_symlink():
            raise LinkRefused(here)
        if create and not here.exists():
            with contextlib.suppress(FileExistsError):
                here.mkdir()
        if here.is_symlink():
            raise LinkRefused(here)
        if here.exists() and not here.is_dir():
            raise FileInTheWay(here)
    return Folder(folder, None)


def _step(fd: int, part: str, here: Path, *, create: bool) -> int:
    """The descriptor of ``part`` inside the open folder ``fd`` (made when missing and
    ``create``)."""
    flags = os.O_RDONLY | _DIRECTORY | _NOFOLLOW
    try:
        try:
            return os.open(part, flags, dir_fd=fd)
        except FileNotFoundError:
            if not create:
                raise
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, dir_fd=fd)
            return os.open(part, flags, dir_fd=fd)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            try:
                found = os.stat(part, dir_fd=fd, follow_symlinks=False)
            except OSError:
                raise error from None
            if stat.S_ISLNK(found.st_mode):
                raise LinkRefused(here) from None
            if not stat.S_ISDIR(found.st_mode):
                raise FileInTheWay(here) from None
        raise
