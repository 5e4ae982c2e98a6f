"""Any view's drawing read at full detail: every collapsed node opened into its ops.

A box, fold or segment carries the ops it hides (``tl_ops``: function, shape, args,
params, in run order); a fold frame draws its first repetition for all of them. So
:func:`op_level` turns a drawing of any view into the graph model the full view would
give, as near as the drawing records it: each hidden op a node of its own at the
collapsed node's address (one per repetition of a fold, the fold's addresses counted
from its first), wired in run order inside its node (the drawing does not keep the
hidden edges), and each fold frame's nodes drawn once more for every other repetition.
Two drawings of one view opened this way compare op by op, whatever the view folded,
boxed or budgeted.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from pytest_tlgraph.diff.alignment import frame_fold_count, repetitions
from pytest_tlgraph.diff.graph import GraphCluster, GraphModel, GraphNode

__all__ = [
    "HIDDEN",
    "MEMBER_FIELDS",
    "Opened",
    "coarsened",
    "is_hidden",
    "op_level",
    "parse_member",
]

#: How ``tl_ops`` separates the fields of one hidden op (``draw.labels.member_row``).
MEMBER_FIELDS: Final = " | "
_COLLAPSED: Final = frozenset({"box", "fold", "segment"})
#: The signature an opened hidden op carries (a drawn node's is a content digest).
HIDDEN: Final = "tl_ops"


#: The fill a drawn node's copy for another repetition of its fold frame carries.
REPEATED: Final = "tl_repeat"


def is_repeated(node: GraphNode) -> bool:
    """Whether ``node`` is a fold frame's drawn node copied for another repetition:
    no drawn node has its id."""
    return node.fill == REPEATED


def is_hidden(node: GraphNode) -> bool:
    """Whether ``node`` is an op opened from a collapsed node: it records every
    constructor argument, but no call argument of its own."""
    return node.signature == HIDDEN


def parse_member(text: str) -> tuple[str, str, str, str, str]:
    """``conv2d | 1x8x8x8 | kernel_size=(3, 3) | weight 8x8x3x3 | conv1`` -> its
    function, shape (with a dtype after a comma when not the default), args, params
    and its module's address below the collapsed node's (``""``: the node's own)."""
    parts = [part.strip() for part in text.split(MEMBER_FIELDS)]
    parts += [""] * (5 - len(parts))
    func, shape, args, params, below = parts[:5]
    return func, shape, args, params, below


def _addressed(node: GraphNode) -> bool:
    """Whether a member of collapsed ``node`` names its module below the node's."""
    return any(parse_member(text)[4] for text in node.ops or ())


def _inside_calls(node: GraphNode) -> dict[int, str]:
    """Member index -> the call arguments ``tl_inside`` lists for it: its entries
    (``func: args``, in run order, only members with a non-tensor argument) laid on
    the members in order, each on the next member of its function."""
    funcs = [parse_member(text)[0] for text in node.ops or ()]
    out: dict[int, str] = {}
    start = 0
    for part in (node.inside_calls or "").split("; "):
        func, sep, args = part.partition(": ")
        if not sep:
            continue
        index = next((i for i in range(start, len(funcs)) if funcs[i] == func), None)
        if index is not None:
            out[index] = args
            start = index + 1
    return out


def _hidden_nodes(node: GraphNode, address: str, tag: str) -> list[GraphNode]:
    """The ops ``node`` hides, as op nodes at ``address`` (ids ``<node id>/<i><tag>``)."""
    out = []
    calls = _inside_calls(node)
    for index, text in enumerate(node.ops or ()):
        func, shape, args, params, below = parse_member(text)
        at = f"{address}.{below}" if address and below else below or address
        rows = [shape] if shape else []
        if args:
            rows.append(args)
        if params:
            rows.append(f"params: {params}")
        rows.append(f"@{at}" if at else "@")
        node_id = f"{node.id}/{index + 1}{tag}"
        out.append(
            GraphNode(
                id=node_id,
                rows=(node_id, *rows),
                kind="op",
                func=func,
                address=at,
                cluster=None,
                signature=HIDDEN,
                fill=None,
                label="",
                type=node.type,
                call_number=node.call_number,
                call=calls.get(index),
            )
        )
    return out


class _Builder:
    """The opened graph, built node by node: each drawn node's first and last op node
    (where its in- and out-edges now land)."""

    def __init__(self, graph: GraphModel) -> None:
        self.graph = graph
        self.nodes: dict[str, GraphNode] = {}
        self.edges: list[tuple[str, str]] = []
        self.entry: dict[str, str] = {}
        self.exit: dict[str, str] = {}
        self.positions: dict[str, Mapping[str, int]] = dict(graph.positions)
        #: The addresses whose ops were opened from a collapsed node.
        self.collapsed: set[str] = set()

    def chain(self, drawn_id: str, nodes: list[GraphNode]) -> None:
        """Add ``nodes`` in run order, each feeding the next, for drawn node
        ``drawn_id``."""
        for node in nodes:
            self.nodes[node.id] = node
        for a, b in itertools.pairwise(nodes):
            self.edges.append((a.id, b.id))
        self.entry[drawn_id], self.exit[drawn_id] = nodes[0].id, nodes[-1].id

    def open_node(self, node: GraphNode, address_of: Mapping[str, str], tag: str) -> None:
        """``node`` (at ``address_of`` its repetition's address) opened."""
        drawn_id = node.id + tag
        address = address_of.get(node.address, node.address)
        if node.kind not in _COLLAPSED or not node.ops:
            fill = REPEATED if tag else node.fill
            copy = dataclasses.replace(node, id=drawn_id, address=address, cluster=None, fill=fill)
            self.chain(drawn_id, [copy])
            return
        reps = [address]
        if node.kind == "fold" and (node.fold_count or 1) > 1:
            reps = repetitions(address, node.fold_count or 1)
        ops: list[GraphNode] = []
        # A segment's ops lie at several modules' addresses; a box or fold whose
        # members name their modules (``tl_ops``' fifth field) opens at full detail.
        # One drawn before they did (or holding only its own ops) is compared at its
        # own address: each op below it is moved up to it on both sides.
        if node.kind != "segment" and not _addressed(node):
            self.collapsed.update(reps)
        for k, rep in enumerate(reps):
            ops += _hidden_nodes(node, rep, tag + (f"#{k + 1}" if k else ""))
        self.chain(drawn_id, ops)


def _frames(graph: GraphModel) -> dict[str, tuple[str, int]]:
    """Fold frame id -> its first repetition's address and its count (the outermost
    fold frames: one inside another repeats with it)."""
    out = {}
    for cid, cluster in graph.clusters.items():
        count = frame_fold_count(cluster)
        if count <= 1:
            continue
        parent, nested = cluster.parent, False
        while parent is not None and not nested:
            nested = frame_fold_count(graph.clusters[parent]) > 1
            parent = graph.clusters[parent].parent
        if not nested:
            out[cid] = (cluster.fold_first or cluster.address, count)
    return out


def _frame_of(graph: GraphModel, frames: Mapping[str, tuple[str, int]], node_id: str) -> str | None:
    return next((c for c in graph.cluster_path(node_id) if c in frames), None)


def _rebased(address: str, start: str, rep: str) -> str:
    """``address`` under ``start`` written under ``rep`` instead."""
    if address == start:
        return rep
    if start and address.startswith(start + "."):
        return rep + address[len(start) :]
    return address


def _open_frames(
    graph: GraphModel, build: _Builder, frames: Mapping[str, tuple[str, int]]
) -> dict[str, list[str]]:
    """Every drawn node opened, a fold frame's once per repetition; frame id -> the
    tags of its repetitions (``""`` for the first, drawn one)."""
    tags: dict[str, list[str]] = {}
    for node_id, node in graph.nodes.items():
        frame = _frame_of(graph, frames, node_id)
        if frame is None:
            build.open_node(node, {}, "")
            continue
        start, count = frames[frame]
        reps = repetitions(start, count)
        tags[frame] = [""] + [f"~{k + 1}" for k in range(1, len(reps))]
        for rep, tag in zip(reps, tags[frame], strict=True):
            build.open_node(node, {node.address: _rebased(node.address, start, rep)}, tag)
    return tags


def _wire(
    graph: GraphModel, build: _Builder, frames: Mapping[str, tuple[str, int]],
    tags: Mapping[str, list[str]],
) -> None:  # fmt: skip
    """The drawn edges between opened nodes: inside a fold frame once per repetition,
    into it from the previous repetition's last node, out of it from the last one's."""
    exits: dict[str, str] = {}
    for tail, head in graph.edges:
        if tail not in graph.nodes or head not in graph.nodes:
            continue
        frame = _frame_of(graph, frames, tail)
        if frame is not None and _frame_of(graph, frames, head) != frame:
            exits[frame] = tail
    for tail, head in graph.edges:
        if tail not in graph.nodes or head not in graph.nodes:
            continue  # an edge to a node the drawing never declares: nothing to open
        tail_frame, head_frame = _frame_of(graph, frames, tail), _frame_of(graph, frames, head)
        if tail_frame is not None and tail_frame == head_frame:
            for tag in tags[tail_frame]:
                build.edges.append((build.exit[tail + tag], build.entry[head + tag]))
            continue
        last = tags[tail_frame][-1] if tail_frame is not None else ""
        build.edges.append((build.exit[tail + last], build.entry[head]))
        if head_frame is not None:
            for before, tag in itertools.pairwise(tags[head_frame]):
                exit_node = exits.get(head_frame, tail)
                build.edges.append((build.exit[exit_node + before], build.entry[head + tag]))


def _clusters(graph: GraphModel, nodes: Iterable[GraphNode]) -> dict[str, GraphCluster]:
    """One module frame per module address the opened nodes lie in, typed where the
    drawing names a type (a frame, a box, a fold and its repetitions)."""
    types: dict[str, str] = {}
    for cluster in graph.clusters.values():
        if cluster.type:
            count = frame_fold_count(cluster)
            for rep in repetitions(cluster.fold_first or cluster.address, count):
                types.setdefault(rep, cluster.type)
    for node in graph.nodes.values():
        if node.kind in ("box", "fold") and node.type:
            for rep in repetitions(node.address, node.fold_count or 1):
                types.setdefault(rep, node.type)
        elif node.kind == "op" and node.type and node.module_row is not None:
            types.setdefault(node.address, node.type)
    out: dict[str, GraphCluster] = {}
    for node in nodes:
        parts = node.address.split(".") if node.address else []
        for cut in range(1, len(parts) + 1):
            address = ".".join(parts[:cut])
            if address not in out:
                parent = ".".join(parts[: cut - 1]) or None
                out[address] = GraphCluster(
                    id=address, title=address, parent=parent, address=address,
                    signature=None, type=types.get(address),
                )  # fmt: skip
    return out


@dataclass(frozen=True, slots=True)
class Opened:
    """A drawing opened: the graph, and the addresses whose ops it shows only
    together (a box's, each repetition's of a fold, a segment's): below them it
    records no address."""

    graph: GraphModel
    collapsed: frozenset[str]


def op_level(graph: GraphModel) -> Opened:
    """``graph`` with every collapsed node opened into its ops and every fold frame
    drawn once per repetition (see the module docstring); a drawing at full detail
    comes back with the same nodes and edges, its frames one per module address."""
    build = _Builder(graph)
    frames = _frames(graph)
    tags = _open_frames(graph, build, frames)
    _wire(graph, build, frames, tags)
    clusters = _clusters(graph, build.nodes.values())
    nodes = {
        node_id: dataclasses.replace(node, cluster=node.address or None)
        for node_id, node in build.nodes.items()
    }
    edges = tuple(dict.fromkeys(build.edges))
    preds: dict[str, list[str]] = {}
    succs: dict[str, list[str]] = {}
    for tail, head in edges:
        succs.setdefault(tail, []).append(head)
        preds.setdefault(head, []).append(tail)
    opened = GraphModel(
        nodes=MappingProxyType(nodes), edges=edges, clusters=MappingProxyType(clusters),
        key_rows=(), caption_rows=(), rankdir=graph.rankdir, parsed=graph.parsed,
        positions=MappingProxyType(build.positions), schema=graph.schema,
        _preds=preds, _succs=succs,
    )  # fmt: skip
    return Opened(opened, frozenset(build.collapsed))


def coarsened(graph: GraphModel, cuts: set[str]) -> GraphModel:
    """An opened ``graph`` with each op below an address of ``cuts`` moved up to it:
    so an op that one side records inside a box and the other at its own module (a
    fold frame drawn open, a box auto opened) sits at the same address on both."""
    if not cuts:
        return graph
    nodes = {}
    for node_id, node in graph.nodes.items():
        parts = node.address.split(".") if node.address else []
        cut = next(
            (".".join(parts[:n]) for n in range(1, len(parts)) if ".".join(parts[:n]) in cuts), None
        )
        if cut is None:
            nodes[node_id] = node
        else:
            rows = tuple(f"@{cut}" if row.startswith("@") else row for row in node.rows)
            nodes[node_id] = dataclasses.replace(node, address=cut, cluster=cut, rows=rows)
    clusters = {a: c for a, c in graph.clusters.items() if not any(p in cuts for p in _above(a))}
    return dataclasses.replace(
        graph, nodes=MappingProxyType(nodes), clusters=MappingProxyType(clusters),
        _members={}, _under={},
    )  # fmt: skip


def _above(address: str) -> list[str]:
    parts = address.split(".")
    return [".".join(parts[:n]) for n in range(1, len(parts))]
