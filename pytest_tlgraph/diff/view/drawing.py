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

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

from pytest_tlgraph.diff.dotparse import DotParseError
from pytest_tlgraph.diff.graph import GraphCluster
from pytest_tlgraph.diff.view.comparison import ClusterChange, Comparison, compare
from pytest_tlgraph.diff.view.context import CONTEXT_HOPS, run_label
from pytest_tlgraph.diff.view.diffgraph import (
    ADDED,
    CHANGED,
    REMOVED,
    REPLACED,
    UNCHANGED,
    DiffEdge,
    DiffGraph,
)
from pytest_tlgraph.diff.view.diffplan import RUN, DiffPlan, plan_diff
from pytest_tlgraph.draw import style
from pytest_tlgraph.draw.dot import DotGraph, NodeStatement, emit, html_escape
from pytest_tlgraph.draw.plan import wrap_row

if TYPE_CHECKING:
    from pytest_tlgraph.draw import Drawing

__all__ = [
    "ADDED",
    "CHANGED",
    "REMOVED",
    "REPLACED",
    "RUN",
    "STYLES",
    "UNCHANGED",
    "DiffStyle",
    "draw_comparison",
    "graph_diff",
    "graph_diff_layout",
    "graph_diff_png",
    "legend_text",
]


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
#: The story lines a node or frame shows (:mod:`.diffnotes`), marked ``»``.
_NOTE_ROW: Final = "#6B4400"
_NOTE: Final = "»"
#: An edge drawn between a run and what it touches: unchanged, unnumbered.
_PLAIN: Final = DiffEdge(UNCHANGED)
#: The legend's word for the grey runs.
_RUN_WORD: Final = "unchanged runs"
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
            colour = {"-": _OLD_ROW, "+": _NEW_ROW}.get(mark, _NOTE_ROW)
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


def _legend_cell(look: DiffStyle, text: str) -> str:
    """One legend entry: a swatch drawn as ``look`` and its text."""
    dashed = ' STYLE="DASHED"' if look.dashed else ""
    return (
        f'<TD BGCOLOR="{look.fill}" COLOR="{look.line}" BORDER="1" WIDTH="14"{dashed}> </TD>'
        f'<TD ALIGN="LEFT">{text}</TD>'
    )


def legend_text(word: str, nodes: int, frames: int) -> str:
    """A legend entry's text: ``changed: 3``, ``changed: 3 + 1 frame`` or, with no node
    of the status drawn, ``changed: 1 frame``."""
    if not frames:
        return f"{word}: {nodes}"
    framed = f"{frames} frame{'s' * (frames != 1)}"
    return f"{word}: {framed}" if not nodes else f"{word}: {nodes} + {framed}"


def _caption(plan: DiffPlan) -> str:
    """The title and a legend with one swatch per status and what is drawn of it (the
    grey runs' swatch when there are runs), then the runs' note."""
    nodes, frames = plan.node_counts(), plan.frame_counts()
    cells = [
        _legend_cell(STYLES[status], legend_text(word, nodes[status], frames[status]))
        for status, word in _LEGEND
    ]
    runs = len(plan.view.runs)
    if runs:
        cells.append(_legend_cell(_RUN_STYLE, f"{_RUN_WORD}: {runs}"))
    note = ""
    if runs:
        text = (
            f"{plan.hidden} unchanged nodes drawn as {runs} grey run{'s' * (runs != 1)} "
            "(the whole graph: -graphdiff-full.png, tlgraph diff --full)"
        )
        note = f'<TR><TD COLSPAN="{2 * len(cells)}">{html_escape(text)}</TD></TR>'
    return (
        '<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="3" CELLPADDING="2">'
        f'<TR><TD COLSPAN="{2 * len(cells)}"><B>structural diff: snapshot -&gt; received'
        f"</B></TD></TR><TR>{''.join(cells)}</TR>{note}</TABLE>>"
    )


def _shown_rows(comparison: Comparison, graph: DiffGraph, node_id: str) -> list[tuple[str, str]]:
    """The rows a node shows in the diff: its own, or ``- old`` / ``+ new`` rows."""
    status = graph.status[node_id]
    side_id, stored = graph.source[node_id]
    own = (comparison.old if stored else comparison.new).nodes[side_id]
    if status in (ADDED, REMOVED, UNCHANGED):
        # A box the view drew otherwise, a fold that kept fewer repetitions: said, grey.
        note = graph.redrawn.get(node_id) or (
            comparison.split_of.get(node_id) if status == UNCHANGED and not stored else None
        )
        return [("", text) for text in (*own.rows, *(wrap_row(note) if note else ()))]
    if node_id in comparison.split_of:  # a part of a fold that now stands apart
        what = comparison.split_of[node_id]
        return [("", text) for text in own.rows] + [
            ("", line) for line in (wrap_row(what) if what else ())
        ]
    change = comparison.changed.get(node_id)
    before = comparison.old.nodes[comparison.pairing.reverse[node_id]]
    title_changed = status == REPLACED or (change is not None and change.title is not None)
    old_rows = before.rows if title_changed else (own.title, *before.body)
    shown = _row_diff(old_rows, own.rows)
    if change is not None and change.inside is not None:
        # Wrapped like any long row: a box stays as wide as its own rows make it.
        shown += [("", line) for line in wrap_row(f"inside: {change.inside}")]
    return shown


def _with_notes(
    comparison: Comparison, plan: DiffPlan, node_id: str, notes: Sequence[str]
) -> list[tuple[str, str]]:
    """A drawn node's rows, with the story lines of the edits it holds in place of an
    ``inside:`` row, unless its rows show the change as ``- old`` / ``+ new`` already
    or it is added or removed."""
    shown = _shown_rows(comparison, plan.graph, node_id)
    if not notes or plan.graph.status[node_id] in (ADDED, REMOVED):
        return shown
    if any(mark for mark, _ in shown):
        return shown
    side_id, stored = plan.graph.source[node_id]
    own = (comparison.old if stored else comparison.new).nodes[side_id].rows
    return shown[: len(own)] + [(_NOTE, line) for note in notes for line in wrap_row(note)]


def _cluster_text(
    comparison: Comparison,
    cid: str,
    status: str,
    old_by_union: Mapping[str, GraphCluster],
    notes: Sequence[str] = (),
    changes: Mapping[str, ClusterChange] | None = None,
) -> str:
    """A drawn frame's caption: ``+ title``, ``- title``, or its title (``- old`` /
    ``+ new`` titles), then the story lines of the edits it holds, else an ``inside:``
    line when its content changed."""
    change = (changes or {}).get(cid)
    text = _frame_caption(comparison, cid, status, old_by_union, change, inside=not notes)
    if not notes or status in (ADDED, REMOVED):
        return text
    return "\n".join([text, *(f"{_NOTE} {line}" for n in notes for line in wrap_row(n))])


def _frame_caption(
    comparison: Comparison,
    cid: str,
    status: str,
    old_by_union: Mapping[str, GraphCluster],
    change: ClusterChange | None,
    *,
    inside: bool,
) -> str:
    """A drawn frame's caption without story lines (see :func:`_cluster_text`); its
    ``inside:`` line only when ``inside`` (the story lines tell it otherwise)."""
    new, old = comparison.new.clusters.get(cid), old_by_union.get(cid)
    if status in (ADDED, REMOVED):
        cluster = new or old
        assert cluster is not None
        return f"{'+' if status == ADDED else '-'} {cluster.title}"
    if change is None:  # a frame one side draws around a module both sides have
        unchanged = new or old
        assert unchanged is not None
        return unchanged.title
    text = (
        f"- {change.old_title}\n+ {change.new_title}"
        if change.old_title != change.new_title
        else change.new_title
    )
    return text if change.inside is None or not inside else f"{text}\ninside: {change.inside}"


def _cluster_attrs(text: str, status: str) -> dict[str, Any]:
    """A drawn frame's DOT attributes: its caption, outlined in its status's colour."""
    label = "<" + "<BR/>".join(html_escape(t) for t in text.split("\n")) + ">"
    attrs = style.cluster_attrs("light", label)
    look = STYLES[status]
    attrs["color"] = look.line
    if status != UNCHANGED:
        attrs["penwidth"] = "2"
        attrs["style"] = "rounded,dashed" if look.dashed else "rounded"
    return attrs


def _old_clusters(comparison: Comparison) -> dict[str, GraphCluster]:
    """The stored side's frames by their union ids."""
    return {comparison.cluster_union_id(c): v for c, v in comparison.old.clusters.items()}


def _edge_attrs(edge: DiffEdge) -> dict[str, Any]:
    """A drawn edge's DOT attributes: its status's colour and its argument number."""
    look = STYLES[edge.status]
    attrs: dict[str, Any] = {"color": look.line}
    if edge.number is not None:  # the input's argument position, as the drawing numbers it
        attrs.update(label=edge.number, fontname=style.FONT, fontsize="9")
    if edge.status != UNCHANGED:
        attrs["penwidth"] = "2"
        if look.dashed:
            attrs["style"] = "dashed"
    return attrs


def _run_rows(plan: DiffPlan, comparison: Comparison) -> dict[str, tuple[str, ...]]:
    """Each grey run's rows: ``23 unchanged`` and the span it stands for."""
    graph = plan.graph
    titles = {}
    for run in plan.view.runs:
        for node_id in (run.members[0], run.members[-1]):
            side_id, stored = graph.source[node_id]
            titles[node_id] = (comparison.old if stored else comparison.new).nodes[side_id].title
    return {run.id: tuple(run_label(run, titles).split("\n")) for run in plan.view.runs}


def _node_statements(
    plan: DiffPlan, shown: Mapping[str, list[tuple[str, str]]], runs: Mapping[str, tuple[str, ...]]
) -> list[NodeStatement]:
    """The DOT statement of each drawn node, then of each grey run."""
    status, cluster_of = plan.graph.status, plan.graph.cluster_of
    statements = [
        NodeStatement(n, cluster_of[n], _node_attrs(
            STYLES[status[n]], _label(status[n], shown[n]), bold=status[n] != UNCHANGED
        ))
        for n in plan.view.kept
    ]  # fmt: skip
    for run in plan.view.runs:
        label = "<" + "<BR/>".join(html_escape(t) for t in runs[run.id]) + ">"
        statements.append(
            NodeStatement(run.id, run.cluster, _node_attrs(_RUN_STYLE, label, bold=False))
        )
    return statements


def _dot(
    comparison: Comparison,
    plan: DiffPlan,
    statements: list[NodeStatement],
    notes: Mapping[str, Sequence[str]],
) -> str:
    """The diff drawing's DOT text."""
    edges = plan.graph.edges
    old_by_union = _old_clusters(comparison)  # once: each frame's caption reads it
    changes = {change.id: change for change in comparison.clusters_changed}
    drawn = [plan.graph.clusters[cid] for cid in plan.view.clusters]
    direction = {v: k for k, v in style.RANKDIR.items()}.get(comparison.new.rankdir, "bottomup")
    graph = DotGraph(
        graph_attrs=style.graph_attrs("light", direction, _caption(plan)),
        node_defaults=style.node_defaults("light"),
        edge_defaults=style.edge_defaults("light"),
        nodes=statements,
        edges=plan.view.edges,
        clusters=drawn,
        cluster_attrs={
            c.id: _cluster_attrs(
                _cluster_text(
                    comparison, c.id, plan.frames[c.id], old_by_union, notes.get(c.id, ()), changes
                ),
                plan.frames[c.id],
            )
            for c in drawn
        },
        edge_attrs={e: _edge_attrs(edges.get(e, _PLAIN)) for e in plan.view.edges},
    )
    return emit(graph)


def draw_comparison(comparison: Comparison, *, context: int | None = CONTEXT_HOPS) -> Drawing:
    """Draw ``comparison`` (see the module docstring); ``context`` hops around each
    change, or the whole union when ``None``.

    The result's ``nodes`` hold every drawn node with its diff status as ``kind``
    (``added``, ``removed``, ``replaced``, ``changed``, ``unchanged``, or ``run`` for a
    run of unchanged nodes) and its shown rows; ``edges`` and ``clusters`` are what is
    drawn; ``state`` is ``None``.
    """
    from pytest_tlgraph.draw import Drawing, Node

    plan = plan_diff(comparison, context)
    notes = plan.notes
    shown = {n: _with_notes(comparison, plan, n, notes.get(n, ())) for n in plan.view.kept}
    runs = _run_rows(plan, comparison)
    nodes = {
        n: Node(plan.graph.status[n], tuple(f"{m} {t}" if m else t for m, t in rows), (), None)
        for n, rows in shown.items()
    }
    nodes.update((run_id, Node(RUN, rows, (), None)) for run_id, rows in runs.items())
    old_by_union = _old_clusters(comparison)
    titles = tuple(
        (comparison.new.clusters.get(cid) or old_by_union[cid]).title for cid in plan.view.clusters
    )
    return Drawing(
        dot=_dot(comparison, plan, _node_statements(plan, shown, runs), notes), state=None,
        nodes=MappingProxyType(nodes), edges=plan.view.edges, clusters=titles,
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
