"""The layout fence and the fast ``rank`` layout (ENCODING.md §6)."""

from __future__ import annotations

import itertools
import re
import warnings
from io import BytesIO
from typing import Any

import pytest
import torch
from PIL import Image

import pytest_tlgraph.draw.layout
from pytest_tlgraph import EncodingRefusal, Trace
from pytest_tlgraph.capture import capture
from pytest_tlgraph.draw import build_plan
from pytest_tlgraph.draw.dot import html_escape
from pytest_tlgraph.draw.fontmetrics import estimate_label_box
from pytest_tlgraph.draw.layout import rank_positions
from tests.models import Branches

_POS = re.compile(r'^  "([^"]+)" \[.*pos="(-?\d+\.\d\d),(-?\d+\.\d\d)!"')


def pinned(dot: str) -> dict[str, tuple[float, float]]:
    out = {}
    for line in dot.splitlines():
        match = _POS.match(line)
        if match:
            out[match[1]] = (float(match[2]), float(match[3]))
    return out


@pytest.mark.parametrize(
    ("options", "listed"),
    [
        ({"color_by": "flops"}, "color_by"),
        ({"size_by": "bytes"}, "size_by"),
        ({"stack_by": "pass_number"}, "stack_by"),
        ({"color_by": "flops", "size_by": "bytes"}, "color_by, size_by"),
    ],
)
def test_explicit_rank_layout_refuses_channels_listing_them(
    mlp: Trace, options: dict[str, Any], listed: str
) -> None:
    with pytest.raises(EncodingRefusal) as info:
        mlp.draw(layout="rank", **options)
    assert info.value.code == "encoding_requires_dot_layout"
    assert listed in info.value.cause
    assert "layout='dot'" in info.value.remedy


def test_the_fence_refuses_before_any_value_is_read(mlp: Trace) -> None:
    calls: list[str] = []

    def value(record: Any) -> float:
        calls.append(record.label)
        return 1.0

    with pytest.raises(EncodingRefusal):
        mlp.draw(layout="rank", color_by=value)
    assert calls == []


def test_auto_layout_above_the_threshold_warns_and_uses_dot(
    cnn: Trace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pytest_tlgraph.draw.layout, "AUTO_RANK_THRESHOLD", 3)
    with pytest.warns(UserWarning, match=r"color_by.*need dot") as caught:
        drawing = cnn.draw(color_by="flops")
    assert caught[0].filename == __file__  # the warning points at the caller
    assert "layout=" not in drawing.dot and "pos=" not in drawing.dot
    assert drawing.dot == cnn.draw(color_by="flops", layout="dot").dot


def test_auto_layout_above_the_threshold_without_channels_uses_rank(
    cnn: Trace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pytest_tlgraph.draw.layout, "AUTO_RANK_THRESHOLD", 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        drawing = cnn.draw()
    assert drawing.dot == cnn.draw(layout="rank").dot
    assert 'layout="neato"' in drawing.dot


def test_auto_layout_below_the_threshold_is_dot_without_a_warning(cnn: Trace) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cnn.draw(color_by="flops").dot == cnn.draw(color_by="flops", layout="dot").dot
        assert cnn.draw().dot == cnn.draw(layout="dot").dot


@pytest.mark.parametrize("direction", ["bottomup", "topdown", "leftright"])
def test_rank_layout_pins_every_node_by_topological_rank(cnn: Trace, direction: str) -> None:
    drawing = cnn.draw(layout="rank", direction=direction)
    positions = pinned(drawing.dot)
    assert set(positions) == set(drawing.nodes)
    axis = 0 if direction == "leftright" else 1
    sign = -1 if direction == "topdown" else 1
    for source, target in drawing.edges:
        # Every edge runs forward along the flow.
        assert sign * positions[target][axis] > sign * positions[source][axis]
    assert len(set(positions.values())) == len(positions)


def test_rank_layout_nodes_of_one_rank_do_not_overlap(cnn: Trace) -> None:
    plan = build_plan(cnn)
    rows = {node_id: node.rows for node_id, node in cnn.draw().nodes.items()}
    positions = rank_positions(plan, "topdown", rows)
    by_y: dict[float, list[str]] = {}
    for node_id, (_, y) in positions.items():
        by_y.setdefault(y, []).append(node_id)
    crowded = [ids for ids in by_y.values() if len(ids) > 1]
    assert crowded, "the CNN's sources (input, num_batches_tracked updates) share rank 0"
    for ids in crowded:
        # The real label boxes (font metrics, as the renderer sizes them) stay apart.
        spans = []
        for i in ids:
            width = max(0.75, estimate_label_box([html_escape(r) for r in rows[i]])[0])
            spans.append((positions[i][0] - width / 2, positions[i][0] + width / 2))
        for (_, right), (left, _) in itertools.pairwise(sorted(spans)):
            assert left > right


def test_rank_layout_renders_with_graphviz_pure(cnn: Trace) -> None:
    png = cnn.draw(layout="rank").png()
    image = Image.open(BytesIO(png))
    image.load()
    assert image.format == "PNG" and image.width > 100 and image.height > 100


def test_rank_layout_is_deterministic_and_has_no_negative_zero() -> None:
    trace = capture(Branches(), torch.randn(2, 4))
    first = trace.draw(layout="rank", direction="topdown").dot
    assert first == trace.draw(layout="rank", direction="topdown").dot
    assert "-0.00" not in first
