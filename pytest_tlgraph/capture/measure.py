"""Per-op measurements taken while the recorder runs: tensors in nested values, output
magnitude, and the user source location.

Everything here runs once per op, so each helper is written for the common case first.
"""

from __future__ import annotations

import math
import os
from dataclasses import fields, is_dataclass
from types import CodeType, FrameType
from typing import Any, Final

import numpy as np
import torch
from torch import nn

__all__ = [
    "add_boundary",
    "first_tensor",
    "float_kind",
    "iter_tensors",
    "magnitude",
    "source_chain",
]

_SCALARS: Final = (int, float, bool, str, bytes, torch.dtype, torch.device)


def _collect(value: Any, out: list[torch.Tensor]) -> None:
    if isinstance(value, torch.Tensor):
        out.append(value)
    elif value is None or isinstance(value, _SCALARS):
        return
    elif isinstance(value, (list, tuple)):
        for item in value:
            if isinstance(item, torch.Tensor):
                out.append(item)
            else:
                _collect(item, out)
    elif isinstance(value, dict):
        for item in value.values():
            _collect(item, out)
    elif is_dataclass(value) and not isinstance(value, type):
        for f in fields(value):
            _collect(getattr(value, f.name), out)


def iter_tensors(value: Any) -> list[torch.Tensor]:
    """Tensors in ``value`` in order: nested tuples, lists, dict values and dataclass
    fields are walked; anything else is not looked into."""
    out: list[torch.Tensor] = []
    _collect(value, out)
    return out


def first_tensor(value: Any) -> torch.Tensor | None:
    """The first tensor in ``value`` (as :func:`iter_tensors` orders them), if any."""
    if isinstance(value, torch.Tensor):
        return value
    found = iter_tensors(value)
    return found[0] if found else None


_norm: Final = torch.linalg.vector_norm
_vdot: Final = np.vdot
_np_f64: Final = np.float64
_f32: Final = torch.float32
_f64: Final = torch.float64
_strided: Final = torch.strided
_PLAIN_TENSORS: Final = (torch.Tensor, torch.nn.Parameter)
_wrapped: Final = torch._C._functorch.is_functorch_wrapped_tensor
_inf: Final = math.inf
_sqrt: Final = math.sqrt
_DTYPE_NAMES: Final[dict[torch.dtype, str]] = {}


def dtype_name(dtype: torch.dtype) -> str:
    """``torch.bfloat16`` -> ``bfloat16``: the name a trace keeps (no torch object)."""
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        name = _DTYPE_NAMES[dtype] = str(dtype).removeprefix("torch.")
    return name


#: Dtypes whose values numpy reads in place (its dot accumulates in the dtype itself).
_NUMPY_FLOATS: Final = frozenset({torch.float32, torch.float64})
# dtype -> (is floating point, dtype to accumulate the norm in): looked up once per dtype.
_dtype_kinds: dict[torch.dtype, tuple[bool, torch.dtype | None]] = {}


def float_kind(dtype: torch.dtype) -> tuple[bool, torch.dtype | None]:
    """``(is floating point, dtype its norm accumulates in)``, ``None`` for its own."""
    kind = _dtype_kinds.get(dtype)
    if kind is None:
        # Half precision accumulates in float32: its sum of squares overflows long
        # before the values themselves are large.
        kind = _dtype_kinds[dtype] = (dtype.is_floating_point, _f32 if dtype.itemsize < 4 else None)
    return kind


def magnitude(t: torch.Tensor) -> float | None:
    """Root-mean-square of a float tensor's values; ``None`` otherwise.

    The sum of squares accumulates in the tensor's own dtype (float32 for half
    precision, whose squares overflow long before its values are large) and is redone
    in float64 when float32 overflows on finite values. Contiguous dense CPU float32
    and float64 tensors with storage of their own are read in place through numpy,
    whose dot is a fraction of the cost of a torch reduction for the small tensors of a
    test model; everything else goes through ``torch.linalg.vector_norm``.
    """
    dtype = t.dtype
    is_float, accumulate = _dtype_kinds.get(dtype) or float_kind(dtype)
    if not is_float:
        return None
    count = t.numel()
    if count == 0:
        return None
    if (
        dtype in _NUMPY_FLOATS
        and type(t) in _PLAIN_TENSORS
        and t.is_cpu
        and t.layout is _strided
        and t.is_contiguous()  # numpy would copy anything else: torch reads it in place
        and not _wrapped(t)  # functorch and functionalization wrappers own no storage
    ):
        try:
            # Read in place (``force`` detaches in C++ and resolves a negative-bit view).
            array = t.numpy(force=True)
        except RuntimeError:
            array = None  # a torch build without numpy support, say: torch reads it
        if array is not None:
            squares = float(_vdot(array, array))
            if squares == _inf and dtype is _f32:
                # Finite values whose squares overflow float32: redo it in float64.
                wide = array.astype(_np_f64)
                squares = float(_vdot(wide, wide))
            return _sqrt(squares / count)
    # Detached so the norm stays out of the autograd graph; a tensor that requires no
    # grad is read as is (a detached alias costs as much as the norm's bookkeeping).
    values = t.detach() if t.requires_grad else t
    try:
        norm = float(_norm(values, dtype=accumulate))
        if norm == _inf and dtype != _f64:
            norm = float(_norm(values, dtype=_f64))
    except (RuntimeError, NotImplementedError):
        # Meta, sparse and other layouts without values to read.
        return None
    return norm / _sqrt(count)


# -- user source locations ----------------------------------------------------------
_TORCH_DIR: Final = os.path.dirname(torch.__file__) + os.sep
_OWN_DIR: Final = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_STOP, _SKIP, _USER = 0, 1, 2
# Kind of each code object seen, by ``id()``: hashing a code object hashes its bytecode
# and constants on every lookup (microseconds for a large function such as
# ``Module._call_impl``), an ``id`` is one machine word. ``_held`` keeps every code object
# counted here alive, so no ``id`` in the table is ever reused by another one.
_kinds: dict[int, int] = {}
_held: list[CodeType] = []


def _set_kind(code: CodeType, kind: int) -> None:
    if id(code) not in _kinds:
        _held.append(code)
    _kinds[id(code)] = kind


_set_kind(nn.Module._call_impl.__code__, _STOP)
_set_kind(nn.Module._wrapped_call_impl.__code__, _STOP)


def add_boundary(code: CodeType) -> None:
    """Make frames of ``code`` end every source chain (like a module's ``__call__``)."""
    _set_kind(code, _STOP)


def _kind(code: CodeType) -> int:
    filename = code.co_filename
    kind = _SKIP if filename.startswith((_TORCH_DIR, _OWN_DIR)) else _USER
    _set_kind(code, kind)
    return kind


def source_chain(frame: FrameType | None) -> tuple[tuple[int, int], ...]:
    """The user source locations from ``frame`` outwards, up to the innermost module
    call: every frame outside torch and this package, as ``(id(code), instruction)``.

    The instruction offset (not just the line) tells apart two calls of one function on
    one line, such as the two adds of ``a + b + c``, while every pass of a loop still
    issues its call from the same instruction. A code object is named by its ``id``
    (held alive, so never reused): chains are hashed once per op, and a code object's
    own hash reads all its bytecode.
    """
    chain: list[tuple[int, int]] = []
    kinds = _kinds
    while frame is not None:
        code = frame.f_code
        key = id(code)
        kind = kinds.get(key)
        if kind is None:
            kind = _kind(code)
        if kind == _STOP:
            break
        if kind == _USER:
            chain.append((key, frame.f_lasti))
        frame = frame.f_back
    return tuple(chain)
