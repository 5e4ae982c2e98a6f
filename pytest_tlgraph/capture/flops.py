"""FLOP accounting (docs/decisions.md, "FLOPs and the per-element table").

Matmul, linear, conv, bmm, baddbmm and attention FLOPs come from torch's own counter
(``torch.utils.flop_counter.flop_registry``), attributed to the op that issued them.
Pointwise ops cost a per-element factor times the output numel; views, reshapes and
copies cost 0; indexed writes one per element written; resampling one per tap read;
anything else is ``None``.

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
from pytest_tlgraph.capture.quantized import QUANTIZED_MATMULS, quantized_matmul_work
from pytest_tlgraph.memo import remember

__all__ = [
    "COUNTED_FUNCS",
    "REDUCTION_COST",
    "WORK_FUNCS",
    "TorchFlopCounter",
    "count_flops",
    "element_work",
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
            "nan_to_num", "neg_", "exp_", "abs_", "sqrt_", "rsqrt_", "clamp_min_",
            "clamp_max_", "hardtanh_", "leaky_relu_", "threshold_", "relu6_", "prelu",
            "rrelu", "hardshrink", "softshrink", "sgn", "signbit", "heaviside", "copysign",
            "hypot", "xlogy", "logit", "lerp_", "addcmul_", "addcdiv_", "square_",
        ),
        1,
    ),
    **dict.fromkeys(
        ("sigmoid", "tanh", "hardsigmoid", "hardswish", "elu", "selu", "celu", "sigmoid_",
         "tanh_", "hardsigmoid_", "hardswish_", "elu_", "selu_", "celu_", "softsign",
         "tanhshrink"),
        4,
    ),
    **dict.fromkeys(("silu", "mish", "softplus", "silu_", "mish_", "logsigmoid", "glu"), 5),
    **dict.fromkeys(("gelu", "gelu_"), 8),
    **dict.fromkeys(
        ("softmax", "log_softmax", "softmin", "layer_norm", "group_norm", "rms_norm"), 5
    ),
    **dict.fromkeys(("batch_norm", "instance_norm"), 4),
    # The norm of ``v`` (a square and an add per element), then ``v`` scaled by ``g``.
    **dict.fromkeys(("_weight_norm", "_weight_norm_interface", "normalize"), 3),
}  # fmt: skip

#: torch's alternative spellings of pointwise ops (``torch.multiply`` is ``torch.mul``):
#: each counts like the name it spells.
POINTWISE_ALIASES: Final = {
    "multiply": "mul", "subtract": "sub", "divide": "div", "true_divide": "div",
    "absolute": "abs", "negative": "neg", "greater": "gt", "greater_equal": "ge",
    "less": "lt", "less_equal": "le", "not_equal": "ne", "arccos": "acos",
    "arcsin": "asin", "arctan": "atan", "arctan2": "atan2", "fix": "trunc",
    "multiply_": "mul_", "subtract_": "sub_", "divide_": "div_", "true_divide_": "div_",
    "absolute_": "abs_", "negative_": "neg_",
}  # fmt: skip
POINTWISE_COST.update({alias: POINTWISE_COST[name] for alias, name in POINTWISE_ALIASES.items()})

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
            "nonzero", "argwhere", "nanmean", "median", "nanmedian", "mode", "kthvalue",
            "cumulative_trapezoid", "trapezoid", "trapz", "cumsum_", "cumprod_", "renorm",
        ),
        1,
    ),
    # A square and an add per element (then a root over the reduced values).
    **dict.fromkeys(
        ("norm", "vector_norm", "linalg_vector_norm", "linalg_norm", "frobenius_norm",
         "linalg_matrix_norm", "dist"),
        2,
    ),
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
        "unbind", "embedding", "cpu", "cuda", "flip", "roll",
        "tile", "tril", "triu", "masked_select", "max_pool1d", "max_pool2d",
        "max_pool3d", "adaptive_max_pool2d", "pixel_shuffle", "full_like", "empty_like",
        "rand_like", "randn_like", "new_ones", "new_zeros", "new_full", "new_empty",
        "new_tensor", "zero_", "fill_", "copy_", "index", "as_strided",
        "view_as_real", "view_as_complex", "unfold",
        "repeat_interleave", "one_hot", "randint", "randn", "rand", "empty_strided",
        "diagonal", "type_as", "long", "int", "bool", "eye", "linspace",
        # Layout and views: axes moved, tensors split, stacked or broadcast.
        "swapaxes", "swapdims", "moveaxis", "adjoint", "ravel", "broadcast_to",
        "broadcast_tensors", "tensor_split", "hsplit", "vsplit", "dsplit",
        "split_with_sizes", "unsafe_split", "unsafe_chunk", "atleast_1d", "atleast_2d",
        "atleast_3d", "squeeze_", "unsqueeze_", "t_", "transpose_", "swapaxes_",
        "swapdims_", "resize_", "resize_as_", "hstack", "vstack", "dstack",
        "column_stack", "row_stack", "fliplr", "flipud", "rot90", "diag_embed",
        "diagflat", "block_diag", "pixel_unshuffle", "channel_shuffle",
        "native_channel_shuffle", "real", "imag", "conj", "resolve_conj", "resolve_neg",
        "select_scatter", "slice_scatter", "diagonal_scatter", "as_strided_",
        "unfold_copy", "expand_copy", "permute_copy", "view_copy", "alias",
        "constant_pad_nd", "reflection_pad1d", "reflection_pad2d", "reflection_pad3d",
        "replication_pad1d", "replication_pad2d", "replication_pad3d",
        "adaptive_max_pool1d", "adaptive_max_pool3d", "max_unpool1d", "max_unpool2d",
        "max_unpool3d", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
        "feature_alpha_dropout", "feature_dropout",
        # Constructors and casts: tensors made or converted, no arithmetic.
        "meshgrid", "as_tensor", "asarray", "from_numpy", "scalar_tensor", "logspace",
        "randperm", "randint_like", "normal", "bernoulli", "tril_indices", "triu_indices",
        "new_empty_strided", "fill", "char", "byte", "short", "cfloat", "cdouble", "requires_grad_",
        "detach_", "to_dense", "pin_memory", "cartesian_prod",
        # Every other dtype cast, and the ``.data`` alias: a copy or a view, no arithmetic.
        "chalf", "data",
    }
)  # fmt: skip

#: Indexed writes and reads: one per element written (a computed address and a store),
#: an add with it for the accumulating ones. See :func:`element_work` for which count.
INDEXED_COST: Final = frozenset(
    {
        "gather", "take", "take_along_dim", "index_select", "scatter", "scatter_",
        "scatter_add", "scatter_add_", "scatter_reduce", "scatter_reduce_", "index_add",
        "index_add_", "index_copy", "index_copy_", "index_reduce", "index_reduce_",
        "index_fill", "index_fill_", "index_put", "index_put_", "put", "put_",
        "masked_scatter", "masked_scatter_",
    }
)  # fmt: skip

#: Resampling: one per input element each output element reads (its taps): this many
#: along each resampled axis, by mode (``bilinear`` 2 x 2 = 4, ``bicubic`` 4 x 4 = 16,
#: ``trilinear`` 2 x 2 x 2 = 8). ``area`` reads its window, ``ceil(in / out)`` per axis;
#: with ``antialias`` an axis that shrinks by ``s`` reads ``ceil(taps * s)`` along it.
RESAMPLE_TAPS: Final = {
    "nearest": 1, "nearest-exact": 1, "linear": 2, "bilinear": 2, "bicubic": 4,
    "trilinear": 2,
}  # fmt: skip
#: Resampling calls and the mode each implies (``None``: the call's ``mode`` argument).
RESAMPLE_FUNCS: Final[dict[str, str | None]] = {
    "interpolate": None, "upsample": None, "upsample_nearest": "nearest",
    "upsample_bilinear": "bilinear", "upsample_nearest1d": "nearest",
    "upsample_nearest2d": "nearest", "upsample_nearest3d": "nearest",
    "_upsample_nearest_exact1d": "nearest-exact", "_upsample_nearest_exact2d": "nearest-exact",
    "_upsample_nearest_exact3d": "nearest-exact", "upsample_linear1d": "linear",
    "upsample_bilinear2d": "bilinear", "upsample_bicubic2d": "bicubic",
    "upsample_trilinear3d": "trilinear", "_upsample_bilinear2d_aa": "bilinear aa",
    "_upsample_bicubic2d_aa": "bicubic aa", "grid_sample": None,
}  # fmt: skip
#: Every call whose count :func:`element_work` works out from its arguments.
WORK_FUNCS: Final = INDEXED_COST | frozenset(RESAMPLE_FUNCS) | QUANTIZED_MATMULS


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


#: Whole-sequence recurrent calls: ``torch.lstm(input, hx, params, has_biases, ...)``
#: or, packed, ``torch.lstm(data, batch_sizes, hx, params, has_biases, ...)``.
RNN_FUNCS: Final = frozenset({"lstm", "gru", "rnn_tanh", "rnn_relu"})


def rnn_flops(args: tuple[Any, ...], kwargs: dict[str, Any]) -> int | None:
    """The FLOPs torch's counter reads on the decomposition of a ``RNN_FUNCS`` call,
    by formula: every layer and direction multiplies each of the ``N`` rows it
    processes (time steps times batch, or the packed data's rows) by its input-hidden,
    hidden-hidden and (LSTM) projection matrices, so the count is ``2 * N`` times the
    elements of every weight matrix (the 2-D ``params``; biases add no matmul FLOPs).

    Replaying the call instead would run the fused CPU kernel, which torch's table does
    not list, and then the decomposition on meta tensors, whose first run in a process
    imports sympy (seconds). ``None`` for a call of an unexpected form (then replayed).
    """
    if kwargs or len(args) < 5:
        return None
    packed = type(args[3]) is not bool  # the packed form has batch_sizes second
    rows_of, params = args[0], args[3] if packed else args[2]
    if not isinstance(rows_of, torch.Tensor) or not isinstance(params, (list, tuple)):
        return None
    if packed:
        if rows_of.dim() != 2:
            return None
        rows = rows_of.shape[0]
    else:
        if rows_of.dim() != 3:
            return None
        rows = rows_of.shape[0] * rows_of.shape[1]
    total = 0
    for weight in params:
        if not isinstance(weight, torch.Tensor):
            return None
        if weight.dim() == 2:
            total += weight.numel()
    return 2 * rows * total


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
    if name in RNN_FUNCS:
        by_formula = rnn_flops(args, kwargs)
        if by_formula is not None:
            return by_formula
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


def _mode(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[str, bool]:
    """A resampling call's mode and whether it antialiases."""
    implied = RESAMPLE_FUNCS[name]
    if implied is not None:
        mode, _, aa = implied.partition(" ")
        return mode, bool(aa)
    if name == "grid_sample":  # grid_sample(input, grid, mode, padding_mode, ...)
        return str(kwargs.get("mode", args[2] if len(args) > 2 else "bilinear")), False
    # interpolate(input, size, scale_factor, mode, align_corners, recompute, antialias)
    mode = kwargs.get("mode", args[3] if len(args) > 3 else "nearest")
    antialias = kwargs.get("antialias", args[6] if len(args) > 6 else False)
    return str(mode), bool(antialias)


def _resample_work(
    name: str, first: torch.Tensor, out: torch.Tensor, args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> int | None:  # fmt: skip
    """Output elements times the taps each reads (:data:`RESAMPLE_TAPS`)."""
    mode, antialias = _mode(name, args, kwargs)
    spatial = min(first.dim(), out.dim()) - 2
    if spatial < 1 or first.dim() != out.dim():
        return None
    taps = 1
    for size_in, size_out in zip(first.shape[2:], out.shape[2:], strict=True):
        shrink = size_in / size_out if size_out else 1.0
        if mode == "area":
            taps *= max(1, math.ceil(shrink))
            continue
        along = RESAMPLE_TAPS.get(mode)
        if along is None:
            return None
        taps *= math.ceil(along * shrink) if antialias and shrink > 1 else along
    return out.numel() * taps


def _index_tensor(tensors: list[torch.Tensor]) -> torch.Tensor | None:
    """The first integer tensor after the one indexed: the call's index."""
    return next((t for t in tensors[1:] if not (t.is_floating_point() or t.is_complex())
                 and t.dtype is not torch.bool), None)  # fmt: skip


def _put_work(first: torch.Tensor, args: tuple[Any, ...], kwargs: dict[str, Any]) -> int | None:
    """The elements ``index_put`` writes: those its indices select."""
    indices = kwargs.get("indices", args[1] if len(args) > 1 else None)
    if not isinstance(indices, (list, tuple)):
        return None
    shapes: list[tuple[int, ...]] = []
    kept = 1
    axis = 0
    for index in indices:
        if index is None:
            kept *= first.shape[axis] if axis < first.dim() else 1
            axis += 1
        elif isinstance(index, torch.Tensor) and index.dtype is torch.bool:
            shapes.append((int(index.count_nonzero()),))
            axis += index.dim()
        elif isinstance(index, torch.Tensor):
            shapes.append(tuple(index.shape))
            axis += 1
        else:
            return None
    for size in first.shape[axis:]:
        kept *= size
    if not shapes:
        return None
    selected: tuple[int, ...] = torch.broadcast_shapes(*shapes)  # type: ignore[no-untyped-call]
    return math.prod(selected) * kept


def element_work(
    name: str, tensors: list[torch.Tensor], out: torch.Tensor, args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> int | None:  # fmt: skip
    """The forward count of a :data:`WORK_FUNCS` call, worked out from its arguments:
    the elements an indexed op writes (:data:`INDEXED_COST`: a gather's output, a
    scatter's index, an ``index_add``'s source), or a resampling call's output elements
    times its taps (:data:`RESAMPLE_TAPS`). ``None`` when the call's arguments do not say
    (an unknown mode, a shape the formula does not cover)."""
    if not tensors:
        return None
    first = tensors[0]
    if name in RESAMPLE_FUNCS:
        return _resample_work(name, first, out, args, kwargs)
    if name in QUANTIZED_MATMULS:
        return quantized_matmul_work(first, args)
    base = name.removesuffix("_")
    if base in ("gather", "take", "take_along_dim", "index_select"):
        return out.numel()
    if base in ("scatter", "scatter_add", "scatter_reduce", "put"):
        index = _index_tensor(tensors)
        return None if index is None else index.numel()
    if base in ("index_add", "index_copy", "index_reduce"):
        return tensors[2].numel() if len(tensors) > 2 else None
    if base == "index_fill":
        index = _index_tensor(tensors)
        dim = kwargs.get("dim", args[1] if len(args) > 1 else None)
        if index is None or type(dim) is not int or not first.dim() or not first.shape[dim]:
            return None
        return index.numel() * (first.numel() // first.shape[dim])
    if base == "index_put":
        return _put_work(first, args, kwargs)
    if base == "masked_scatter" and len(tensors) > 1:
        return int(tensors[1].expand(first.shape).count_nonzero())
    return None


FlopFields = tuple[int | None, int | None, int | None, int | None]
_UNKNOWN: Final[FlopFields] = (None, None, None, None)
_ZERO: Final[FlopFields] = (0, 0, 0, 0)


def flop_fields(
    func: str, counted: int | None, out_numel: int, in_numel: int = 0, work: int | None = None
) -> FlopFields:
    """``(forward, backward, total, macs)`` for a call named ``func``.

    ``counted`` is what torch's counter measured (for ``COUNTED_FUNCS``), ``out_numel``
    the numel of the first tensor output, ``in_numel`` that of the first tensor
    argument (read by reductions), ``work`` what :func:`element_work` worked out (for
    ``WORK_FUNCS``).
    """
    if counted is not None and func in COUNTED_FUNCS:
        return (counted, 2 * counted, 3 * counted, counted // 2)
    if func in QUANTIZED_MATMULS:
        # Inference kernels: no backward; a multiply-accumulate is two FLOPs.
        return _UNKNOWN if work is None else (work, 0, work, work // 2)
    if func in WORK_FUNCS:
        # The backward reads the same taps, or scatters to what the forward gathered.
        return _UNKNOWN if work is None else (work, work, 2 * work, 0)
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
