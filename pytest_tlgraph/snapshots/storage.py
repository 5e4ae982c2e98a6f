"""The storage side of the plugin's syrupy extensions: file names that fit the file
system, and writes that are atomic and never follow a symbolic link."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from syrupy.extensions.base import AbstractSyrupyExtension
from syrupy.extensions.single_file import SingleFileSnapshotExtension

from pytest_tlgraph.snapshots.files import SnapshotWriteError, atomic_write, fitted_name

if TYPE_CHECKING:
    from syrupy.data import SnapshotCollection
    from syrupy.location import PyTestLocation
    from syrupy.types import SerializedData, SnapshotIndex

__all__ = ["SafeFileExtension"]


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

    @classmethod
    def write_snapshot(
        cls,
        *,
        snapshot_location: str,
        snapshots: list[tuple[SerializedData, PyTestLocation, SnapshotIndex]],
        name_order: dict[str, int] | None = None,
    ) -> None:
        """syrupy's write, with a failure to create the folder reported as a write."""
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
        ``os.replace``), refusing a link or a folder that leads out of ``__snapshots__``."""
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
        atomic_write(path, raw)
