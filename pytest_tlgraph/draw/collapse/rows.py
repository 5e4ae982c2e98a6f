"""Label rows of collapsed nodes: module boxes, segments and repeat folds.

Default rows, top to bottom:

* box: ``@address (Type)`` (bold; ``(xN)`` on a rolled box standing for N calls), the
  shape summary when its calls disagree in shape, the output shape, the args row (with
  the checked suppression, against the box's single input and its output);
* fold: ``x40 @blocks.0-39 (Block)`` (bold), the range of the boxes' output shapes when
  they differ (``16->4``), then the representative's shape and args;
* segment: ``mul_1..tanh_1`` (bold; the first and last op), ``5 ops: mul, add x3, tanh``,
  the output shape; a plumbing segment of ``collapse="auto"`` is titled by what it
  computes, ``mask: 12 ops`` (bold), then ``arange x2, add, gt, ...`` and the shape.

``node_label_fields`` tokens pick rows as on op nodes; ``bytes`` and ``flops`` are the
exact sums over the member ops and say so (``(sum)``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from pytest_tlgraph.draw.collapse.records import BoxRecord, FoldRecord, SegmentRecord
from pytest_tlgraph.draw.encoding.units import format_bytes, format_flops
from pytest_tlgraph.draw.labels import Row, args_row, check_label_fields, dtype_name, format_shape
from pytest_tlgraph.draw.plan import PlanNode, relative_address, wrap_row
from pytest_tlgraph.options import DrawOptions
from pytest_tlgraph.trace import Trace

__all__ = ["collapsed_rows", "func_list"]

#: A segment lists at most this many function groups before ``...``.
MAX_LISTED_FUNCS: Final = 6

CollapsedRecord = BoxRecord | FoldRecord | SegmentRecord


def func_list(funcs: Sequence[str], limit: int = MAX_LISTED_FUNCS) -> str:
    """``mul, add x3, tanh``: consecutive repeats merged, at most ``limit`` groups."""
    groups: list[list[str | int]] = []
    for func in funcs:
        if groups and groups[-1][0] == func:
            groups[-1][1] = int(groups[-1][1]) + 1
        else:
            groups.append([func, 1])
    parts = [f"{func} x{count}" if count != 1 else str(func) for func, count in groups]
    if len(parts) > limit:
        parts = [*parts[:limit], "..."]
    return ", ".join(parts)


def _title(node: PlanNode, record: CollapsedRecord) -> str:
    if isinstance(record, FoldRecord):
        return record.title
    if isinstance(record, BoxRecord):
        calls = f" (x{record.num_calls})" if record.num_calls > 1 else ""
        address = relative_address(record.module, node.within) or record.module
        return f"@{address} ({record.module_type}){calls}"
    if record.purpose is not None:
        count = len(record.funcs)
        return f"{record.purpose}: {count} op{'' if count == 1 else 's'}"
    if record.first == record.last:
        return record.first
    return f"{record.first}..{record.last}"


def _box(record: CollapsedRecord) -> BoxRecord | None:
    """The box whose shape and args a node shows (a fold shows its representative)."""
    if isinstance(record, FoldRecord):
        return record.representative_box
    return record if isinstance(record, BoxRecord) else None


def _args(record: CollapsedRecord, trace: Trace | None, options: DrawOptions) -> str | None:
    box = _box(record)
    if box is None:
        return None
    return args_row(
        box.module_args,
        family=box.module_family,
        input_shape=box.input_shape,
        output_shape=box.shape,
        # Detached records cannot be checked against captured shapes: show every arg.
        show_redundant=options.show_redundant_args or trace is None,
    )


def _ops_row(record: CollapsedRecord) -> str | None:
    if not isinstance(record, SegmentRecord):
        return None
    if record.purpose is not None:  # the title counts the ops
        return func_list(record.funcs)
    count = len(record.funcs)
    return f"{count} op{'' if count == 1 else 's'}: {func_list(record.funcs)}"


def _row(
    token: str, record: CollapsedRecord, trace: Trace | None, options: DrawOptions
) -> str | None:
    """The row of one ``node_label_fields`` token on a collapsed node."""
    box = _box(record)
    if token == "op":
        return _ops_row(record)
    shown = record.representative_box if isinstance(record, FoldRecord) else record
    if token == "shape":
        return None if shown.shape is None else format_shape(shown.shape)
    if token == "dtype":
        return dtype_name(shown.dtype)
    if token == "shape_summary":
        if isinstance(record, FoldRecord):  # the boxes' range, else the first one's own
            return record.shape_summary or record.representative_box.shape_summary
        return box.shape_summary if box is not None else None
    if token == "bytes":
        size = record.activation_memory
        return None if size is None else f"{format_bytes(size)} (sum)"
    if token == "args":
        return _args(record, trace, options)
    if token == "module":
        return f"@{record.module}" if record.module else None  # a box's own address
    if token == "flops":
        flops = record.flops_forward
        return None if flops is None else f"{format_flops(flops)} (sum)"
    return None  # params and pass have no single value on a group of ops


def collapsed_rows(node: PlanNode, *, trace: Trace | None, options: DrawOptions) -> tuple[Row, ...]:
    """The label rows of a box, segment or fold node under ``options``."""
    record = node.record
    if not isinstance(record, (BoxRecord, FoldRecord, SegmentRecord)):
        raise TypeError(f"node {node.id!r} of kind {node.kind!r} has no collapsed record")
    title = Row(_title(node, record), bold=True)
    if options.node_label_fields is not None:
        rows = []
        for token in check_label_fields(options.node_label_fields):
            text = title.text if token == "name" else _row(token, record, trace, options)
            if token == "name":
                rows.append(title)
            elif text is not None:
                rows.extend(Row(line) for line in wrap_row(text))
        # A node is never drawn blank: with no row left, it keeps its title.
        return tuple(rows) or (title,)
    tokens = ("op", "shape") if isinstance(record, SegmentRecord) else ("shape_summary", "shape")
    texts = [_row(token, record, trace, options) for token in (*tokens, "args")]
    return (title, *(Row(line) for text in texts if text is not None for line in wrap_row(text)))
