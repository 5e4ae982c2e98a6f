"""What a structural diff drawing draws, before any DOT: :func:`plan_diff`.

The plan holds the :class:`~.diffgraph.DiffGraph` of a comparison, the
:class:`~.context.ContextView` drawn of it (the changes and a few hops around them, or
the whole union), each drawn frame's status and the legend's counts, which count what
is drawn: the nodes of each status, the frames of each status but ``unchanged``, and
the grey runs.

An edit whose holder is a frame (a fold that lost a repetition, a module drawn open)
marks that frame, amber, with the edit's story line in its caption
(:mod:`.diffnotes`); the nodes that the comparison marks only because an edit falls on
them, and whose story line stands on that frame or another place, are drawn
unchanged, so the picture colours what the story names.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from pytest_tlgraph.diff.view.comparison import Comparison
from pytest_tlgraph.diff.view.context import ContextView, context_view
from pytest_tlgraph.diff.view.diffgraph import (
    ADDED,
    CHANGED,
    REMOVED,
    UNCHANGED,
    DiffGraph,
    diff_graph,
)
from pytest_tlgraph.diff.view.diffnotes import edit_notes

__all__ = ["RUN", "DiffPlan", "plan_diff"]

#: The kind of the grey node standing for a run of unchanged nodes.
RUN: Final = "run"


@dataclass(frozen=True, slots=True)
class DiffPlan:
    """One diff drawing, decided: the graph, what of it is drawn, the frames' statuses."""

    graph: DiffGraph
    view: ContextView
    #: Each drawn frame's status (``unchanged`` for a frame both sides draw alike).
    frames: Mapping[str, str]
    #: Drawn node or frame id -> the story lines of the edits it holds.
    notes: Mapping[str, Sequence[str]]

    @property
    def kinds(self) -> dict[str, str]:
        """Each drawn node's kind: its status, or ``run`` for a grey run."""
        kinds = {n: self.graph.status[n] for n in self.view.kept}
        kinds.update((run.id, RUN) for run in self.view.runs)
        return kinds

    @property
    def hidden(self) -> int:
        """How many unchanged nodes the grey runs stand for."""
        return sum(len(run.members) for run in self.view.runs)

    def node_counts(self) -> Counter[str]:
        """Drawn nodes per kind (``run`` for the grey runs)."""
        return Counter(self.kinds.values())

    def frame_counts(self) -> Counter[str]:
        """Drawn frames per status, ``unchanged`` ones not counted."""
        return Counter(s for s in self.frames.values() if s != UNCHANGED)

    @property
    def marked(self) -> bool:
        """True when a drawn node or frame shows a change."""
        kinds = set(self.kinds.values()) | set(self.frames.values())
        return bool(kinds - {UNCHANGED, RUN})


def plan_diff(comparison: Comparison, context: int | None) -> DiffPlan:
    """The plan of ``comparison``'s diff drawing: ``context`` hops around each change,
    or the whole union when ``None`` (or when a frame added or removed holds no change,
    which only the whole union shows)."""
    graph = diff_graph(comparison)
    notes, complete = edit_notes(comparison, graph)
    held = {place for place in notes if place in graph.clusters}
    if held or complete:
        graph = _marked_by_place(comparison, graph, held, set(notes), complete=complete)
    view = _whole(graph)
    touched = None if context is None else _touched(comparison, graph, held)
    if touched is not None and context is not None:
        anchors = [n for n in graph.status if _kind(comparison, graph, n) in ("input", "output")]
        parents = {cid: c.parent for cid, c in graph.clusters.items()}
        order, edges = list(graph.status), list(graph.edges)
        context_only = context_view(
            order, edges, graph.cluster_of, parents, touched, hops=context, anchors=anchors
        )
        if context_only.runs:
            view = context_only
    statuses = _frame_statuses(comparison)
    statuses |= {cid: CHANGED for cid in held if statuses.get(cid) not in (ADDED, REMOVED)}
    frames = {
        cid: UNCHANGED if cid in graph.redrawn_frames else statuses.get(cid, UNCHANGED)
        for cid in view.clusters
    }
    return DiffPlan(graph, view, frames, notes)


def _whole(graph: DiffGraph) -> ContextView:
    """The view that draws every node, edge and frame of ``graph``."""
    return ContextView(
        kept=tuple(graph.status), runs=(), edges=tuple(graph.edges),
        clusters=tuple(graph.clusters),
    )  # fmt: skip


def _kind(comparison: Comparison, graph: DiffGraph, node_id: str) -> str:
    """The drawn node kind (``input``, ``op``, ``box``, ...) of a node of ``graph``."""
    side_id, stored = graph.source[node_id]
    return (comparison.old if stored else comparison.new).nodes[side_id].kind


def _marked_by_place(
    comparison: Comparison,
    graph: DiffGraph,
    held: set[str],
    places: set[str],
    *,
    complete: bool,
) -> DiffGraph:
    """``graph`` with the nodes marked changed only because an edit falls on them (their
    rows, content and function the same on both sides) unchanged where the story line
    stands elsewhere: not at one of ``places`` and inside a frame of ``held`` (the frame
    is marked instead), or anywhere when every edit found its place (``complete``)."""
    real = set(comparison.changed) | {new for _, new in comparison.replaced}
    counts = {split.count_line for split in comparison.splits}  # the view's note alone
    real |= {n for n, what in comparison.split_of.items() if what not in (None, *counts)}
    status = dict(graph.status)
    for node_id, was in graph.status.items():
        if was != CHANGED or node_id in real or node_id in places:
            continue
        if complete or held.intersection(_path(node_id, graph)):
            status[node_id] = UNCHANGED
    return dataclasses.replace(graph, status=status)


def _touched(comparison: Comparison, graph: DiffGraph, held: set[str]) -> set[str] | None:
    """The nodes the context is drawn around: changed nodes, the ends of changed edges
    and what a changed frame holds; ``None`` when a frame added or removed holds none of
    them (only the whole union shows such a frame)."""
    touched = {n for n, status in graph.status.items() if status != UNCHANGED}
    for (tail, head), edge in graph.edges.items():
        if edge.status != UNCHANGED:
            touched.update((tail, head))
    framed = {change.id for change in comparison.clusters_changed} | held
    touched.update(n for n, cid in graph.cluster_of.items() if cid in framed)
    holding = {c for n in touched for c in _path(n, graph)}
    removed = {comparison.cluster_union_id(c) for c in comparison.clusters_removed}
    frames = {*comparison.clusters_added, *removed} & set(graph.clusters)
    return None if frames - holding - graph.redrawn_frames else touched


def _path(node_id: str, graph: DiffGraph) -> list[str]:
    """The frames holding ``node_id`` in the union, innermost first."""
    out = []
    cid = graph.cluster_of.get(node_id)
    while cid is not None and cid in graph.clusters:
        out.append(cid)
        cid = graph.clusters[cid].parent
    return out


def _frame_statuses(comparison: Comparison) -> dict[str, str]:
    """Each frame's status by union id: added, removed, changed or unchanged."""
    out = {cid: UNCHANGED for cid in comparison.new.clusters}
    out |= {comparison.cluster_union_id(cid): REMOVED for cid in comparison.clusters_removed}
    out |= {cid: ADDED for cid in comparison.clusters_added}
    out |= {change.id: CHANGED for change in comparison.clusters_changed}
    return out
