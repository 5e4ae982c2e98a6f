"""Checked suppression of redundant module constructor args
(docs/decisions.md, "Drawings a reviewer can read (0.2)").

An arg is left out of a node's label exactly when it provably equals the captured
shape dimension it claims to duplicate. The eligible args form a closed table of
torch.nn module families; everything outside the table, every mismatch and every
missing shape keeps the arg visible, so the check can only reveal, never hide.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final, Literal

from pytest_tlgraph.trace import Layer, Op, Shape, Trace

__all__ = [
    "FAMILY_TABLE",
    "NEVER_CANDIDATES",
    "Candidate",
    "hidden_args",
    "input_shape",
    "output_shape",
    "redundant_args",
]


@dataclass(frozen=True, slots=True)
class Candidate:
    """One suppressible arg: the shape it duplicates and where in that shape.

    ``axis`` is ``"last"`` (``shape[-1]``), ``"channel"`` (logical axis 1 of a batched
    shape) or ``"trailing"`` (the arg is a tuple equal to the shape's trailing dims).
    """

    arg: str
    side: Literal["input", "output"]
    axis: Literal["last", "channel", "trailing"]


#: The closed table: module family -> the args that may be checked, and against what.
FAMILY_TABLE: Final[Mapping[str, tuple[Candidate, ...]]] = MappingProxyType(
    {
        "linear": (
            Candidate("in_features", "input", "last"),
            Candidate("out_features", "output", "last"),
        ),
        "conv": (
            Candidate("in_channels", "input", "channel"),
            Candidate("out_channels", "output", "channel"),
        ),
        "norm": (Candidate("num_features", "output", "channel"),),
        "layernorm": (Candidate("normalized_shape", "output", "trailing"),),
        "embedding": (Candidate("embedding_dim", "output", "last"),),
        "mha": (Candidate("embed_dim", "output", "last"),),
    }
)

#: Args that are never suppressed: no input or output shape can recover them.
NEVER_CANDIDATES: Final = frozenset(
    {"kernel_size", "stride", "padding", "dilation", "groups", "num_embeddings", "num_heads",
     "dropout", "p"}
)  # fmt: skip


def _is_dim(value: Any) -> bool:
    # bool is an int subclass; a flag never stands for a dimension.
    return isinstance(value, int) and not isinstance(value, bool)


def _channel_rank_ok(shape: Shape, family: str, args: Mapping[str, Any]) -> bool:
    """Axis 1 is the channel only for a batched input (PyTorch's module contract)."""
    if family == "conv":
        # ConvNd also takes unbatched (C, *spatial) input, whose channel is axis 0: the
        # kernel's rank tells the two apart.
        kernel = args.get("kernel_size")
        return isinstance(kernel, tuple) and len(shape) == len(kernel) + 2
    return len(shape) >= 2


def _matches(
    candidate: Candidate, value: Any, shape: Shape | None, family: str, args: Mapping[str, Any]
) -> bool:
    if shape is None:
        return False
    if candidate.axis == "last":
        return _is_dim(value) and len(shape) >= 1 and shape[-1] == value
    if candidate.axis == "channel":
        return _is_dim(value) and _channel_rank_ok(shape, family, args) and shape[1] == value
    if not (isinstance(value, tuple) and value and all(_is_dim(v) for v in value)):
        return False
    return len(value) <= len(shape) and tuple(shape[len(shape) - len(value) :]) == value


def redundant_args(
    args: Mapping[str, Any] | None,
    *,
    family: str | None,
    input_shape: Shape | None,
    output_shape: Shape | None,
) -> frozenset[str]:
    """Names of the args in ``args`` that the check licenses to omit.

    ``family`` is the module family recorded at capture (``Op.module_family``);
    ``input_shape`` the shape of the single incoming data edge's source (``None`` when
    there are several inputs or none), ``output_shape`` the module's output shape.
    Unknown families, missing shapes and mismatches license nothing.
    """
    return frozenset(hidden_args(args, family, input_shape, output_shape))


def hidden_args(
    args: Mapping[str, Any] | None,
    family: str | None,
    input_shape: Shape | None,
    output_shape: Shape | None,
) -> tuple[str, ...]:
    """:func:`redundant_args` as a tuple, with positional arguments: what every args
    row of a draw asks."""
    if not args or family is None:
        return ()
    names: tuple[str, ...] = ()
    for candidate in FAMILY_TABLE.get(family, ()):
        if candidate.arg not in args:
            continue
        shape = input_shape if candidate.side == "input" else output_shape
        if _matches(candidate, args[candidate.arg], shape, family, args):
            names += (candidate.arg,)
    return names


def _op_input_shape(op: Op, trace: Trace) -> Shape | None:
    if len(op.parents) != 1:
        return None
    return trace.op(op.parents[0]).shape


def input_shape(record: Op | Layer, trace: Trace) -> Shape | None:
    """The shape of ``record``'s single incoming data edge, or ``None``.

    A rolled ``Layer`` has one only when every pass reads exactly one tensor and all
    of those tensors share a shape. Raises ``KeyError`` for a record not in ``trace``.
    """
    if isinstance(record, Op):
        return _op_input_shape(trace.op(record.label), trace)
    shapes = {_op_input_shape(trace.op(label), trace) for label in record.ops}
    if len(shapes) != 1:
        return None
    return next(iter(shapes))


def output_shape(record: Op | Layer) -> Shape | None:
    """The shape the output-side args are checked against, or ``None`` if unavailable.

    ``None`` for a rolled layer whose passes disagree on shape, and for an
    ``InstanceNormNd`` fed an unbatched input: its channel is axis 0 there, and the
    family alone cannot tell it from a ``BatchNorm`` of one rank more.
    """
    shape = record.shape
    kind = record.module_type or ""
    unbatched = (
        shape is not None
        and kind.startswith("InstanceNorm")
        and kind[-2:-1].isdigit()
        and len(shape) == int(kind[-2]) + 1
    )
    return None if unbatched else shape
