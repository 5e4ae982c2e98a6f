"""Tensors the forward reads that hold no learned value: drawn once each, by value.

A *constant* is a tensor an op reads that is neither a parameter, a persistent buffer,
an input, nor the output of a recorded op:

* a non-persistent buffer (``register_buffer(..., persistent=False)``: ``inv_freq``,
  ``position_ids``, a causal mask), or a persistent one the caller opted in by name;
* a tensor made before the capture and held outside any module's parameters and
  buffers: a plain module attribute, a scheduler object's table, a global, a closure's
  tensor, a cache filled by an earlier forward (BEiT's relative position index);
* the output of a call whose tensor arguments are all constants (or that takes none):
  the recorder *folds* such calls (:meth:`ConstantTable.foldable`) instead of recording
  them, so a table the forward computes (``arange``, ``meshgrid``, ``stack``, ...) and
  the same table received already computed from a cache draw the very same node.

Each distinct constant becomes one ``const`` record the first time a recorded op reads
it, with the call arguments ``buffer=``/``attribute=`` (its name, when it has one) and
``values=`` (its values when there are a handful, else a short digest of them), so a
change to any value changes the drawing. Every constant sits at the root of the drawing
(no module address; a buffer or attribute is named by its full name), its record
before every op (:mod:`.hoist`): where it sits never depends on which call happened to
compute or first read it, so the drawing is a function of the model and its inputs.
"""

from __future__ import annotations

import ctypes
import fnmatch
import hashlib
import math
import struct
import weakref
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final

import torch
from torch import nn

if TYPE_CHECKING:
    from pytest_tlgraph.capture.raw import ParamInfo

__all__ = [
    "NEVER_FOLDED",
    "VALUES_SHOWN",
    "ConstantTable",
    "const_call",
    "split_buffers",
    "value_text",
]

#: Calls whose result is not a function of their arguments (random draws, memory left
#: uninitialised): never folded into a constant, recorded as ops as before.
NEVER_FOLDED: Final = frozenset(
    {"rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like",
     "normal", "normal_", "uniform_", "bernoulli", "bernoulli_", "multinomial", "poisson",
     "exponential_", "geometric_", "cauchy_", "log_normal_", "random_", "dropout",
     "dropout_", "alpha_dropout", "feature_alpha_dropout", "dropout1d", "dropout2d",
     "dropout3d", "feature_dropout", "rrelu", "empty", "empty_like", "empty_strided",
     "new_empty", "new_empty_strided", "output", "input"}
)  # fmt: skip

#: At most this many elements are written out as values; more are written as a digest.
VALUES_SHOWN: Final = 8

_no_torch_function: Final = torch._C.DisableTorchFunction


def const(*, buffer: str | None = None, attribute: str | None = None, values: str = "") -> None:
    """The signature a ``const`` record's arguments are named by (never called)."""


def split_buffers(
    modules: Iterable[tuple[str, nn.Module]],
    params: dict[int, ParamInfo],
    value_buffers: Iterable[str] = (),
) -> dict[int, tuple[str, str]]:
    """Take the buffers drawn by value out of ``params`` (in place): every non-persistent
    buffer, and each persistent one whose full name matches a pattern of
    ``value_buffers`` (``fnmatch``: ``"*.inv_freq"``, ``"mask"``). Returns them as
    ``id -> (owner address, buffer name)``."""
    patterns = tuple(value_buffers)
    out: dict[int, tuple[str, str]] = {}
    for address, module in modules:
        buffers = module._buffers
        if not buffers:
            continue
        transient = module._non_persistent_buffers_set
        dot = address + "." if address else ""
        for name, b in buffers.items():
            if b is None or id(b) in out:
                continue
            info = params.get(id(b))
            if info is None or info[0] != dot + name:
                continue  # registered first under another name: that one decides
            if name in transient or any(fnmatch.fnmatchcase(info[0], p) for p in patterns):
                del params[id(b)]
                out[id(b)] = (address, dot + name)
    return out


def _float_text(value: float, dtype: torch.dtype) -> str:
    """The shortest text that reads back as ``value`` in ``dtype``."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value == int(value) and abs(value) < 2**53:
        return str(int(value))
    if dtype is torch.float32:
        packed = struct.pack("f", value)
        for digits in range(1, 10):
            text = f"{value:.{digits}g}"
            if struct.pack("f", float(text)) == packed:
                return text
    if dtype in (torch.float16, torch.bfloat16):
        return f"{value:.5g}"
    return repr(value)


def value_text(t: torch.Tensor) -> str:
    """``t``'s values written out (a handful) or ``#`` and a digest of them; ``?`` for a
    tensor without values (meta or fake). Runs with torch functions disabled."""
    with _no_torch_function():
        try:
            if t.is_meta:
                return "?"
            flat = t.detach()
            if flat.device.type != "cpu":
                flat = flat.cpu()
            if flat.is_quantized:
                flat = flat.int_repr()
            if flat.numel() <= VALUES_SHOWN and not flat.is_complex():
                items = flat.reshape(-1).tolist()
                if flat.dtype.is_floating_point:
                    texts = [_float_text(v, flat.dtype) for v in items]
                else:
                    texts = [str(int(v)) for v in items]
                return texts[0] if flat.dim() == 0 else "[" + ", ".join(texts) + "]"
            flat = flat.contiguous()
            data = ctypes.string_at(flat.data_ptr(), flat.numel() * flat.element_size())
        except (RuntimeError, NotImplementedError, TypeError, ValueError):
            return "?"
    digest = hashlib.blake2b(data, digest_size=4).hexdigest()
    return f"#{digest}"


def const_call(name_kind: str | None, name: str | None, values: str) -> tuple[Any, ...]:
    """The call skeleton of a ``const`` record (named by :func:`const`'s signature)."""
    keywords: list[tuple[str, Any]] = []
    if name_kind is not None:
        keywords.append((name_kind, name))
    keywords.append(("values", values))
    return (const, (), tuple(keywords), ())


class ConstantTable:
    """The constants of one capture: which tensors are constants, and the one record
    drawn for each distinct value (see the module docstring)."""

    def __init__(
        self,
        buffers: Mapping[int, tuple[str, str]],
        modules: tuple[tuple[str, nn.Module], ...],
    ) -> None:
        """``buffers``: the buffers drawn by value (:func:`split_buffers`); ``modules``:
        the model's ``(address, module)`` pairs, searched for tensor attributes."""
        self._buffers = dict(buffers)
        self._modules = modules
        self._attributes: dict[int, tuple[str, str]] | None = None
        #: ``id`` -> weak reference of each tensor a folded call made.
        self._made: dict[int, Any] = {}
        #: Record index of each constant drawn, by (address, name kind, name, value key).
        self._records: dict[tuple[Any, ...], int] = {}
        #: Record index by ``id`` of a tensor already drawn (checked by weak reference).
        self._drawn: dict[int, tuple[Any, int]] = {}

    def fold(self, outputs: list[torch.Tensor]) -> None:
        """Note the outputs of a folded call: constants from now on."""
        ref = weakref.ref
        for t in outputs:
            self._made[id(t)] = ref(t)
            self._drawn.pop(id(t), None)  # a write in place: drawn again by value

    def record_for(
        self, t: torch.Tensor, new_record: Callable[[tuple[Any, ...], torch.Tensor], int]
    ) -> int:
        """The index of ``t``'s ``const`` record, made with ``new_record(call, t)`` the
        first time its value is read."""
        seen = self._drawn.get(id(t))
        if seen is not None and seen[0]() is t:
            return int(seen[1])
        named = self._buffers.get(id(t))
        kind = "buffer"
        if named is None and not self._is_made(t):
            named = self._attribute(t)
            kind = "attribute"
        name, name_kind = (None, None) if named is None else (named[1], kind)
        values = value_text(t)
        key = (name_kind, name, tuple(t.shape), t.dtype, values)
        index = self._records.get(key)
        if index is None:
            index = new_record(const_call(name_kind, name, values), t)
            self._records[key] = index
        self._drawn[id(t)] = (weakref.ref(t), index)
        return index

    def _is_made(self, t: torch.Tensor) -> bool:
        found = self._made.get(id(t))
        return found is not None and found() is t

    def _attribute(self, t: torch.Tensor) -> tuple[str, str] | None:
        """``(address, full name)`` of a module attribute holding ``t`` (a tensor that
        is neither a parameter nor a buffer), or ``None``."""
        if self._attributes is None:
            found: dict[int, tuple[str, str]] = {}
            for address, module in self._modules:
                for name, value in vars(module).items():
                    if isinstance(value, torch.Tensor) and id(value) not in found:
                        found[id(value)] = (address, f"{address}.{name}" if address else name)
            self._attributes = found
        return self._attributes.get(id(t))

    def release(self) -> None:
        """Drop every reference to the capture's tensors."""
        self._made.clear()
        self._drawn.clear()
        self._attributes = None
