"""Label rows per visible node (ENCODING.md §5): plain text, top to bottom.

Rows are plain text here; ``dot.py`` escapes them and sets the bold title.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_tlgraph.encoding.units import format_bytes
from pytest_tlgraph.options import DrawOptions
from pytest_tlgraph.plan import PlanNode
from pytest_tlgraph.trace import Layer, Op, Trace

__all__ = ["Row", "format_shape", "node_rows"]


@dataclass(frozen=True, slots=True)
class Row:
    """One label row: its plain text and whether it is drawn bold."""

    text: str
    bold: bool = False


def format_shape(shape: tuple[int, ...] | None) -> str:
    """``(2, 32)`` -> ``2x32``; a 0-d shape reads ``scalar``."""
    if shape is None:
        return "?"
    return "x".join(str(d) for d in shape) if shape else "scalar"


def _title(node: PlanNode) -> str:
    record = node.record
    if isinstance(record, Layer) and record.num_passes > 1:
        return f"{record.label} (x{record.num_passes})"
    return node.id


def _shape_row(record: Op | Layer) -> str | None:
    if record.shape is None:
        return None
    size = record.activation_memory
    if size is None:
        return format_shape(record.shape)
    return f"{format_shape(record.shape)}, {format_bytes(size)}"


def _format_arg(value: Any) -> str:
    if isinstance(value, tuple):
        return "(" + ", ".join(_format_arg(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    return str(value)


def args_row(args: Mapping[str, Any] | None) -> str | None:
    """``in_features=32, out_features=10``: the module's constructor args."""
    if not args:
        return None
    return ", ".join(f"{name}={_format_arg(value)}" for name, value in args.items())


def _params_row(record: Op | Layer) -> str | None:
    if not record.params:
        return None
    prefix = f"{record.module}." if record.module else ""
    parts = []
    for name, shape, trainable in record.params:
        short = name.removeprefix(prefix)
        parts.append(f"{short} {format_shape(shape)}" + ("" if trainable else " (frozen)"))
    return "params: " + ", ".join(parts)


def node_rows(node: PlanNode, *, trace: Trace, options: DrawOptions) -> tuple[Row, ...]:
    """The label rows of one plan node under ``options``."""
    record = node.record
    rows = [Row(_title(node), bold=True)]
    if not isinstance(record, (Op, Layer)):
        return tuple(rows)
    for text in (
        _shape_row(record),
        args_row(record.module_args),
        _params_row(record),
        f"@{record.module}" if node.kind in ("op", "layer") and record.module else None,
    ):
        if text is not None:
            rows.append(Row(text))
    return tuple(rows)
