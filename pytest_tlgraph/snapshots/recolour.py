"""Recolouring named, not painted (REVIEW.md §2.4).

When the encoded colour domain moves (one conv got wider, so the largest FLOP count
grew), nodes that did not change at all get another fill. The failure report says so in
one line, read from the two stored drawings themselves: the key's colour bar gives both
domains, and a node whose label rows (and, for a collapsed node, content signature) are
the same on both sides but whose fill differs was recoloured by the rescale alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from pytest_tlgraph.draw.collapse.signature import SIGNATURE_ATTR
from pytest_tlgraph.encoding.key import KEY_ID
from pytest_tlgraph.snapshots.graphdata import DotParseError, label_rows
from pytest_tlgraph.snapshots.gvparse import parse_gv

__all__ = ["recolour_line", "recoloured_nodes"]

_BAR: Final = " [bar] "


def _key_bars(nodes: Mapping[str, Mapping[str, object]]) -> dict[str, tuple[str, str]]:
    """Colour bars of the key: ``{name: (low, high)}``."""
    key = nodes.get(KEY_ID)
    label = str(key.get("label", "")) if key is not None else ""
    bars: dict[str, tuple[str, str]] = {}
    for row in label_rows(label[1:-1]) if label.startswith("<") else ():
        if _BAR in row:
            left, _, high = row.partition(_BAR)
            name, _, low = left.rpartition(": ")
            bars[name] = (low, high)
    return bars


def _nodes(dot: str) -> dict[str, Mapping[str, object]]:
    graph = parse_gv(dot).graph
    out: dict[str, Mapping[str, object]] = {}
    for node in (*graph.nodes, *graph.extra_nodes):
        if isinstance(node.attrs, Mapping):
            out[node.id] = node.attrs
    return out


def recoloured_nodes(old: Mapping[str, Mapping[str, object]],
                     new: Mapping[str, Mapping[str, object]]) -> list[str]:  # fmt: skip
    """Nodes on both sides with the same label but another fill, in the new order.

    A box, fold or segment whose content signature changed is never one of them: what
    it hides changed, so its fill may well have changed for that."""
    return [
        node_id
        for node_id, attrs in new.items()
        if node_id != KEY_ID
        and node_id in old
        and attrs.get("label") == old[node_id].get("label")
        and attrs.get(SIGNATURE_ATTR) == old[node_id].get(SIGNATURE_ATTR)
        and attrs.get("fillcolor") != old[node_id].get("fillcolor")
    ]


def recolour_line(old_dot: str, new_dot: str) -> str | None:
    """``colour domain 0 .. 590 KFLOPs -> 0 .. 452 KFLOPs: 3 nodes recoloured by the
    rescale alone``, or ``None`` when the colour domain did not move (or a side cannot
    be read)."""
    try:
        old, new = _nodes(old_dot), _nodes(new_dot)
    except DotParseError:
        return None
    before, after = _key_bars(old), _key_bars(new)
    moved = [name for name in after if name in before and before[name] != after[name]]
    if not moved:
        return None
    count = len(recoloured_nodes(old, new))
    (lo0, hi0), (lo1, hi1) = before[moved[0]], after[moved[0]]
    noun = "node" if count == 1 else "nodes"
    return (
        f"colour domain {lo0} .. {hi0} -> {lo1} .. {hi1}: {count} {noun} recoloured by the "
        "rescale alone"
    )
