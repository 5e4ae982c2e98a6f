"""A story line's place in the structural diff drawing (``review/places.py``), on a real
corpus change (ResNet-18 made twice as wide): the box read from the renderer's layout
lies on the node's own pixels, and each line links to the node it names first."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from pytest_tlgraph import capture
from pytest_tlgraph.diff.view.comparison import Comparison, compare
from pytest_tlgraph.diff.view.drawing import graph_diff_layout
from pytest_tlgraph.diff.view.story import story_lines
from pytest_tlgraph.review.places import node_boxes, story_places
from tests.corpus.changes import CHANGES

#: The fill of a changed node in the diff drawing.
CHANGED = (0xFF, 0xED, 0xB5)


@pytest.fixture(scope="module")
def widened() -> Comparison:
    before, after = CHANGES["width_changed"]()
    old = capture(before.model, *before.inputs).draw(collapse="auto").dot
    new = capture(after.model, *after.inputs).draw(collapse="auto").dot
    return compare(old, new)


def test_each_box_lies_on_its_node_in_the_png(widened: Comparison) -> None:
    png, why, layout = graph_diff_layout(widened, "pure")
    assert png is not None and why is None
    image = Image.open(io.BytesIO(png)).convert("RGB")
    boxes = node_boxes(layout, image.size)
    changed = [n for n in boxes if n in widened.changed]
    assert len(changed) >= 8
    for node in changed:
        x, y, w, h = boxes[node]
        assert x - w // 2 > 0 and x + w // 2 < image.width, node
        assert y - h // 2 > 0 and y + h // 2 < image.height, node
        # Just inside the box's left edge, halfway down: the changed fill.
        assert image.getpixel((x - w // 2 + 6, y)) == CHANGED, node


def test_each_line_links_to_the_node_holding_its_first_edit(widened: Comparison) -> None:
    png, _, layout = graph_diff_layout(widened, "pure")
    assert png is not None
    boxes = node_boxes(layout, Image.open(io.BytesIO(png)).size)
    lines = story_lines(widened)
    places = dict(zip(lines, story_places(widened, boxes), strict=True))
    by_name = {widened.new.nodes[n].name: n for n in boxes if n in widened.new.nodes}
    conv = next(line for line in lines if line.startswith("conv2d_1 @conv1:"))
    assert places[conv] == boxes["conv2d_1"]
    fc = next(line for line in lines if line.startswith("linear_1 @fc:"))
    assert places[fc] == boxes[by_name["linear_1 @fc"]]
    flat = next(line for line in lines if line.startswith("flatten_1:"))
    assert places[flat] == boxes["flatten_1"]
    # A line about ops under a pattern of addresses goes to the box holding its first.
    spread = next(line for line in lines if line.split(":")[0].endswith(".*"))
    assert places[spread] in boxes.values()
    # Places come from the typed edits, never from the text: each line has one.
    assert len(story_places(widened, boxes)) == len(lines)
