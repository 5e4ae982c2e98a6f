"""The diff drawing with context: which nodes of a structural diff are drawn, like
``diff -U3`` for graphs.

:func:`context_view` keeps every changed node, every node within :data:`CONTEXT_HOPS`
edges of one (edges read undirected) and the anchors (the model's inputs and outputs);
every other node is hidden. A cluster that keeps no node, itself or in a cluster nested
in it, is not drawn, and its hidden nodes belong to its nearest drawn ancestor (or the
top level). The hidden nodes of one drawn cluster that are joined by edges among hidden
nodes form one :class:`UnchangedRun`, drawn as one grey node (:func:`run_label`), as
long as no kept node and no other drawn cluster lies on a path between two of them
(:func:`_levels`): a run never stands on both sides of a change, so the context view of
an acyclic graph is acyclic. A run of a single node whose own cluster is drawn is kept
as itself instead, since the node takes no more room than the grey node standing for
it and tells more. Edges follow their ends to what draws them
(:meth:`ContextView.drawn_as`).

Pure graph work on ids, linear in nodes + edges + clusters: no DOT, no drawing.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from pytest_tlgraph.errors import UsageError

__all__ = ["CONTEXT_HOPS", "ContextView", "UnchangedRun", "context_view", "run_label"]

#: How many edges around a changed node the diff drawing shows (``diff -U3``'s 3).
CONTEXT_HOPS: Final = 2

_RUN_PREFIX: Final = "unchanged_"


@dataclass(frozen=True, slots=True)
class UnchangedRun:
    """Hidden nodes drawn as one grey node: a connected stretch of one drawn cluster."""

    #: ``unchanged_1``, ``unchanged_2``, ... numbered by first member in the node order.
    id: str
    #: The node ids it stands for, in the node order (never empty).
    members: tuple[str, ...]
    #: The drawn cluster it sits in (``None``: the top level).
    cluster: str | None

    def __post_init__(self) -> None:
        if not self.members:
            raise ValueError(f"unchanged run {self.id!r} has no members; a run stands for 1+")


@dataclass(frozen=True, slots=True)
class ContextView:
    """What the diff drawing with context draws: kept nodes, runs, edges, clusters."""

    #: Node ids drawn as themselves, in the node order.
    kept: tuple[str, ...]
    #: The grey nodes, in the order of their first members.
    runs: tuple[UnchangedRun, ...]
    #: Edges among kept ids and run ids: each once, in first-seen order, no self loops.
    edges: tuple[tuple[str, str], ...]
    #: The cluster ids still drawn (holding a kept node or a run, or an ancestor of one),
    #: in the order the clusters were given.
    clusters: tuple[str, ...]
    _drawn: dict[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        drawn = {node_id: node_id for node_id in self.kept}
        for run in self.runs:
            drawn.update(dict.fromkeys(run.members, run.id))
        object.__setattr__(self, "_drawn", drawn)

    def drawn_as(self, node_id: str) -> str:
        """``node_id`` itself when it is kept, else the id of the run holding it."""
        try:
            return self._drawn[node_id]
        except KeyError:
            raise KeyError(
                f"{node_id!r} is not a node of this view; pass an id from the graph it was built on"
            ) from None


def context_view(
    order: Sequence[str],
    edges: Sequence[tuple[str, str]],
    cluster_of: Mapping[str, str | None],
    cluster_parent: Mapping[str, str | None],
    changed: Collection[str],
    *,
    hops: int = CONTEXT_HOPS,
    anchors: Collection[str] = (),
) -> ContextView:
    """The context view of a diff graph.

    ``order``: every node id once, in drawing order. ``edges``: ``(tail, head)`` pairs of
    ids in ``order``. ``cluster_of``: node id -> its innermost cluster (a node missing is
    at the top level). ``cluster_parent``: every cluster id -> its parent (``None``: top
    level); its iteration order is the order of :attr:`ContextView.clusters`.
    ``changed``: the added, removed, changed and replaced node ids. ``anchors``: ids kept
    whatever their distance (the inputs and outputs). With nothing changed only the
    anchors are kept. An unknown id, a repeated id, a cluster tree with a loop or a
    negative ``hops`` raises ``ValueError``.
    """
    if hops < 0:
        raise UsageError(f"hops={hops}: the context must be 0 or more edges")
    position = _positions(order)
    parents = _checked_parents(cluster_parent)
    own = [_own_cluster(node_id, cluster_of, parents) for node_id in order]
    links = [(_index(a, position, "an edge"), _index(b, position, "an edge")) for a, b in edges]
    neighbours: list[list[int]] = [[] for _ in order]
    for a, b in links:
        neighbours[a].append(b)
        neighbours[b].append(a)
    kept = _within(neighbours, [_index(n, position, "changed") for n in changed], hops)
    for node_id in anchors:
        kept[_index(node_id, position, "anchors")] = True
    drawn = _drawn_clusters(own, kept, parents)
    home = _homes(own, kept, drawn, parents)
    level = _levels(links, kept, home)
    component = _components(neighbours, kept, home, level)
    members: dict[int, list[int]] = {}
    for index, label in enumerate(component):
        if label >= 0:
            members.setdefault(label, []).append(index)
    for group in members.values():
        if len(group) == 1 and home[group[0]] == own[group[0]]:
            kept[group[0]] = True  # one hidden node, in its own drawn cluster: draw it
    runs = _runs(order, [g for g in members.values() if not kept[g[0]]], home, position)
    view_kept = tuple(node_id for node_id, keep in zip(order, kept, strict=True) if keep)
    as_drawn = list(order)
    for run in runs:
        for node_id in run.members:
            as_drawn[position[node_id]] = run.id
    view_edges = dict.fromkeys((as_drawn[a], as_drawn[b]) for a, b in links)
    return ContextView(
        kept=view_kept,
        runs=runs,
        edges=tuple((a, b) for a, b in view_edges if a != b),
        clusters=tuple(c for c in parents if c in drawn),
    )


def run_label(run: UnchangedRun, titles: Mapping[str, str]) -> str:
    """The grey node's text: ``"23 unchanged"``, then the span it stands for,
    ``"conv2d_3 .. relu_7:2"`` (first and last member, by their titles where ``titles``
    names one, else by id), or the one member's title."""
    first = titles.get(run.members[0], run.members[0])
    if len(run.members) == 1:
        span = first
    else:
        span = f"{first} .. {titles.get(run.members[-1], run.members[-1])}"
    return f"{len(run.members):,} unchanged\n{span}"


def _positions(order: Sequence[str]) -> dict[str, int]:
    position: dict[str, int] = {}
    for index, node_id in enumerate(order):
        if position.setdefault(node_id, index) != index:
            raise ValueError(f"node {node_id!r} is listed twice in order; list each node once")
    return position


def _index(node_id: str, position: Mapping[str, int], what: str) -> int:
    try:
        return position[node_id]
    except KeyError:
        raise ValueError(
            f"{what} names {node_id!r}, which is not in order; list every node of the graph"
        ) from None


def _checked_parents(cluster_parent: Mapping[str, str | None]) -> dict[str, str | None]:
    """``cluster_parent`` as a dict, once it is known to be a forest of known ids."""
    parents = dict(cluster_parent)
    done: set[str] = set()
    for start in parents:
        path: list[str] = []
        on_path: set[str] = set()
        cluster: str | None = start
        while cluster is not None and cluster not in done:
            if cluster not in parents:
                raise ValueError(
                    f"cluster {cluster!r}, parent of {path[-1]!r}, is not a key of "
                    "cluster_parent; give every cluster its parent"
                )
            if cluster in on_path:
                raise ValueError(
                    f"cluster {cluster!r} is its own ancestor in cluster_parent; "
                    "the clusters must nest as a tree"
                )
            path.append(cluster)
            on_path.add(cluster)
            cluster = parents[cluster]
        done.update(path)
    return parents


def _own_cluster(
    node_id: str, cluster_of: Mapping[str, str | None], parents: Mapping[str, str | None]
) -> str | None:
    cluster = cluster_of.get(node_id)
    if cluster is not None and cluster not in parents:
        raise ValueError(
            f"node {node_id!r} is in cluster {cluster!r}, which is not a key of "
            "cluster_parent; give every cluster its parent"
        )
    return cluster


def _within(neighbours: Sequence[Sequence[int]], sources: Iterable[int], hops: int) -> list[bool]:
    """Which nodes lie within ``hops`` edges of a source: one breadth-first sweep."""
    reached = [False] * len(neighbours)
    frontier: list[int] = []
    for source in sources:
        if not reached[source]:
            reached[source] = True
            frontier.append(source)
    for _ in range(hops):
        following: list[int] = []
        for node in frontier:
            for other in neighbours[node]:
                if not reached[other]:
                    reached[other] = True
                    following.append(other)
        if not following:
            break
        frontier = following
    return reached


def _drawn_clusters(
    own: Sequence[str | None], kept: Sequence[bool], parents: Mapping[str, str | None]
) -> set[str]:
    """The clusters holding a kept node, and their ancestors (each walked up once)."""
    drawn: set[str] = set()
    for cluster, keep in zip(own, kept, strict=True):
        while keep and cluster is not None and cluster not in drawn:
            drawn.add(cluster)
            cluster = parents[cluster]
    return drawn


def _homes(
    own: Sequence[str | None],
    kept: Sequence[bool],
    drawn: Collection[str],
    parents: Mapping[str, str | None],
) -> list[str | None]:
    """Per node, the drawn cluster it is drawn in: its own or its nearest drawn ancestor."""
    nearest: dict[str, str | None] = {}

    def home_of(cluster: str | None) -> str | None:
        path: list[str] = []
        while cluster is not None and cluster not in drawn and cluster not in nearest:
            path.append(cluster)
            cluster = parents[cluster]
        found = nearest.get(cluster, cluster) if cluster is not None else None
        nearest.update(dict.fromkeys(path, found))
        return found

    return [cluster if keep else home_of(cluster) for cluster, keep in zip(own, kept, strict=True)]


def _levels(
    links: Sequence[tuple[int, int]], kept: Sequence[bool], home: Sequence[str | None]
) -> list[int]:
    """Per node, its level: along every edge the level grows by its step at least, a
    step being 1 on an edge out of a kept node or between two drawn clusters, else 0.
    Two hidden nodes of one level thus have no kept node and no other cluster's node on
    a path between them: a run of one level never holds both sides of a kept node, and
    runs and kept nodes stay acyclic. Each node takes the most steps on a path into it,
    then, from the last node back, is raised as near its successors as the steps allow,
    so a side input joins the run it feeds (Kahn's order, linear). A node on a cycle of
    ``links`` has a level of its own (negative): it joins no run."""
    following: list[list[int]] = [[] for _ in kept]
    waiting = [0] * len(kept)
    for tail, head in links:
        if tail != head:  # a self loop orders nothing
            following[tail].append(head)
            waiting[head] += 1
    level = [0] * len(kept)
    ready = [node for node, count in enumerate(waiting) if count == 0]
    done: list[int] = []
    while ready:
        node = ready.pop()
        done.append(node)
        for head in following[node]:
            level[head] = max(level[head], level[node] + _step(node, head, kept, home))
            waiting[head] -= 1
            if waiting[head] == 0:
                ready.append(head)
    for node in reversed(done):
        if following[node]:
            level[node] = min(level[h] - _step(node, h, kept, home) for h in following[node])
    pairs = enumerate(zip(waiting, level, strict=True))
    return [-1 - node if count else lvl for node, (count, lvl) in pairs]


def _step(tail: int, head: int, kept: Sequence[bool], home: Sequence[str | None]) -> int:
    """1 on an edge out of a kept node or between two drawn clusters, else 0."""
    return 1 if kept[tail] or home[tail] != home[head] else 0


def _components(
    neighbours: Sequence[Sequence[int]],
    kept: Sequence[bool],
    home: Sequence[str | None],
    level: Sequence[int],
) -> list[int]:
    """A label per hidden node (-1 for a kept one): the weakly connected components of
    the hidden nodes of each drawn cluster and level (:func:`_levels`), numbered by
    their first node."""
    label = [-1] * len(neighbours)
    count = 0
    for start, keep in enumerate(kept):
        if keep or label[start] >= 0:
            continue
        label[start] = count
        stack = [start]
        while stack:
            node = stack.pop()
            for other in neighbours[node]:
                if (
                    label[other] < 0
                    and not kept[other]
                    and home[other] == home[start]
                    and level[other] == level[start]
                ):
                    label[other] = count
                    stack.append(other)
        count += 1
    return label


def _runs(
    order: Sequence[str],
    groups: Iterable[Sequence[int]],
    home: Sequence[str | None],
    position: Collection[str],
) -> tuple[UnchangedRun, ...]:
    """One run per group of node indices, numbered in order, skipping a number whose id
    a node of the graph already has."""
    runs: list[UnchangedRun] = []
    number = 0
    for group in groups:
        number += 1
        while f"{_RUN_PREFIX}{number}" in position:
            number += 1
        members = tuple(order[index] for index in group)
        runs.append(UnchangedRun(f"{_RUN_PREFIX}{number}", members, home[group[0]]))
    return tuple(runs)
