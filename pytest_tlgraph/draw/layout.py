"""The layout fence (ENCODING.md §6) and the fast ``rank`` layout for very large graphs.

``rank`` places nodes by topological rank (longest path from a source), in execution
order within a rank, with no crossing minimisation, and pins them for neato: it costs
linear time where dot's crossing minimisation does not.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any, Final

from pytest_tlgraph.draw.plan import Plan
from pytest_tlgraph.errors import EncodingRefusal
from pytest_tlgraph.options import DrawOptions

__all__ = ["AUTO_RANK_THRESHOLD", "choose_layout", "rank_graph_attrs", "rank_positions"]

#: ``layout="auto"`` switches to ``rank`` above this many visible nodes.
AUTO_RANK_THRESHOLD: Final = 1500
# neato reads pinned positions in inches. Label extents are estimated from the row
# lengths at the 10 pt font: averaged over a row of digits and lower case, even bold,
# a glyph is narrower than 0.085 in.
_CHAR_W: Final = 0.085
_LINE_H: Final = 10 * 1.2 / 72
_MARGIN_W: Final = 0.11
_MARGIN_H: Final = 0.055
_MIN_W: Final = 0.75  # Graphviz's default node size
_MIN_H: Final = 0.5
_GAP_ACROSS: Final = 0.25  # between neighbours in one rank (dot's nodesep)
_GAP_ALONG: Final = 0.5  # between ranks


def choose_layout(options: DrawOptions, plan: Plan) -> str:
    """``dot`` or ``rank``; channels are dot-only (explicit ``rank`` refuses)."""
    channels = options.channels
    if options.layout == "rank":
        if channels:
            raise EncodingRefusal(
                "encoding_requires_dot_layout",
                cause=f"layout='rank' cannot draw the active channel(s) {', '.join(channels)}: "
                "channels are dot-layout-only.",
                remedy="use layout='dot' or 'auto', or drop the channel options.",
            )
        return "rank"
    if options.layout == "dot":
        return "dot"
    if len(plan.nodes) <= AUTO_RANK_THRESHOLD:
        return "dot"
    if channels:
        warnings.warn(
            f"layout='auto' would use the rank layout for {len(plan.nodes)} nodes, but the "
            f"channel(s) {', '.join(channels)} need dot: drawing with dot (slower).",
            stacklevel=4,
        )
        return "dot"
    return "rank"


def _extent(rows: Sequence[str]) -> tuple[float, float]:
    """A quick upper estimate of a node's ``(width, height)`` in inches from its rows:
    linear in the row count, where exact font metrics would cost per character."""
    longest = max((len(row) for row in rows), default=0)
    return (
        max(_MIN_W, longest * _CHAR_W + 2 * _MARGIN_W),
        max(_MIN_H, len(rows) * _LINE_H + 2 * _MARGIN_H),
    )


def rank_positions(
    plan: Plan, direction: str, rows: Mapping[str, Sequence[str]] | None = None
) -> dict[str, tuple[float, float]]:
    """Pinned node centres in inches: rank = longest path from a source node.

    Ranks follow the flow (``direction``); within a rank nodes sit side by side in
    execution order, centred, spaced by their estimated label extents (``rows``: node
    id -> label rows; without them every node counts as Graphviz's default size), so
    no two boxes overlap.
    """
    rank: dict[str, int] = {}
    parents: dict[str, list[str]] = {node.id: [] for node in plan.nodes}
    for source, target in plan.edges:
        if source != target:
            parents[target].append(source)
    for node in plan.nodes:  # plan order is execution order: parents come first
        rank[node.id] = 1 + max((rank.get(p, -1) for p in parents[node.id]), default=-1)
    along_first = direction != "leftright"  # along the flow: y for vertical drawings
    extents: dict[str, tuple[float, float]] = {}
    for node in plan.nodes:
        w, h = _extent(rows[node.id]) if rows is not None else (_MIN_W, _MIN_H)
        extents[node.id] = (h, w) if along_first else (w, h)  # (along, across)
    by_rank: dict[int, list[str]] = {}
    for node in plan.nodes:
        by_rank.setdefault(rank[node.id], []).append(node.id)
    positions: dict[str, tuple[float, float]] = {}
    along = 0.0
    for r in sorted(by_rank):
        ids = by_rank[r]
        depth = max(extents[i][0] for i in ids)
        centre = along + depth / 2
        total = sum(extents[i][1] for i in ids) + _GAP_ACROSS * (len(ids) - 1)
        across = -total / 2
        for node_id in ids:
            width = extents[node_id][1]
            a, c = centre, across + width / 2
            across += width + _GAP_ACROSS
            # 0.0 - x, not -x: a negative zero would print as "-0.00".
            if direction == "leftright":
                positions[node_id] = (a, 0.0 - c)
            elif direction == "topdown":
                positions[node_id] = (c, 0.0 - a)
            else:
                positions[node_id] = (c, a)
        along += depth + _GAP_ALONG
    return positions


def rank_graph_attrs() -> dict[str, Any]:
    """Graph attributes that make Graphviz keep the pinned positions."""
    return {"layout": "neato", "splines": "line", "overlap": "true"}
