"""The layout fence (ENCODING.md §6) and the fast ``rank`` layout for very large graphs.

``rank`` places nodes by topological rank (longest path from a source), in execution
order within a rank, with no crossing minimisation, and pins them for neato: it costs
linear time where dot's crossing minimisation does not.
"""

from __future__ import annotations

import warnings
from typing import Any, Final

from pytest_tlgraph.errors import EncodingRefusal
from pytest_tlgraph.options import DrawOptions
from pytest_tlgraph.plan import Plan

__all__ = ["AUTO_RANK_THRESHOLD", "choose_layout", "rank_positions"]

#: ``layout="auto"`` switches to ``rank`` above this many visible nodes.
AUTO_RANK_THRESHOLD: Final = 1500
# neato reads pinned positions in inches.
_STEP_X: Final = 3.0  # between nodes in one rank
_STEP_Y: Final = 1.4  # between ranks


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


def rank_positions(plan: Plan, direction: str) -> dict[str, tuple[float, float]]:
    """Pinned positions in inches: rank = longest path from a source node."""
    rank: dict[str, int] = {}
    parents: dict[str, list[str]] = {node.id: [] for node in plan.nodes}
    for source, target in plan.edges:
        if source != target:
            parents[target].append(source)
    for node in plan.nodes:  # plan order is execution order: parents come first
        rank[node.id] = 1 + max((rank.get(p, -1) for p in parents[node.id]), default=-1)
    slot: dict[int, int] = {}
    positions: dict[str, tuple[float, float]] = {}
    for node in plan.nodes:
        r = rank[node.id]
        column = slot.get(r, 0)
        slot[r] = column + 1
        along, across = r * _STEP_Y, column * _STEP_X
        if direction == "leftright":
            positions[node.id] = (along * 2.2, -across / 2.2)
        elif direction == "topdown":
            positions[node.id] = (across, -along)
        else:
            positions[node.id] = (across, along)
    return positions


def rank_graph_attrs() -> dict[str, Any]:
    """Graph attributes that make Graphviz keep the pinned positions."""
    return {"layout": "neato", "splines": "line", "overlap": "true"}
