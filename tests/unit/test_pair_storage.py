"""The pair storage on corpus models: a pair written is read back byte for byte, a
pair matches itself without decoding a pixel, and a write removes exactly the PNG the
value says it does."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_tlgraph import capture
from pytest_tlgraph.snapshots.pair import PngPart, ReceivedPair, StoredPair
from pytest_tlgraph.snapshots.provenance import render_snapshot_png
from pytest_tlgraph.snapshots.storage import png_location, read_pair, write_pair
from tests.corpus.registry import build

MODELS = ["resnet18_basic", "lstm_bidirectional", "mha_need_weights"]


def _drawn(name: str) -> tuple[str, bytes]:
    case = build(name)
    dot = capture(case.model, case.inputs, kwargs=case.kwargs).draw().dot
    return dot, render_snapshot_png(dot, "pure")


@pytest.fixture(scope="module", params=MODELS)
def drawn(request: pytest.FixtureRequest) -> tuple[str, bytes]:
    return _drawn(request.param)


def _gv(tmp_path: Path) -> Path:
    return tmp_path / "__snapshots__" / "test_m" / "test_x.gv"


def test_a_written_pair_reads_back_byte_for_byte(tmp_path: Path, drawn: tuple[str, bytes]) -> None:
    dot, png = drawn
    gv = _gv(tmp_path)
    write_pair(gv, dot.encode(), png, drop_png=False)
    assert gv.read_bytes() == dot.encode() and png_location(gv).read_bytes() == png
    stored = read_pair(gv)
    assert stored is not None and stored.dot == dot and stored.png == png
    assert stored.provenance is not None and not stored.png_stale_against(dot)


def test_a_pair_matches_itself_without_decoding(
    monkeypatch: pytest.MonkeyPatch, drawn: tuple[str, bytes]
) -> None:
    import pytest_tlgraph.pixels.pixeldiff as pixeldiff

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("identical PNG bytes are never decoded")

    monkeypatch.setattr(pixeldiff, "compare_png", refuse)
    dot, png = drawn
    found = ReceivedPair(dot, png, PngPart.COMPARED).against(StoredPair.of(dot.encode(), png))
    assert found.passed and found.png is not None and found.png.comparison is None


def test_an_update_without_a_png_drops_only_a_stale_one(
    tmp_path: Path, drawn: tuple[str, bytes]
) -> None:
    dot, png = drawn
    gv = _gv(tmp_path)
    write_pair(gv, dot.encode(), png, drop_png=False)
    changed = dot.replace("digraph tlgraph {", "digraph tlgraph {\n  // changed", 1)
    for new, stale in ((dot, False), (changed, True)):
        stored = read_pair(gv)
        assert stored is not None
        received = ReceivedPair(new, None, PngPart.KEPT_UNLESS_STALE, update=True)
        assert received.against(stored).passed is not stale
        write_pair(gv, new.encode(), None, drop_png=received.drop_png)
        assert png_location(gv).exists() is not stale
