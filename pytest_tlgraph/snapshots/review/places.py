"""Where each story line's node lies in the structural diff drawing, for ``report.html``.

The renderer writes the drawing's layout with its PNG (Graphviz's ``plain`` format:
each node's centre and size in inches, y up, :func:`node_boxes` reads it into the
PNG's pixels). A story line names its nodes the way a reviewer finds them
(:func:`~pytest_tlgraph.snapshots.compare.story.node_name`: an op by its id and
address, a box or fold by its title); :func:`story_places` gives each line the box of
the first drawn node it names, or ``None`` where it names none (a count and an address
pattern, a caption change). The story is text today: once the comparison's edits are
typed, the nodes of each edit come with it and the name search goes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from pytest_tlgraph.snapshots.compare.comparison import Comparison

__all__ = ["Box", "node_boxes", "story_places"]

#: A node's box in the PNG's pixels: centre x, centre y, width, height.
Box = tuple[int, int, int, int]
_NODE: Final = re.compile(r'^node ("(?:[^"\\]|\\.)*"|\S+) (\S+) (\S+) (\S+) (\S+)')
_GRAPH: Final = re.compile(r"^graph \S+ (\S+) (\S+)")
#: What may stand on either side of a name in a story line.
_EDGE: Final = " ,:;()"


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


def _names(comparison: Comparison, drawn: Sequence[str]) -> list[tuple[str, str]]:
    """``(name, union id)`` for each drawn node: its name as the story writes it, and
    an op's (input's, output's) bare id; the longest names first."""
    old = {comparison.union_id(n): node for n, node in comparison.old.nodes.items()}
    out: list[tuple[str, str]] = []
    for union_id in drawn:
        node = comparison.new.nodes.get(union_id) or old.get(union_id)
        if node is None:
            continue  # a run of unchanged nodes: nothing a story line names
        out.append((node.name, union_id))
        if node.kind not in ("box", "fold"):
            out.append((node.id, union_id))
            out.append((union_id, union_id))
    return sorted(set(out), key=lambda pair: -len(pair[0]))


def _first(line: str, names: Sequence[tuple[str, str]]) -> str | None:
    """The union id of the name that comes first in ``line``, standing as a whole."""
    best: tuple[int, str] | None = None
    for name, union_id in names:
        start = line.find(name)
        while start >= 0:
            end = start + len(name)
            before = start == 0 or line[start - 1] in _EDGE
            after = end == len(line) or line[end] in _EDGE
            if before and after:
                if best is None or start < best[0]:
                    best = (start, union_id)
                break
            start = line.find(name, start + 1)
    return None if best is None else best[1]


def story_places(
    lines: Sequence[str], comparison: Comparison, boxes: dict[str, Box]
) -> list[Box | None]:
    """Per story line, the box of the first drawn node it names (``None``: none)."""
    names = _names(comparison, list(boxes))
    out: list[Box | None] = []
    for line in lines:
        found = _first(line, names)
        out.append(None if found is None else boxes[found])
    return out
