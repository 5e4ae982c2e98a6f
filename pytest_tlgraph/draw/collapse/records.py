"""The records collapsed nodes stand for: module boxes, segments and repeat folds.

Each record carries ``.module``, ``.members`` (the op labels whose values it sums) and
the additive fields, each the EXACT sum over its member ops or ``None`` when any member
op lacks a value: a partial sum would read as a smaller number, never as missing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from pytest_tlgraph.fields import BOX_SUMMED, FOLD_FIRST, check_record, field
from pytest_tlgraph.trace import ModuleCall, Op, Shape, Trace, shape_summary

__all__ = [
    "BoxRecord",
    "CollapsedRecord",
    "FoldRecord",
    "SegmentRecord",
    "box_record",
    "member_sums",
    "output_op",
    "segment_record",
]

#: Summed with ``math.fsum``: correctly rounded, whatever the op order.
_FLOAT_FIELDS: Final = frozenset(name for name in BOX_SUMMED if field(name).kind is float)


def member_sums(ops: Sequence[Op]) -> dict[str, Any]:
    """Each additive field summed exactly over ``ops`` (``None`` if any op lacks it).

    Ops with no function (input and output records) count zero. Float fields
    (durations) are summed with ``math.fsum``: correctly rounded, so the total does not
    depend on op order.
    """
    sums: dict[str, Any] = {}
    for name in BOX_SUMMED:
        values = [getattr(op, name) for op in ops if op.has_function]
        if any(v is None for v in values):
            sums[name] = None
        elif name in _FLOAT_FIELDS:
            sums[name] = math.fsum(values)
        else:
            sums[name] = sum(values)
    return sums


@dataclass(frozen=True, slots=True, kw_only=True)
class CollapsedRecord:
    """What every collapsed node has: its module, member ops and the summed fields."""

    module: str
    members: tuple[str, ...]
    func_duration: float | None
    activation_memory: int | None
    flops_forward: int | None
    flops_backward: int | None
    flops_total: int | None
    macs_forward: int | None
    device_time: int | None

    @property
    def has_function(self) -> bool:
        """Always True: collapsed nodes stand for real ops."""
        return True


check_record(CollapsedRecord, BOX_SUMMED)


@dataclass(frozen=True, slots=True, kw_only=True)
class BoxRecord(CollapsedRecord):
    """A module call (unrolled view) or every call of one module (rolled view) drawn as
    one box. ``shape``/``dtype``/``input_shape`` are ``None`` when the calls disagree."""

    module_type: str
    calls: tuple[tuple[str, int], ...]
    depth: int
    module_args: Mapping[str, Any] | None
    module_family: str | None
    shape: Shape | None
    shape_summary: str | None
    dtype: str | None
    input_shape: Shape | None

    @property
    def num_calls(self) -> int:
        """How many calls the box stands for (1 in the unrolled view)."""
        return len(self.calls)


@dataclass(frozen=True, slots=True, kw_only=True)
class SegmentRecord(CollapsedRecord):
    """A run of consecutive root-level ops drawn as one capsule (``collapse="max"``),
    or a run of plumbing ops (``collapse="auto"``), whose ``purpose`` names what it
    computes (``mask``, ``positions``, ``shape``, ``index``: :mod:`.purpose`)."""

    first: str
    last: str
    funcs: tuple[str, ...]
    shape: Shape | None
    dtype: str | None
    purpose: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class FoldRecord(CollapsedRecord):
    """Consecutive sibling boxes of one structure folded into one node.

    ``representative`` is the first box's module address; ``boxes`` holds every folded
    box, the representative first. ``module``, ``members`` and the summed fields are
    the representative's only: the fold shows one instance, not the total, and
    ``shape_summary`` the range of the boxes' output shapes when they differ.
    """

    representative: str
    boxes: tuple[BoxRecord, ...]
    title: str
    #: The boxes' output shapes first to last when they differ (``16->4``), else ``None``.
    shape_summary: str | None = None

    @property
    def count(self) -> int:
        """How many boxes were folded."""
        return len(self.boxes)

    @property
    def representative_box(self) -> BoxRecord:
        """The first folded box, whose values the fold shows."""
        return self.boxes[0]

    @classmethod
    def of(cls, boxes: Sequence[BoxRecord], title: str) -> FoldRecord:
        """Fold ``boxes`` (at least two, the representative first) under ``title``."""
        rep = boxes[0]
        sums = {name: getattr(rep, name) for name in FOLD_FIRST}
        return cls(
            module=rep.module,
            members=rep.members,
            representative=rep.module,
            boxes=tuple(boxes),
            title=title,
            shape_summary=shape_summary([box.shape for box in boxes]),
            **sums,
        )


# A fold record holds the summed slots of every collapsed record: the fields a fold
# shows (``Field.folds``) must be exactly those, or a slot would be left unset.
check_record(FoldRecord, FOLD_FIRST)


def output_op(trace: Trace, members: Sequence[str]) -> Op:
    """The op producing a group's output: the last member that feeds a non-member (the
    last member when none does, e.g. a module whose result is discarded)."""
    inside = set(members)
    for label in reversed(members):
        op = trace.op(label)
        if any(child not in inside for child in op.children):
            return op
    return trace.op(members[-1])


def _input_shape(trace: Trace, members: Sequence[str]) -> Shape | None:
    """The source shape of the single data edge entering the group, else ``None``."""
    inside = set(members)
    sources = {p for label in members for p in trace.op(label).parents if p not in inside}
    if len(sources) != 1:
        return None
    return trace.op(sources.pop()).shape


def _common(values: Sequence[Any]) -> Any:
    return values[0] if all(v == values[0] for v in values[1:]) else None


def box_record(trace: Trace, calls: Sequence[ModuleCall], members: Sequence[str]) -> BoxRecord:
    """The record of a box standing for ``calls`` (all of one module) and ``members``
    (their op labels in execution order)."""
    first = calls[0]
    outputs = [output_op(trace, call.ops) for call in calls if call.ops]
    shapes = [op.shape for op in outputs]
    return BoxRecord(
        module=first.address,
        members=tuple(members),
        module_type=first.type_name,
        calls=tuple(call.key for call in calls),
        depth=first.depth,
        module_args=first.module_args,
        module_family=first.module_family,
        shape=_common(shapes),
        shape_summary=shape_summary(shapes),
        dtype=_common([op.dtype for op in outputs]),
        input_shape=_common([_input_shape(trace, call.ops) for call in calls]),
        **member_sums([trace.op(label) for label in members]),
    )


def segment_record(
    trace: Trace,
    members: Sequence[str],
    names: Sequence[str],
    funcs: Sequence[str],
    purpose: str | None = None,
) -> SegmentRecord:
    """The record of a segment over ``members`` (op labels in execution order).

    ``names`` are the labels the segment lists (op labels, or layer labels when rolled)
    and ``funcs`` their function names, one per name; ``purpose`` names a plumbing
    segment's work.
    """
    out = output_op(trace, members)
    return SegmentRecord(
        module="",
        members=tuple(members),
        first=names[0],
        last=names[-1],
        funcs=tuple(funcs),
        shape=out.shape,
        dtype=out.dtype,
        purpose=purpose,
        **member_sums([trace.op(label) for label in members]),
    )
