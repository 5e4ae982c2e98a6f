"""The pair extension: which snapshot files are ours, how a pair reads and matches."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from pytest_tlgraph import capture
from pytest_tlgraph.pixels.pngmeta import add_text_chunks
from pytest_tlgraph.render import render_png
from pytest_tlgraph.snapshots.extensions import TlgraphPairExtension
from pytest_tlgraph.snapshots.pair import KEEP, PngPart, ReceivedPair, StoredPair
from pytest_tlgraph.snapshots.provenance import (
    Provenance,
    dot_sha256,
    render_snapshot_png,
    renderer_mismatch,
    reusable,
)
from tests.models import MLP
from tests.pngs import repaint

DOT = capture(MLP(), torch.zeros(1, 8)).draw().dot
OURS = render_snapshot_png(DOT, "pure")


def test_rendered_snapshots_record_their_provenance() -> None:
    provenance = Provenance.of(OURS)
    assert provenance.dot_sha256 == dot_sha256(DOT)
    assert provenance.renderer is not None and provenance.family == "graphviz-pure"
    assert Provenance.of(b"not a png") == Provenance(None, None)


@pytest.mark.parametrize(
    ("name", "content", "ours"),
    [
        ("a.gv", DOT.encode(), True),
        ("b.gv", b"digraph G { a -> b }\n", False),
        ("c.txt", DOT.encode(), False),
        ("d.gv", b"\xff\xfe\x00", False),
    ],
)
def test_dot_extension_claims_only_tlgraph_drawings(
    tmp_path: Path, name: str, content: bytes, ours: bool
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    assert TlgraphPairExtension().is_snapshot_location(location=str(path)) is ours
    assert not TlgraphPairExtension().is_snapshot_location(location=str(tmp_path / "none.gv"))


@pytest.mark.parametrize(
    ("content", "ours"),
    [(OURS, True), (render_png(DOT), False), (b"\x89PNG\r\n\x1a\nbroken", False)],
)
def test_png_extension_claims_only_pngs_with_our_metadata(
    tmp_path: Path, content: bytes, ours: bool
) -> None:
    path = tmp_path / "x.png"
    path.write_bytes(content)
    assert TlgraphPairExtension().is_snapshot_location(location=str(path)) is ours


def test_a_pair_reads_damaged_bytes_without_crashing_and_ignores_crlf(tmp_path: Path) -> None:
    def read(path: Path) -> StoredPair | None:
        found = TlgraphPairExtension().read_snapshot_data_from_location(
            snapshot_location=str(path), snapshot_name="x", session_id=""
        )
        assert found is None or isinstance(found, StoredPair)
        return found

    path = tmp_path / "x.gv"
    path.write_bytes(DOT.replace("\n", "\r\n").encode())
    crlf = read(path)
    assert crlf is not None and crlf.dot == DOT and crlf.png is None
    path.write_bytes(b"digraph tlgraph {\n\xff\n}\n")
    damaged = read(path)
    assert damaged is not None and damaged.dot == "digraph tlgraph {\n\ufffd\n}\n"
    assert read(tmp_path / "no.gv") is None
    (tmp_path / "half.png").write_bytes(OURS)  # a .png without its .gv is half a pair
    half = read(tmp_path / "half.gv")
    assert half is not None and half.dot is None and half.png == OURS
    assert half.provenance == Provenance.of(OURS)


def _received(png: bytes, **settings: object) -> ReceivedPair:
    return ReceivedPair(DOT, png, PngPart.COMPARED, **settings)  # type: ignore[arg-type]


def _matches(received: ReceivedPair, stored_png: bytes | None, dot: str = DOT) -> bool:
    stored = StoredPair.of(dot.encode(), stored_png)
    return TlgraphPairExtension().matches(serialized_data=received, snapshot_data=stored)


def test_png_matching_budget_renderer_and_damage() -> None:
    assert _matches(_received(OURS), OURS)
    repainted = repaint(OURS, 3)
    received = _received(OURS)
    assert not _matches(received, repainted)
    found = received.against(StoredPair.of(DOT.encode(), repainted))
    assert found.dot_passed and not found.png_passed
    assert found.png is not None and found.png.comparison is not None
    assert found.png.comparison.mismatched == 3
    assert _matches(_received(OURS, max_diff_pixels=3), repainted)
    system = add_text_chunks(OURS, {"tlgraph-renderer": "dot 2.43.0"})
    received = _received(OURS)
    stored = StoredPair.of(DOT.encode(), system)
    assert not received.against(stored).passed
    mismatch = received.against(stored).png
    assert mismatch is not None and mismatch.comparison is None
    assert mismatch.mismatch_line is not None
    assert mismatch.mismatch_line.startswith(
        "renderer mismatch: the baseline PNG was drawn by dot 2.43.0"
    )
    received = _received(OURS)
    damaged = StoredPair.of(DOT.encode(), OURS[:200])
    assert not received.against(damaged).passed
    found_damage = received.against(damaged).png
    assert found_damage is not None and found_damage.error is not None
    assert not _matches(_received(OURS), OURS, dot=DOT + " ")
    assert not _matches(_received(OURS), None)


def test_the_comparison_is_made_once_per_stored_pair(monkeypatch: pytest.MonkeyPatch) -> None:
    import pytest_tlgraph.pixels.pixeldiff as pixeldiff

    calls = []
    real = pixeldiff.compare_png
    monkeypatch.setattr(pixeldiff, "compare_png", lambda *a, **k: calls.append(1) or real(*a, **k))
    received, stored = _received(OURS), StoredPair.of(DOT.encode(), repaint(OURS, 1))
    assert received.against(stored) is received.against(stored)
    assert len(calls) == 1


def test_update_rewrites_a_baseline_whose_provenance_is_stale() -> None:
    stale = add_text_chunks(OURS, {"tlgraph-dot-sha256": "0" * 64})
    assert _matches(_received(OURS), stale)
    assert not _matches(_received(OURS, update=True), stale)


@pytest.mark.parametrize(
    ("part", "update", "stored_png", "passes", "drops"),
    [
        (PngPart.KEPT, True, b"stale", True, False),
        (PngPart.NONE, False, OURS, True, True),
        (PngPart.NONE, True, OURS, False, True),
        (PngPart.NONE, True, None, True, False),
        (PngPart.KEPT_UNLESS_STALE, True, OURS, True, False),
        (PngPart.KEPT_UNLESS_STALE, False, "stale", True, True),
        (PngPart.KEPT_UNLESS_STALE, True, "stale", False, True),
    ],
)
def test_a_pair_without_a_received_png(
    part: PngPart, update: bool, stored_png: bytes | str | None, passes: bool, drops: bool
) -> None:
    """No PNG drawn: kept as it is (size guard), kept unless an update leaves it drawn
    from another DOT (the run draws none), or no PNG in the pair at all (png=False)."""
    if stored_png == "stale":
        stored_png = add_text_chunks(OURS, {"tlgraph-dot-sha256": "0" * 64})
    assert not isinstance(stored_png, str)
    received = ReceivedPair(DOT, None, part, update=update)
    found = received.against(StoredPair.of(DOT.encode(), stored_png))
    assert found.passed is passes
    assert received.drop_png is drops


def test_keep_matches_any_stored_pair_and_writes_nothing(tmp_path: Path) -> None:
    from syrupy.data import Snapshot, SnapshotCollection

    extension = TlgraphPairExtension()
    stored = StoredPair.of(b"digraph tlgraph {\n}\n", None)
    assert extension.matches(serialized_data=KEEP, snapshot_data=stored)
    location = tmp_path / "__snapshots__" / "test_m" / "test_x.gv"
    collection = SnapshotCollection(location=str(location))
    collection.add(Snapshot(name="test_x", data=KEEP))
    TlgraphPairExtension.write_snapshot_collection(snapshot_collection=collection)
    assert not location.parent.exists()


def test_a_pair_is_read_once_per_assertion(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The skip-render shortcut and syrupy's recall share the one read of each file."""
    import pytest_tlgraph.snapshots.storage as storage

    reads: list[Path] = []
    real = storage.read_snapshot_file
    monkeypatch.setattr(
        storage, "read_snapshot_file", lambda path: reads.append(path) or real(path)
    )
    (tmp_path / "x.gv").write_text(DOT)
    (tmp_path / "x.png").write_bytes(OURS)
    extension = TlgraphPairExtension()
    for _ in range(3):
        extension.read_snapshot_data_from_location(
            snapshot_location=str(tmp_path / "x.gv"), snapshot_name="x", session_id=""
        )
    assert sorted(p.name for p in reads) == ["x.gv", "x.png"]


def test_renderer_mismatch_ignores_versions_of_one_renderer() -> None:
    pure_old = Provenance("graphviz-pure 0.2.1", "a")
    pure_new = Provenance("graphviz-pure 0.2.2", "a")
    system = Provenance("dot 2.43.0", "a")
    assert renderer_mismatch(pure_old, pure_new) is None
    assert renderer_mismatch(Provenance(None, None), pure_new) is None
    line = renderer_mismatch(system, pure_new)
    assert line is not None and "--tlgraph-renderer=system to compare" in line


def test_reuse_needs_the_same_dot_the_same_renderer_and_an_intact_file() -> None:
    assert reusable(OURS, DOT, "pure")
    assert not reusable(OURS, DOT + " ", "pure")
    assert not reusable(OURS, DOT, "system")
    damaged = OURS[:-20] + bytes(20)
    assert Provenance.of(damaged) == Provenance.of(OURS)
    assert not reusable(damaged, DOT, "pure")
