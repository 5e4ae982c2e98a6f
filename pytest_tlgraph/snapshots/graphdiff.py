"""The structural diff drawing: the union of a stored and a received graph as one picture.

:func:`graph_diff` reads two canonical DOT texts (a stored ``.gv`` and the received
drawing, or any two snapshots) and draws every node, edge and cluster of either side:
added ones green, removed ones red and dashed, nodes whose label rows changed amber
with the changed rows as ``- old`` / ``+ new`` (and a box, fold or segment whose content
signature changed amber too, with an ``inside: relu -> gelu (2 ops)`` row), everything
else grey. Fills, sizes and
the key are not compared: a node recoloured because the colour domain moved is not a
structural change (the failure report names the rescale in one line instead).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, TypeVar

from pytest_tlgraph.draw import style
from pytest_tlgraph.draw.collapse.signature import SIGNATURE_ATTR
from pytest_tlgraph.draw.dot import DotGraph, NodeStatement, emit, html_escape
from pytest_tlgraph.draw.plan import Cluster
from pytest_tlgraph.snapshots.graphdata import DotParseError, label_rows
from pytest_tlgraph.snapshots.gvparse import ParsedGraph, parse_gv
from pytest_tlgraph.snapshots.inside import signature_changes
from pytest_tlgraph.snapshots.pairing import pair_nodes

if TYPE_CHECKING:
    from pytest_tlgraph.draw import Drawing

__all__ = ["ADDED", "CHANGED", "REMOVED", "UNCHANGED", "DiffStyle", "graph_diff"]

_T = TypeVar("_T")

ADDED: Final = "added"
REMOVED: Final = "removed"
CHANGED: Final = "changed"
UNCHANGED: Final = "unchanged"


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
        UNCHANGED: DiffStyle("#F6F8FA", "#AEB6BF", "#57606A"),
    }
)
_OLD_ROW: Final = "#A40E26"
_NEW_ROW: Final = "#116329"
_LEGEND: Final = ((ADDED, "added"), (REMOVED, "removed"), (CHANGED, "rows changed"))


@dataclass(frozen=True, slots=True)
class _Side:
    """One side's nodes (id -> rows, in drawing order), node clusters, edges, clusters."""

    rows: dict[str, tuple[str, ...]]
    cluster_of: dict[str, str | None]
    edges: list[tuple[str, str]]
    clusters: dict[str, Cluster]
    titles: dict[str, str]
    rankdir: str
    #: The content signature of each box, fold and segment (its ``comment``).
    signatures: dict[str, object]
    #: The content signature of each repeat-fold cluster, by cluster id.
    cluster_signatures: dict[str, object]


def _side(text: str, which: str) -> _Side:
    try:
        parsed: ParsedGraph = parse_gv(text)
    except DotParseError as error:
        raise DotParseError(f"{which} DOT: {error}") from None
    graph = parsed.graph
    rows: dict[str, tuple[str, ...]] = {}
    cluster_of: dict[str, str | None] = {}
    signatures: dict[str, object] = {}
    for node in graph.nodes:
        assert isinstance(node.attrs, Mapping)  # parse_gv keeps attributes as mappings
        label = str(node.attrs.get("label", ""))
        body = label[1:-1] if label.startswith("<") else html_escape(label)
        rows[node.id] = label_rows(body) or (node.id,)
        cluster_of[node.id] = node.cluster
        if SIGNATURE_ATTR in node.attrs:
            signatures[node.id] = node.attrs[SIGNATURE_ATTR]
    assert isinstance(graph.graph_attrs, Mapping)
    return _Side(
        rows=rows,
        cluster_of=cluster_of,
        edges=list(dict.fromkeys(graph.edges)),
        clusters={c.id: c for c in graph.clusters},
        titles=parsed.titles,
        rankdir=str(graph.graph_attrs.get("rankdir", "BT")),
        signatures=signatures,
        cluster_signatures={
            cid: attrs[SIGNATURE_ATTR]
            for cid, attrs in graph.cluster_attrs.items()
            if isinstance(attrs, Mapping) and SIGNATURE_ATTR in attrs
        },
    )


def _union(new: Sequence[_T], old: Sequence[_T]) -> list[_T]:
    """``new`` in order, each item only in ``old`` placed after its nearest old
    predecessor (at the front when it has none).

    Linear: each item only in ``old`` is filed under its predecessor, and the result is
    walked once, depth first, with a stack (no search of the list built so far, and no
    recursion however long a chain of old items is). Of two items filed under one
    predecessor the later one comes first, as inserting each right after it would do.
    """
    present = set(new)
    root = object()  # the predecessor of the first old item
    after: dict[object, list[_T]] = {}
    previous: object = root
    for item in old:
        if item not in present:
            after.setdefault(previous, []).append(item)
            present.add(item)
        previous = item
    if not after:
        return list(new)
    out: list[_T] = []
    stack: list[_T] = [*reversed(new), *after.get(root, ())]
    while stack:
        item = stack.pop()
        out.append(item)
        stack.extend(after.get(item, ()))
    return out


def _renumbered(old: _Side, new: _Side) -> _Side:
    """``old`` with each node renamed to the new node it is (:func:`.pairing.pair_nodes`),
    so the two pair; an old node that pairs with no new node but whose id a new node
    now has gets an id of its own, so it shows as removed."""
    pairing = pair_nodes(old.rows, old.cluster_of, new.rows, new.cluster_of)
    if not pairing:
        return old
    return _Side(
        rows=pairing.rows(old.rows),
        cluster_of={pairing.id(k): v for k, v in old.cluster_of.items()},
        edges=pairing.edges(old.edges),
        clusters=old.clusters,
        titles=old.titles,
        rankdir=old.rankdir,
        signatures={pairing.id(k): v for k, v in old.signatures.items()},
        cluster_signatures=old.cluster_signatures,
    )


def _row_diff(old: Sequence[str], new: Sequence[str]) -> list[tuple[str, str]]:
    """``(mark, text)`` per shown row: ``""`` unchanged, ``"-"`` old, ``"+"`` new."""
    out: list[tuple[str, str]] = []
    matcher = difflib.SequenceMatcher(a=list(old), b=list(new), autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            out.extend(("", text) for text in old[a0:a1])
        else:
            out.extend(("-", text) for text in old[a0:a1])
            out.extend(("+", text) for text in new[b0:b1])
    return out


def _label(status: str, rows: Sequence[tuple[str, str]]) -> str:
    parts = []
    for i, (mark, text) in enumerate(rows):
        shown = html_escape(f"{mark} {text}" if mark else text)
        if i == 0:
            shown = f"<B>{shown}</B>"
        if mark:
            colour = _OLD_ROW if mark == "-" else _NEW_ROW
            shown = f'<FONT COLOR="{colour}">{shown}</FONT>'
        parts.append(shown)
    if status in (ADDED, REMOVED):
        parts[0] = f"<B>{'+' if status == ADDED else '-'} {html_escape(rows[0][1])}</B>"
    return "<" + "<BR/>".join(parts) + ">"


def _node_attrs(status: str, label: str) -> dict[str, Any]:
    look = STYLES[status]
    return {
        "label": label,
        "style": "rounded,filled,dashed" if look.dashed else "rounded,filled",
        "fillcolor": look.fill,
        "color": look.line,
        "fontcolor": look.text,
        "penwidth": "1" if status == UNCHANGED else "2",
    }


def _caption(counts: Mapping[str, int]) -> str:
    """The title and a legend with one swatch per status and its count."""
    cells = []
    for status, word in (*_LEGEND, (UNCHANGED, "unchanged")):
        look = STYLES[status]
        cells.append(
            f'<TD BGCOLOR="{look.fill}" COLOR="{look.line}" BORDER="1" WIDTH="14"> </TD>'
            f'<TD ALIGN="LEFT">{word}: {counts[status]}</TD>'
        )
    return (
        '<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="3" CELLPADDING="2">'
        f'<TR><TD COLSPAN="{2 * len(cells)}"><B>structural diff: snapshot -&gt; received'
        f"</B></TD></TR><TR>{''.join(cells)}</TR></TABLE>>"
    )


def graph_diff(old_dot: str, new_dot: str) -> Drawing:
    """Draw the structural diff of two canonical tlgraph DOT texts (old = the stored
    snapshot, new = the received drawing) as one ``Drawing``.

    The result's ``nodes`` hold every node of either side with its diff status as
    ``kind`` (``added``, ``removed``, ``changed``, ``unchanged``) and its shown rows
    (changed rows as ``- old`` / ``+ new``); ``edges`` and ``clusters`` are the unions;
    ``state`` is ``None``. Raises ``DotParseError`` (a ``ValueError``) naming the side
    and line of a text that is not a tlgraph drawing.
    """
    from pytest_tlgraph.draw import Drawing, Node

    new = _side(new_dot, "new")
    old = _renumbered(_side(old_dot, "old"), new)
    order = _union(list(new.rows), list(old.rows))
    inside = signature_changes(old.signatures, new.signatures)
    statuses: dict[str, str] = {}
    shown: dict[str, list[tuple[str, str]]] = {}
    for node_id in order:
        before, after = old.rows.get(node_id), new.rows.get(node_id)
        if before is None or after is None:
            status = ADDED if before is None else REMOVED
            shown[node_id] = [("", text) for text in (after or before or ())]
        elif before == after and node_id not in inside:
            status = UNCHANGED
            shown[node_id] = [("", text) for text in after]
        else:
            status = CHANGED
            shown[node_id] = _row_diff(before, after)
            if node_id in inside:  # what its rows do not show: named in a row of its own
                shown[node_id].append(("", f"inside: {inside[node_id]}"))
        statuses[node_id] = status
    cluster_ids = _union(list(new.clusters), list(old.clusters))
    clusters = [new.clusters.get(cid) or old.clusters[cid] for cid in cluster_ids]
    statements = [
        NodeStatement(
            node_id,
            new.cluster_of[node_id] if node_id in new.rows else old.cluster_of[node_id],
            _node_attrs(statuses[node_id], _label(statuses[node_id], shown[node_id])),
        )
        for node_id in order
    ]
    edges = _union(new.edges, old.edges)
    new_edges, old_edges = set(new.edges), set(old.edges)
    edge_attrs: dict[tuple[str, str], dict[str, Any]] = {}
    for edge in edges:
        change = ADDED if edge not in old_edges else REMOVED if edge not in new_edges else None
        look = STYLES[change or UNCHANGED]
        attrs: dict[str, Any] = {"color": look.line}
        if change is not None:
            attrs["penwidth"] = "2"
            if look.dashed:
                attrs["style"] = "dashed"
        edge_attrs[edge] = attrs
    counts = {s: sum(1 for v in statuses.values() if v == s) for s in STYLES}
    direction = {v: k for k, v in style.RANKDIR.items()}.get(new.rankdir, "bottomup")
    graph = DotGraph(
        graph_attrs=style.graph_attrs("light", direction, _caption(counts)),
        node_defaults=style.node_defaults("light"),
        edge_defaults=style.edge_defaults("light"),
        nodes=statements,
        edges=edges,
        clusters=clusters,
        cluster_attrs={c.id: _cluster_attrs(c.id, old, new) for c in clusters},
        edge_attrs=edge_attrs,
    )
    nodes = {
        node_id: Node(
            statuses[node_id],
            tuple(f"{mark} {text}" if mark else text for mark, text in shown[node_id]),
            (),
            None,
        )
        for node_id in order
    }
    titles = tuple(_cluster_title(c.id, old, new) for c in clusters)
    return Drawing(
        dot=emit(graph), state=None, nodes=MappingProxyType(nodes), edges=tuple(edges),
        clusters=titles,
    )  # fmt: skip


def _cluster_title(cid: str, old: _Side, new: _Side) -> str:
    return new.titles.get(cid) or old.titles.get(cid, cid)


def _cluster_attrs(cid: str, old: _Side, new: _Side) -> dict[str, Any]:
    before, after = old.titles.get(cid), new.titles.get(cid)
    if before is None or after is None:
        status = ADDED if before is None else REMOVED
        text = f"{'+' if before is None else '-'} {after or before}"
    elif before != after:
        status, text = CHANGED, f"- {before}\n+ {after}"
    elif inside := signature_changes(old.cluster_signatures, new.cluster_signatures).get(cid):
        status, text = CHANGED, f"{after}\ninside: {inside}"
    else:
        status, text = UNCHANGED, after
    label = "<" + "<BR/>".join(html_escape(t) for t in text.split("\n")) + ">"
    attrs = style.cluster_attrs("light", label)
    look = STYLES[status]
    attrs["color"] = look.line
    if status != UNCHANGED:
        attrs["penwidth"] = "2"
        attrs["style"] = "rounded,dashed" if look.dashed else "rounded"
    return attrs


def graph_diff_png(old_dot: str, new_dot: str, renderer: str) -> tuple[bytes | None, str | None]:
    """The structural diff rendered at the snapshot dpi, or ``None`` and the one-line
    reason it could not be drawn (a damaged stored file, a renderer failure, a drawing
    over the size guard's limits, estimated before rendering or read from the rendered
    image): a failure report never fails on its own picture."""
    from pytest_tlgraph.errors import TlgraphError

    try:
        return graph_diff(old_dot, new_dot).png(96, renderer=renderer), None
    except (DotParseError, TlgraphError) as error:
        return None, f"structural diff drawing not made: {str(error).splitlines()[0]}"
