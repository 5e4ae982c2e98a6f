"""One-layer mutations of corpus models, made at the torch-function level.

A mutation is a one-layer change a developer could make by mistake that changes the
model's output: a flag flipped, a string mode switched, a constant doubled, an ``eps``
changed, a reduction over another dim, another index, a permuted pad, another dtype,
two operands swapped, or the layer run without grad. It is made in one middle module of
the model (:func:`middle_module`) and nowhere else, and without editing the model: a
:class:`MutationMode` (a ``TorchFunctionMode``) is entered by a forward pre-hook on that
module and left by its forward hook, so it sits above a capture's own mode while the
module runs and the capture records the mutated call, at the module addresses of the
unmutated model.

Each mutation kind rewrites the first call in the module that it matches and whose
rewrite runs and changes the model's output (at most :data:`CANDIDATES` matching calls
are tried, in call order; a kind may rank its matches, e.g. ``is_causal`` before any
other flag, a reduction along a dim of the same size, which keeps the output shape,
before one along another size); every other call runs unchanged. A kind with no matching call is not
applicable; one whose every rewrite raises, or changes no output value, is skipped with
the reason. The grad-mode mutation changes no value, only whether autograd records.

:func:`study` captures a corpus entry unmutated, under every mutation and under two
controls that must not change the drawing: the model rebuilt from another seed (the same
input values), and a second capture with a mode that rewrites nothing installed on the
middle module. ``python -m tests.corpus.mutations [NAME ...]`` prints the table of which
mutations change the DOT in each view (``--detail``: what each one rewrote).
"""

from __future__ import annotations

import argparse
import functools
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import torch
from torch import nn
from torch.overrides import TorchFunctionMode

from pytest_tlgraph import capture
from pytest_tlgraph.capture.guards import leave_mode_stack
from tests.corpus.registry import CORPUS, TRANSFORMERS, Case, build, names
from tests.corpus.value_mutations import (
    VALUE_KINDS,
    Root,
    clear_caches,
    constant_roots,
    rewrites,
    rewritten,
)

__all__ = [
    "CANDIDATES",
    "CONTROLS",
    "MUTATIONS",
    "SUBJECTS",
    "SUMMARIES",
    "VIEWS",
    "Mutation",
    "MutationMode",
    "Outcome",
    "Rewrite",
    "Site",
    "Study",
    "call_name",
    "counts",
    "installed",
    "main",
    "middle_module",
    "outputs_differ",
    "study",
    "table",
]

Func = Callable[..., Any]
#: The drawings compared: default options, ``collapse="auto"`` and ``depth=1``.
VIEWS: dict[str, dict[str, Any]] = {
    "default": {},
    "auto": {"collapse": "auto"},
    "depth1": {"depth": 1},
}
#: The controls: the model rebuilt from seed 1, the capture run a second time, and a
#: capture after every cache of the model's code was cleared (the first in a process).
CONTROLS = ("seed", "again", "cold")
#: Matching calls tried per mutation before it is skipped.
CANDIDATES = 8
#: Summary tables printed by the test run (the terminal summary shows them).
SUMMARIES: list[str] = []

Cell = Literal["changed", "false pass", "n/a", "skipped"]


# -- rewrites ------------------------------------------------------------------------


@dataclass(frozen=True)
class Rewrite:
    """One way to rewrite one matched call: ``run`` makes the mutated call (inside the
    mode's handler, so a capture below it records what ``run`` calls). Of one matcher's
    rewrites those of a lower ``rank`` are tried first, in any call of the module."""

    what: str
    run: Callable[[], Any]
    rank: int = 0


#: A matcher reads one call (its normalized name, the function, its arguments) and
#: returns the ways to rewrite it; none where the call is not its kind.
Matcher = Callable[[str, Func, tuple[Any, ...], dict[str, Any]], list[Rewrite]]

_ALIASES = {
    "truediv": "div",
    "true_divide": "div",
    "divide": "div",
    "rtruediv": "rdiv",
    "itruediv": "div_",
    "iadd": "add_",
    "isub": "sub_",
    "imul": "mul_",
    "ipow": "pow_",
    "subtract": "sub",
    "multiply": "mul",
    "concat": "cat",
    "concatenate": "cat",
    "vector_norm": "linalg_vector_norm",
}


def call_name(func: Func) -> str:
    """A torch function's name as the matchers read it: dunders stripped
    (``Tensor.__rsub__`` is ``rsub``), spellings of one op merged (``truediv``, ``div``)."""
    name = str(getattr(func, "__name__", "") or "")
    if name.startswith("__") and name.endswith("__"):
        name = name[2:-2]
    return _ALIASES.get(name, name)


def _call(func: Func, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Callable[[], Any]:
    return functools.partial(func, *args, **kwargs)


def _get(args: tuple[Any, ...], kwargs: dict[str, Any], name: str, position: int) -> Any:
    """An argument given by keyword or position; ``_MISSING`` where not given."""
    if name in kwargs:
        return kwargs[name]
    if position < len(args):
        return args[position]
    return _MISSING


def _put(
    args: tuple[Any, ...], kwargs: dict[str, Any], name: str, position: int, value: Any
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The arguments with ``name`` (keyword, or at ``position``) set to ``value``,
    where it was given: a keyword where it was not."""
    if name not in kwargs and position < len(args):
        return (*args[:position], value, *args[position + 1 :]), dict(kwargs)
    return args, {**kwargs, name: value}


class _Missing:
    def __repr__(self) -> str:
        return "<default>"


_MISSING: Any = _Missing()


def _is_scalar(value: Any) -> bool:
    return type(value) in (int, float)


def _fmt(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return f"<tensor {'x'.join(map(str, value.shape)) or 'scalar'}>"
    if isinstance(value, slice):
        parts = ["" if v is None else str(v) for v in (value.start, value.stop, value.step)]
        return ":".join(parts[:2] if value.step is None else parts)
    if value is Ellipsis:
        return "..."
    if isinstance(value, tuple):
        return ", ".join(_fmt(v) for v in value)
    return repr(value)


# -- flag ------------------------------------------------------------------------------
#: Bool keywords never flipped: they change no value (``inplace``) or draw random
#: numbers (``training`` on dropout), neither a deterministic one-layer change.
_NOT_FLAGS = frozenset({"inplace", "training"})


def _is_causal(name: str, func: Func, args: tuple[Any, ...], kw: dict[str, Any]) -> list[Rewrite]:
    if name != "scaled_dot_product_attention":
        return []
    value = _get(args, kw, "is_causal", 5)
    value = False if value is _MISSING else value
    if not isinstance(value, bool):
        return []
    new_args, new_kw = _put(args, kw, "is_causal", 5, not value)
    return [Rewrite(f"{name} is_causal {value} -> {not value}", _call(func, new_args, new_kw))]


def _bool_keyword(
    name: str, func: Func, args: tuple[Any, ...], kw: dict[str, Any]
) -> list[Rewrite]:
    return [
        Rewrite(f"{name} {key} {value} -> {not value}", _call(func, args, {**kw, key: not value}))
        for key, value in kw.items()
        if isinstance(value, bool)
        and key not in _NOT_FLAGS
        and not (key == "is_causal" and name == "scaled_dot_product_attention")  # ranked first
    ]


# -- string mode -----------------------------------------------------------------------
def _interpolation(mode: str, ndim: int) -> str | None:
    linear = {3: "linear", 4: "bilinear", 5: "trilinear"}.get(ndim)
    other = {"nearest": linear, "nearest-exact": "nearest", "area": "nearest",
             "bilinear": "bicubic", "bicubic": "bilinear", "linear": "nearest",
             "trilinear": "nearest"}  # fmt: skip
    return other.get(mode)


def _string_mode(name: str, func: Func, args: tuple[Any, ...], kw: dict[str, Any]) -> list[Rewrite]:
    # (keyword, position, default, the other value) for each call with a string mode.
    first = args[0] if args else None
    ndim = first.ndim if isinstance(first, torch.Tensor) else 0
    found: list[tuple[str, int, Any]] = []
    if name == "gelu":
        found.append(("approximate", 1, "none"))
    elif name == "interpolate":
        found.append(("mode", 3, "nearest"))
    elif name == "pad":
        found.append(("mode", 2, "constant"))
    elif name in ("div", "div_", "rdiv"):
        found.append(("rounding_mode", 99, _MISSING))
    if "reduction" in kw:
        found.append(("reduction", 99, "mean"))
    rewrites: list[Rewrite] = []
    for key, position, default in found:
        value = _get(args, kw, key, position)
        value = default if value is _MISSING else value
        if not isinstance(value, str):
            continue
        other: str | None
        if key == "approximate":
            other = {"none": "tanh", "tanh": "none"}.get(value)
        elif key == "mode" and name == "interpolate":
            other = _interpolation(value, ndim)
        elif key == "mode":
            other = {"constant": "replicate", "reflect": "replicate",
                     "replicate": "reflect", "circular": "reflect"}.get(value)  # fmt: skip
        elif key == "rounding_mode":
            other = {"floor": "trunc", "trunc": "floor"}.get(value)
        else:
            other = {"mean": "sum", "sum": "mean"}.get(value)
        if other is not None:
            new_args, new_kw = _put(args, kw, key, position, other)
            what = f"{name} {key} {value!r} -> {other!r}"
            rewrites.append(Rewrite(what, _call(func, new_args, new_kw)))
    return rewrites


# -- scalar constant and eps -----------------------------------------------------------
_ARITHMETIC = frozenset(
    {"add", "sub", "mul", "div", "pow", "rsub", "radd", "rmul", "rdiv", "rpow",
     "add_", "sub_", "mul_", "div_", "pow_"}
)  # fmt: skip
_ADDS = frozenset({"add", "radd", "add_", "sub", "rsub", "sub_"})
#: Below this a float added in a normalization is its epsilon, not a constant.
_TINY = 1e-3


def _scalar_operand(
    name: str, func: Func, args: tuple[Any, ...], kw: dict[str, Any]
) -> list[Rewrite]:
    if name == "scaled_dot_product_attention":
        scale = kw.get("scale")
        if _is_scalar(scale) and scale:
            what = f"{name} scale {scale!r} -> {2 * scale!r}"
            return [Rewrite(what, _call(func, args, {**kw, "scale": 2 * scale}))]
        return []
    if name not in _ARITHMETIC:
        return []
    for position, value in enumerate(args[:2]):
        if _is_scalar(value) and value != 0 and abs(value) >= _TINY:
            new_args = (*args[:position], 2 * value, *args[position + 1 :])
            what = f"{name} operand {value!r} -> {2 * value!r}"
            return [Rewrite(what, _call(func, new_args, kw))]
    return []


#: Normalizations taking an ``eps``: (position, default).
_EPS = {
    "layer_norm": (4, 1e-5),
    "rms_norm": (3, None),
    "group_norm": (4, 1e-5),
    "batch_norm": (7, 1e-5),
    "instance_norm": (7, 1e-5),
    "normalize": (3, 1e-12),
}


def _larger_eps(value: float | None) -> float:
    """Ten times ``value``, and at least ``1e-5`` (BERT's ``1e-12`` read as the usual
    ``1e-5``): a change that moves a float32 output."""
    return float(f"{max(10 * abs(value or 0.0), 1e-5):.3g}")


def _eps(name: str, func: Func, args: tuple[Any, ...], kw: dict[str, Any]) -> list[Rewrite]:
    if name in _EPS:
        position, default = _EPS[name]
        value = _get(args, kw, "eps", position)
        value = default if value is _MISSING else value
        if value is not None and not _is_scalar(value):
            return []
        new = _larger_eps(value)
        new_args, new_kw = _put(args, kw, "eps", position, new)
        return [Rewrite(f"{name} eps {value!r} -> {new!r}", _call(func, new_args, new_kw))]
    if name in _ADDS:
        for position, value in enumerate(args[:2]):
            if type(value) is float and 0 < abs(value) < _TINY:
                new = _larger_eps(value)
                new_args = (*args[:position], new, *args[position + 1 :])
                what = f"{name} eps {value!r} -> {new!r}"
                return [Rewrite(what, _call(func, new_args, kw))]
    return []


# -- dim -------------------------------------------------------------------------------
#: Calls reducing or scanning along dims: (keyword, position).
_REDUCTIONS = [
    "mean", "sum", "amax", "amin", "prod", "logsumexp", "var", "std", "argmax", "argmin",
    "nansum", "nanmean", "any", "all",
]  # fmt: skip
_DIMS = {
    **dict.fromkeys(["softmax", "log_softmax", "cumsum", "cumprod", "logcumsumexp"], ("dim", 1)),
    **dict.fromkeys(_REDUCTIONS, ("dim", 1)),
    "flip": ("dims", 1),
    "norm": ("dim", 2),
    "linalg_vector_norm": ("dim", 2),
    "roll": ("dims", 2),
}


def _other_dims(shape: tuple[int, ...], taken: set[int], dim: int) -> list[int]:
    """The dims to use instead of ``dim`` (normalized): the others not in ``taken``,
    those of the same size first, then by distance."""
    size = shape[dim]
    others = [d for d in range(len(shape)) if d != dim and d not in taken]
    return sorted(others, key=lambda d: (shape[d] != size, shape[d] == 1, abs(d - dim)))


def _dim(name: str, func: Func, args: tuple[Any, ...], kw: dict[str, Any]) -> list[Rewrite]:
    if name not in _DIMS or not args or not isinstance(args[0], torch.Tensor):
        return []
    key, position = _DIMS[name]
    value = _get(args, kw, key, position)
    shape = tuple(args[0].shape)
    ndim = len(shape)
    if ndim < 2:
        return []
    if type(value) is int:
        dims: list[int] = [value]
    elif isinstance(value, (tuple, list)) and value and all(type(d) is int for d in value):
        dims = list(value)
    else:
        return []
    if not all(-ndim <= d < ndim for d in dims):
        return []
    normal = [d % ndim for d in dims]
    rewrites: list[Rewrite] = []
    for i, d in enumerate(normal):
        for other in _other_dims(shape, set(normal), d):
            spelled = other - ndim if dims[i] < 0 else other
            new = [*dims[:i], spelled, *dims[i + 1 :]]
            new_value: Any = new[0] if type(value) is int else type(value)(new)
            new_args, new_kw = _put(args, kw, key, position, new_value)
            what = f"{name} {key} {value!r} -> {new_value!r}"
            # Along a dim of the same size the call keeps its output shape.
            rank = int(shape[other] != shape[d])
            rewrites.append(Rewrite(what, _call(func, new_args, new_kw), rank))
    return rewrites


# -- index -----------------------------------------------------------------------------
def _consumed(item: Any) -> int:
    """The dims of the indexed tensor one index item reads."""
    if item is None or item is Ellipsis or isinstance(item, bool):
        return 0
    if isinstance(item, torch.Tensor):
        return item.ndim if item.dtype == torch.bool else 1
    return 1


def _shifted(item: Any, size: int) -> Any:
    """Another index for one dim of ``size``: the next (or previous) integer, a slice
    window moved by one; ``None`` where ``item`` is not a literal that can move."""
    if type(item) is int:
        if size < 2 or not -size <= item < size:
            return None
        at = item % size
        moved = at + 1 if at + 1 < size else at - 1
        return moved - size if item < 0 else moved
    if not isinstance(item, slice):
        return None
    if not all(v is None or type(v) is int for v in (item.start, item.stop, item.step)):
        return None
    start, stop, step = item.indices(size)
    length = len(range(start, stop, step))
    if step < 1 or length == 0 or (step == 1 and length == size):
        return None
    last = start + (length - 1) * step
    if last + 1 < size:
        start += 1
    elif start >= 1:
        start -= 1
    else:
        return None
    return slice(start, start + (length - 1) * step + 1, None if step == 1 else step)


def _index(name: str, func: Func, args: tuple[Any, ...], kw: dict[str, Any]) -> list[Rewrite]:
    if name != "getitem" or len(args) != 2 or kw or not isinstance(args[0], torch.Tensor):
        return []
    tensor, index = args
    items: tuple[Any, ...] = index if isinstance(index, tuple) else (index,)
    shape = tuple(tensor.shape)
    spare = len(shape) - sum(_consumed(item) for item in items)
    rewrites: list[Rewrite] = []
    dim = 0
    for i, item in enumerate(items):
        if item is Ellipsis:
            dim += max(spare, 0)
            continue
        if dim >= len(shape):
            break
        moved = _shifted(item, shape[dim]) if _consumed(item) == 1 else None
        if moved is not None:
            new_items = (*items[:i], moved, *items[i + 1 :])
            new_index = new_items if isinstance(index, tuple) else moved
            what = f"[{_fmt(index)}] -> [{_fmt(new_index)}]"
            rewrites.append(Rewrite(what, _call(func, (tensor, new_index), {})))
        dim += _consumed(item)
    return rewrites


# -- pad -------------------------------------------------------------------------------
def _pad(name: str, func: Func, args: tuple[Any, ...], kw: dict[str, Any]) -> list[Rewrite]:
    if name != "pad":
        return []
    pad = _get(args, kw, "pad", 1)
    if not isinstance(pad, (tuple, list)) or len(pad) % 2 or not all(type(p) is int for p in pad):
        return []
    pairs = [tuple(pad[i : i + 2]) for i in range(0, len(pad), 2)]
    swapped = tuple(v for a, b in pairs for v in (b, a))
    reversed_pairs = tuple(v for pair in reversed(pairs) for v in pair)
    rewrites: list[Rewrite] = []
    seen = {tuple(pad)}
    for new in (swapped, reversed_pairs):
        if new in seen:
            continue
        seen.add(new)
        new_pad: Any = type(pad)(new)
        new_args, new_kw = _put(args, kw, "pad", 1, new_pad)
        what = f"{name} pad {tuple(pad)} -> {new}"
        rewrites.append(Rewrite(what, _call(func, new_args, new_kw)))
    return rewrites


# -- dtype -----------------------------------------------------------------------------
_OTHER_FLOAT = {
    torch.float32: torch.bfloat16,
    torch.float64: torch.float32,
    torch.float16: torch.float32,
    torch.bfloat16: torch.float32,
}
_CAST_METHODS = {"float": "bfloat16", "double": "float", "half": "float", "bfloat16": "float"}
#: Calls run in another floating dtype when a layer holds no cast to change.
_COMPUTE = frozenset(
    {"linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
     "matmul", "mm", "bmm", "addmm", "baddbmm", "scaled_dot_product_attention"}
)  # fmt: skip


def _cast(name: str, func: Func, args: tuple[Any, ...], kw: dict[str, Any]) -> list[Rewrite]:
    if name in _CAST_METHODS and len(args) == 1 and not kw:
        other = _CAST_METHODS[name]
        method = getattr(torch.Tensor, other)
        return [Rewrite(f".{name}() -> .{other}()", _call(method, args, {}))]
    if name == "to":
        for position, value in enumerate(args[1:], start=1):
            if isinstance(value, torch.dtype) and value in _OTHER_FLOAT:
                other_dtype = _OTHER_FLOAT[value]
                new_args = (*args[:position], other_dtype, *args[position + 1 :])
                what = f".to({value}) -> .to({other_dtype})"
                return [Rewrite(what, _call(func, new_args, kw))]
    dtype = kw.get("dtype")
    if isinstance(dtype, torch.dtype) and dtype in _OTHER_FLOAT:
        other_dtype = _OTHER_FLOAT[dtype]
        what = f"{name} dtype {dtype} -> {other_dtype}"
        return [Rewrite(what, _call(func, args, {**kw, "dtype": other_dtype}))]
    return []


def _floats(value: Any) -> Iterator[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        if value.is_floating_point():
            yield value
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _floats(item)


def _lowered(value: Any, dtype: torch.dtype) -> Any:
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return value.to(dtype)
    if isinstance(value, (tuple, list)):
        return type(value)(_lowered(item, dtype) for item in value)
    return value


def _other_precision(
    name: str, func: Func, args: tuple[Any, ...], kw: dict[str, Any]
) -> list[Rewrite]:
    if name not in _COMPUTE:
        return []
    floats = list(_floats((args, list(kw.values()))))
    if not floats or floats[0].dtype not in _OTHER_FLOAT:
        return []
    dtype = floats[0].dtype
    low = _OTHER_FLOAT[dtype]

    def run() -> Any:
        # The casts run here, inside the handler: a capture below records them.
        low_args = tuple(_lowered(a, low) for a in args)
        low_kw = {k: _lowered(v, low) for k, v in kw.items()}
        out = func(*low_args, **low_kw)
        return out.to(dtype) if isinstance(out, torch.Tensor) else out

    return [Rewrite(f"{name} run in {low}, cast back to {dtype}", run)]


# -- operand order ---------------------------------------------------------------------
_SEQUENCES = frozenset({"cat", "stack", "hstack", "vstack", "dstack", "column_stack"})
_NON_COMMUTATIVE = frozenset(
    {"sub", "rsub", "div", "rdiv", "floor_divide", "remainder", "fmod", "pow", "rpow",
     "atan2", "matmul", "rmatmul", "mm", "bmm"}
)  # fmt: skip


def _operands(name: str, func: Func, args: tuple[Any, ...], kw: dict[str, Any]) -> list[Rewrite]:
    if name in _SEQUENCES:
        seq = _get(args, kw, "tensors", 0)
        if not isinstance(seq, (tuple, list)):
            return []
        for i in range(len(seq) - 1):
            a, b = seq[i], seq[i + 1]
            if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a is not b:
                new_seq: Any = type(seq)([*seq[:i], b, a, *seq[i + 2 :]])
                new_args, new_kw = _put(args, kw, "tensors", 0, new_seq)
                what = f"{name} operands {i} and {i + 1} swapped"
                return [Rewrite(what, _call(func, new_args, new_kw))]
        return []
    pairs = {"where": (1, 2), "scaled_dot_product_attention": (1, 2)}
    first, second = pairs.get(name, (0, 1) if name in _NON_COMMUTATIVE else (-1, -1))
    if first < 0 or len(args) <= second:
        return []
    a, b = args[first], args[second]
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)) or a is b:
        return []
    if name == "scaled_dot_product_attention" and a.shape != b.shape:
        return []
    swapped = list(args)
    swapped[first], swapped[second] = b, a
    what = f"{name} operands {first} and {second} swapped"
    return [Rewrite(what, _call(func, tuple(swapped), kw))]


# -- the mutations ---------------------------------------------------------------------
@dataclass(frozen=True)
class Mutation:
    """One mutation kind: its matchers in rank order (every match of the first before
    any of the second), or, for ``no_grad``, the middle module run without grad."""

    name: str
    doc: str
    matchers: tuple[Matcher, ...] = ()
    no_grad: bool = False
    #: A kind of :mod:`.value_mutations`: a constant's values rewritten, no call.
    value: bool = False


#: Every mutation kind, in table order.
MUTATIONS: dict[str, Mutation] = {
    m.name: m
    for m in (
        Mutation("flag", "a bool keyword flipped (is_causal first)", (_is_causal, _bool_keyword)),
        Mutation("mode", "a string mode switched (gelu approximate, ...)", (_string_mode,)),
        Mutation("scalar", "a Python-scalar operand or sdpa scale doubled", (_scalar_operand,)),
        Mutation("eps", "a normalization's eps x10 (at least 1e-5)", (_eps,)),
        Mutation("dim", "a reduction/scan along another dim", (_dim,)),
        Mutation("index", "a getitem index or slice moved by one", (_index,)),
        Mutation("pad", "an F.pad pad tuple permuted", (_pad,)),
        Mutation("dtype", "a cast to another dtype (or a call in bf16)", (_cast, _other_precision)),
        Mutation("order", "two tensor operands swapped", (_operands,)),
        Mutation("no_grad", "the middle module run under no_grad", no_grad=True),
        *(Mutation(kind, doc, value=True) for kind, doc in VALUE_KINDS.items()),
    )
}


@dataclass(frozen=True)
class Site:
    """One candidate: the ``occurrence``-th call ``matcher`` matches, rewritten its
    ``variant``-th way (of ``rank``, see :class:`Rewrite`)."""

    matcher: int
    occurrence: int
    variant: int
    what: str
    rank: int = 0


class MutationMode(TorchFunctionMode):
    """Rewrites the call at ``site`` of ``mutation`` (every other call runs as it is);
    with ``site=None`` it rewrites nothing. With ``probe=True`` it rewrites nothing and
    lists every candidate site in :attr:`sites` instead."""

    def __init__(
        self, mutation: Mutation | None = None, site: Site | None = None, *, probe: bool = False
    ) -> None:
        super().__init__()
        self.mutation = mutation
        self.site = site
        self.probe = probe
        self.sites: list[Site] = []
        #: What was rewritten; ``None`` until the site's call ran.
        self.applied: str | None = None
        self._seen = [0] * (len(mutation.matchers) if mutation is not None else 0)

    def __torch_function__(
        self,
        func: Func,
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kw = dict(kwargs or {})
        rewrite = self._rewrite(func, args, kw) if self.mutation is not None else None
        if rewrite is None:
            return func(*args, **kw)
        self.applied = rewrite.what
        return rewrite.run()

    def _rewrite(self, func: Func, args: tuple[Any, ...], kw: dict[str, Any]) -> Rewrite | None:
        assert self.mutation is not None
        if not self.probe and (self.site is None or self.applied is not None):
            return None
        name = call_name(func)
        # Reading shapes and dtypes must reach no mode below (a capture records nothing).
        with torch._C.DisableTorchFunction():
            for m, matcher in enumerate(self.mutation.matchers):
                if not self.probe and m != self.site.matcher:  # type: ignore[union-attr]
                    continue
                rewrites = matcher(name, func, args, kw)
                if not rewrites:
                    continue
                occurrence = self._seen[m]
                self._seen[m] += 1
                if self.probe:
                    self.sites += [
                        Site(m, occurrence, v, r.what, r.rank) for v, r in enumerate(rewrites)
                    ]
                elif self.site is not None and occurrence == self.site.occurrence:
                    return rewrites[self.site.variant]
        return None


@contextmanager
def installed(
    module: nn.Module, mode: TorchFunctionMode | None, *, no_grad: bool = False
) -> Iterator[None]:
    """Enter ``mode`` (and ``no_grad``) each time ``module`` runs, from a forward
    pre-hook, and leave it from a forward hook that runs even when the module raises."""
    grad_states: list[bool] = []

    def enter(module: nn.Module, args: Any) -> None:
        grad_states.append(torch.is_grad_enabled())
        if no_grad:
            torch.set_grad_enabled(False)
        if mode is not None:
            mode.__enter__()  # type: ignore[no-untyped-call]

    def leave(module: nn.Module, args: Any, output: Any) -> None:
        if mode is not None:
            leave_mode_stack(mode)
        torch.set_grad_enabled(grad_states.pop())

    handles = [
        module.register_forward_pre_hook(enter),
        module.register_forward_hook(leave, always_call=True),
    ]
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()
        if mode is not None:
            leave_mode_stack(mode)
        if grad_states:
            torch.set_grad_enabled(grad_states[0])


# -- choosing the middle module ----------------------------------------------------------
#: Where the generic choice (the middle of the largest stack of same-type modules) is
#: not the model's middle layer.
_MIDDLE = {
    "convnext_v2": "stages.1",
    "unet": "up1",
    "mobilenet_v3_small": "features.6",
    "inception_v3": "Mixed_6b",
    "routed_experts": "experts.1",  # the ModuleList itself is indexed, never called
}


def _size(module: nn.Module) -> int:
    return sum(1 for _ in module.modules())


def middle_module(name: str, model: nn.Module) -> str:
    """The address of the module mutated in entry ``name``: the middle member of the
    largest ``ModuleList``/``Sequential`` whose members share one type (largest by the
    modules it holds; ties go to the first), unless :data:`_MIDDLE` names one."""
    if name in _MIDDLE:
        return _MIDDLE[name]
    best: tuple[int, str] | None = None
    for address, module in model.named_modules():
        if not isinstance(module, (nn.ModuleList, nn.Sequential)) or not len(module):
            continue
        children = list(module.children())
        if len({type(c) for c in children}) != 1 or not any(True for _ in children[0].children()):
            continue
        size = _size(module)
        if best is None or size > best[0]:
            middle = f"{address}.{len(children) // 2}" if address else str(len(children) // 2)
            best = (size, middle)
    if best is not None:
        return best[1]
    named = list(model.named_children())
    return max(named, key=lambda c: _size(c[1]))[0] if named else ""


# -- running and comparing -------------------------------------------------------------
def _tensors(value: Any) -> Iterator[Any]:
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield key
            yield from _tensors(item)
    elif isinstance(value, (tuple, list)):
        yield len(value)
        for item in value:
            yield from _tensors(item)
    elif value is None or isinstance(value, (int, float, str, bool)):
        yield value
    else:
        yield type(value).__name__


def outputs_differ(a: Any, b: Any) -> bool:
    """Whether two forward outputs differ: in structure, a shape, a dtype or a value
    (NaNs where both have them are equal)."""
    left, right = list(_tensors(a)), list(_tensors(b))
    if len(left) != len(right):
        return True
    for x, y in zip(left, right, strict=True):
        if isinstance(x, torch.Tensor) != isinstance(y, torch.Tensor):
            return True
        if not isinstance(x, torch.Tensor):
            if x != y:
                return True
            continue
        if x.shape != y.shape or x.dtype != y.dtype:
            return True
        x, y = x.detach(), y.detach()
        if x.is_floating_point() or x.is_complex():
            nan = x.isnan()
            if not torch.equal(nan, y.isnan()):
                return True
            x, y = x[~nan], y[~nan]
        if not torch.equal(x, y):
            return True
    return False


def _copied(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(_copied(v) for v in value)
    return value


def _module(model: nn.Module, address: str) -> nn.Module:
    return model.get_submodule(address) if address else model


def _dots(case: Case) -> dict[str, str]:
    assert torch.is_grad_enabled(), "capture() runs the forward with grad enabled"
    trace = capture(case.model, case.inputs, kwargs=case.kwargs or None)
    return {view: trace.draw(**options).dot for view, options in VIEWS.items()}


@dataclass(frozen=True)
class Outcome:
    """One mutation of one model: ``status`` "applied" (``detail``: what was rewritten;
    ``changed``: whether each view's DOT changed), "n/a" or "skipped" (``detail``: why)."""

    mutation: str
    status: Literal["applied", "n/a", "skipped"]
    detail: str
    changed: dict[str, bool] = field(default_factory=dict)
    #: Whether the model's output changed (``None``: not expected to, ``no_grad``).
    output_changed: bool | None = None
    #: The mutated model's DOT in each view (applied mutations only).
    dots: dict[str, str] = field(default_factory=dict, repr=False)

    def cell(self, view: str) -> Cell:
        """This outcome in the table's column ``view``."""
        if self.status != "applied":
            return self.status
        return "changed" if self.changed[view] else "false pass"


@dataclass(frozen=True)
class Study:
    """Entry ``name`` drawn unmutated, under each control and each mutation."""

    name: str
    address: str
    baseline: dict[str, str]
    controls: dict[str, dict[str, str]]
    #: Whether the seed-1 rebuild has other weights than seed 0 (a factory that seeds
    #: itself builds the same model: the seed control then proves nothing).
    reseeded: bool
    outcomes: dict[str, Outcome]
    seconds: float


class _Weights:
    """The model's state, put back after every mutated run (a mutation may write it)."""

    def __init__(self, model: nn.Module) -> None:
        self.model = model
        self.saved = {
            k: v.detach().clone() if isinstance(v, torch.Tensor) else v
            for k, v in model.state_dict().items()
        }  # a quantized module keeps its packed weight's dtype there too

    def restore(self) -> None:
        """Every parameter and buffer back to its value at construction (copied into
        the tensors themselves: a quantized module's packed weight, which its state
        dict only unpacks, is never written by a mutation)."""
        current = self.model.state_dict(keep_vars=True)
        with torch.no_grad():
            for key, value in self.saved.items():
                held = current.get(key)
                tensors = isinstance(value, torch.Tensor) and isinstance(held, torch.Tensor)
                if tensors and not held.is_quantized:  # type: ignore[union-attr]
                    held.copy_(value)  # type: ignore[union-attr]

    @contextmanager
    def kept(self) -> Iterator[None]:
        """Restore the state after the block, however it ends."""
        try:
            yield
        finally:
            self.restore()


def _try(case: Case, module: nn.Module, mode: MutationMode, weights: _Weights) -> Any:
    try:
        with installed(module, mode):
            return case.run()
    finally:
        weights.restore()


def _choose(
    case: Case, module: nn.Module, mutation: Mutation, reference: Any, weights: _Weights
) -> tuple[Site | None, str]:
    """The first candidate site whose rewrite runs and changes the output, or ``None``
    and why not (no candidate: "not applicable")."""
    probe = MutationMode(mutation, probe=True)
    _try(case, module, probe, weights)
    if not probe.sites:
        return None, f"not applicable: no call in the module matches {mutation.name}"
    failures: list[str] = []
    ranked = sorted(probe.sites, key=lambda s: (s.matcher, s.rank, s.occurrence, s.variant))
    for site in ranked[:CANDIDATES]:
        mode = MutationMode(mutation, site)
        try:
            output = _try(case, module, mode, weights)
        except Exception as error:  # a mutated forward may raise: that candidate fails
            failures.append(f"{site.what}: raises {type(error).__name__}: {error}"[:200])
            continue
        if mode.applied is None:
            failures.append(f"{site.what}: not reached again")
        elif outputs_differ(output, reference):
            return site, site.what
        else:
            failures.append(f"{site.what}: output unchanged")
    return None, "; ".join(failures)


def _mutate(
    case: Case,
    address: str,
    mutation: Mutation,
    reference: Any,
    baseline: dict[str, str],
    weights: _Weights,
) -> Outcome:
    if mutation.value:
        return _mutate_value(case, mutation, reference, baseline, weights)
    module = _module(case.model, address)
    if mutation.no_grad:
        ran: list[bool] = []
        counter = module.register_forward_pre_hook(lambda _module, _args: ran.append(True))
        try:
            with installed(module, None, no_grad=True):
                dots = _dots(case)
        finally:
            counter.remove()
            weights.restore()
        if not ran:  # a container the model indexes but never calls
            return Outcome(mutation.name, "n/a", f"not applicable: @{address} is never called")
        what = f"@{address or '<root>'} run under no_grad"
        changed = {view: dots[view] != base for view, base in baseline.items()}
        return Outcome(mutation.name, "applied", what, changed, None, dots)
    site, why = _choose(case, module, mutation, reference, weights)
    if site is None:
        status: Literal["n/a", "skipped"] = "n/a" if why.startswith("not applicable") else "skipped"
        return Outcome(mutation.name, status, why)
    mode = MutationMode(mutation, site)
    try:
        with installed(module, mode):
            dots = _dots(case)
    except Exception as error:
        return Outcome(mutation.name, "skipped", f"{why}: capture raises {error!r}"[:300])
    finally:
        weights.restore()
    if mode.applied != site.what:
        return Outcome(mutation.name, "skipped", f"{why}: not reached under capture")
    changed = {view: dots[view] != base for view, base in baseline.items()}
    return Outcome(mutation.name, "applied", why, changed, True, dots)


def _mutate_value(
    case: Case, mutation: Mutation, reference: Any, baseline: dict[str, str], weights: _Weights
) -> Outcome:
    """A constant of ``mutation``'s kind rewritten anywhere in the model (the first
    whose rewrite runs and changes the output): see :mod:`.value_mutations`."""
    roots: list[Root] = _roots(case, weights)
    candidates = rewrites(mutation.name, roots)
    if not candidates:
        return Outcome(mutation.name, "n/a", f"not applicable: no {mutation.name} constant")
    failures: list[str] = []
    for root in candidates[:CANDIDATES]:
        with rewritten(root) as what, weights.kept():
            try:
                output = case.run()
            except Exception as error:  # a rewritten index may fall out of range
                failures.append(f"{what}: raises {type(error).__name__}"[:200])
                continue
            if not outputs_differ(output, reference):
                failures.append(f"{what}: output unchanged")
                continue
            dots = _dots(case)
        changed = {view: dots[view] != base for view, base in baseline.items()}
        return Outcome(mutation.name, "applied", what, changed, True, dots)
    return Outcome(mutation.name, "skipped", "; ".join(failures))


_ROOTS: dict[int, list[Root]] = {}


def _roots(case: Case, weights: _Weights) -> list[Root]:
    """The constant roots of ``case``'s forward (found once per model)."""
    found = _ROOTS.get(id(case.model))
    if found is None:
        with weights.kept():
            inputs = (case.inputs, case.kwargs)  # keyword inputs are inputs too
            found = _ROOTS[id(case.model)] = constant_roots(case.model, case.run, inputs)
    return found


def _rebuilt(name: str, seed: int, like: Case) -> Case:
    """Entry ``name`` built after ``torch.manual_seed(seed)``, reading ``like``'s inputs."""
    torch.manual_seed(seed)
    case = CORPUS[name]()
    case.model.eval()
    case.inputs = _copied(like.inputs)
    case.kwargs = _copied(like.kwargs)
    return case


def _same_weights(a: nn.Module, b: nn.Module) -> bool:
    left, right = a.state_dict(), b.state_dict()
    return left.keys() == right.keys() and all(_equal(left[k], right[k]) for k in left)


def _equal(a: Any, b: Any) -> bool:
    """Two state dict values equal (tensors by value, a packed weight's tuple too)."""
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.is_quantized or b.is_quantized:
            return a.is_quantized == b.is_quantized and torch.equal(a.int_repr(), b.int_repr())
        return torch.equal(a, b)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


@contextmanager
def _one_thread() -> Iterator[None]:
    """One intra-op thread: the forwards are tiny, and on a loaded machine a second
    thread's spinning makes each op ten times slower."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@functools.cache
def study(name: str) -> Study:
    """Entry ``name`` captured and drawn in every view: unmutated, under the controls
    and under every mutation of its middle module (cached: one study per process)."""
    with _one_thread():
        return _study(name)


def _study(name: str) -> Study:
    start = time.perf_counter()
    case = build(name)
    address = middle_module(name, case.model)
    module = _module(case.model, address)
    weights = _Weights(case.model)
    with weights.kept():
        reference = case.run()
    with weights.kept():
        if outputs_differ(reference, case.run()):
            raise AssertionError(f"{name}: two plain forwards give different outputs")
    with weights.kept():
        baseline = _dots(case)
    with weights.kept(), installed(module, MutationMode()):
        again = _dots(case)
    clear_caches(case.model)
    with weights.kept():
        cold = _dots(case)
    other = _rebuilt(name, 1, case)
    reseeded = not _same_weights(case.model, other.model)
    controls = {"seed": _dots(other), "again": again, "cold": cold}
    outcomes = {m: _mutate(case, address, mutation, reference, baseline, weights)
                for m, mutation in MUTATIONS.items()}  # fmt: skip
    _ROOTS.pop(id(case.model), None)
    return Study(name, address, baseline, controls, reseeded, outcomes,
                 time.perf_counter() - start)  # fmt: skip


# -- the subjects and the table ----------------------------------------------------------
#: Entries left out: thousands of ops each (their captures dominate, and they hold no
#: call with an argument of interest beyond what the other entries have).
_LEFT_OUT = frozenset({"deep_chain_1000", "sequential_2000"})


def _subjects() -> list[str]:
    everything = names()
    first = [*TRANSFORMERS, "convnext_v2", "unet", "gnn_message_passing"]
    return [*first, *(n for n in everything if n not in first and n not in _LEFT_OUT)]


#: The entries the test mutates: every transformer, the plain-torch vision and graph
#: models, then the rest of the corpus but its two thousand-op stress entries.
SUBJECTS: list[str] = _subjects()


def counts(studies: Sequence[Study]) -> dict[str, dict[Cell, int]]:
    """Per view, how many (model, mutation) cells are in each state."""
    result: dict[str, dict[Cell, int]] = {}
    for view in VIEWS:
        tally: dict[Cell, int] = {"changed": 0, "false pass": 0, "n/a": 0, "skipped": 0}
        for s in studies:
            for outcome in s.outcomes.values():
                tally[outcome.cell(view)] += 1
        result[view] = tally
    return result


_MARKS: dict[Cell, str] = {"changed": "+", "false pass": "F", "n/a": ".", "skipped": "s"}


def table(studies: Sequence[Study], *, detail: bool = False) -> str:
    """The model x mutation table, one mark per view (``+`` changed, ``F`` false pass,
    ``.`` not applicable, ``s`` skipped), the counts per view and every false pass."""
    order = list(VIEWS)
    width = max([len(s.name) for s in studies] + [5])
    head = " ".join(f"{m:>{len(order)}}"[: max(len(order), len(m))] for m in MUTATIONS)
    lines = [
        f"mutations per model, marks per view ({', '.join(order)}): "
        "+ changed, F false pass, . n/a, s skipped",
        f"{'model':<{width}}  {head}   middle module",
    ]
    for s in studies:
        cells = " ".join(
            "".join(_MARKS[s.outcomes[m].cell(v)] for v in order).rjust(max(len(order), len(m)))
            for m in MUTATIONS
        )
        controls = [c for c in CONTROLS if s.controls[c] != s.baseline]
        note = f"  CONTROL CHANGED: {', '.join(controls)}" if controls else ""
        note += "" if s.reseeded else "  (seed control: same weights)"
        lines.append(f"{s.name:<{width}}  {cells}   @{s.address}{note}")
    lines.append("")
    for view, tally in counts(studies).items():
        applied = tally["changed"] + tally["false pass"]
        lines.append(
            f"{view:>8}: {applied} mutations applied, {tally['changed']} changed the DOT, "
            f"{tally['false pass']} false passes; {tally['n/a']} n/a, {tally['skipped']} skipped"
        )
    lines.append("")
    lines.append("false passes (model mutation: views; what was rewritten):")
    for s in studies:
        for m, outcome in s.outcomes.items():
            missed = [v for v in order if outcome.cell(v) == "false pass"]
            if missed:
                lines.append(f"  {s.name} {m}: {', '.join(missed)}; {outcome.detail}")
    if detail:
        lines.append("")
        lines.append("every outcome:")
        for s in studies:
            for m, outcome in s.outcomes.items():
                lines.append(f"  {s.name} {m} [{outcome.status}]: {outcome.detail}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the table for the named entries (default: :data:`SUBJECTS`)."""
    parser = argparse.ArgumentParser(prog="python -m tests.corpus.mutations")
    parser.add_argument("names", nargs="*", help="corpus entries (default: every subject)")
    parser.add_argument("--detail", action="store_true", help="what each mutation rewrote")
    options = parser.parse_args(argv)
    start = time.perf_counter()
    studies = [study(n) for n in options.names or SUBJECTS]
    print(table(studies, detail=options.detail))
    print(f"\n{len(studies)} models in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
