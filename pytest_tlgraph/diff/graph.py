"""One side of a comparison: a drawing read once into the model every view shares.

:func:`read_graph` parses canonical tlgraph DOT with the one reader
(:func:`.dotparse.parse_gv`) and keeps what comparing needs: each node's label rows
and its identity as the drawing wrote it (:mod:`pytest_tlgraph.schema`: kind,
function, module class, full module address, call number, fold span, member
functions, call, content signature) with its innermost cluster; the edges; each
cluster's title, parent and identity; the key's and caption's lines; the schema
version. Nothing downstream reads the DOT text again, and nothing is recovered from
ids, titles or rows: a drawing written before the schema (0.3) reads with every node
an op named by its id (:func:`.story.story_lines` says so in one line).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from pytest_tlgraph.diff.constants import const_title
from pytest_tlgraph.diff.dotparse import (
    DotParseError,
    ParsedGraph,
    label_rows,
    parse_gv,
)
from pytest_tlgraph.diff.inside import fold_name
from pytest_tlgraph.draw.dot import DotGraph, html_escape
from pytest_tlgraph.draw.encoding.key import KEY_ID
from pytest_tlgraph.schema import (
    ClusterRecord,
    NodeRecord,
    SchemaError,
    read_cluster,
    read_node,
    schema_version,
)

__all__ = ["GraphCluster", "GraphModel", "GraphNode", "read_graph", "read_records"]


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
    #: The module class (a box's or fold's; an op's innermost module's).
    type: str | None = None
    #: The call number of a module called more than once (a box's, an op's module's).
    call_number: int | None = None
    #: A fold's first and last repetition's full address, and its count.
    fold_first: str | None = None
    fold_last: str | None = None
    fold_count: int | None = None
    #: The functions of a box's, fold's (one repetition's) or segment's ops, in order.
    members: tuple[str, ...] | None = None
    #: The args its args row leaves out at their constructor default (``tl_defaults``).
    defaults: str | None = None
    #: Each op a box, fold or segment hides, in the full view's words (``tl_ops``).
    ops: tuple[str, ...] | None = None

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
        if self.kind == "fold" and self.fold_count is not None:
            first = self.fold_first or self.address
            return fold_name(first, self.fold_last or first, self.fold_count, self.func)
        if self.kind in ("box", "fold"):
            number = self.call_number
            again = f"#{number}" if number is not None and number != 1 else ""
            return f"@{self.address}{again}" + ("" if self.func == "box" else f" ({self.func})")
        if self.kind in ("input", "output"):
            return self.kind if self.title == self.kind else f"{self.kind} {self.title}"
        if self.func == "const" and self.kind == "op":  # a tensor drawn by value
            return const_title(self.id, self.call, self.rows)
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
    #: The module address it frames (a repeat fold's: its first repetition's).
    address: str
    signature: str | None
    #: ``module`` or ``fold``.
    kind: str = "module"
    #: The module class (a fold of several calls: their classes, ``", "``-joined).
    type: str | None = None
    #: The call number of a module called more than once.
    call_number: int | None = None
    #: A repeat fold's first and last repetition's address, and its count.
    fold_first: str | None = None
    fold_last: str | None = None
    fold_count: int | None = None


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
    #: The schema version the drawing was written with (``None``: before 0.4).
    schema: str | None = None
    _preds: dict[str, list[str]] = field(default_factory=dict, repr=False, compare=False)
    _succs: dict[str, list[str]] = field(default_factory=dict, repr=False, compare=False)
    #: Cluster id -> the nodes it holds at any depth, filled on first use.
    _members: dict[str, list[str]] = field(default_factory=dict, repr=False, compare=False)
    #: Module address -> the nodes at it or below it, filled on first use.
    _under: dict[str, list[str]] = field(default_factory=dict, repr=False, compare=False)

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

    def nodes_under(self, address: str) -> list[str]:
        """The nodes whose module address is ``address`` or lies below it, in drawing
        order (worked out for every address at once, the first time any is asked for)."""
        if not self._under and self.nodes:
            for node_id, node in self.nodes.items():
                parts = node.address.split(".") if node.address else []
                for cut in range(1, len(parts)):
                    self._under.setdefault(".".join(parts[:cut]), []).append(node_id)
                self._under.setdefault(node.address, []).append(node_id)
        return self._under.get(address, [])

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


def _func(record: NodeRecord) -> str:
    """What a node computes: an op's function, a box's or fold's module class."""
    if record.kind == "op":
        return record.op or record.id
    if record.kind in ("box", "fold"):
        return record.type or record.kind
    return record.kind


def _node(
    record: NodeRecord, cluster: str | None, rows: tuple[str, ...], label: str, fill: object
) -> GraphNode:
    return GraphNode(
        id=record.id,
        rows=rows,
        kind=record.kind,
        func=_func(record),
        address=record.address,
        cluster=cluster,
        signature=record.signature,
        fill=None if fill is None else str(fill),
        label=label,
        call=record.call,
        inside_calls=record.inside,
        type=record.type,
        call_number=record.call_number,
        fold_first=record.first,
        fold_last=record.last,
        fold_count=record.count,
        members=record.members,
        defaults=record.defaults,
        ops=record.ops,
    )


def _cluster(record: ClusterRecord, title: str, parent: str | None) -> GraphCluster:
    return GraphCluster(
        id=record.id,
        title=title,
        parent=parent,
        address=record.address,
        signature=record.signature,
        kind=record.kind,
        type=record.type,
        call_number=record.call_number,
        fold_first=record.first,
        fold_last=record.last,
        fold_count=record.count,
    )


def _parsed(text: str, which: str) -> ParsedGraph:
    try:
        return parse_gv(text)
    except DotParseError as error:
        raise DotParseError(f"{which} DOT: {error}" if which else str(error)) from None


def _records(
    parsed: ParsedGraph, which: str
) -> tuple[list[tuple[NodeRecord, str | None, Mapping[str, object]]], list[ClusterRecord]]:
    """Every drawn node's record (the key left out) with its cluster and attributes,
    and every cluster's record, as the attributes hold them."""
    graph: DotGraph = parsed.graph
    try:
        clusters = [
            read_cluster(c.id, _mapping(graph.cluster_attrs.get(c.id))) for c in graph.clusters
        ]
        nodes = []
        for node in (*graph.nodes, *graph.extra_nodes):
            attrs = _mapping(node.attrs)
            if node.id != KEY_ID:
                nodes.append((read_node(node.id, attrs), node.cluster, attrs))
    except SchemaError as error:
        raise DotParseError(f"{which} DOT: {error}" if which else str(error)) from None
    return nodes, clusters


def _mapping(attrs: object) -> Mapping[str, object]:
    return attrs if isinstance(attrs, Mapping) else {}


def read_records(text: str) -> tuple[tuple[NodeRecord, ...], tuple[ClusterRecord, ...]]:
    """The identity records a drawing's DOT holds: every node's (the key left out), in
    drawing order, and every cluster's, outermost first (the inverse of what
    ``pytest_tlgraph.draw.schema_records`` gives for the drawing)."""
    nodes, clusters = _records(_parsed(text, ""), "")
    return tuple(record for record, _, _ in nodes), tuple(clusters)


def read_graph(text: str, which: str = "") -> GraphModel:
    """Read canonical tlgraph DOT into a :class:`GraphModel`. Raises
    :class:`.dotparse.DotParseError` naming ``which`` side (when given) and the line."""
    parsed = _parsed(text, which)
    graph: DotGraph = parsed.graph
    node_records, cluster_records = _records(parsed, which)
    clusters: dict[str, GraphCluster] = {}
    for cluster, frame in zip(graph.clusters, cluster_records, strict=True):
        title = parsed.titles.get(cluster.id, cluster.id)
        clusters[cluster.id] = _cluster(frame, title, cluster.parent)
    nodes: dict[str, GraphNode] = {}
    for record, cluster_id, attrs in node_records:
        label, rows = _label_of(attrs, record.id)
        nodes[record.id] = _node(record, cluster_id, rows, label, attrs.get("fillcolor"))
    key_rows: tuple[str, ...] = ()
    for node in (*graph.nodes, *graph.extra_nodes):
        if node.id == KEY_ID:
            key_rows = _label_of(_mapping(node.attrs), node.id)[1]
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
        schema=schema_version(graph_attrs),
        _preds=preds,
        _succs=succs,
    )
