"""Where each story line's node lies in the structural diff drawing, for ``report.html``.

The renderer writes the drawing's layout with its PNG (Graphviz's ``plain`` format:
each node's centre and size in inches, y up, :func:`node_boxes` reads it into the
PNG's pixels). Each story line comes with the typed edits it tells
(:func:`~pytest_tlgraph.diff.view.story.story_edits`); :func:`story_places`
gives the line the box of the drawn node that holds its first edit that the drawing
draws (the op's own node, else the box or fold holding its address), or ``None``
(a line of no edit, an edit only a frame holds). No line's text is read.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from pytest_tlgraph.diff.edits import Edit
from pytest_tlgraph.diff.text import ViewPair, holder, view_pair

if TYPE_CHECKING:
    from pytest_tlgraph.diff.view.comparison import Comparison

__all__ = ["Box", "node_boxes", "story_places"]

#: A node's box in the PNG's pixels: centre x, centre y, width, height.
Box = tuple[int, int, int, int]
_NODE: Final = re.compile(r'^node ("(?:[^"\\]|\\.)*"|\S+) (\S+) (\S+) (\S+) (\S+)')
_GRAPH: Final = re.compile(r"^graph \S+ (\S+) (\S+)")


def node_boxes(plain: str, png_size: tuple[int, int], dpi: int = 96) -> dict[str, Box]:
    """Each node's box in the PNG of ``png_size`` drawn from the ``plain`` layout (the
    margin around the graph is what the PNG has beyond the layout's size)."""
    lines = plain.splitlines()
    found = _GRAPH.match(lines[0]) if lines else None
    if found is None:
        return {}
    width, height = float(found.group(1)), float(found.group(2))
    pad_x = max(0.0, (png_size[0] / dpi - width) / 2)
    pad_y = max(0.0, (png_size[1] / dpi - height) / 2)
    boxes: dict[str, Box] = {}
    for line in lines[1:]:
        node = _NODE.match(line)
        if node is None:
            continue
        name = node.group(1)
        if name.startswith('"'):
            name = re.sub(r"\\(.)", r"\1", name[1:-1])
        x, y, w, h = (float(node.group(i)) for i in range(2, 6))
        boxes[name] = (
            round((x + pad_x) * dpi),
            round((height - y + pad_y) * dpi),
            round(w * dpi),
            round(h * dpi),
        )
    return boxes


def story_places(comparison: Comparison, boxes: dict[str, Box]) -> list[Box | None]:
    """Per line of the comparison's story, the box of the drawn node holding the first
    edit it tells that the drawing draws (``None``: none)."""
    from pytest_tlgraph.diff.view.story import story_edits

    view = view_pair(comparison.old, comparison.new, comparison.pairing.alignment)
    out: list[Box | None] = []
    for edits in story_edits(comparison):
        found = (_drawn(comparison, view, edit, boxes) for edit in edits)
        place = next((box for box in found if box is not None), None)
        out.append(place)
    return out


def _drawn(comparison: Comparison, view: ViewPair, edit: Edit, boxes: dict[str, Box]) -> Box | None:
    """The box of the node ``edit`` falls on: its op's own node, else the box or fold
    holding its address (on the side that has it)."""
    stored = edit.removed_side
    own = str(getattr(edit, "id", "") or "")
    if own:
        union = comparison.union_id(own) if stored else own
        if union in boxes:
            return boxes[union]
    graph = comparison.old if stored else comparison.new
    held = holder(graph, edit.address).id
    if held:
        union = comparison.union_id(held) if stored else held
        return boxes.get(union)
    return None
