"""What a ``Drawing`` holds, read from the drawing itself (not its DOT) and written as
the DOT emitter writes text: the oracle the DOT reader is checked against."""

from __future__ import annotations

from typing import Final

from pytest_tlgraph.controls import visible
from pytest_tlgraph.draw import Drawing

# DOT labels cannot hold a line break: the emitter turns one into a space.
_LINE_BREAKS: Final = str.maketrans({"\n": " ", "\r": " "})


def _as_drawn(text: str) -> str:
    return visible(text.translate(_LINE_BREAKS))


def drawn_data(
    drawing: Drawing,
) -> tuple[dict[str, tuple[str, ...]], tuple[tuple[str, str], ...], tuple[str, ...]]:
    """``(node id -> rows, edges, cluster titles)`` of ``drawing`` as its DOT reads back."""
    nodes = {
        visible(node_id): tuple(_as_drawn(row) for row in node.rows)
        for node_id, node in drawing.nodes.items()
    }
    edges = tuple((visible(a), visible(b)) for a, b in drawing.edges)
    return nodes, edges, tuple(_as_drawn(title) for title in drawing.clusters)


def reads_back(drawing: Drawing) -> bool:
    """Whether :func:`~pytest_tlgraph.diff.graph.read_graph` reads the
    drawing's DOT back as exactly what the drawing holds (clusters in any order)."""
    from pytest_tlgraph.diff.graph import read_graph

    graph = read_graph(drawing.dot)
    nodes, edges, clusters = drawn_data(drawing)
    return (
        {node_id: node.rows for node_id, node in graph.nodes.items()} == nodes
        and graph.edges == edges
        and sorted(c.title for c in graph.clusters.values()) == sorted(clusters)
    )
