"""The storage side of the plugin's syrupy extensions: file names that fit the file
system, writes that are atomic, made in pairs and never follow a symbolic link, and
deletions a run that stopped early holds back."""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from syrupy.extensions.base import AbstractSyrupyExtension
from syrupy.extensions.single_file import SingleFileSnapshotExtension

from pytest_tlgraph.snapshots.files import (
    SnapshotWriteError,
    atomic_write,
    atomic_write_all,
    fitted_name,
)
from pytest_tlgraph.snapshots.nofollow import FileInTheWay, LinkRefused, open_folder

if TYPE_CHECKING:
    from syrupy.data import SnapshotCollection
    from syrupy.location import PyTestLocation
    from syrupy.types import SerializedData, SnapshotIndex

__all__ = ["HELD", "SafeFileExtension", "deletion_held", "snapshot_anchor", "written_together"]

#: Folders (resolved, as text; ``"*"``: every folder) whose snapshots no deletion may
#: touch this session, set by ``cleanup.RunLedger`` for a run that did not run every
#: collected test to its end: the last line of defence, for a syrupy that ignores the
#: cleanup settings the ledger changes.
HELD: set[str] = set()


#: The writes held back inside :func:`written_together`, in order.
_STAGED: contextvars.ContextVar[list[tuple[Path, bytes]] | None] = contextvars.ContextVar(
    "tlgraph_staged_writes", default=None
)


@contextmanager
def written_together() -> Iterator[list[tuple[Path, bytes]]]:
    """Hold back the snapshot writes made inside (a call's ``.gv`` and ``.png``) and,
    on leaving, write them all or none (``files.atomic_write_all``): a failure raises
    :class:`SnapshotWriteError` and leaves every stored file as it was. The list the
    block gets names the files held back."""
    staged: list[tuple[Path, bytes]] = []
    token = _STAGED.set(staged)
    try:
        yield staged
    finally:
        _STAGED.reset(token)
    if staged:
        atomic_write_all(staged, anchor=snapshot_anchor(staged[0][0]))


def snapshot_anchor(path: Path) -> Path:
    """The folder a snapshot file's writes start from, the one that holds
    ``__snapshots__``: no folder below it (``__snapshots__``, ``<module>``) may be a
    link (``<anchor>/__snapshots__/<module>/<name>.gv``)."""
    return path.parent.parent.parent


def deletion_held(location: str) -> bool:
    """True when the snapshot file at ``location`` must not be deleted this session."""
    if "*" in HELD:
        return True
    path = Path(location).resolve()
    return any(path.is_relative_to(folder) for folder in HELD)


class SafeFileExtension(SingleFileSnapshotExtension):
    """File names that fit the file system, and writes that are atomic and never
    follow a symbolic link out of the snapshot folder."""

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

    def delete_snapshots(self, *, snapshot_location: str, snapshot_names: set[str]) -> None:
        """syrupy's delete of an unused snapshot file, unless this session holds it."""
        if not deletion_held(snapshot_location):
            super().delete_snapshots(
                snapshot_location=snapshot_location, snapshot_names=snapshot_names
            )

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

    @classmethod
    def write_snapshot_collection(
        cls,
        *,
        snapshot_collection: SnapshotCollection,
        name_order: dict[str, int] | None = None,
    ) -> None:
        """Write the one snapshot of the file atomically (temporary file, then
        ``os.replace``), refusing a link or a folder that leads out of ``__snapshots__``;
        inside :func:`written_together`, held back to be written with its pair."""
        path = Path(snapshot_collection.location)
        data = next(iter(snapshot_collection)).data
        if not isinstance(data, (str, bytes)):
            raise TypeError(f"a snapshot is text or bytes, got {type(data).__name__}")
        raw = data.encode("utf-8") if isinstance(data, str) else data
        folder, snapshots = path.parent, path.parent.parent
        if not folder.resolve().is_relative_to(snapshots.resolve()):
            raise SnapshotWriteError(
                f"refusing to write {path}: its folder is a link to {folder.resolve()}, "
                f"outside {snapshots}; replace the link with a real folder"
            )
        staged = _STAGED.get()
        if staged is not None:
            staged.append((path, raw))
        else:
            atomic_write(path, raw, anchor=snapshot_anchor(path))
