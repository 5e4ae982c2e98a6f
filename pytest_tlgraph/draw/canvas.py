"""The size guard: a drawing's canvas estimated before any render
(docs/decisions.md, "Hostile stored files and the size guard (0.3)").

The estimate lays the nodes out as dot would in outline: each node on the rank one
past its highest parent (edges against execution order, a recurrence, are left out),
each rank as wide as its label boxes side by side and as deep as its tallest box,
with the drawing's node and rank separations. Label boxes come from the same
estimate the size channel uses (:func:`.fontmetrics.estimate_label_box`). On the
real-model corpus it reads heights within 10% and widths within a factor of two (dot
spreads a rank further where edges route around clusters): enough to tell a
drawing of some thousand pixels from one of a hundred thousand.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Final, Protocol

from pytest_tlgraph.draw.dot import html_escape
from pytest_tlgraph.draw.fontmetrics import estimate_label_box
from pytest_tlgraph.draw.style import FONTSIZE
from pytest_tlgraph.limits import MAX_DPI, MAX_MEGAPIXELS, MAX_SIDE, check_dpi


class _Rows(Protocol):
    @property
    def rows(self) -> tuple[str, ...]: ...


class Drawing(Protocol):
    """What the estimate reads of a drawing: its DOT, node rows and edges."""

    @property
    def dot(self) -> str: ...

    @property
    def nodes(self) -> Mapping[str, _Rows]: ...

    @property
    def edges(self) -> Sequence[tuple[str, str]]: ...


__all__ = ["MAX_DPI", "MAX_MEGAPIXELS", "MAX_SIDE", "canvas_problem", "check_dpi",
           "estimate_canvas", "png_problem"]  # fmt: skip

# Graphviz's minimum node size and the drawing's separations (inches; style.py).
_MIN_W: Final = 0.75
_MIN_H: Final = 0.5
_NODESEP: Final = 0.25
_RANKSEP: Final = 0.35
_PAD: Final = 0.5  # caption, cluster frames and the page margin
_SIDEWAYS: Final = re.compile(r'rankdir="(LR|RL)"')


def estimate_canvas(drawing: Drawing) -> tuple[float, float]:
    """``(width, height)`` in inches that the drawing's PNG would have."""
    nodes = drawing.nodes
    order = {node_id: i for i, node_id in enumerate(nodes)}
    boxes = {}
    for node_id, node in nodes.items():
        w, h = estimate_label_box([html_escape(r) for r in node.rows] or [""], fontsize=FONTSIZE)
        boxes[node_id] = (max(w, _MIN_W), max(h, _MIN_H))
    rank = dict.fromkeys(nodes, 0)
    for source, target in sorted(drawing.edges, key=lambda e: order.get(e[1], 0)):
        if source in order and target in order and order[source] < order[target]:
            rank[target] = max(rank[target], rank[source] + 1)
    spread: dict[int, float] = {}
    depth: dict[int, float] = {}
    sideways = _SIDEWAYS.search(drawing.dot) is not None
    for node_id, (w, h) in boxes.items():
        across, along = (h, w) if sideways else (w, h)
        r = rank[node_id]
        spread[r] = spread.get(r, 0.0) + across + _NODESEP
        depth[r] = max(depth.get(r, 0.0), along)
    across_total = max(spread.values(), default=0.0) + _PAD
    along_total = sum(depth.values()) + _RANKSEP * max(len(depth) - 1, 0) + _PAD
    return (along_total, across_total) if sideways else (across_total, along_total)


def _over(width: int, height: int) -> bool:
    return width * height / 1e6 > MAX_MEGAPIXELS or max(width, height) > MAX_SIDE


_LIMIT: Final = f"over the limit of {MAX_MEGAPIXELS} Mpx and {MAX_SIDE:,} px a side"
_REMEDY: Final = "draw fewer nodes with collapse='auto' or depth=N, or skip the PNG with png=False"


def canvas_problem(drawing: Drawing, dpi: int, remedy: str = _REMEDY) -> str | None:
    """One line saying why the drawing is too large to render at ``dpi`` (the estimated
    size, the limit and ``remedy``), or ``None`` when it is not."""
    width_in, height_in = estimate_canvas(drawing)
    width, height = round(width_in * dpi), round(height_in * dpi)
    if not _over(width, height):
        return None
    return (
        f"PNG not rendered: the estimated canvas is {width:,} x {height:,} px "
        f"({width * height / 1e6:,.0f} Mpx) at {dpi} dpi, {_LIMIT}; {remedy}"
    )


def png_problem(png: bytes, what: str = "PNG", remedy: str = _REMEDY) -> str | None:
    """One line saying why the rendered ``png`` is too large to keep (its size read from
    the header, the limit and the remedy), or ``None`` when it is within the limit or
    not a PNG at all. The second half of the guard: an estimate can read low, and no
    image over the limit is written or inlined whatever drew it."""
    from pytest_tlgraph.pngheader import read_png_size

    size = read_png_size(png)
    if size is None or not _over(*size):
        return None
    width, height = size
    return (
        f"{what} refused: it is {width:,} x {height:,} px ({width * height / 1e6:,.0f} Mpx), "
        f"{_LIMIT}; {remedy}"
    )
