"""One side of a comparison: a drawing read once into the model every view shares.

:func:`read_graph` parses canonical tlgraph DOT with the one reader
(:func:`.dotparse.parse_gv`) and keeps what comparing needs: each node's label rows,
kind, function, full module address, innermost cluster and content signature; the
edges; each cluster's title, parent, address and signature; the key's and caption's
lines. Nothing downstream reads the DOT text again.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

from pytest_tlgraph.draw.callrows import CALL_ATTR
from pytest_tlgraph.draw.collapse.signature import INSIDE_ATTR, SIGNATURE_ATTR
from pytest_tlgraph.draw.dot import DotGraph, html_escape
from pytest_tlgraph.encoding.key import KEY_ID
from pytest_tlgraph.snapshots.compare.dotparse import (
    DotParseError,
    ParsedGraph,
    label_rows,
    parse_gv,
)
from pytest_tlgraph.snapshots.compare.inside import full_title

__all__ = ["GraphCluster", "GraphModel", "GraphNode", "family", "read_graph"]

_NUMBER: Final = re.compile(r"_\d+(?::\d+)?$")
_BOX: Final = re.compile(r"@(?P<address>.+?)(?:#\d+)?(?P<fold>\*\d+)?(?:#\d+)?")
_CLUSTER_ID: Final = re.compile(r"cluster_(?P<address>.*?)(?:#\d+)?(?:\*\d+)?(?:#\d+)?")
_TYPE: Final = re.compile(r".*\(([^()]*)\)")
_IO: Final = re.compile(r"(input|output)_\d+")
_CALL: Final = re.compile(r"#\d+$")


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def family(node_id: str) -> str:
    """An op node's function without its number: ``linear_13`` and ``linear_19`` are
    one family, ``relu_2:1`` is ``relu``; ``relu_1`` and ``gelu_1`` are two."""
    return _NUMBER.sub("", node_id)


@dataclass(frozen=True, slots=True)
class GraphNode:
    """One drawn node (the key is not one: it draws the channels, not the model)."""

    id: str
    #: Label rows, title first (the id when the node has no label).
    rows: tuple[str, ...]
    #: ``input``, ``output``, ``op``, ``box``, ``fold`` or ``segment``.
    kind: str
    #: What it computes: an op's function (``conv2d``), a box's or fold's module type
    #: (``BasicBlock``), ``segment``, ``input`` or ``output``.
    func: str
    #: The full module address it belongs to (``layer1.0.conv1``; ``""`` at the top).
    address: str
    #: The innermost cluster holding it (``None`` at the top level).
    cluster: str | None
    #: The content signature (``comment``) of a box, fold or segment.
    signature: str | None
    #: The fill colour and the raw label attribute (the rescale check reads both).
    fill: str | None
    label: str
    #: An op's whole call (``tl_call``), when the drawing wrote one.
    call: str | None = None
    #: The calls a box, fold or segment hides (``tl_inside``), when it wrote them.
    inside_calls: str | None = None

    @property
    def title(self) -> str:
        """The drawn title (its first row)."""
        return self.rows[0] if self.rows else self.id

    @property
    def body(self) -> tuple[str, ...]:
        """The rows after the title, a row the drawing wrapped (after a ``", "``, the
        comma left at the line's end) joined again: what the row says, not where it
        broke."""
        out: list[str] = []
        carry = False
        for row in self.rows[1:]:
            if carry:
                out[-1] = f"{out[-1]} {row}"
            else:
                out.append(row)
            carry = row.endswith(",")
        return tuple(out)

    @property
    def name(self) -> str:
        """The node as a reviewer finds it: ``conv2d_1 @stem.0``,
        ``@layer1.2 (BasicBlock)`` (``#2`` after the address of a later call),
        ``x2 @layer1.0-1 (BasicBlock)``, ``input x``: never an address relative to a
        cluster."""
        if self.kind == "fold":
            return full_title(self.id, self.title)
        if self.kind == "box":
            call = _CALL.search(self.id)
            again = call[0] if call and call[0] != "#1" else ""
            return f"@{self.address}{again}" + ("" if self.func == "box" else f" ({self.func})")
        if self.kind in ("input", "output"):
            return self.kind if self.title == self.kind else f"{self.kind} {self.title}"
        name = self.title if self.kind == "segment" else self.id
        return f"{name} @{self.address}" if self.address else name

    @property
    def module_row(self) -> str | None:
        """The ``@module`` row (relative to its cluster), if it has one."""
        return next((row for row in reversed(self.rows[1:]) if row.startswith("@")), None)


@dataclass(frozen=True, slots=True)
class GraphCluster:
    """One drawn module frame (or repeat fold)."""

    id: str
    title: str
    parent: str | None
    #: The module address its nodes' ``@module`` rows are relative to.
    address: str
    signature: str | None


@dataclass(frozen=True, slots=True)
class GraphModel:
    """A drawing as the comparison reads it (see the module docstring)."""

    nodes: Mapping[str, GraphNode]
    edges: tuple[tuple[str, str], ...]
    clusters: Mapping[str, GraphCluster]
    #: The key's lines (``[bar]`` for a colour bar), and the caption's.
    key_rows: tuple[str, ...]
    caption_rows: tuple[str, ...]
    rankdir: str
    #: The parsed drawing (the emitter's input): the diff drawing reuses its clusters.
    parsed: ParsedGraph
    #: Node id -> the argument position of each input whose edge is numbered.
    positions: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    _preds: dict[str, list[str]] = field(default_factory=dict, repr=False, compare=False)
    _succs: dict[str, list[str]] = field(default_factory=dict, repr=False, compare=False)
    #: Cluster id -> the nodes it holds at any depth, filled on first use.
    _members: dict[str, list[str]] = field(default_factory=dict, repr=False, compare=False)

    def preds(self, node_id: str) -> list[str]:
        """The nodes with an edge into ``node_id``, in edge order."""
        return self._preds.get(node_id, [])

    def succs(self, node_id: str) -> list[str]:
        """The nodes ``node_id`` has an edge to, in edge order."""
        return self._succs.get(node_id, [])

    def members(self, cluster_id: str) -> list[str]:
        """The nodes ``cluster_id`` holds, at any depth, in drawing order (worked out
        for every cluster at once, the first time any is asked for)."""
        if not self._members and self.clusters:
            for node_id in self.nodes:
                for cid in self.cluster_path(node_id):
                    self._members.setdefault(cid, []).append(node_id)
        return self._members.get(cluster_id, [])

    def cluster_path(self, node_id: str) -> tuple[str, ...]:
        """The clusters holding ``node_id``, outermost first."""
        path: list[str] = []
        cid = self.nodes[node_id].cluster
        while cid is not None:
            path.append(cid)
            cid = self.clusters[cid].parent
        return tuple(reversed(path))


def _label_of(attrs: Mapping[str, object], node_id: str) -> tuple[str, tuple[str, ...]]:
    label = str(attrs.get("label", ""))
    body = label[1:-1] if label.startswith("<") else html_escape(label)
    return label, (label_rows(body) or (node_id,))


def _kind(node_id: str) -> str:
    if node_id.startswith("@"):
        return "fold" if _BOX.fullmatch(node_id) and "*" in node_id else "box"
    if node_id.startswith("segment:"):
        return "segment"
    match = _IO.fullmatch(node_id)
    return match[1] if match else "op"


def _address(kind: str, node_id: str, rows: tuple[str, ...], scope: str) -> str:
    if kind in ("box", "fold"):
        match = _BOX.fullmatch(node_id)
        return match["address"] if match else node_id[1:]
    module = next((row for row in reversed(rows[1:]) if row.startswith("@")), None)
    if kind != "op" or module is None:
        return scope
    return f"{scope}.{module[1:]}" if scope else module[1:]


def _func(kind: str, node_id: str, rows: tuple[str, ...]) -> str:
    if kind == "op":
        return family(node_id)
    if kind in ("box", "fold"):
        match = _TYPE.fullmatch(rows[0]) if rows else None
        return match[1] if match else kind
    return kind


def read_graph(text: str, which: str = "") -> GraphModel:
    """Read canonical tlgraph DOT into a :class:`GraphModel`. Raises
    :class:`.dotparse.DotParseError` naming ``which`` side (when given) and the line."""
    try:
        parsed = parse_gv(text)
    except DotParseError as error:
        raise DotParseError(f"{which} DOT: {error}" if which else str(error)) from None
    graph: DotGraph = parsed.graph
    clusters: dict[str, GraphCluster] = {}
    for cluster in graph.clusters:
        attrs = graph.cluster_attrs.get(cluster.id) or {}
        match = _CLUSTER_ID.fullmatch(cluster.id)
        signature = attrs.get(SIGNATURE_ATTR) if isinstance(attrs, Mapping) else None
        clusters[cluster.id] = GraphCluster(
            id=cluster.id,
            title=parsed.titles.get(cluster.id, cluster.id),
            parent=cluster.parent,
            address=match["address"] if match else cluster.id,
            signature=None if signature is None else str(signature),
        )
    nodes: dict[str, GraphNode] = {}
    key_rows: tuple[str, ...] = ()
    for node in (*graph.nodes, *graph.extra_nodes):
        attrs = node.attrs if isinstance(node.attrs, Mapping) else {}
        label, rows = _label_of(attrs, node.id)
        if node.id == KEY_ID:
            key_rows = rows
            continue
        kind = _kind(node.id)
        scope = clusters[node.cluster].address if node.cluster in clusters else ""
        signature = attrs.get(SIGNATURE_ATTR)
        fill = attrs.get("fillcolor")
        nodes[node.id] = GraphNode(
            id=node.id,
            rows=rows,
            kind=kind,
            func=_func(kind, node.id, rows),
            address=_address(kind, node.id, rows, scope),
            cluster=node.cluster,
            signature=None if signature is None else str(signature),
            fill=None if fill is None else str(fill),
            label=label,
            call=_text(attrs.get(CALL_ATTR)),
            inside_calls=_text(attrs.get(INSIDE_ATTR)),
        )
    edges = tuple(dict.fromkeys(e for e in graph.edges if KEY_ID not in e))
    positions: dict[str, dict[str, int]] = {}
    for (tail, head), edge_attrs in graph.edge_attrs.items():
        number = edge_attrs.get("label")
        first = number.partition(",")[0] if isinstance(number, str) else ""
        if first.isdigit():  # the input's (first) argument position
            positions.setdefault(head, {})[tail] = int(first)
    preds: dict[str, list[str]] = {}
    succs: dict[str, list[str]] = {}
    for tail, head in edges:
        succs.setdefault(tail, []).append(head)
        preds.setdefault(head, []).append(tail)
    graph_attrs = graph.graph_attrs if isinstance(graph.graph_attrs, Mapping) else {}
    caption = str(graph_attrs.get("label", ""))
    return GraphModel(
        nodes=MappingProxyType(nodes),
        edges=edges,
        clusters=MappingProxyType(clusters),
        key_rows=key_rows,
        caption_rows=label_rows(caption[1:-1]) if caption.startswith("<") else (),
        rankdir=str(graph_attrs.get("rankdir", "BT")),
        parsed=parsed,
        positions=MappingProxyType(positions),
        _preds=preds,
        _succs=succs,
    )
