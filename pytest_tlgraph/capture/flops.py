"""FLOP accounting (ENCODING.md §1.3).

Matmul, linear, conv, bmm, baddbmm and attention FLOPs come from torch's own counter
(``torch.utils.flop_counter.flop_registry``), attributed to the op that issued them by a
dispatch mode entered only around those calls. Pointwise ops cost a per-element factor
times the output numel; views, reshapes and copies cost 0; anything else is ``None``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import flop_registry

__all__ = ["COUNTED_FUNCS", "FlopCount", "TorchFlopCounter", "flops_for"]

#: Calls whose cost torch's counter knows: the dispatch mode runs around these only.
COUNTED_FUNCS: Final = frozenset(
    {
        "linear", "bilinear", "matmul", "mm", "bmm", "baddbmm", "addmm", "addbmm", "einsum",
        "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
        "conv_transpose3d", "convolution", "scaled_dot_product_attention",
        "multi_head_attention_forward", "lstm", "gru", "rnn_tanh", "rnn_relu",
    }
)  # fmt: skip

#: Per-element cost of pointwise (and fixed-cost-per-element) ops.
POINTWISE_COST: Final = {
    **dict.fromkeys(
        (
            "add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_", "neg", "abs",
            "relu", "relu_", "relu6", "leaky_relu", "hardtanh", "clamp", "clamp_", "clip",
            "maximum", "minimum", "where", "floor_divide", "remainder", "sqrt", "rsqrt",
            "exp", "log", "pow", "square", "reciprocal", "threshold", "sign", "eq", "ne",
            "lt", "le", "gt", "ge", "masked_fill", "addcmul",
        ),
        1,
    ),
    **dict.fromkeys(("sigmoid", "tanh", "hardsigmoid", "hardswish", "elu", "selu"), 4),
    **dict.fromkeys(("silu", "mish", "softplus"), 5),
    **dict.fromkeys(("gelu",), 8),
    **dict.fromkeys(("softmax", "log_softmax", "layer_norm", "group_norm", "rms_norm"), 5),
    **dict.fromkeys(("batch_norm", "instance_norm"), 4),
}  # fmt: skip

#: Views, reshapes, copies and constructors: no arithmetic.
ZERO_COST: Final = frozenset(
    {
        "view", "reshape", "flatten", "unflatten", "permute", "transpose", "t", "T", "mT",
        "contiguous", "clone", "to", "float", "half", "double", "bfloat16", "type",
        "getitem", "setitem", "squeeze", "unsqueeze", "expand", "expand_as", "repeat",
        "cat", "concat", "stack", "split", "chunk", "narrow", "select", "detach",
        "view_as", "reshape_as", "movedim", "dropout", "identity", "zeros", "ones",
        "zeros_like", "ones_like", "full", "empty", "arange", "tensor", "pad",
        "unbind", "index_select", "gather", "embedding", "cpu", "cuda", "flip", "roll",
        "tile", "tril", "triu", "masked_select", "max_pool1d", "max_pool2d",
        "max_pool3d", "adaptive_max_pool2d", "pixel_shuffle",
    }
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class FlopCount:
    """The four FLOP fields of one op."""

    forward: int | None
    backward: int | None
    total: int | None
    macs: int | None


class TorchFlopCounter(TorchDispatchMode):
    """Sums torch's own FLOP formulas over the aten ops one call dispatches."""

    def __init__(self) -> None:
        super().__init__()
        self.flops = 0

    def __torch_dispatch__(
        self,
        func: Any,
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = kwargs or {}
        packet = func._overloadpacket
        if packet not in flop_registry:
            # A composite op torch's counter does not list may decompose into ones it does.
            decomposed = func.decompose(*args, **kwargs)
            if decomposed is not NotImplemented:
                return decomposed
        out = func(*args, **kwargs)
        formula = flop_registry.get(packet)
        if formula is not None:
            self.flops += int(formula(*args, **kwargs, out_val=out))
        return out


def flops_for(func: str, counted: int | None, out_numel: int | None) -> FlopCount:
    """The FLOP fields for a call named ``func``.

    ``counted`` is what torch's counter measured (for ``COUNTED_FUNCS``), ``out_numel``
    the numel of the first tensor output.
    """
    if func in COUNTED_FUNCS and counted is not None:
        return FlopCount(counted, 2 * counted, 3 * counted, counted // 2)
    if func in ZERO_COST:
        return FlopCount(0, 0, 0, 0)
    cost = POINTWISE_COST.get(func)
    if cost is not None and out_numel is not None:
        forward = cost * out_numel
        # Pointwise ops multiply-accumulate nothing: zero MACs.
        return FlopCount(forward, forward, 2 * forward, 0)
    return FlopCount(None, None, None, None)


def numel(shape: tuple[int, ...] | None) -> int | None:
    """Number of elements of ``shape`` (``None`` for no shape)."""
    if shape is None:
        return None
    return int(torch.Size(shape).numel())
