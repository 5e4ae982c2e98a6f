"""Collect one channel's values over the visible nodes, applying the eligibility rules
for rolled multi-pass nodes and collapsed boxes, segments and folds
(docs/usage.md, "Value sources"; docs/decisions.md, "Channels", "Collapsed drawings")."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pytest_tlgraph.draw.encoding.sources import ValueSource
from pytest_tlgraph.draw.plan import Plan, PlanNode
from pytest_tlgraph.errors import EncodingRefusal
from pytest_tlgraph.trace import PER_PASS_FIELDS, SUMMED_FIELDS, Layer

__all__ = ["Collected", "collect"]

_COLLAPSED = ("box", "segment", "fold")


@dataclass
class Collected:
    """A channel's values (node id -> float) with the notes and aggregation lines."""

    values: dict[str, float] = field(default_factory=dict)
    eligible: int = 0
    notes: list[str] = field(default_factory=list)
    aggregation: list[str] = field(default_factory=list)

    def note(self, text: str) -> None:
        """Add a note once, keeping insertion order."""
        if text not in self.notes:
            self.notes.append(text)

    def aggregate(self, text: str) -> None:
        """Add an aggregation line once, keeping insertion order."""
        if text not in self.aggregation:
            self.aggregation.append(text)


def _certified(source: ValueSource, layer: Layer) -> bool:
    """Whether a rolled multi-pass layer has one honest value for ``source``."""
    if source.fn is not None:
        return True  # called once with the Layer: the user's value for the whole layer
    if source.token == "dims":
        return layer.shape is not None
    name = source.field or ""
    if name in SUMMED_FIELDS:
        return True
    return name not in layer.varying and not (name in PER_PASS_FIELDS and layer.has_function)


def _collapsed_value(
    node: PlanNode,
    source: ValueSource,
    plan: Plan,
    out: Collected,
    reader: Callable[[Any, str], float | None],
) -> None:
    if not source.additive:
        out.note(f"collapsed nodes unencoded: {source.name} has no exact sum over ops")
        return
    if node.kind == "segment":
        out.aggregate("segments: sum over member ops")
    else:
        suffix = " across all calls" if plan.view == "rolled" else ""
        out.aggregate(f"module boxes: sum over member ops{suffix}")
    if node.kind == "fold":
        representative = getattr(node.record, "representative", None) or node.module
        out.note(f"{node.id}: repeat fold shows its representative module {representative} only")
    value = reader(node.record, node.id)
    if value is None:
        out.note(f"{node.id}: unencoded, a member op has no {source.name} value")
        return
    out.values[node.id] = value


def collect(
    plan: Plan,
    source: ValueSource,
    *,
    channel: str,
    read: Callable[[Any, str], float | None] | None = None,
) -> Collected:
    """Values of ``source`` on every eligible visible node of ``plan``.

    On a rolled multi-pass node a value that is not single-valued leaves the node
    unencoded with a note for colour, and refuses ``size_by_rolled_varying`` for size.
    """
    reader = read or source.read
    out = Collected()
    for cluster in plan.clusters:
        if cluster.caption is not None:  # a repeat fold drawn as a cluster
            out.note(f"{cluster.title}: repeat fold shows its representative only")
    for node in plan.nodes:
        out.eligible += 1
        if node.kind in _COLLAPSED:
            _collapsed_value(node, source, plan, out, reader)
            continue
        record = node.record
        if isinstance(record, Layer) and record.num_passes > 1:
            if not _certified(source, record):
                if channel == "size_by":
                    detail = (
                        f" (its shape varies across passes: {record.shape_summary})"
                        if source.token == "dims" and record.shape_summary
                        else ""
                    )
                    raise EncodingRefusal(
                        "size_by_rolled_varying",
                        cause=f"size_by={source.requested} ({source.name}) has no single value "
                        f"on rolled node {node.id!r}{detail}: it is not certified single-valued "
                        f"across its {record.num_passes} passes.",
                        remedy="draw view='unrolled' to size each pass, or size by an exact "
                        "cross-pass total such as 'device_time' or a callable.",
                    )
                out.note(
                    f"rolled multi-pass nodes unencoded: {source.name} is not single-valued "
                    "across passes"
                )
                continue
            if (source.field or "") in SUMMED_FIELDS:
                out.aggregate(f"rolled nodes: {source.name} summed across passes")
        value = reader(record, node.id)
        if value is None:
            out.note("n/a = unencoded")
            continue
        out.values[node.id] = value
    return out
