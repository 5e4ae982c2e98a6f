"""The syrupy extensions: which snapshot files are ours, how they read and match."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from pytest_tlgraph import capture
from pytest_tlgraph.render import render_png
from pytest_tlgraph.snapshots.extensions import (
    Provenance,
    TlgraphDotExtension,
    TlgraphPngExtension,
    dot_sha256,
    render_snapshot_png,
    renderer_mismatch,
    reusable,
)
from pytest_tlgraph.snapshots.pixels.pngmeta import add_text_chunks
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
    assert TlgraphDotExtension().is_snapshot_location(location=str(path)) is ours
    assert not TlgraphDotExtension().is_snapshot_location(location=str(tmp_path / "none.gv"))


@pytest.mark.parametrize(
    ("content", "ours"),
    [(OURS, True), (render_png(DOT), False), (b"\x89PNG\r\n\x1a\nbroken", False)],
)
def test_png_extension_claims_only_pngs_with_our_metadata(
    tmp_path: Path, content: bytes, ours: bool
) -> None:
    path = tmp_path / "x.png"
    path.write_bytes(content)
    assert TlgraphPngExtension().is_snapshot_location(location=str(path)) is ours


def test_dot_reads_damaged_bytes_without_crashing_and_ignores_crlf(tmp_path: Path) -> None:
    read = TlgraphDotExtension().read_snapshot_data_from_location
    path = tmp_path / "x.gv"
    path.write_bytes(DOT.replace("\n", "\r\n").encode())
    assert read(snapshot_location=str(path), snapshot_name="x", session_id="") == DOT
    path.write_bytes(b"digraph tlgraph {\n\xff\n}\n")
    damaged = read(snapshot_location=str(path), snapshot_name="x", session_id="")
    assert damaged == "digraph tlgraph {\n\ufffd\n}\n"
    assert read(snapshot_location=str(tmp_path / "no.gv"), snapshot_name="x", session_id="") is None


def test_png_matching_budget_renderer_and_damage() -> None:
    extension = TlgraphPngExtension()
    assert extension.matches(serialized_data=OURS, snapshot_data=OURS)
    repainted = repaint(OURS, 3)
    assert not extension.matches(serialized_data=OURS, snapshot_data=repainted)
    assert extension.last is not None and extension.last.comparison is not None
    assert extension.last.comparison.mismatched == 3
    extension.max_diff_pixels = 3
    assert extension.matches(serialized_data=OURS, snapshot_data=repainted)
    system = add_text_chunks(OURS, {"tlgraph-renderer": "dot 2.43.0"})
    assert not extension.matches(serialized_data=OURS, snapshot_data=system)
    assert extension.last is not None and extension.last.comparison is None
    assert extension.last.mismatch_line is not None
    assert extension.last.mismatch_line.startswith(
        "renderer mismatch: the baseline PNG was drawn by dot 2.43.0"
    )
    assert not extension.matches(serialized_data=OURS, snapshot_data=OURS[:200])
    assert extension.last is not None and extension.last.error is not None


def test_update_rewrites_a_baseline_whose_provenance_is_stale() -> None:
    stale = add_text_chunks(OURS, {"tlgraph-dot-sha256": "0" * 64})
    extension = TlgraphPngExtension()
    assert extension.matches(serialized_data=OURS, snapshot_data=stale)
    extension.update = True
    assert not extension.matches(serialized_data=OURS, snapshot_data=stale)


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
