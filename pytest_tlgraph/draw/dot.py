"""Canonical DOT emission: the only module that knows DOT syntax.

Canonical means: nodes in plan order, then edges in plan order, then clusters
outermost first, then extra statements; attributes in one fixed order; every
identifier quoted; every label an HTML-like label with its text escaped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from pytest_tlgraph.controls import visible
from pytest_tlgraph.draw.plan import Cluster

__all__ = [
    "DotGraph",
    "NodeStatement",
    "emit",
    "html_escape",
    "html_label",
    "plain_node_attrs",
    "quote",
]

_ATTR_ORDER: Final = (
    "label", "shape", "style", "fillcolor", "color", "fontcolor", "fontname", "fontsize",
    "penwidth", "width", "height", "fixedsize", "margin", "pos", "rank", "group", "tooltip",
)  # fmt: skip
_RANK: Final = {name: i for i, name in enumerate(_ATTR_ORDER)}
_HTML_ESCAPES: Final = str.maketrans(
    {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;", "\n": " ", "\r": " "}
)


def quote(identifier: str) -> str:
    """A DOT quoted string: always quoted, so no identifier can read as a keyword or port.

    Control characters (NUL, ESC, line breaks, lone surrogates) are written as their
    visible escapes (``\\x01``), after backslashes are doubled, so the text stays one
    valid line and two different identifiers stay different.
    """
    if "\\" in identifier or '"' in identifier:
        identifier = identifier.replace("\\", "\\\\").replace('"', '\\"')
    elif identifier.isprintable():  # the usual identifier: nothing to escape
        return f'"{identifier}"'
    return f'"{visible(identifier)}"'


def _special(text: str) -> bool:
    """Whether ``text`` holds a character that HTML-like labels escape (seven substring
    scans in C: several times faster than one regular-expression scan)."""
    return (
        "&" in text
        or "<" in text
        or ">" in text
        or '"' in text
        or "'" in text
        or "\n" in text
        or "\r" in text
        or not text.isprintable()
    )


def html_escape(text: str) -> str:
    """Escape user text for an HTML-like label (the single escaping choke point)."""
    # Most rows hold nothing to escape: a scan instead of a per-character mapping.
    if not _special(text):
        return text
    return visible(text.translate(_HTML_ESCAPES))


def html_label(rows: Sequence[str], bold_rows: Iterable[int] = ()) -> str:
    """``<<B>title</B><BR/>row>``: rows joined by line breaks, chosen rows bold."""
    # Nothing to escape in any row is the usual case: one scan for the whole label.
    special = _special("".join(rows))
    title_bold = isinstance(bold_rows, (list, tuple)) and len(bold_rows) == 1 and bold_rows[0] == 0
    if title_bold and rows and not special:  # the usual label, written at once
        body = "<BR/>".join(rows)  # starts with the title
        return f"<<B>{rows[0]}</B>{body[len(rows[0]) :]}>"
    parts = [html_escape(text) for text in rows] if special else list(rows)
    if title_bold:
        if parts:
            parts[0] = f"<B>{parts[0]}</B>"
    else:
        for i in set(bold_rows).intersection(range(len(parts))):  # only indices of rows
            parts[i] = f"<B>{parts[i]}</B>"
    return "<" + "<BR/>".join(parts) + ">"


def _value(name: str, value: Any) -> str:
    if name == "label" and isinstance(value, str) and value.startswith("<"):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return quote(f"{value:.3f}")
    return quote(str(value))


# Canonical order of each attribute-name set seen so far: nodes share a handful of sets.
_orders: dict[tuple[str, ...], tuple[str, ...]] = {}


def _order(names: tuple[str, ...]) -> tuple[str, ...]:
    order = _orders.get(names)
    if order is None:
        order = tuple(sorted(names, key=lambda n: (_RANK.get(n, len(_RANK)), n)))
        if len(_orders) < 1024:
            _orders[names] = order
    return order


def attr_list(attrs: Mapping[str, Any]) -> str:
    """``[a="1", b="2"]`` in the canonical attribute order (unknown names sorted last).

    An attribute set to ``None`` is left out, as if it had not been set.
    """
    parts = []
    for name in _order(tuple(attrs)):
        value = attrs[name]
        if value is None:
            continue
        # The common cases spelled out (same bytes as _value): plain strings and labels.
        if type(value) is str:
            if name == "label" and value.startswith("<"):
                parts.append(f"{name}={value}")
            elif "\\" in value or '"' in value or not value.isprintable():
                parts.append(f"{name}={quote(value)}")
            else:
                parts.append(f'{name}="{value}"')
        else:
            parts.append(f"{name}={_value(name, value)}")
    return "[" + ", ".join(parts) + "]"


def plain_node_attrs(label: str, fillcolor: str) -> str:
    """``attr_list({"label": label, "fillcolor": fillcolor})``, written at once: the
    attributes of every node of a plain draw (``label`` an HTML-like label)."""
    plain = "\\" not in fillcolor and '"' not in fillcolor and fillcolor.isprintable()
    if label.startswith("<") and plain:
        return f'[label={label}, fillcolor="{fillcolor}"]'
    return attr_list({"label": label, "fillcolor": fillcolor})


@dataclass(frozen=True, slots=True)
class NodeStatement:
    """One node: its id, its cluster (or ``None``) and its DOT attributes, as a mapping
    or as an attribute list already written (:func:`attr_list`, :func:`plain_node_attrs`)."""

    id: str
    cluster: str | None
    attrs: Mapping[str, Any] | str


@dataclass(frozen=True, slots=True)
class DotGraph:
    """Everything ``emit`` writes, already decided by the earlier stages."""

    #: The graph attributes: a mapping, or an attribute list already written.
    graph_attrs: Mapping[str, Any] | str
    #: The node and edge defaults: mappings, or attribute lists already written.
    node_defaults: Mapping[str, Any] | str
    edge_defaults: Mapping[str, Any] | str
    nodes: Sequence[NodeStatement]
    edges: Sequence[tuple[str, str]]
    clusters: Sequence[Cluster]
    #: Each cluster's attributes: a mapping, or an attribute list already written.
    cluster_attrs: Mapping[str, Mapping[str, Any] | str]
    rank_groups: Sequence[Sequence[str]] = field(default=())
    extra_nodes: Sequence[NodeStatement] = field(default=())
    #: Attributes of single edges (argument positions, the structural diff's colours,
    #: ``constraint="false"`` between the columns of a timestep diagram).
    edge_attrs: Mapping[tuple[str, str], Mapping[str, Any]] = field(default_factory=dict)
    #: Invisible edges that only order nodes of one rank left to right (never data).
    order_edges: Sequence[tuple[str, str]] = field(default=())
    #: ``(rank, node id)`` pins written last, e.g. ``("max", key)``: the key on the top
    #: rank of a bottom-up drawing.
    rank_pins: Sequence[tuple[str, str]] = field(default=())


def _written(attrs: Mapping[str, Any] | str) -> str:
    """An attribute list: ``attrs`` as is when already written, else :func:`attr_list`."""
    return attrs if isinstance(attrs, str) else attr_list(attrs)


def _write_clusters(
    lines: list[str],
    roots: Sequence[Cluster],
    cluster_attrs: Mapping[str, Mapping[str, Any] | str],
    members: Mapping[str | None, list[str]],
    children: Mapping[str | None, list[Cluster]],
    quoted: Mapping[str, str],
) -> None:
    """Append each of ``roots``' subgraphs: its member nodes, then its child clusters,
    then its closing brace.

    A loop over an explicit stack, not a function calling itself: clusters nested as
    deep as a stored file says (a damaged or hostile ``.gv`` read back for the
    structural diff) never reach the interpreter's recursion limit.
    """
    # A work item is a cluster to open, or the closing line of one already open.
    stack: list[tuple[Cluster, str] | str] = [(c, "  ") for c in reversed(roots)]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            lines.append(item)
            continue
        cluster, indent = item
        lines.append(f"{indent}subgraph {quote(cluster.id)} {{")
        lines.append(f"{indent}  graph {_written(cluster_attrs[cluster.id])};")
        for node_id in members.get(cluster.id, ()):
            lines.append(f"{indent}  {quoted[node_id]};")
        stack.append(f"{indent}}}")
        inner = indent + "  "
        stack.extend((child, inner) for child in reversed(children.get(cluster.id, ())))


def emit(graph: DotGraph) -> str:
    """The canonical DOT text of ``graph``."""
    lines = ["digraph tlgraph {"]
    lines.append(f"  graph {_written(graph.graph_attrs)};")
    lines.append(f"  node {_written(graph.node_defaults)};")
    lines.append(f"  edge {_written(graph.edge_defaults)};")
    # Every node id is written again in edges and clusters: quote each one once.
    quoted: dict[str, str] = {}
    members: dict[str | None, list[str]] = {}
    for node in graph.nodes:
        node_id = node.id
        quoted[node_id] = name = quote(node_id)
        lines.append(f"  {name} {_written(node.attrs)};")
        members.setdefault(node.cluster, []).append(node_id)
    for source, target in graph.edges:
        lines.append(
            f"  {quoted.get(source) or quote(source)} -> {quoted.get(target) or quote(target)};"
        )
    if graph.edge_attrs:
        for number, edge in enumerate(graph.edges, start=len(lines) - len(graph.edges)):
            edge_attrs = graph.edge_attrs.get(edge)
            if edge_attrs:
                lines[number] = f"{lines[number][:-1]} {attr_list(edge_attrs)};"
    children: dict[str | None, list[Cluster]] = {}
    for cluster in graph.clusters:
        children.setdefault(cluster.parent, []).append(cluster)

    _write_clusters(lines, children.get(None, ()), graph.cluster_attrs, members, children, quoted)
    for group in graph.rank_groups:
        lines.append("  { rank=same; " + " ".join(f"{quote(n)};" for n in group) + " }")
    for source, target in graph.order_edges:
        lines.append(f'  {quote(source)} -> {quote(target)} [style="invis"];')
    for node in graph.extra_nodes:
        lines.append(f"  {quote(node.id)} {_written(node.attrs)};")
    for rank, node_id in graph.rank_pins:
        lines.append(f"  {{ rank={rank}; {quote(node_id)}; }}")
    lines.append("}")
    return "\n".join(lines) + "\n"
