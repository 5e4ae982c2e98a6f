"""``encode``: the channels of one draw (docs/decisions.md, "Channels").

Strictly presentation: it only adds ``fillcolor`` to colour-encoded nodes,
``width``/``height``/``fixedsize`` to size-encoded nodes, rank groups with ``newrank``,
the key node and a caption line. Every channel refusal happens here, before anything
is rendered (the layout fence refuses even earlier, in ``layout.py``).
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

from pytest_tlgraph.draw.dot import NodeStatement, html_escape
from pytest_tlgraph.draw.encoding.key import KEY_ID, BarLine, KeyLine, TextLine, key_label
from pytest_tlgraph.draw.encoding.ramps import ramp_for_page
from pytest_tlgraph.draw.encoding.scales import normalise, transform
from pytest_tlgraph.draw.encoding.sources import (
    VALUE_FIELDS,
    ValueSource,
    coerce,
    require_available,
)
from pytest_tlgraph.draw.encoding.stack import Stacking, columns, require_unrolled, stack
from pytest_tlgraph.draw.encoding.state import ChannelState, EncodingState
from pytest_tlgraph.draw.encoding.values import Collected, collect
from pytest_tlgraph.draw.fontmetrics import estimate_label_box
from pytest_tlgraph.draw.plan import Plan
from pytest_tlgraph.draw.request import DrawRequest
from pytest_tlgraph.draw.style import FONTSIZE, PAGES, RANKDIR
from pytest_tlgraph.trace import Trace

__all__ = ["Encoding", "encode"]

#: Masked volatile channels draw every encoded node at this placeholder fraction.
_MASK_F: Final = 0.5
_MASKED: Final = "masked"
# Graphviz's default node width and height (inches): a label smaller than this still
# draws a node this big, and an emitted width/height would replace the floor.
_MIN_WIDTH: Final = 0.75
_MIN_HEIGHT: Final = 0.5


@dataclass(frozen=True, slots=True)
class Encoding:
    """What the channels add to a drawing."""

    state: EncodingState
    caption_lines: tuple[str, ...]
    rank_groups: tuple[tuple[str, ...], ...]
    extra_nodes: tuple[NodeStatement, ...]
    key_rows: tuple[str, ...]
    graph_attrs: Mapping[str, Any]
    #: ``constraint="false"`` on the edges between the columns of a timestep diagram.
    edge_attrs: Mapping[tuple[str, str], Mapping[str, str]] = field(default_factory=dict)
    #: Invisible edges ordering the columns' first nodes left to right.
    order_edges: tuple[tuple[str, str], ...] = ()
    #: ``(rank, node)`` pins: the key on the top rank of a bottom-up drawing.
    rank_pins: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class _Layout:
    """How the stacked groups and the key are laid out (:func:`_layout`)."""

    rank_groups: tuple[tuple[str, ...], ...]
    graph_attrs: Mapping[str, Any]
    edge_attrs: Mapping[tuple[str, str], Mapping[str, str]]
    order_edges: tuple[tuple[str, str], ...]
    rank_pins: tuple[tuple[str, str], ...]


def _layout(
    plan: Plan, groups: tuple[tuple[str, ...], ...] | None, direction: str, keyed: bool
) -> _Layout:
    """The stacked groups as rows (one rank each), or, drawn left to right, as columns
    of a top-to-bottom drawing (:func:`.stack.columns`); and the key pinned to the top
    rank where the ranks run bottom-up (it has no edge, so it would sit on the lowest;
    Graphviz's ``newrank`` ranking, which stacked rows need, ignores the pin)."""
    if groups is None:
        pins = (("max", KEY_ID),) if keyed and direction == "bottomup" else ()
        return _Layout((), {}, {}, (), pins)
    if direction != "leftright" or not groups:
        return _Layout(groups, {"newrank": "true"}, {}, (), ())
    laid = columns(groups, plan.edges)
    loose = MappingProxyType({"constraint": "false"})
    return _Layout(
        rank_groups=(laid.heads,) if laid.aligned and len(laid.heads) > 1 else (),
        graph_attrs={"newrank": "true", "rankdir": RANKDIR["topdown"]},
        edge_attrs={edge: loose for edge in laid.loose},
        order_edges=tuple(itertools.pairwise(laid.heads)),
        rank_pins=(),
    )


class _Reader:
    """Reads source values. A callable is called exactly once per node per draw, even
    when several channels use it: its raw results are remembered by (callable, node)."""

    def __init__(self, trace: Trace) -> None:
        self._trace = trace
        self._memo: dict[tuple[int, str], Any] = {}

    def source(self, source: ValueSource | None, channel: str) -> ValueSource | None:
        """The request's resolved ``source``, once the trace is known to hold its
        values."""
        if source is not None:
            require_available(source, self._trace, channel)
        return source

    def raw(self, source: ValueSource, record: Any, node_id: str) -> Any:
        if source.fn is None:
            members = getattr(record, "members", None)
            if source.field == "param_count" and members is not None:
                # A collapsed node: the exact sum over its member ops.
                return sum(self._trace.op(label).param_count or 0 for label in members)
            return source.raw(record)
        key = (id(source.fn), node_id)
        if key not in self._memo:
            self._memo[key] = source.raw(record)
        return self._memo[key]

    def collect(self, plan: Plan, source: ValueSource, channel: str) -> Collected:
        def read(record: Any, node_id: str) -> float | None:
            return coerce(self.raw(source, record, node_id), source=source.name, node_id=node_id)

        return collect(plan, source, channel=channel, read=read)


def _domain_text(
    source: ValueSource, domain: tuple[float, float] | None, masked: bool
) -> tuple[str, str] | None:
    if domain is None:
        return None
    if masked:
        return (_MASKED, _MASKED)
    return (source.format(domain[0]), source.format(domain[1]))


def _value_text(source: ValueSource, got: Collected, masked: bool) -> Mapping[str, str]:
    if masked:
        return MappingProxyType({})
    return MappingProxyType({node_id: source.format(v) for node_id, v in got.values.items()})


def _color(
    specs: dict[str, dict[str, Any]],
    source: ValueSource,
    got: Collected,
    page: str,
    masked: bool,
) -> tuple[ChannelState, KeyLine]:
    ramp = ramp_for_page(page)
    domain, fractions = normalise(got.values)
    fills = {node_id: ramp.sample(_MASK_F if masked else f) for node_id, f in fractions.items()}
    for node_id, fill in fills.items():
        specs[node_id]["fillcolor"] = fill
    text = _domain_text(source, domain, masked)
    # Some drawn node is left with its role fill: one swatch in the key says so.
    na_fill = PAGES[page].fill("op") if fills and len(fills) < got.eligible else None
    line: KeyLine
    if text is None:
        line = TextLine(f"{source.name}: no values")
    elif not fractions:
        line = TextLine(f"{source.name}: all {text[0]}")
    else:
        line = BarLine(source.name, text[0], text[1], ramp, na_fill)
    state = ChannelState(
        source=source.name, values=MappingProxyType(dict(got.values)), domain=domain,
        transform="linear", eligible=got.eligible, encoded=len(fills), domain_text=text,
        fills=MappingProxyType(fills), value_text=_value_text(source, got, masked),
    )  # fmt: skip
    return state, line


def _node_box(spec: Mapping[str, Any]) -> tuple[float, float]:
    """The box a node gets in a plain drawing: its label box, but at least Graphviz's
    default node size, so the smallest-value node looks like an unencoded one."""
    rows = [html_escape(row) for row in spec["rows"]]
    width, height = estimate_label_box(
        rows, fontsize=FONTSIZE, bold_first=0 in spec.get("bold_rows", ())
    )
    return (max(width, _MIN_WIDTH), max(height, _MIN_HEIGHT))


def _size(
    specs: dict[str, dict[str, Any]], source: ValueSource, got: Collected, scale: str, masked: bool
) -> tuple[ChannelState, KeyLine]:
    scaled = transform(got.values, scale, source=source.name)
    _, fractions = normalise(scaled)
    domain = (min(got.values.values()), max(got.values.values())) if got.values else None
    boxes = {node_id: _node_box(specs[node_id]) for node_id in fractions}
    sizes: dict[str, tuple[float, float]] = {}
    if boxes:
        base_w = statistics.median(w for w, _ in boxes.values())
        base_h = statistics.median(h for _, h in boxes.values())
        for node_id, f in fractions.items():
            grow = math.sqrt(1 + 3 * (_MASK_F if masked else f))
            own_w, own_h = boxes[node_id]
            size = (round(max(own_w, base_w) * grow, 3), round(max(own_h, base_h) * grow, 3))
            sizes[node_id] = size
            specs[node_id].update(width=f"{size[0]:.3f}", height=f"{size[1]:.3f}",
                                  fixedsize="false")  # fmt: skip
    text = _domain_text(source, domain, masked)
    if text is None:
        line = TextLine(f"size: {source.name}, no values")
    elif not fractions:
        line = TextLine(f"size: {source.name}, all {text[0]}")
    else:
        line = TextLine(f"size: {source.name}, {text[0]} ... {text[1]}")
    state = ChannelState(
        source=source.name, values=MappingProxyType(dict(got.values)), domain=domain,
        transform=scale, eligible=got.eligible, encoded=len(sizes), domain_text=text,
        sizes=MappingProxyType(sizes), value_text=_value_text(source, got, masked),
    )  # fmt: skip
    return state, line


def encode(
    plan: Plan,
    specs: dict[str, dict[str, Any]],
    *,
    trace: Trace,
    request: DrawRequest,
    mask_volatile: bool = False,
) -> Encoding:
    """Apply the active channels of ``request`` (parsed and its sources resolved by
    :meth:`DrawRequest.parse`) to ``specs`` (in place) and return the key, rank groups,
    caption lines and the encoding state."""
    options = request.options
    scale = request.scale
    if options.stack_by is not None:
        require_unrolled(plan)
    reader = _Reader(trace)
    color_source = reader.source(request.color, "color_by")
    size_source = reader.source(request.size, "size_by")
    stacking = None
    stack_source = None
    if options.stack_by is not None:
        stack_source = reader.source(request.stack, "stack_by")
        stacking = stack(plan, trace, stack_source, raw=reader.raw)
    channels: dict[str, ChannelState] = {}
    notes: list[str] = []
    aggregation: list[str] = []
    lines: list[KeyLine] = []
    captions: list[str] = []
    groups: tuple[tuple[str, ...], ...] = ()

    if not trace.values:  # stack_source is set exactly when stacking is
        notes.extend(_valueless(color_source, size_source, stack_source))

    def merge(got: Collected) -> None:
        notes.extend(n for n in got.notes if n not in notes)
        aggregation.extend(a for a in got.aggregation if a not in aggregation)

    if color_source is not None:
        got = reader.collect(plan, color_source, "color_by")
        merge(got)
        masked = mask_volatile and color_source.volatile
        channels["color_by"], line = _color(specs, color_source, got, options.page, masked)
        lines.append(line)
        if masked:
            notes.append(f"color_by: {color_source.name} masked for the snapshot (fills and key "
                         "ends are placeholders)")  # fmt: skip
    if size_source is not None:
        got = reader.collect(plan, size_source, "size_by")
        merge(got)
        masked = mask_volatile and size_source.volatile
        channels["size_by"], line = _size(specs, size_source, got, scale, masked)
        lines.append(line)
        if masked:
            notes.append(f"size_by: {size_source.name} masked for the snapshot (sizes and key "
                         "ends are placeholders)")  # fmt: skip
    if stacking is not None:
        groups = tuple(stacking.groups.values())
        channels["stack_by"] = _stack_state(stacking)
        lines.append(TextLine(f"aligned: same {stacking.annotation}"))
        captions.append(f"stacked by: {stacking.annotation}")
    extra, key_rows = _key(lines) if options.show_legend and lines else ((), ())
    laid = _layout(plan, groups if stacking is not None else None, options.direction, bool(extra))
    return Encoding(
        state=EncodingState(MappingProxyType(channels), tuple(notes), tuple(aggregation)),
        caption_lines=tuple(captions),
        rank_groups=laid.rank_groups,
        extra_nodes=extra,
        key_rows=key_rows,
        graph_attrs=MappingProxyType(laid.graph_attrs),
        edge_attrs=MappingProxyType(laid.edge_attrs),
        order_edges=laid.order_edges,
        rank_pins=laid.rank_pins,
    )


def _valueless(*sources: ValueSource | None) -> list[str]:
    """The note for the channels (``color_by``, ``size_by``, ``stack_by``, in that order)
    that ask a trace without values for a value field; empty when none does."""
    valueless = [
        f"{name}={src.requested}"
        for name, src in zip(("color_by", "size_by", "stack_by"), sources, strict=True)
        if src is not None and src.field in VALUE_FIELDS
    ]
    if not valueless:
        return []
    return [f"{', '.join(valueless)}: no values, the trace was captured on "
            "tensors without values (meta device or fake tensors)"]  # fmt: skip


def _stack_state(stacking: Stacking) -> ChannelState:
    return ChannelState(
        source=stacking.annotation, values=MappingProxyType(stacking.values), domain=None,
        transform="identity", eligible=stacking.eligible,
        encoded=sum(len(ids) for ids in stacking.groups.values()),
        groups=MappingProxyType(stacking.groups),
    )  # fmt: skip


def _key(lines: list[KeyLine]) -> tuple[tuple[NodeStatement, ...], tuple[str, ...]]:
    """The key node drawing ``lines``, and the key's rows as plain text."""
    attrs = {"label": key_label(lines), "shape": "plaintext", "style": "solid", "margin": "0"}
    return (NodeStatement(KEY_ID, None, attrs),), tuple(line.plain for line in lines)
