"""Output magnitudes of small tensors measured in batches, away from the forward pass.

``MagnitudeBatch`` keeps each small op output until the next flush and then measures
the whole batch in one loop with :func:`~pytest_tlgraph.capture.measure.magnitude`
itself: a norm costs far more in call overhead than in arithmetic for the small
tensors of a typical test model, and a loop of them runs much faster than the same
calls spread over the forward pass. A batch holds at most ``MAX_TENSORS`` tensors of at
most ``MAX_BATCHED_NUMEL`` elements (2 MiB in float64).

Deferring is only correct while nothing writes to a kept tensor, so the recorder
flushes before every call that may write (see :func:`may_write`), and a kept tensor
whose version counter moved anyway (a write no torch function saw) reads ``None``:
unknown, never a later value.
"""

from __future__ import annotations

import math
from typing import Any, Final

import numpy as np
import torch

from pytest_tlgraph.capture.measure import float_kind, magnitude
from pytest_tlgraph.capture.raw import RawOp

__all__ = ["MagnitudeBatch", "may_write"]

#: Calls that never write to an existing tensor (unless given ``out=``).
PURE_CALLS: Final = frozenset(
    {
        "linear", "bilinear", "matmul", "mm", "bmm", "baddbmm", "addmm", "addbmm", "einsum",
        "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
        "conv_transpose3d", "convolution", "scaled_dot_product_attention", "layer_norm",
        "group_norm", "rms_norm", "softmax", "log_softmax", "gelu", "sigmoid", "tanh",
        "add", "sub", "mul", "div", "neg", "abs", "pow", "sqrt", "rsqrt", "exp", "log",
        "maximum", "minimum", "where", "clamp", "clip", "floor_divide", "remainder",
        "square", "reciprocal", "eq", "ne", "lt", "le", "gt", "ge", "masked_fill",
        "addcmul", "mean", "sum", "amax", "amin", "max", "min", "argmax", "argmin",
        "cumsum", "view", "reshape", "flatten", "unflatten", "permute", "transpose", "t",
        "T", "mT", "contiguous", "clone", "to", "float", "half", "double", "bfloat16",
        "type", "getitem", "squeeze", "unsqueeze", "expand", "expand_as", "repeat", "cat",
        "concat", "stack", "split", "chunk", "narrow", "select", "detach", "view_as",
        "reshape_as", "movedim", "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d",
        "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
        "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d", "pad",
        "interpolate", "unbind", "index_select", "gather", "flip", "roll", "tile", "tril",
        "triu", "zeros_like", "ones_like", "full_like", "zeros", "ones", "full", "empty",
        "arange", "tensor", "pixel_shuffle",
        "int", "bool", "long", "byte", "char", "short", "cfloat", "cdouble", "chalf",
    }
)  # fmt: skip

#: Calls that write to their input when given ``inplace=True`` (by keyword or position).
INPLACE_FLAG_CALLS: Final = frozenset(
    {"relu", "relu6", "hardtanh", "leaky_relu", "elu", "selu", "celu", "silu", "mish",
     "hardswish", "hardsigmoid", "threshold"}
)  # fmt: skip

#: Tensors of more elements are measured at once: their norm costs its arithmetic, which
#: no batch saves.
MAX_BATCHED_NUMEL: Final = 2048
#: Kept tensors beyond which a batch is measured at once.
MAX_TENSORS: Final = 128

_strided: Final = torch.strided
_NUMPY_FLOATS: Final = frozenset({torch.float32, torch.float64})
_wrapped: Final = torch._C._functorch.is_functorch_wrapped_tensor
_vdot: Final = np.vdot
_inf: Final = math.inf
_sqrt: Final = math.sqrt
_BATCHED_TYPES: Final = (torch.Tensor, torch.nn.Parameter)


def may_write(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether the call ``name(*args, **kwargs)`` may write to a tensor it did not
    create: anything not known to be pure, an ``out=`` argument, an in-place flag."""
    if kwargs and ("out" in kwargs or kwargs.get("inplace")):
        return True
    if name in PURE_CALLS:
        return False
    if name in INPLACE_FLAG_CALLS:
        # F.relu(x, True): a flag passed by position (identity: never compare tensors).
        return any(a is True for a in args[1:])
    return True


class MagnitudeBatch:
    """Op outputs waiting for their magnitude, written to ``RawOp.magnitude`` on flush."""

    __slots__ = ("pending",)

    def __init__(self) -> None:
        #: The kept outputs ``(record, tensor, version)``: empty when nothing waits.
        self.pending: list[tuple[RawOp, torch.Tensor, int]] = []

    def add(self, raw: RawOp, t: torch.Tensor, count: int) -> None:
        """Measure ``t`` (of ``count`` elements) into ``raw.magnitude``: at the next
        flush for a small dense CPU tensor, at once for anything else (large, other
        devices, layouts, subclasses)."""
        if (
            count > MAX_BATCHED_NUMEL
            or type(t) not in _BATCHED_TYPES
            or not t.is_cpu
            or t.layout is not _strided
            or t.is_inference()  # no version counter to tell a later write by
        ):
            raw.magnitude = magnitude(t)
            return
        if count == 0 or not float_kind(t.dtype)[0]:
            return  # no magnitude: the field stays None
        self.pending.append((raw, t, t._version))
        if len(self.pending) >= MAX_TENSORS:
            self.flush()

    def flush(self) -> None:
        """Measure every kept tensor and let go of them.

        :func:`add` kept only dense CPU tensors of a float dtype with elements: for a
        contiguous float32 or float64 one, the loop takes :func:`magnitude`'s numpy
        path itself, without asking again what ``add`` asked (the same dot, the same
        value); anything else goes through :func:`magnitude`.
        """
        pending, self.pending = self.pending, []
        for raw, t, version in pending:
            # A write no torch function saw leaves the op's own values gone: unknown.
            if t._version != version:
                continue
            if t.dtype in _NUMPY_FLOATS and t.is_contiguous() and not _wrapped(t):
                try:
                    array = t.numpy(force=True)
                except RuntimeError:
                    array = None
                if array is not None:
                    squares = float(_vdot(array, array))
                    if squares != _inf:
                        raw.magnitude = _sqrt(squares / t.numel())
                        continue
            # Overflowing squares, other dtypes, strided views: the general path.
            raw.magnitude = magnitude(t)

    def clear(self) -> None:
        """Let go of every kept tensor without measuring it."""
        self.pending = []
