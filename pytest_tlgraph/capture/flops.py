"""FLOP accounting (ENCODING.md §1.3).

Matmul, linear, conv, bmm, baddbmm and attention FLOPs come from torch's own counter
(``torch.utils.flop_counter.flop_registry``), attributed to the op that issued them.
Pointwise ops cost a per-element factor times the output numel; views, reshapes and
copies cost 0; anything else is ``None``.

Counting runs the call again under a dispatch mode, after the timed real call, so the
counter's overhead never shows up in ``func_duration``. A count depends only on the
call's shapes and scalar arguments, so it is memoised on that signature: a model that
repeats a block pays for one count per distinct call.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from typing import Any, Final

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import flop_registry

# Registers torch._grouped_mm's formula with torch's own counter.
from pytest_tlgraph.capture import grouped_mm as _grouped_mm  # noqa: F401
from pytest_tlgraph.memo import remember

__all__ = [
    "COUNTED_FUNCS",
    "REDUCTION_COST",
    "TorchFlopCounter",
    "count_flops",
    "flop_fields",
    "input_work",
    "is_counted",
]

#: Calls whose cost torch's counter knows: the dispatch mode runs around these only.
COUNTED_FUNCS: Final = frozenset(
    {
        "linear", "bilinear", "matmul", "mm", "bmm", "baddbmm", "addmm", "addbmm", "einsum",
        "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
        "conv_transpose3d", "convolution", "scaled_dot_product_attention",
        "multi_head_attention_forward", "lstm", "gru", "rnn_tanh", "rnn_relu",
        "lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell", "_grouped_mm",
    }
)  # fmt: skip


def _torch_callables() -> frozenset[Any]:
    """torch's own callables named in ``COUNTED_FUNCS``: the replay re-runs these only."""
    import torch.nn.functional as F

    owners: tuple[Any, ...] = (torch, F, torch.Tensor, torch._C._VariableFunctions, torch._C._nn)
    found: set[Any] = set()
    for name in COUNTED_FUNCS:
        for owner in owners:
            value = getattr(owner, name, None)
            if callable(value):
                found.add(value)
    for dunder in ("__matmul__", "__rmatmul__", "__imatmul__"):
        value = getattr(torch.Tensor, dunder, None)
        if value is not None:
            found.add(value)
    return frozenset(found)


_COUNTED_CALLABLES: Final = _torch_callables()


def is_counted(func: Any) -> bool:
    """Whether ``func`` is one of torch's own functions whose cost torch's counter knows.

    Decided by identity, never by name: a user's function that happens to be called
    ``linear`` (and may change state) is never run a second time.
    """
    try:
        return func in _COUNTED_CALLABLES
    except TypeError:  # unhashable: not one of torch's functions
        return False


#: Per-element cost of pointwise (and fixed-cost-per-element) ops, times output numel.
POINTWISE_COST: Final = {
    **dict.fromkeys(
        (
            "add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_", "neg", "abs",
            "relu", "relu_", "relu6", "leaky_relu", "hardtanh", "clamp", "clamp_", "clip",
            "clamp_min", "clamp_max", "maximum", "minimum", "where", "floor_divide",
            "remainder", "fmod", "sqrt", "rsqrt", "exp", "exp2", "expm1", "log", "log2",
            "log10", "log1p", "pow", "pow_", "square", "reciprocal", "threshold", "sign",
            "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "erf",
            "erfc", "floor", "ceil", "round", "trunc", "frac", "eq", "ne", "lt", "le", "gt",
            "ge", "isnan", "isinf", "isfinite", "logical_and", "logical_or", "logical_not",
            "logical_xor", "and", "or", "xor", "invert", "bitwise_and", "bitwise_or",
            "bitwise_not", "masked_fill", "masked_fill_", "addcmul", "addcdiv", "lerp",
            "nan_to_num", "neg_", "exp_",
        ),
        1,
    ),
    **dict.fromkeys(("sigmoid", "tanh", "hardsigmoid", "hardswish", "elu", "selu"), 4),
    **dict.fromkeys(("silu", "mish", "softplus"), 5),
    **dict.fromkeys(("gelu",), 8),
    **dict.fromkeys(("softmax", "log_softmax", "layer_norm", "group_norm", "rms_norm"), 5),
    **dict.fromkeys(("batch_norm", "instance_norm"), 4),
}  # fmt: skip

#: Per-element cost of reductions, scans and selections, times the numel of the larger
#: of the first tensor argument and the output (a reduction reads every input element
#: once; the same names called elementwise, such as ``max(a, b)``, read the output's).
#: Sorts compare ``ceil(log2(n))`` times per element of an axis of length ``n``.
REDUCTION_COST: Final = {
    **dict.fromkeys(
        (
            "sum", "mean", "nansum", "amax", "amin", "max", "min", "aminmax", "argmax",
            "argmin", "prod", "all", "any", "cumsum", "cumprod", "cummax", "cummin", "diff",
            "count_nonzero", "topk", "histc", "bincount", "searchsorted", "bucketize",
            "embedding_bag", "sort", "argsort", "msort", "avg_pool1d", "avg_pool2d",
            "avg_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
        ),
        1,
    ),
    **dict.fromkeys(("norm", "vector_norm"), 2),
    **dict.fromkeys(("var", "std", "var_mean", "std_mean", "logsumexp", "logcumsumexp"), 3),
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
        "max_pool3d", "adaptive_max_pool2d", "pixel_shuffle", "full_like", "empty_like",
        "rand_like", "randn_like", "new_ones", "new_zeros", "new_full", "new_empty",
        "new_tensor", "zero_", "fill_", "copy_", "index", "as_strided",
        "view_as_real", "view_as_complex", "unfold", "scatter", "index_put_",
        "repeat_interleave", "one_hot", "randint", "randn", "rand", "empty_strided",
        "diagonal", "type_as", "long", "int", "bool", "eye", "linspace",
        # Every dtype cast, and the ``.data`` alias: a copy or a view, no arithmetic.
        "byte", "char", "short", "cfloat", "cdouble", "chalf", "data",
    }
)  # fmt: skip


#: Fragments of the names of fused kernels torch's table does not list (CPU flash
#: attention, the native multi-head attention and encoder-layer kernels, oneDNN RNNs).
_FUSED_MARKS: Final = ("attention", "multi_head", "transformer", "rnn", "lstm", "gru")


class TorchFlopCounter(TorchDispatchMode):  # type: ignore[no-untyped-call]
    """Sums torch's own FLOP formulas over the aten ops one call dispatches.

    ``fused`` turns true when a fused attention or RNN kernel ran that neither has a
    formula nor decomposes: the count then misses its matmuls.
    """

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.flops = 0
        self.fused = False

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # torch otherwise wraps ``__torch_dispatch__`` to keep torch.compile out of it,
        # which imports torch._dynamo (over a second) on the first count. Nothing here
        # is ever compiled.
        return False

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
            # A composite op torch's counter does not list may decompose into ones it
            # does (inference tensors reach here whole: linear, not its mm). The mode is
            # off inside its own handler: entered again, it sees the decomposed calls.
            with self:
                decomposed = func.decompose(*args, **kwargs)
            if decomposed is not NotImplemented:
                return decomposed
            if any(mark in packet.__name__ for mark in _FUSED_MARKS):
                self.fused = True
        out = func(*args, **kwargs)
        formula = flop_registry.get(packet)
        if formula is not None:
            self.flops += int(formula(*args, **kwargs, out_val=out))
        return out


_SCALARS: Final = (bool, int, float, str, torch.dtype, torch.device, torch.layout)
_FLAT: Final = frozenset({bool, int, float, str, type(None), torch.dtype})
_MEMO_LIMIT: Final = 4096
_memo: dict[Hashable, int] = {}


class _Unkeyable(Exception):
    """An argument whose value cannot be part of a memo key."""


def _key(value: Any) -> Hashable:
    # Torch's formulas read shapes only: shape and dtype identify a tensor argument.
    if isinstance(value, torch.Tensor):
        return (value.shape, value.dtype)
    if type(value) in _FLAT:
        flat: Hashable = value
        return flat
    if type(value) is tuple and _FLAT.issuperset(map(type, value)):
        return (tuple, *value)  # strides, paddings: the general case's key, built at once
    if isinstance(value, (list, tuple)):
        return (type(value), *(_key(v) for v in value))
    if isinstance(value, _SCALARS):
        return (type(value), value)
    raise _Unkeyable


def _signature(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Hashable | None:
    """What a FLOP count depends on: shapes, dtypes and scalar arguments."""
    try:
        key = (name, *map(_key, args))
        if kwargs:
            key += (tuple((k, _key(v)) for k, v in sorted(kwargs.items())),)
    except _Unkeyable:
        return None
    return key


def _meta(value: Any) -> Any:
    """``value`` with every tensor replaced by a meta tensor of the same layout."""
    if isinstance(value, torch.Tensor):
        return torch.empty_strided(value.shape, value.stride(), dtype=value.dtype, device="meta")
    if isinstance(value, (list, tuple)):
        return type(value)(_meta(v) for v in value)
    if isinstance(value, dict):
        return {k: _meta(v) for k, v in value.items()}
    return value


def _cuda_devices(value: Any) -> list[int]:
    if isinstance(value, torch.Tensor):
        return [value.device.index or 0] if value.device.type == "cuda" else []
    if isinstance(value, (list, tuple)):
        return sorted({d for v in value for d in _cuda_devices(v)})
    if isinstance(value, dict):
        return _cuda_devices(list(value.values()))
    return []


def _math_attention() -> Any:
    """``scaled_dot_product_attention`` restricted to its math backend."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    return sdpa_kernel([SDPBackend.MATH])


def _replay(
    func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], *, meta: bool
) -> tuple[int | None, bool]:
    """Count one call by running it again under the counter, with no autograd graph,
    the random state restored (dropout inside attention draws numbers) and no ``out=``.

    ``meta=True`` runs it on meta tensors: no device work at all, and torch takes its
    decomposed path, which its formulas cover where a fused CPU kernel is unlisted.
    Returns the count and whether an uncounted fused kernel ran.
    """
    kwargs = {k: v for k, v in kwargs.items() if k != "out"}
    if meta:
        args, kwargs = _meta(args), _meta(kwargs)
    counter = TorchFlopCounter()
    try:
        with (
            torch.no_grad(),
            torch.random.fork_rng(devices=_cuda_devices((args, kwargs))),
            # On real tensors too, attention runs its math decomposition, the path it
            # takes on meta tensors: the fused CPU kernel has no formula, and a meta
            # replay's first run imports torch._dynamo and sympy (seconds).
            _math_attention(),
            counter,
        ):
            func(*args, **kwargs)
    except Exception:
        # A call that cannot be repeated has no count: unknown, never guessed.
        return None, False
    return counter.flops, counter.fused


def count_flops(
    func: Callable[..., Any],
    name: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    *,
    device_work: bool = True,
) -> int | None:
    """Torch's FLOP count of ``func(*args, **kwargs)`` (a ``COUNTED_FUNCS`` call).

    ``device_work=False`` counts on meta tensors only, so no kernel runs outside the
    op's profiler range.
    """
    key = _signature(name, args, kwargs)
    if key is not None:
        known = _memo.get(key)
        if known is not None:
            return known
    counted, fused = _replay(func, args, kwargs, meta=False) if device_work else (None, True)
    if fused or not counted:
        # The kernel torch chose is missing from its table (CPU attention inside
        # multi-head attention, fused RNNs), alone or beside counted matmuls: count the
        # decomposition, which is what torch's counter reads on the math path.
        on_meta, _ = _replay(func, args, kwargs, meta=True)
        counted = on_meta if on_meta is not None else counted
    # A zero is not remembered: it is cheap to count again, and a call that reads 0
    # under one state of torch must not stand for every later call of its shapes.
    if key is not None and counted:
        remember(_memo, key, counted, _MEMO_LIMIT)
    return counted


_SORTS: Final = frozenset({"sort", "argsort", "msort"})


def input_work(
    name: str, first: torch.Tensor | None, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> int:
    """The element count a ``REDUCTION_COST`` op's cost multiplies: the numel of its
    first tensor argument ``first``, times ``ceil(log2(n))`` for a sort along an axis
    of length ``n``."""
    if first is None:
        return 0
    numel = first.numel()
    if name in _SORTS and first.dim() > 0:
        dim = kwargs.get("dim", args[1] if len(args) > 1 and type(args[1]) is int else -1)
        if name == "msort":
            dim = 0
        length = first.shape[dim] if type(dim) is int else first.shape[-1]
        return numel * max(1, math.ceil(math.log2(length))) if length > 1 else numel
    return numel


FlopFields = tuple[int | None, int | None, int | None, int | None]
_UNKNOWN: Final[FlopFields] = (None, None, None, None)
_ZERO: Final[FlopFields] = (0, 0, 0, 0)


def flop_fields(func: str, counted: int | None, out_numel: int, in_numel: int = 0) -> FlopFields:
    """``(forward, backward, total, macs)`` for a call named ``func``.

    ``counted`` is what torch's counter measured (for ``COUNTED_FUNCS``), ``out_numel``
    the numel of the first tensor output, ``in_numel`` that of the first tensor
    argument (read by reductions).
    """
    if counted is not None and func in COUNTED_FUNCS:
        return (counted, 2 * counted, 3 * counted, counted // 2)
    if func in ZERO_COST:
        return _ZERO
    cost = POINTWISE_COST.get(func)
    if cost is not None:
        forward = cost * out_numel
        # Pointwise ops multiply-accumulate nothing: zero MACs.
        return (forward, forward, 2 * forward, 0)
    cost = REDUCTION_COST.get(func)
    if cost is not None:
        forward = cost * max(in_numel, out_numel)
        return (forward, forward, 2 * forward, 0)
    return _UNKNOWN
