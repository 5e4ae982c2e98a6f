"""The union graph a structural diff drawing draws: both drawings as one graph.

:func:`diff_graph` reads a :class:`~.comparison.Comparison` into a :class:`DiffGraph`:
every node of either side with its diff status (``added``, ``removed``, ``replaced``,
``changed``, ``unchanged``), every edge with its status and argument number, and the
frames of both sides by their union ids.

Two acyclic drawings can pair into a union with a cycle: when two paired nodes run in
the other order (``bn -> relu`` before, ``relu -> bn`` after), the stored edge and the
received one point both ways. Such nodes are drawn once per side, as a diff of text
draws a moved line: the stored copy ``removed`` with the stored edges, the received one
``added`` with the received edges, so the diff of two acyclic drawings stays acyclic.

A module the view drew otherwise because of an edit elsewhere (``collapse="auto"``
boxed it on one side and opened it on the other, :attr:`.Comparison.regrouped`) is no
change of the model: the story tells it in a trailing note, and the diff draws it once,
as the received drawing does, unchanged (a box says what it was drawn as before). A
module that holds an edit is drawn as compared, both sides. So are the parts of a fold
that the received drawing breaks (:attr:`.Comparison.splits`): the edges into, out of
and among them are the view's, drawn as the received drawing has them, unchanged; the
part that changed is marked on its nodes.

Pure graph work on ids, linear in nodes + edges + clusters: no DOT, no styles.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from pytest_tlgraph.diff.view.comparison import Comparison, Regrouped, union_order
from pytest_tlgraph.draw.plan import Cluster

__all__ = [
    "ADDED", "CHANGED", "REMOVED", "REPLACED", "UNCHANGED", "DiffEdge", "DiffGraph",
    "cyclic_nodes", "diff_graph",
]  # fmt: skip

ADDED: Final = "added"
REMOVED: Final = "removed"
CHANGED: Final = "changed"
REPLACED: Final = "replaced"
UNCHANGED: Final = "unchanged"

#: The stored copy of a node drawn once per side: ``"<id> (before)"``.
_BEFORE: Final = " (before)"

#: ``(tail, head)`` in drawn ids -> the argument number on the stored / received side.
_Numbers = dict[tuple[str, str], str]


@dataclass(frozen=True, slots=True)
class DiffEdge:
    """One drawn edge: its diff status and the argument position it is numbered with."""

    status: str
    number: str | None = None


@dataclass(frozen=True, slots=True)
class DiffGraph:
    """Both drawings as one graph (see the module docstring)."""

    #: Drawn node id -> its diff status, in drawing order.
    status: Mapping[str, str]
    #: Drawn node id -> ``(id on its side, True when that side is the stored one)``:
    #: the drawn node whose rows it shows.
    source: Mapping[str, tuple[str, bool]]
    #: Drawn edges, each once, in drawing order.
    edges: Mapping[tuple[str, str], DiffEdge]
    #: Drawn node id -> the union id of its innermost frame (``None``: the top level).
    cluster_of: Mapping[str, str | None]
    #: Every frame of either side by its union id, in drawing order.
    clusters: Mapping[str, Cluster]
    #: Boxes the view drew otherwise, with what they were drawn as on the stored side.
    redrawn: Mapping[str, str] = dataclasses.field(default_factory=dict)
    #: Frames only the received side draws because the view opened a box: unchanged.
    redrawn_frames: frozenset[str] = frozenset()


def diff_graph(comparison: Comparison) -> DiffGraph:
    """The union graph of ``comparison``, each node on a cycle of the union that both
    sides have drawn once per side (see the module docstring)."""
    statuses = comparison.node_statuses
    removed = {comparison.union_id(n): n for n in comparison.removed}
    source = {n: (removed[n], True) if n in removed else (n, False) for n in statuses}
    old_numbers, new_numbers = _numbers(comparison)
    edges = _union_edges(comparison, old_numbers, new_numbers)
    graph = DiffGraph(
        status=statuses,
        source=source,
        edges=edges,
        cluster_of={n: _side_cluster(comparison, *source[n]) for n in statuses},
        clusters=_union_clusters(comparison),
    )
    if comparison.splits:
        graph = _split_edges_quiet(comparison, graph)
    edited = _edited_modules(comparison)
    regroups = [g for g in comparison.regrouped if not _edited(comparison, g, edited)]
    if regroups:
        graph = _drawn_once(comparison, graph, regroups)
        statuses = dict(graph.status)
    both = set(cyclic_nodes(list(statuses), list(graph.edges)))
    both &= set(comparison.pairing.reverse)
    both -= {n for n in both if statuses[n] in (ADDED, REMOVED)}
    if not both:
        return graph
    return _unfolded(comparison, graph, both, old_numbers, new_numbers)


def cyclic_nodes(order: Sequence[str], edges: Sequence[tuple[str, str]]) -> list[str]:
    """The nodes of ``order`` on a directed cycle of ``edges`` (a strongly connected
    component of two nodes or more, or a self loop), in ``order``: Tarjan's algorithm,
    iterative, linear in nodes + edges."""
    following: dict[str, list[str]] = {n: [] for n in order}
    for tail, head in edges:
        following[tail].append(head)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cyclic = {tail for tail, head in edges if tail == head}
    for root in order:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, at = work.pop()
            if at == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            heads = following[node]
            if at < len(heads):
                work.append((node, at + 1))
                head = heads[at]
                if head not in index:
                    work.append((head, 0))
                elif head in on_stack:
                    low[node] = min(low[node], index[head])
                continue
            if work:  # back in the caller: it takes the lowest link found here
                caller = work[-1][0]
                low[caller] = min(low[caller], low[node])
            if low[node] == index[node]:
                component = _pop_component(stack, on_stack, node)
                if len(component) > 1:
                    cyclic.update(component)
    return [n for n in order if n in cyclic]


def _pop_component(stack: list[str], on_stack: set[str], root: str) -> list[str]:
    """Pop Tarjan's stack down to ``root``: one strongly connected component."""
    component: list[str] = []
    while True:
        node = stack.pop()
        on_stack.discard(node)
        component.append(node)
        if node == root:
            return component


def _numbers(comparison: Comparison) -> tuple[_Numbers, _Numbers]:
    """The argument number of each numbered in-edge, by union ids: the stored side's
    and the received side's."""
    union = comparison.union_id
    old = {
        (union(tail), union(head)): str(number)
        for head, tails in comparison.old.positions.items()
        for tail, number in tails.items()
    }
    new = {
        (tail, head): str(number)
        for head, tails in comparison.new.positions.items()
        for tail, number in tails.items()
    }
    return old, new


def _union_edges(
    comparison: Comparison, old_numbers: _Numbers, new_numbers: _Numbers
) -> dict[tuple[str, str], DiffEdge]:
    """Every edge of either side once, with its status and number (the received
    side's, the stored side's for an edge only it has)."""
    added, removed = set(comparison.edges_added), set(comparison.edges_removed)
    out: dict[tuple[str, str], DiffEdge] = {}
    for edge in dict.fromkeys([*comparison.new.edges, *comparison.edges_removed]):
        status = ADDED if edge in added else REMOVED if edge in removed else UNCHANGED
        out[edge] = DiffEdge(status, new_numbers.get(edge, old_numbers.get(edge)))
    return out


def _side_cluster(comparison: Comparison, node_id: str, stored: bool) -> str | None:
    """The union id of the innermost frame of ``node_id`` on its side."""
    graph = comparison.old if stored else comparison.new
    cluster = graph.nodes[node_id].cluster
    if cluster is None or not stored:
        return cluster
    return comparison.cluster_union_id(cluster)


def _union_clusters(comparison: Comparison) -> dict[str, Cluster]:
    """Both sides' frames by union id (a frame that moved is its module's), the
    received side's where both have one."""
    union = comparison.cluster_union_id
    new = {c.id: c for c in comparison.new.parsed.graph.clusters}
    old = {
        union(c.id): dataclasses.replace(
            c, id=union(c.id), parent=None if c.parent is None else union(c.parent)
        )
        for c in comparison.old.parsed.graph.clusters
    }
    return {cid: new.get(cid) or old[cid] for cid in union_order(list(new), list(old))}


def _free_id(node_id: str, taken: Mapping[str, object]) -> str:
    """``"<id> (before)"``, with more ``'`` until no drawn node has it."""
    candidate = node_id + _BEFORE
    while candidate in taken:
        candidate += "'"
    return candidate


def _unfolded(
    comparison: Comparison,
    graph: DiffGraph,
    both: set[str],
    old_numbers: _Numbers,
    new_numbers: _Numbers,
) -> DiffGraph:
    """``graph`` with each node of ``both`` drawn once per side: a ``removed`` stored
    copy with the stored side's edges, the node itself ``added`` with the received's."""
    copy = {n: _free_id(n, graph.status) for n in both}
    status: dict[str, str] = {}
    source: dict[str, tuple[str, bool]] = {}
    for node_id, was in graph.status.items():
        if node_id in both:
            old_id = comparison.pairing.reverse[node_id]
            status[copy[node_id]] = REMOVED
            source[copy[node_id]] = (old_id, True)
            status[node_id] = ADDED
        else:
            status[node_id] = was
        source[node_id] = graph.source[node_id]
    edges: dict[tuple[str, str], DiffEdge] = {}
    for (tail, head), edge in graph.edges.items():
        if tail not in both and head not in both:
            edges[(tail, head)] = edge
            continue
        if edge.status != ADDED:  # the stored side has it: between stored copies
            stored = (copy.get(tail, tail), copy.get(head, head))
            edges[stored] = DiffEdge(REMOVED, old_numbers.get((tail, head)))
        if edge.status != REMOVED:
            edges[(tail, head)] = DiffEdge(ADDED, new_numbers.get((tail, head)))
    cluster_of = {n: _side_cluster(comparison, *source[n]) for n in status}
    return dataclasses.replace(
        graph, status=status, source=source, edges=edges, cluster_of=cluster_of
    )


def _split_edges_quiet(comparison: Comparison, graph: DiffGraph) -> DiffGraph:
    """``graph`` with the edges a broken fold rewired drawn as received: an added edge
    to or from a part, between nodes neither added nor removed, unchanged; a removed
    edge whose ends the received drawing joins through parts, left out."""
    parts = {n for split in comparison.splits for n in split.members} & set(graph.status)
    status = graph.status
    into, out_of = set(), set()
    for (tail, head), edge in graph.edges.items():
        if edge.status == ADDED and head in parts:
            out_of.add(tail)
        if edge.status == ADDED and tail in parts:
            into.add(head)
    edges: dict[tuple[str, str], DiffEdge] = {}
    for (tail, head), edge in graph.edges.items():
        plain = status[tail] not in (ADDED, REMOVED) and status[head] not in (ADDED, REMOVED)
        if edge.status == REMOVED and plain and (tail in out_of or head in into):
            continue  # the fold's way out, now through the parts
        if edge.status == ADDED and plain and parts.intersection((tail, head)):
            edge = DiffEdge(UNCHANGED, edge.number)
        edges[(tail, head)] = edge
    return dataclasses.replace(graph, edges=edges)


def _module_address(comparison: Comparison, group: Regrouped) -> str:
    """The address of the module a regrouped box stands for."""
    side = comparison.new if group.boxed else comparison.old
    return side.nodes[group.box].address


def _under(address: str, module: str) -> bool:
    """True when ``address`` is ``module`` or inside it."""
    return address == module or address.startswith(module + ".")


def _edited_modules(comparison: Comparison) -> set[str]:
    """Every module address an edit sits at or inside (each edit's address and its
    dotted prefixes): linear in the edits."""
    out: set[str] = set()
    for edit in comparison.edits:
        parts = edit.address.split(".")
        out.update(".".join(parts[: n + 1]) for n in range(len(parts)))
    return out


def _edited(comparison: Comparison, group: Regrouped, edited: set[str]) -> bool:
    """True when ``group`` is no box (a fold) or an edit falls inside its module
    (``edited``: :func:`_edited_modules`): the diff draws it as compared."""
    side = comparison.new if group.boxed else comparison.old
    if side.nodes[group.box].kind != "box":
        return True
    return _module_address(comparison, group) in edited


def _drawn_once(comparison: Comparison, graph: DiffGraph, groups: Sequence[Regrouped]) -> DiffGraph:
    """``graph`` with each module of ``groups`` drawn as the received side draws it,
    unchanged: the stored side's box or frame of nodes left out, the received side's
    nodes and the edges to them unchanged."""
    union = comparison.union_id
    dropped: set[str] = set()
    quiet: set[str] = set()
    redrawn: dict[str, str] = {}
    for group in groups:
        if group.boxed:
            dropped.update(union(n) for n in group.frame)
            quiet.add(group.box)
            redrawn[group.box] = f"drawn as one box (was {len(group.frame)} nodes in its frame)"
        else:
            dropped.add(union(group.box))
            quiet.update(group.frame)
    status = {
        n: UNCHANGED if n in quiet else s for n, s in graph.status.items() if n not in dropped
    }
    edges = {
        edge: _quieted(edge, info, quiet, status)
        for edge, info in graph.edges.items()
        if not dropped.intersection(edge)
    }
    modules = [_module_address(comparison, g) for g in groups]
    opened = frozenset(
        cid for cid in comparison.clusters_added
        if any(_under(comparison.new.clusters[cid].address, m) for m in modules)
    )  # fmt: skip
    cluster_of = {n: graph.cluster_of[n] for n in status}
    return dataclasses.replace(
        graph, status=status, edges=edges, cluster_of=cluster_of,
        clusters=_holding(graph.clusters, cluster_of.values()), redrawn=redrawn,
        redrawn_frames=opened,
    )  # fmt: skip


def _quieted(
    edge: tuple[str, str], info: DiffEdge, quiet: set[str], status: Mapping[str, str]
) -> DiffEdge:
    """An added edge to a node only redrawn, between nodes not added: unchanged."""
    if info.status != ADDED or not quiet.intersection(edge):
        return info
    if any(status[end] in (ADDED, REMOVED) for end in edge):
        return info
    return DiffEdge(UNCHANGED, info.number)


def _holding(clusters: Mapping[str, Cluster], used: Iterable[str | None]) -> dict[str, Cluster]:
    """The frames of ``clusters`` that hold a node, themselves or in a nested frame."""
    kept: set[str] = set()
    for cid in set(used):
        while cid is not None and cid in clusters and cid not in kept:
            kept.add(cid)
            cid = clusters[cid].parent
    return {cid: c for cid, c in clusters.items() if cid in kept}
