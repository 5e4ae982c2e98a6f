"""The storage of a snapshot pair: file names that fit the file system, the one read of
each stored file, writes that are atomic, made as a pair and never follow a symbolic
link, and deletions that touch only files the plugin provably wrote."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

from syrupy.extensions.base import AbstractSyrupyExtension
from syrupy.extensions.single_file import SingleFileSnapshotExtension

from pytest_tlgraph.disk.bounded import read_regular
from pytest_tlgraph.disk.files import SnapshotWriteError, atomic_write_all, fitted_name
from pytest_tlgraph.disk.nofollow import FileInTheWay, LinkRefused, open_folder
from pytest_tlgraph.pixels.pngmeta import PNG_SIGNATURE
from pytest_tlgraph.snapshots.pair import StoredPair
from pytest_tlgraph.snapshots.provenance import DOT_HEADER, Provenance

if TYPE_CHECKING:
    from syrupy.location import PyTestLocation
    from syrupy.types import SerializedData, SnapshotIndex

__all__ = [
    "SafeFileExtension",
    "owned_dot",
    "owned_png",
    "png_location",
    "read_pair",
    "read_snapshot_file",
    "remove_pair",
    "snapshot_anchor",
    "write_pair",
]


def snapshot_anchor(path: Path) -> Path:
    """The folder a snapshot file's writes start from, the one that holds
    ``__snapshots__``: no folder below it (``__snapshots__``, ``<module>``) may be a
    link (``<anchor>/__snapshots__/<module>/<name>.gv``)."""
    return path.parent.parent.parent


def png_location(dot_location: str | Path) -> Path:
    """The ``.png`` of the pair whose ``.gv`` is ``dot_location``."""
    return Path(dot_location).with_suffix(".png")


def read_snapshot_file(path: Path) -> bytes | None:
    """The bytes of one stored snapshot file, ``None`` when it is missing: the one read
    of a stored ``.gv`` or ``.png`` (``disk.bounded.read_regular``: a FIFO, a device or
    a file over the size limit is refused, never waited on; any ``OSError`` but a
    missing file is raised)."""
    try:
        return read_regular(path)
    except FileNotFoundError:
        return None


def read_pair(dot_location: str | Path) -> StoredPair | None:
    """The stored pair whose ``.gv`` is ``dot_location``, each file read once;
    ``None`` when neither file exists."""
    dot = read_snapshot_file(Path(dot_location))
    png = read_snapshot_file(png_location(dot_location))
    if dot is None and png is None:
        return None
    return StoredPair.of(dot, png)


def owned_dot(path: Path) -> bool:
    """True when ``path`` is a ``.gv`` that is a tlgraph drawing (the plugin's own)."""
    if path.suffix != ".gv":
        return False
    try:
        return read_regular(path, head=len(DOT_HEADER)) == DOT_HEADER.encode()
    except OSError:
        return False


def owned_png(path: Path) -> bool:
    """True when ``path`` is a ``.png`` carrying the plugin's provenance metadata."""
    if path.suffix != ".png":
        return False
    try:
        data = read_regular(path)
    except OSError:
        return False
    return data.startswith(PNG_SIGNATURE) and Provenance.of(data).renderer is not None


def write_pair(dot_location: Path, dot: bytes, png: bytes | None, *, drop_png: bool) -> None:
    """Write a pair all or nothing (``files.atomic_write_all``): the ``.gv``, with the
    ``.png`` when given; ``drop_png`` removes a stored ``.png`` once the ``.gv`` is
    written (the pair has no PNG, or it was drawn from another DOT). No folder from the
    one above ``__snapshots__`` down is followed if a link; a failure raises
    :class:`SnapshotWriteError` and leaves every stored file as it was."""
    files = [(dot_location, dot)]
    if png is not None:
        files.append((png_location(dot_location), png))
    folder, snapshots = dot_location.parent, dot_location.parent.parent
    if not folder.resolve().is_relative_to(snapshots.resolve()):
        raise SnapshotWriteError(
            f"refusing to write {dot_location}: its folder is a link to {folder.resolve()}, "
            f"outside {snapshots}; replace the link with a real folder"
        )
    atomic_write_all(files, anchor=snapshot_anchor(dot_location))
    if drop_png and png is None:
        _remove(png_location(dot_location))


def remove_pair(dot_location: Path) -> None:
    """Delete a stored pair, each file only when it is the plugin's own."""
    for path in (dot_location, png_location(dot_location)):
        if owned_dot(path) or owned_png(path):
            _remove(path)


def _remove(path: Path) -> None:
    """Remove ``path`` inside its folder opened without following a link."""
    with contextlib.suppress(FileNotFoundError):
        folder = open_folder(path.parent, snapshot_anchor(path), create=False)
        try:
            folder.unlink(path.name)
        finally:
            folder.close()


class SafeFileExtension(SingleFileSnapshotExtension):
    """File names that fit the file system, and a folder made for a write without
    following a symbolic link out of the snapshot folder."""

    @classmethod
    def get_snapshot_name(cls, *, test_location: PyTestLocation, index: SnapshotIndex = 0) -> str:
        """syrupy's sanitised name, shortened with a stable hash when too long
        (:func:`fitted_name`); every artifact of the snapshot is named after it."""
        full = AbstractSyrupyExtension.get_snapshot_name(test_location=test_location, index=index)
        return fitted_name(cls._sanitize_filename(full))

    @classmethod
    def matches_test_location(
        cls, *, test_location: PyTestLocation, snapshot_location: str
    ) -> bool:
        """Also relate a shortened name (``prefix~hash``) to its test."""
        if super().matches_test_location(
            test_location=test_location, snapshot_location=snapshot_location
        ):
            return True
        path = Path(snapshot_location)
        stem = path.name.removesuffix(f".{cls.file_extension}")
        if "~" not in stem or path.parent.name != test_location.basename:
            return False
        prefix = stem[: stem.rindex("~")]
        test = cls._sanitize_filename(test_location.snapshot_name_parametrized)
        return test.startswith(prefix) or prefix.startswith(test)

    @classmethod
    def write_snapshot(
        cls,
        *,
        snapshot_location: str,
        snapshots: list[tuple[SerializedData, PyTestLocation, SnapshotIndex]],
        name_order: dict[str, int] | None = None,
    ) -> None:
        """syrupy's write, its folder made first without following a link (syrupy's
        own ``mkdir`` would), a failure to create it reported as a write."""
        path = Path(snapshot_location)
        try:
            open_folder(path.parent, snapshot_anchor(path)).close()
        except LinkRefused as error:
            raise SnapshotWriteError(
                str(LinkRefused(error.link, path)), path, link=error.link
            ) from None
        except FileInTheWay as error:
            raise SnapshotWriteError(f"could not write {path}: {error}", path) from None
        except OSError:
            pass  # syrupy's own mkdir below names the failure
        try:
            super().write_snapshot(
                snapshot_location=snapshot_location, snapshots=snapshots, name_order=name_order
            )
        except SnapshotWriteError:
            raise
        except OSError as error:
            raise SnapshotWriteError(
                f"could not write {snapshot_location}: {error.strerror or error}; make "
                "the snapshot folder writable and run again"
            ) from error
