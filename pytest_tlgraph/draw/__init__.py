"""``Trace.draw``: the drawing stage's orchestrator.

It runs the pipeline plan -> labels -> encoding -> node styles -> DOT and is the one
place that chooses between the full-detail plan (:mod:`.plan`) and the boxed one
(:mod:`.collapse`), and between their label rows (:mod:`.labels`,
:mod:`.collapse.rows`): the stages themselves never import each other backwards.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, final

from pytest_tlgraph.collector import collector_paused
from pytest_tlgraph.draw import labels, style
from pytest_tlgraph.draw import plan as plain_plan
from pytest_tlgraph.draw.callrows import edge_positions
from pytest_tlgraph.draw.collapse import COLLAPSED_KINDS, build_collapsed_plan
from pytest_tlgraph.draw.collapse.rows import collapsed_rows
from pytest_tlgraph.draw.contrast import text_colour
from pytest_tlgraph.draw.dot import (
    DotGraph,
    NodeStatement,
    attr_list,
    emit,
    html_escape,
    html_label,
)
from pytest_tlgraph.draw.encoding.units import format_bytes
from pytest_tlgraph.draw.identity import cluster_records, node_records
from pytest_tlgraph.draw.labels import Row
from pytest_tlgraph.draw.plan import Plan, PlanNode
from pytest_tlgraph.draw.request import DrawRequest
from pytest_tlgraph.lazy import LazyMapping
from pytest_tlgraph.options import DrawOptions, NodeSpecFn
from pytest_tlgraph.schema import (
    NODE_ATTRS,
    SCHEMA_ATTR,
    SCHEMA_VERSION,
    ClusterRecord,
    NodeRecord,
    cluster_attrs,
    node_attrs,
)
from pytest_tlgraph.trace import Layer, Op, frozen_builder

if TYPE_CHECKING:
    from pytest_tlgraph.draw.encoding.channels import Encoding
    from pytest_tlgraph.draw.encoding.state import EncodingState
    from pytest_tlgraph.trace import Trace

__all__ = [
    "Drawing",
    "Node",
    "build_plan",
    "draw",
    "draw_request",
    "node_rows",
    "node_texts",
    "schema_records",
]


@final
@dataclass(frozen=True, slots=True)
class Node:
    """A drawn node as plain data: its kind, label rows, member ops and module."""

    kind: str
    rows: tuple[str, ...]
    members: tuple[str, ...]
    module: str | None


@final
@dataclass(frozen=True, slots=True)
class Drawing:
    """The result of ``Trace.draw``: canonical DOT, encoding state and the drawn graph."""

    dot: str
    state: EncodingState | None
    nodes: Mapping[str, Node]
    edges: tuple[tuple[str, str], ...]
    clusters: tuple[str, ...] = ()

    def png(self, dpi: int = 96, *, renderer: str | None = None) -> bytes:
        """Render the DOT to PNG with ``renderer`` (default: the configured one).

        ``dpi`` is a whole number from 1 to 600. A drawing whose estimated canvas is over
        200 megapixels or 32,767 px on a side is not rendered: ``RenderError`` says the
        estimated size and the remedy, before any renderer runs; nor is a rendered PNG
        over either limit returned (the estimate can read low)."""
        return self._rendered(dpi, renderer, layout=False)[0]

    def png_layout(self, dpi: int = 96, *, renderer: str | None = None) -> tuple[bytes, str]:
        """:meth:`png` and Graphviz's ``plain`` layout of the same drawing (where each
        node lies), under the same size guard."""
        return self._rendered(dpi, renderer, layout=True)

    def _rendered(self, dpi: int, renderer: str | None, *, layout: bool) -> tuple[bytes, str]:
        from pytest_tlgraph.draw.canvas import canvas_problem, check_dpi, png_problem
        from pytest_tlgraph.errors import RenderError
        from pytest_tlgraph.render import get_default_renderer, render_png, render_png_layout

        problem = canvas_problem(self, check_dpi(dpi))
        if problem is None:
            if layout:
                png, plain = render_png_layout(self.dot, renderer=renderer, dpi=dpi)
            else:
                png, plain = render_png(self.dot, renderer=renderer, dpi=dpi), ""
            problem = png_problem(png)  # the estimate read low: the image is refused still
            if problem is None:
                return png, plain
        raise RenderError(problem, renderer=renderer or get_default_renderer())


def caption(trace: Trace) -> str:
    """``MLP · 3 ops · 1.25 KB · 1,354 params``."""
    # One pass for the op count and the bytes of every op's tensor outputs.
    count = total = 0
    for op in trace.ops:
        if op.func != "input" and op.func != "output":
            count += 1
            total += op.activation_memory or 0
    return (
        f"{trace.model_name} · {count} ops · {format_bytes(total)} · {trace.param_count:,} params"
    )


def build_plan(
    trace: Trace,
    *,
    view: str = "unrolled",
    depth: int | None = None,
    collapse: str | None = None,
    collapse_budget: int | None = None,
) -> Plan:
    """The plan for ``trace`` in ``view``: full detail, or boxed when ``depth`` or
    ``collapse`` is given (``collapse_budget``: the node budget of ``collapse="auto"``)."""
    if depth is not None or collapse is not None:
        return build_collapsed_plan(
            trace, view=view, depth=depth, collapse=collapse, budget=collapse_budget
        )
    return plain_plan.build_plan(trace, view=view)


def node_rows(node: PlanNode, *, trace: Trace | None, options: DrawOptions) -> tuple[Row, ...]:
    """The label rows of any plan node: a boxed node's from the collapse stage, every
    other node's from :mod:`.labels`."""
    if node.kind in COLLAPSED_KINDS:
        return collapsed_rows(node, trace=trace, options=options)
    return labels.node_rows(node, trace=trace, options=options)


def node_texts(
    node: PlanNode, *, trace: Trace | None, options: DrawOptions
) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """:func:`node_rows` as plain data: the row texts and the indices of the bold rows."""
    if node.kind in COLLAPSED_KINDS:
        return labels.row_texts(collapsed_rows(node, trace=trace, options=options))
    return labels.node_texts(node, trace=trace, options=options)


# A plain draw validates nothing: its options are the (frozen) defaults.
_DEFAULT_REQUEST: Final = DrawRequest.of(DrawOptions())
# A drawing builds a node record and a DOT statement per node, and a graph and a
# drawing: the fast constructors.
_new_node: Final = frozen_builder(Node)
_new_statement: Final = frozen_builder(NodeStatement)
_new_graph: Final = frozen_builder(DotGraph)
_new_drawing: Final = frozen_builder(Drawing)


def draw(trace: Trace, *, mask_volatile: bool = False, **options: Any) -> Drawing:
    """Draw ``trace`` (see ``DrawOptions`` for the options): parse them once
    (:meth:`DrawRequest.parse`), then :func:`draw_request`."""
    request = DrawRequest.parse(options) if options else _DEFAULT_REQUEST
    return draw_request(trace, request, mask_volatile=mask_volatile)


def draw_request(trace: Trace, request: DrawRequest, *, mask_volatile: bool = False) -> Drawing:
    """Draw ``trace`` as ``request`` (already parsed) asks.

    ``mask_volatile=True`` (used by the snapshot fixture, not part of ``Trace.draw``)
    replaces the measured fills, sizes and key end labels of channels that read
    run-to-run noise (``time``, ``device_time``) with stable placeholders, and notes it
    on the encoding state.
    """
    with collector_paused():
        return _draw(trace, request, mask_volatile=mask_volatile)


def _draw(trace: Trace, request: DrawRequest, *, mask_volatile: bool) -> Drawing:
    opts = request.options
    plan: Plan = build_plan(
        trace,
        view=opts.view,
        depth=opts.depth,
        collapse=opts.collapse,
        collapse_budget=opts.collapse_budget,
    )
    fill = style.PAGES[opts.page].fill
    rows = [node_texts(node, trace=trace, options=opts) for node in plan.nodes]
    # What each node and frame is, for the comparison (never drawn).
    collapsed = opts.depth is not None or opts.collapse is not None
    identities = [node_attrs(r) for r in node_records(trace, plan, collapsed=collapsed)]
    frames = cluster_records(trace, plan, collapsed=collapsed)
    captions = [caption(trace)]
    state = None
    encoded = None
    # size_scale alone activates no channel, but encode() must still refuse it.
    encoding = bool(opts.channels) or opts.size_scale is not None
    if encoding or opts.node_spec_fn is not None:
        specs: dict[str, dict[str, Any]] = {
            node.id: {"rows": list(texts), "bold_rows": list(bold), "fillcolor": fill(node.kind)}
            for node, (texts, bold) in zip(plan.nodes, rows, strict=True)
        }
        if encoding:
            from pytest_tlgraph.draw.encoding.channels import encode

            encoded = encode(plan, specs, trace=trace, request=request, mask_volatile=mask_volatile)
            state = encoded.state
            captions.extend(encoded.caption_lines)
        public, edited = _edited_specs(plan, specs, opts.node_spec_fn)
        _readable(edited, style.PAGES[opts.page].text)
        statements = [
            _new_statement(n.id, n.cluster, _attrs(edited[n.id], identity))
            for n, identity in zip(plan.nodes, identities, strict=True)
        ]
        if encoded is not None and encoded.key_rows:
            from pytest_tlgraph.draw.encoding.key import KEY_ID

            public[KEY_ID] = Node("key", encoded.key_rows, (), None)
        nodes: Mapping[str, Node] = public
    else:
        nodes, statements = _plain_statements(plan, rows, fill, identities)
    node_defaults, edge_defaults = _written_defaults(opts.page)
    graph = _new_graph(
        graph_attrs=_graph_attrs(opts, html_label(captions), encoded),
        node_defaults=node_defaults,
        edge_defaults=edge_defaults,
        nodes=statements,
        edges=plan.edges,
        clusters=plan.clusters,
        cluster_attrs=_cluster_lists(plan, opts.page, opts.direction, frames),
        rank_groups=encoded.rank_groups if encoded else (),
        extra_nodes=encoded.extra_nodes if encoded else (),
        edge_attrs=_edge_attrs(plan, opts.page, encoded),
        order_edges=encoded.order_edges if encoded else (),
        rank_pins=encoded.rank_pins if encoded else (),
    )
    return _new_drawing(
        dot=emit(graph),
        state=state,
        nodes=MappingProxyType(nodes),
        edges=plan.edges,
        clusters=tuple(c.title for c in plan.clusters),
    )


def _edited_specs(
    plan: Plan, specs: Mapping[str, dict[str, Any]], spec_fn: NodeSpecFn | None
) -> tuple[dict[str, Node], dict[str, dict[str, Any]]]:
    """Public nodes and each node's final spec: the (encoded) spec after ``node_spec_fn``."""
    public: dict[str, Node] = {}
    edited: dict[str, dict[str, Any]] = {}
    for node in plan.nodes:
        spec = specs[node.id]
        if spec_fn is not None:
            view = _new_node(node.kind, tuple(spec["rows"]), node.members, node.module)
            changed = spec_fn(view, dict(spec))
            if changed is not None:
                if not isinstance(changed, Mapping) or "rows" not in changed:
                    raise TypeError(
                        f"node_spec_fn returned {changed!r} for node {node.id!r}; it must "
                        "return None (keep the spec) or a spec dict with its 'rows'"
                    )
                spec = dict(changed)
        public[node.id] = _new_node(node.kind, tuple(spec["rows"]), node.members, node.module)
        edited[node.id] = spec
    return public, edited


def _readable(specs: Mapping[str, dict[str, Any]], text: str) -> None:
    """Give every node whose fill the page's text does not read on a ``fontcolor`` that
    does (:func:`.contrast.text_colour`); a ``fontcolor`` a ``node_spec_fn`` set stays."""
    for spec in specs.values():
        fill = spec.get("fillcolor")
        if isinstance(fill, str) and "fontcolor" not in spec:
            colour = text_colour(fill, text)
            if colour is not None:
                spec["fontcolor"] = colour


def _plain_statements(
    plan: Plan,
    rows: list[tuple[tuple[str, ...], tuple[int, ...]]],
    fill: Callable[[str], str],
    identities: list[dict[str, str]],
) -> tuple[Mapping[str, Node], list[NodeStatement]]:
    """What the spec path makes of unedited base specs, without building them: each
    statement's attribute list written straight from its rows, role fill and identity
    (:mod:`pytest_tlgraph.schema`), and the public node records built when first read
    (``draw().dot`` never reads them)."""
    fills: dict[str, str] = {}  # a handful of kinds: each one's fill looked up once
    statements = []
    for node, (texts, bold), identity in zip(plan.nodes, rows, identities, strict=True):
        colour = fills.get(node.kind) or fills.setdefault(node.kind, fill(node.kind))
        identity["label"] = html_label(texts, bold)
        identity["fillcolor"] = colour
        statements.append(_new_statement(node.id, node.cluster, attr_list(identity)))

    def public() -> dict[str, Node]:
        return {
            node.id: _new_node(node.kind, texts, node.members, node.module)
            for node, (texts, _) in zip(plan.nodes, rows, strict=True)
        }

    return LazyMapping(public), statements


@functools.cache
def _written_defaults(page: str) -> tuple[str, str]:
    """The node and edge default attribute lists of a page, written once: they never
    change."""
    return attr_list(style.node_defaults(page)), attr_list(style.edge_defaults(page))


def _after_label(attrs: Mapping[str, Any]) -> str:
    """``attr_list(attrs)`` after its label (the first attribute, an HTML-like one), for
    attribute lists that differ only in their label."""
    written = attr_list({**attrs, "label": "<>"})
    prefix = "[label=<>, "
    if not written.startswith(prefix):
        raise RuntimeError(f"attributes {sorted(attrs)} no longer start with the label")
    return written[len(prefix) :]


def _schema_graph_attrs(page: str, direction: str, label: str) -> dict[str, Any]:
    """The page's graph attributes with ``label``, and the schema version."""
    return {**style.graph_attrs(page, direction, label), SCHEMA_ATTR: SCHEMA_VERSION}


@functools.cache
def _graph_tail(page: str, direction: str) -> str:
    """The graph attribute list after its label (the caption) for a page and direction,
    written once."""
    return _after_label(_schema_graph_attrs(page, direction, "<>"))


def _graph_attrs(
    opts: DrawOptions, caption_label: str, encoded: Encoding | None
) -> Mapping[str, Any] | str:
    """The graph attributes: ``style.graph_attrs`` with the caption label, and the
    encoding's own graph attributes over them; written at once when there are none."""
    extra = encoded.graph_attrs if encoded is not None else None
    if extra:
        return {**_schema_graph_attrs(opts.page, opts.direction, caption_label), **extra}
    return f"[label={caption_label}, {_graph_tail(opts.page, opts.direction)}"


def _cluster_lists(
    plan: Plan, page: str, direction: str, records: Mapping[str, ClusterRecord]
) -> dict[str, str]:
    """Each cluster's attribute list, written: ``style.cluster_attrs(page, label)``
    with the label, an HTML-like one, and the cluster's identity (:func:`.schema.
    cluster_attrs`, its content signature included); a repeat fold's title is bold and
    at the top (``style.fold_cluster_attrs``)."""
    lists = {}
    for c in plan.clusters:
        if c.caption is None:
            attrs = style.cluster_attrs(page, f"<{html_escape(c.title)}>")
        else:
            attrs = style.fold_cluster_attrs(page, direction, f"<<B>{html_escape(c.title)}</B>>")
        lists[c.id] = attr_list({**attrs, **cluster_attrs(records[c.id])})
    return lists


def _attrs(spec: Mapping[str, Any], identity: Mapping[str, str]) -> dict[str, Any]:
    """A node's DOT attributes from its final spec; its identity (a collapsed node's
    signature and an op's call among it) is written over any ``comment`` or ``tl_``
    attribute the spec holds: the comparison must see the drawing's own."""
    attrs = dict(spec)
    attrs["label"] = html_label(attrs.pop("rows"), attrs.pop("bold_rows", ()))
    for name in NODE_ATTRS:
        attrs.pop(name, None)
    attrs.update(identity)
    return attrs


def schema_records(
    trace: Trace, **options: Any
) -> tuple[tuple[NodeRecord, ...], tuple[ClusterRecord, ...]]:
    """The identity records ``draw(trace, **options)`` writes (:mod:`pytest_tlgraph.
    schema`): every node's, in drawing order, and every cluster's, outermost first."""
    opts = DrawRequest.parse(options).options
    plan = build_plan(
        trace,
        view=opts.view,
        depth=opts.depth,
        collapse=opts.collapse,
        collapse_budget=opts.collapse_budget,
    )
    collapsed = opts.depth is not None or opts.collapse is not None
    frames = cluster_records(trace, plan, collapsed=collapsed)
    nodes = tuple(node_records(trace, plan, collapsed=collapsed))
    return nodes, tuple(frames[c.id] for c in plan.clusters)


def _edge_attrs(
    plan: Plan, page: str, encoded: Encoding | None
) -> Mapping[tuple[str, str], Mapping[str, Any]]:
    """Each edge's attributes: its argument position (:func:`_edge_positions`), and
    what the encoding's layout sets on it (``constraint="false"`` between columns)."""
    attrs = _edge_positions(plan, page)
    if encoded is None or not encoded.edge_attrs:
        return attrs
    merged: dict[tuple[str, str], Mapping[str, Any]] = dict(attrs)
    for edge, extra in encoded.edge_attrs.items():
        merged[edge] = {**attrs.get(edge, {}), **extra}
    return merged


def _edge_positions(plan: Plan, page: str) -> dict[tuple[str, str], dict[str, Any]]:
    """Each in-edge of an op whose inputs are not interchangeable, numbered by its
    argument position (its ``label``, beside the edge's middle: the PNG shows ``cat(x, skip)`` from
    ``cat(skip, x)``); the number is the one its call names (``in2``)."""
    by_id = {node.id: node for node in plan.nodes}
    out: dict[tuple[str, str], dict[str, Any]] = {}
    colour = style.PAGES[page].text
    holder: dict[str, str] | None = None  # op or layer label -> the node drawing it
    for source, target in plan.edges:
        node = by_id.get(target)
        if node is None or node.kind not in ("op", "layer"):
            continue
        record = node.record
        if not isinstance(record, (Op, Layer)) or not edge_positions(record):
            continue
        if holder is None:
            holder = {}
            for drawn in plan.nodes:
                holder[drawn.id] = drawn.id
                for member in drawn.members:
                    holder.setdefault(member, drawn.id)
        # A box feeding several inputs reads ``1,3``.
        places = [str(i) for i, p in enumerate(record.parents, start=1) if holder.get(p) == source]
        if places:
            out[(source, target)] = {
                "label": ",".join(places),
                "fontname": style.FONT,
                "fontsize": "9",
                "fontcolor": colour,
            }
    return out
