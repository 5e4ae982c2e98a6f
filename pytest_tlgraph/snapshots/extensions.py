"""The one syrupy extension: a call's snapshot is the pair ``<name>.gv`` + ``<name>.png``.

Unused-snapshot accounting and ``--snapshot-update`` are syrupy's own; this class says
which files are the plugin's, reads each stored pair once (``storage.read_pair``),
compares it with the received pair (``pair.ReceivedPair.against``), writes it all or
nothing and deletes it as one. It claims only files it provably wrote (DOT text that
starts with ``digraph tlgraph``, PNGs carrying our ``tEXt`` provenance), so
``--snapshot-update`` never deletes a foreign file that happens to share a suffix; a
``.png`` without its ``.gv`` is still discovered, as the pair it is half of.

The PNG's provenance and the snapshot render live in ``snapshots.provenance``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from syrupy.data import Snapshot, SnapshotCollection, SnapshotCollections

from pytest_tlgraph.snapshots.pair import Keep, ReceivedPair, StoredPair
from pytest_tlgraph.snapshots.provenance import Provenance, render_snapshot_png
from pytest_tlgraph.snapshots.storage import (
    SafeFileExtension,
    owned_dot,
    owned_png,
    read_pair,
    remove_pair,
    write_pair,
)
from pytest_tlgraph.snapshots.syrupy_private import syrupy_session

if TYPE_CHECKING:
    import pytest
    from syrupy.location import PyTestLocation
    from syrupy.types import PropertyFilter, PropertyMatcher, SerializableData, SerializedData

#: ``Provenance`` and ``render_snapshot_png`` are re-exported under their 0.3 home.
__all__ = ["Provenance", "TlgraphPairExtension", "announce_pairs", "render_snapshot_png"]


class TlgraphPairExtension(SafeFileExtension):
    """A call's ``.gv`` and ``.png``, stored under the ``.gv``'s location as one snapshot.

    One instance serves one call's assertion: the pair it reads is kept for that
    assertion, so the skip-render shortcut and syrupy's own recall read each file once.
    """

    file_extension = "gv"

    def __init__(self) -> None:
        self._read: dict[str, StoredPair | None] = {}

    def is_snapshot_location(self, *, location: str) -> bool:
        """Claim a ``.gv`` that is a tlgraph drawing, or a ``.png`` with our provenance."""
        path = Path(location)
        return owned_dot(path) or owned_png(path)

    def discover_snapshots(
        self, *, test_location: PyTestLocation, ignore_extensions: list[str] | None = None
    ) -> SnapshotCollections:
        """syrupy's discovery, each file found named by its pair: a ``.png`` counts as
        the snapshot at its ``.gv``'s location, so a pair is used, unused or deleted as
        one, and a ``.png`` left without its ``.gv`` is still found."""
        pairs = SnapshotCollections()
        for found in super().discover_snapshots(
            test_location=test_location, ignore_extensions=ignore_extensions
        ):
            location = Path(found.location)
            if not self.is_snapshot_location(location=str(location)):
                continue
            collection = SnapshotCollection(location=str(location.with_suffix(".gv")))
            collection.add(Snapshot(name=location.stem))
            pairs.update(collection)
        return pairs

    def read_snapshot_data_from_location(
        self, *, snapshot_location: str, snapshot_name: str, session_id: str
    ) -> SerializableData | None:
        """The stored :class:`StoredPair`, read once per assertion (``None``: neither
        file exists). A damaged ``.gv`` reads with its bad bytes replaced, so it fails
        the comparison (and can be rewritten) instead of crashing the read."""
        if snapshot_location not in self._read:
            self._read[snapshot_location] = read_pair(snapshot_location)
        return self._read[snapshot_location]

    def serialize(
        self,
        data: SerializableData,
        *,
        exclude: PropertyFilter | None = None,
        include: PropertyFilter | None = None,
        matcher: PropertyMatcher | None = None,
    ) -> SerializedData:
        """A :class:`ReceivedPair` (or :data:`pair.KEEP`) is its own serialized form."""
        if not isinstance(data, (ReceivedPair, Keep)):
            raise TypeError(f"a tlgraph snapshot is a ReceivedPair, got {type(data).__name__}")
        return data  # type: ignore[return-value]  # syrupy types its values str | bytes

    def matches(
        self, *, serialized_data: SerializableData, snapshot_data: SerializableData
    ) -> bool:
        """The received pair against the stored one (``ReceivedPair.against``)."""
        if isinstance(serialized_data, Keep):
            return True
        assert isinstance(serialized_data, ReceivedPair)
        assert isinstance(snapshot_data, StoredPair)
        return serialized_data.against(snapshot_data).passed

    @classmethod
    def write_snapshot_collection(
        cls, *, snapshot_collection: SnapshotCollection, name_order: dict[str, int] | None = None
    ) -> None:
        """Write the pair all or nothing (``storage.write_pair``); :data:`pair.KEEP` is
        never written."""
        data = next(iter(snapshot_collection)).data
        if isinstance(data, Keep):
            return
        if not isinstance(data, ReceivedPair):
            raise TypeError(f"a tlgraph snapshot is a ReceivedPair, got {type(data).__name__}")
        write_pair(
            Path(snapshot_collection.location),
            data.dot.encode("utf-8"),
            data.png if data.png is not None and data.compares_png else None,
            drop_png=data.drop_png,
        )

    def delete_snapshots(self, *, snapshot_location: str, snapshot_names: set[str]) -> None:
        """Delete an unused pair: its ``.gv`` and ``.png``, each only when ours."""
        remove_pair(Path(snapshot_location))


def announce_pairs(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tell syrupy's session about the pair extension when any collected test uses the
    fixture, before any runs: a process that runs none of them (an xdist worker given
    other tests) then finds stored pairs with it, never with syrupy's default extension,
    which would take a pair's ``.png`` for an unknown file and, under
    ``--snapshot-update``, delete it while the other worker used its ``.gv``."""
    from syrupy.assertion import SnapshotAssertion
    from syrupy.location import PyTestLocation

    users = [i for i in items if "tlgraph_snapshot" in getattr(i, "fixturenames", ())]
    session = syrupy_session(config)
    if not users or session is None:
        return
    SnapshotAssertion(
        update_snapshots=bool(config.option.update_snapshots),
        extension_class=TlgraphPairExtension,
        test_location=PyTestLocation(users[0]),
        session=session,
    )
