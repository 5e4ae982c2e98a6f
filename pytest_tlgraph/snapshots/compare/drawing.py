"""The structural diff drawing: a :class:`~.comparison.Comparison` as one picture.

Every node and edge of either side, as the comparison paired them: added ones green,
removed ones red and dashed, replaced ones violet (``- relu_1`` / ``+ silu_1``),
nodes whose rows or hidden content changed amber with the changed rows as ``- old`` /
``+ new`` (and an ``inside: relu -> gelu (2 ops)`` row), everything else grey. Fills,
sizes and the key are not compared: a node recoloured because the colour domain moved
is not a structural change (the report names the rescale in one line instead).

By default the drawing shows the context of the changes only (:mod:`.context`): the
changed nodes and the nodes a few hops around them, each run of other unchanged nodes
one grey ``23 unchanged`` node, and no frame that holds none of them, so one change in
a large model stays readable. ``context=None`` draws the whole union (the results
folder keeps it as ``<stem>-graphdiff-full.png``).
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

from pytest_tlgraph.diff.dotparse import DotParseError
from pytest_tlgraph.diff.graph import GraphCluster
from pytest_tlgraph.draw import style
from pytest_tlgraph.draw.dot import DotGraph, NodeStatement, emit, html_escape
from pytest_tlgraph.draw.plan import Cluster, wrap_row
from pytest_tlgraph.snapshots.compare.comparison import (
    ClusterChange,
    Comparison,
    compare,
    union_order,
)
from pytest_tlgraph.snapshots.compare.context import CONTEXT_HOPS, context_view, run_label

if TYPE_CHECKING:
    from pytest_tlgraph.draw import Drawing

__all__ = [
    "ADDED",
    "CHANGED",
    "REMOVED",
    "REPLACED",
    "STYLES",
    "UNCHANGED",
    "DiffStyle",
    "draw_comparison",
    "graph_diff",
    "graph_diff_layout",
    "graph_diff_png",
]

ADDED: Final = "added"
REMOVED: Final = "removed"
CHANGED: Final = "changed"
REPLACED: Final = "replaced"
UNCHANGED: Final = "unchanged"
#: The grey node standing for a run of unchanged nodes in a context drawing.
RUN: Final = "run"


@dataclass(frozen=True, slots=True)
class DiffStyle:
    """How one diff status is drawn (text on every fill has at least 4.5:1 contrast)."""

    fill: str
    line: str
    text: str
    dashed: bool = False


STYLES: Final = MappingProxyType(
    {
        ADDED: DiffStyle("#D3F5DB", "#1A7F37", "#1A1A1A"),
        REMOVED: DiffStyle("#FFE1DF", "#CF222E", "#1A1A1A", dashed=True),
        CHANGED: DiffStyle("#FFEDB5", "#B07800", "#1A1A1A"),
        REPLACED: DiffStyle("#EBE1FB", "#6F42C1", "#1A1A1A"),
        UNCHANGED: DiffStyle("#F6F8FA", "#AEB6BF", "#57606A"),
    }
)
_RUN_STYLE: Final = DiffStyle("#FFFFFF", "#AEB6BF", "#57606A", dashed=True)
_OLD_ROW: Final = "#A40E26"
_NEW_ROW: Final = "#116329"
_LEGEND: Final = (
    (ADDED, "added"), (REMOVED, "removed"), (REPLACED, "replaced"), (CHANGED, "changed"),
    (UNCHANGED, "unchanged"),
)  # fmt: skip


def _row_diff(old: Sequence[str], new: Sequence[str]) -> list[tuple[str, str]]:
    """``(mark, text)`` per shown row: ``""`` unchanged, ``"-"`` old, ``"+"`` new."""
    out: list[tuple[str, str]] = []
    matcher = difflib.SequenceMatcher(a=list(old), b=list(new), autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            out.extend(("", text) for text in old[a0:a1])
        elif tag == "replace" and a1 - a0 == b1 - b0:  # row for row: each - over its +
            for was, now in zip(old[a0:a1], new[b0:b1], strict=True):
                out += [("-", was), ("+", now)]
        else:
            out.extend(("-", text) for text in old[a0:a1])
            out.extend(("+", text) for text in new[b0:b1])
    return out


def _label(status: str, rows: Sequence[tuple[str, str]]) -> str:
    parts = []
    for i, (mark, text) in enumerate(rows):
        shown = html_escape(f"{mark} {text}" if mark else text)
        if i == 0 or (status == REPLACED and i == 1 and mark == "+"):
            shown = f"<B>{shown}</B>"
        if mark:
            colour = _OLD_ROW if mark == "-" else _NEW_ROW
            shown = f'<FONT COLOR="{colour}">{shown}</FONT>'
        parts.append(shown)
    if status in (ADDED, REMOVED):
        parts[0] = f"<B>{'+' if status == ADDED else '-'} {html_escape(rows[0][1])}</B>"
    return "<" + "<BR/>".join(parts) + ">"


def _node_attrs(look: DiffStyle, label: str, *, bold: bool) -> dict[str, Any]:
    return {
        "label": label,
        "style": "rounded,filled,dashed" if look.dashed else "rounded,filled",
        "fillcolor": look.fill,
        "color": look.line,
        "fontcolor": look.text,
        "penwidth": "2" if bold else "1",
    }


def _caption(counts: Mapping[str, int], note: str | None) -> str:
    """The title and a legend with one swatch per status and its count."""
    cells = []
    for status, word in _LEGEND:
        look = STYLES[status]
        cells.append(
            f'<TD BGCOLOR="{look.fill}" COLOR="{look.line}" BORDER="1" WIDTH="14"> </TD>'
            f'<TD ALIGN="LEFT">{word}: {counts.get(status, 0)}</TD>'
        )
    extra = (
        "" if note is None else f'<TR><TD COLSPAN="{2 * len(cells)}">{html_escape(note)}</TD></TR>'
    )
    return (
        '<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="3" CELLPADDING="2">'
        f'<TR><TD COLSPAN="{2 * len(cells)}"><B>structural diff: snapshot -&gt; received'
        f"</B></TD></TR><TR>{''.join(cells)}</TR>{extra}</TABLE>>"
    )


def _path(
    node_id: str, cluster_of: Mapping[str, str | None], clusters: Mapping[str, Cluster]
) -> list[str]:
    """The clusters holding ``node_id`` in the union, innermost first."""
    out = []
    cid = cluster_of.get(node_id)
    while cid is not None and cid in clusters:
        out.append(cid)
        cid = clusters[cid].parent
    return out


def _shown_rows(
    comparison: Comparison, removed: Mapping[str, str], status: str, node_id: str
) -> list[tuple[str, str]]:
    """The rows a node shows in the diff: its own, or ``- old`` / ``+ new`` rows."""
    new, old = comparison.new, comparison.old
    if status == REMOVED:
        return [("", text) for text in old.nodes[removed[node_id]].rows]
    after = new.nodes[node_id]
    if status in (ADDED, UNCHANGED):
        return [("", text) for text in after.rows]
    if node_id in comparison.split_of:  # a part of a fold that now stands apart
        what = comparison.split_of[node_id]
        return [("", text) for text in after.rows] + [
            ("", line) for line in (wrap_row(what) if what else ())
        ]
    change = comparison.changed.get(node_id)
    before = old.nodes[comparison.pairing.reverse[node_id]]
    title_changed = status == REPLACED or (change is not None and change.title is not None)
    old_rows = before.rows if title_changed else (after.title, *before.body)
    shown = _row_diff(old_rows, after.rows)
    if change is not None and change.inside is not None:
        # Wrapped like any long row: a box stays as wide as its own rows make it.
        shown += [("", line) for line in wrap_row(f"inside: {change.inside}")]
    return shown


def _cluster_status(comparison: Comparison) -> dict[str, str]:
    out = {cid: UNCHANGED for cid in comparison.new.clusters}
    out |= {comparison.cluster_union_id(cid): REMOVED for cid in comparison.clusters_removed}
    out |= {cid: ADDED for cid in comparison.clusters_added}
    out |= {change.id: CHANGED for change in comparison.clusters_changed}
    return out


def _old_clusters(comparison: Comparison) -> dict[str, GraphCluster]:
    """The stored side's frames by their union ids."""
    return {comparison.cluster_union_id(c): v for c, v in comparison.old.clusters.items()}


def _cluster_attrs(
    comparison: Comparison,
    cid: str,
    status: str,
    change: ClusterChange | None,
    old_by_union: Mapping[str, GraphCluster],
) -> dict[str, Any]:
    new, old = comparison.new.clusters.get(cid), old_by_union.get(cid)
    if status in (ADDED, REMOVED):
        cluster = new or old
        assert cluster is not None
        text = f"{'+' if status == ADDED else '-'} {cluster.title}"
    elif change is not None:
        text = (
            f"- {change.old_title}\n+ {change.new_title}"
            if change.old_title != change.new_title
            else change.new_title
        )
        if change.inside is not None:
            text += f"\ninside: {change.inside}"
    else:
        # A frame one side draws around a module both sides have: unchanged.
        unchanged = new or old
        assert unchanged is not None
        text = unchanged.title
    label = "<" + "<BR/>".join(html_escape(t) for t in text.split("\n")) + ">"
    attrs = style.cluster_attrs("light", label)
    look = STYLES[status]
    attrs["color"] = look.line
    if status != UNCHANGED:
        attrs["penwidth"] = "2"
        attrs["style"] = "rounded,dashed" if look.dashed else "rounded"
    return attrs


def _edge_numbers(comparison: Comparison) -> dict[tuple[str, str], str]:
    """The argument position of each numbered in-edge, by its union ids: the received
    side's numbers, the stored side's for edges only it has."""
    out: dict[tuple[str, str], str] = {}
    union = comparison.union_id
    for head, tails in comparison.old.positions.items():
        for tail, number in tails.items():
            out[(union(tail), union(head))] = str(number)
    for head, tails in comparison.new.positions.items():
        for tail, number in tails.items():
            out[(tail, head)] = str(number)
    return out


def draw_comparison(comparison: Comparison, *, context: int | None = CONTEXT_HOPS) -> Drawing:
    """Draw ``comparison`` (see the module docstring); ``context`` hops around each
    change, or the whole union when ``None``.

    The result's ``nodes`` hold every drawn node with its diff status as ``kind``
    (``added``, ``removed``, ``replaced``, ``changed``, ``unchanged``, or ``run`` for a
    run of unchanged nodes) and its shown rows; ``edges`` and ``clusters`` are what is
    drawn; ``state`` is ``None``.
    """
    from pytest_tlgraph.draw import Drawing, Node

    new, old = comparison.new, comparison.old
    statuses = comparison.node_statuses
    order = list(statuses)
    removed = {comparison.union_id(n): n for n in comparison.removed}
    node_of = {**{u: old.nodes[s] for u, s in removed.items()}, **new.nodes}
    cluster_union = comparison.cluster_union_id
    cluster_of = {n: node.cluster for n, node in new.nodes.items()}
    for union_id, old_id in removed.items():
        cluster = old.nodes[old_id].cluster
        cluster_of[union_id] = None if cluster is None else cluster_union(cluster)
    new_clusters = {c.id: c for c in new.parsed.graph.clusters}
    # The stored side's frames by their union ids (a frame that moved is its module's).
    old_clusters = {
        cluster_union(c.id): dataclasses.replace(
            c,
            id=cluster_union(c.id),
            parent=None if c.parent is None else cluster_union(c.parent),
        )
        for c in old.parsed.graph.clusters
    }
    cluster_ids = union_order(list(new_clusters), list(old_clusters))
    clusters: dict[str, Cluster] = {
        cid: new_clusters.get(cid) or old_clusters[cid] for cid in cluster_ids
    }
    edges = list(dict.fromkeys([*new.edges, *comparison.edges_removed]))
    added_edges, removed_edges = set(comparison.edges_added), set(comparison.edges_removed)
    edge_status = {
        e: ADDED if e in added_edges else REMOVED if e in removed_edges else UNCHANGED
        for e in edges
    }
    counts = {s: sum(1 for v in statuses.values() if v == s) for s in STYLES}
    kept, runs, drawn_edges, drawn_clusters = order, [], edges, list(clusters)
    note = None
    touched: set[str] = set()
    if context is not None:
        touched = {n for n, s in statuses.items() if s != UNCHANGED}
        for (a, b), status in edge_status.items():
            if status != UNCHANGED:
                touched.update((a, b))
        # A frame whose title or hidden content changed is drawn with what it holds.
        framed = {c.id for c in comparison.clusters_changed}
        touched.update(n for n, cid in cluster_of.items() if cid in framed)
        # A frame added or removed around unchanged nodes only: the whole union shows it.
        holding = {c for n in touched for c in _path(n, cluster_of, clusters)}
        frames = {*comparison.clusters_added, *comparison.clusters_removed}
        if frames - holding:
            context = None
    if context is not None:
        anchors = [n for n in order if node_of[n].kind in ("input", "output")]
        view = context_view(
            order,
            edges,
            cluster_of,
            {cid: c.parent for cid, c in clusters.items()},
            touched,
            hops=context,
            anchors=anchors,
        )
        if view.runs:
            kept, runs = list(view.kept), list(view.runs)
            drawn_edges, drawn_clusters = list(view.edges), list(view.clusters)
            hidden = sum(len(r.members) for r in runs)
            note = (
                f"{hidden} unchanged nodes drawn as {len(runs)} grey "
                f"run{'s' * (len(runs) != 1)} (the whole graph: -graphdiff-full.png, "
                "tlgraph diff --full)"
            )
    shown = {n: _shown_rows(comparison, removed, statuses[n], n) for n in kept}
    statements = [
        NodeStatement(
            n,
            cluster_of[n],
            _node_attrs(
                STYLES[statuses[n]], _label(statuses[n], shown[n]), bold=statuses[n] != UNCHANGED
            ),
        )
        for n in kept
    ]
    titles = {n: node_of[n].title for n in order}
    for run in runs:
        text = run_label(run, titles)
        label = "<" + "<BR/>".join(html_escape(t) for t in text.split("\n")) + ">"
        statements.append(
            NodeStatement(run.id, run.cluster, _node_attrs(_RUN_STYLE, label, bold=False))
        )
    edge_attrs: dict[tuple[str, str], dict[str, Any]] = {}
    positions = _edge_numbers(comparison)
    for edge in drawn_edges:
        status = edge_status.get(edge, UNCHANGED)
        look = STYLES[status]
        attrs: dict[str, Any] = {"color": look.line}
        number = positions.get(edge)
        if number is not None:  # the input's argument position, as the drawing numbers it
            attrs.update(label=number, fontname=style.FONT, fontsize="9")
        if status != UNCHANGED:
            attrs["penwidth"] = "2"
            if look.dashed:
                attrs["style"] = "dashed"
        edge_attrs[edge] = attrs
    cluster_status = _cluster_status(comparison)
    old_by_union = _old_clusters(comparison)  # once: each frame's attributes read it
    changes = {change.id: change for change in comparison.clusters_changed}
    drawn = [clusters[cid] for cid in drawn_clusters]
    direction = {v: k for k, v in style.RANKDIR.items()}.get(new.rankdir, "bottomup")
    graph = DotGraph(
        graph_attrs=style.graph_attrs("light", direction, _caption(counts, note)),
        node_defaults=style.node_defaults("light"),
        edge_defaults=style.edge_defaults("light"),
        nodes=statements,
        edges=drawn_edges,
        clusters=drawn,
        cluster_attrs={
            c.id: _cluster_attrs(
                comparison,
                c.id,
                cluster_status.get(c.id, UNCHANGED),
                changes.get(c.id),
                old_by_union,
            )
            for c in drawn
        },
        edge_attrs=edge_attrs,
    )
    nodes = {
        n: Node(statuses[n], tuple(f"{m} {t}" if m else t for m, t in shown[n]), (), None)
        for n in kept
    }
    for run in runs:
        nodes[run.id] = Node(RUN, tuple(run_label(run, titles).split("\n")), (), None)
    cluster_titles = tuple((new.clusters.get(c.id) or old_by_union[c.id]).title for c in drawn)
    return Drawing(
        dot=emit(graph), state=None, nodes=MappingProxyType(nodes), edges=tuple(drawn_edges),
        clusters=cluster_titles,
    )  # fmt: skip


def graph_diff(old_dot: str, new_dot: str, *, context: int | None = CONTEXT_HOPS) -> Drawing:
    """Draw the structural diff of two canonical tlgraph DOT texts (old = the stored
    snapshot, new = the received drawing) as one ``Drawing``: :func:`draw_comparison`
    of their :func:`~.comparison.compare`. Raises ``DotParseError`` (a ``ValueError``)
    naming the side and line of a text that is not a tlgraph drawing."""
    return draw_comparison(compare(old_dot, new_dot), context=context)


def graph_diff_png(
    comparison: Comparison, renderer: str, *, context: int | None = CONTEXT_HOPS
) -> tuple[bytes | None, str | None]:
    """The diff drawing rendered at the snapshot dpi, or ``None`` and the one-line
    reason it could not be drawn (a renderer failure, a drawing over the size guard's
    limits, estimated before rendering or read from the rendered image): a failure
    report never fails on its own picture."""
    png, why, _ = _graph_diff(comparison, renderer, context, layout=False)
    return png, why


def graph_diff_layout(
    comparison: Comparison, renderer: str, *, context: int | None = CONTEXT_HOPS
) -> tuple[bytes | None, str | None, str]:
    """:func:`graph_diff_png` and the drawing's Graphviz ``plain`` layout (``""``
    without a drawing): where each node of the PNG lies."""
    return _graph_diff(comparison, renderer, context, layout=True)


def _graph_diff(
    comparison: Comparison, renderer: str, context: int | None, *, layout: bool
) -> tuple[bytes | None, str | None, str]:
    from pytest_tlgraph.errors import TlgraphError

    old, new = comparison.old.schema, comparison.new.schema
    if old != new:  # nothing pairs across two schemas: a drawing would show a false diff
        return (
            None,
            "structural diff drawing not made: the stored drawing has "
            f"{'no schema (0.3)' if old is None else f'the {old} schema'}, the received "
            f"{'none' if new is None else f'the {new} schema'}",
            "",
        )
    try:
        drawing = draw_comparison(comparison, context=context)
        if not layout:
            return drawing.png(96, renderer=renderer), None, ""
        png, plain = drawing.png_layout(96, renderer=renderer)
        return png, None, plain
    except (DotParseError, TlgraphError) as error:
        return None, f"structural diff drawing not made: {str(error).splitlines()[0]}", ""
