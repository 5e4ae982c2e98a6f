"""Value sources (docs/usage.md, "Value sources"): builtin tokens, record fields, callables.

A source is resolved once per draw into a ``ValueSource``; ``ValueSource.read`` applies
the value rules to one record.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, Final

from pytest_tlgraph.draw.encoding.units import format_value, key_name
from pytest_tlgraph.errors import EncodingRefusal
from pytest_tlgraph.fields import SUMMABLE, VALUE_READ, VOLATILE
from pytest_tlgraph.suggest import did_you_mean
from pytest_tlgraph.trace import Layer, Op, Trace

__all__ = [
    "BUILTIN_FIELDS",
    "VALUE_FIELDS",
    "ValueSource",
    "coerce",
    "require_available",
    "resolve_source",
    "tensor_item",
]

#: Builtin tokens and the record field each reads (``dims`` is computed; ``params``
#: reads the number of parameter elements an op uses, summed over a collapsed node's
#: member ops by the draw's reader).
BUILTIN_FIELDS: Final = {
    "time": "func_duration",
    "bytes": "activation_memory",
    "flops": "flops_forward",
    "magnitude": "magnitude",
    "grad_norm": "grad_norm",
    "device_time": "device_time",
    "dims": None,
    "params": "param_count",
}
#: Fields measured from tensor values: ``None`` on a trace without values (meta, fake).
VALUE_FIELDS: Final = VALUE_READ
#: Fields that read run-to-run noise: masked in snapshots.
VOLATILE_FIELDS: Final = VOLATILE
_RECORD_FIELDS: Final = frozenset(f.name for f in fields(Op)) | frozenset(
    f.name for f in fields(Layer)
)


@dataclass(frozen=True, slots=True)
class ValueSource:
    """A resolved source: how to read a value and how the key names and formats it."""

    name: str  # the key's quantity name: "time", "output bytes", "callable f", a field
    token: str  # builtin token, field name, or "callable"
    field: str | None
    fn: Callable[[Any], Any] | None

    @property
    def requested(self) -> str:
        """The source as the user wrote it: ``'dims'``, ``'flops_total'``, ``callable f``."""
        return self.name if self.fn is not None else repr(self.token)

    @property
    def additive(self) -> bool:
        """Whether collapsed nodes can show the exact sum of their member ops."""
        return self.field in SUMMABLE

    @property
    def volatile(self) -> bool:
        """Whether the source reads run-to-run noise (snapshots mask it)."""
        return self.field in VOLATILE_FIELDS

    def format(self, value: float) -> str:
        """The value as the key prints it."""
        return format_value(self.token if self.fn is None else "callable", value)

    def raw(self, record: Any) -> Any:
        """The unvalidated value of ``record`` (calls a callable source once)."""
        if self.fn is not None:
            try:
                return self.fn(record)
            except Exception as error:
                raise EncodingRefusal(
                    "encoding_callable_error",
                    cause=f"the value source {self.name!r} raised {type(error).__name__}: "
                    f"{error} on {getattr(record, 'label', record)!r}.",
                    remedy="fix the callable so it returns a number (or None) for every node.",
                ) from error
        if self.token == "dims":
            return _dims(getattr(record, "shape", None))
        return getattr(record, self.field or "", None)

    def read(self, record: Any, node_id: str) -> float | None:
        """The value rules: ``None``/NaN/inf -> ``None`` (unencoded); numbers and
        one-element tensors -> float; anything else refuses ``encoding_value_invalid``."""
        return coerce(self.raw(record), source=self.name, node_id=node_id)


def require_available(source: ValueSource, trace: Trace, channel: str) -> None:
    """Refuse ``magnitude_unavailable`` on a trace captured without magnitudes, and
    ``device_time_unavailable`` unless the trace's device join reached ``joined``: a
    missing measurement must never read as a drawing without values."""
    if source.field == "magnitude" and not trace.magnitudes:
        raise EncodingRefusal(
            "magnitude_unavailable",
            cause=f"{channel}={source.requested} reads output magnitudes, but this trace "
            "was captured without them (capture() measures them only when asked).",
            remedy="capture with capture(model, inputs, magnitudes=True), or choose another "
            "source such as 'flops' (the tlgraph_snapshot fixture and the tlgraph CLI ask "
            "for magnitudes themselves).",
        )
    if source.field != "device_time" or trace.device_join == "joined":
        return
    if trace.device_join is None:
        why = "this trace was captured without a profiler session (profile=False)"
    else:
        detail = (trace.device_join_reason or "").strip().rstrip(".")
        why = f"this trace's profiler join ended {trace.device_join!r}" + (
            f" ({detail})" if detail else ""
        )
    raise EncodingRefusal(
        "device_time_unavailable",
        cause=f"{channel}={source.requested} needs device kernels joined to ops, but {why}.",
        remedy="capture with profile=True on a machine with a GPU (the join must reach "
        "'joined'), or choose another source such as 'time'.",
    )


def _dims(shape: tuple[int, ...] | None) -> int | None:
    """Numel of the output shape without its batch axis; rank <= 1 gives 1."""
    if shape is None:
        return None
    numel = 1
    for dim in shape[1:]:
        numel *= dim
    return numel


def tensor_item(value: Any, *, given_by: str, node_id: str, expected: str) -> Any:
    """The item of a one-element tensor; any other value unchanged.

    A tensor of another size refuses ``encoding_value_invalid``: the cause names
    ``given_by`` (``"source 'x'"``, ``"stack_by='x'"``) and the node, the remedy asks for
    ``expected`` (``"one number"``) per node.
    """
    if not (hasattr(value, "numel") and hasattr(value, "item")):  # tensors, without torch
        return value
    if value.numel() != 1:
        raise EncodingRefusal(
            "encoding_value_invalid",
            cause=f"{given_by} gave a tensor with {value.numel()} elements for node {node_id!r}.",
            remedy=f"return {expected} per node (a one-element tensor counts as its item).",
        )
    return value.item()


def coerce(value: Any, *, source: str, node_id: str) -> float | None:
    """Apply the value rules to one raw value."""
    if value is None:
        return None
    value = tensor_item(
        value, given_by=f"source {source!r}", node_id=node_id, expected="one number"
    )
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise EncodingRefusal(
            "encoding_value_invalid",
            cause=f"source {source!r} gave {type(value).__name__} {value!r} for node "
            f"{node_id!r}, not a number.",
            remedy="use a numeric field or a callable returning a number (or None).",
        )
    try:
        number = float(value)
    except OverflowError:
        raise EncodingRefusal(
            "encoding_value_invalid",
            cause=f"source {source!r} gave a {type(value).__name__} too large for a float "
            f"(beyond about 1.8e308) for node {node_id!r}.",
            remedy="return values within float range, e.g. scaled to another unit.",
        ) from None
    return number if math.isfinite(number) else None


def resolve_source(source: Any, *, channel: str) -> ValueSource:
    """Resolve a channel's source; an unknown one refuses ``encoding_source_invalid``."""
    if callable(source) and not isinstance(source, str):
        name = getattr(source, "__name__", type(source).__name__)
        return ValueSource(name=f"callable {name}", token="callable", field=None, fn=source)
    if isinstance(source, str):
        if source in BUILTIN_FIELDS:
            if source == "dims" and channel != "size_by":
                raise EncodingRefusal(
                    "encoding_source_invalid",
                    cause=f"{channel}='dims' is a size-only token.",
                    remedy="use size_by='dims', or colour by 'bytes' or another quantity.",
                )
            return ValueSource(
                name=key_name(source), token=source, field=BUILTIN_FIELDS[source], fn=None
            )
        if source in _RECORD_FIELDS:
            return ValueSource(name=source, token=source, field=source, fn=None)
    valid = ", ".join(sorted(BUILTIN_FIELDS))
    raise EncodingRefusal(
        "encoding_source_invalid",
        cause=f"{channel}={source!r} is neither a builtin token, a record field nor a callable"
        f"{did_you_mean(source, [*BUILTIN_FIELDS, *_RECORD_FIELDS])}.",
        remedy=f"use one of {valid}, an Op/Layer field name, or a callable node -> number.",
    )
