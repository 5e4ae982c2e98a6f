"""Per-op measurements taken while the recorder runs: tensors in nested values, output
size and magnitude, what autograd saves for backward, and the user source location.

Everything here runs once per op, so each helper is written for the common case first.
"""

from __future__ import annotations

import math
import os
from dataclasses import fields, is_dataclass
from types import CodeType, FrameType
from typing import Any, Final

import torch
from torch import nn

__all__ = [
    "SavedTensors",
    "add_boundary",
    "first_tensor",
    "iter_tensors",
    "magnitude",
    "nbytes",
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


def nbytes(t: torch.Tensor) -> int:
    """Bytes of ``t``'s elements (its logical size, not its storage)."""
    return t.numel() * t.element_size()


def magnitude(t: torch.Tensor) -> float | None:
    """Root-mean-square of a float tensor's values; ``None`` otherwise."""
    if not t.is_floating_point() or t.layout != torch.strided or t.is_meta:
        return None
    count = t.numel()
    if count == 0:
        return None
    # Half precision accumulates in float32: its sum of squares overflows long before
    # the values themselves are large. ``detach`` keeps this out of the graph.
    wide = torch.float32 if t.element_size() < 4 else None
    norm = float(torch.linalg.vector_norm(t.detach(), dtype=wide))
    if math.isinf(norm) and t.dtype != torch.float64:
        # Finite values whose squares overflow float32: redo it in float64.
        norm = float(torch.linalg.vector_norm(t.detach(), dtype=torch.float64))
    return norm / math.sqrt(count)


class SavedTensors:
    """Measures what autograd saves for backward while one op runs.

    One instance serves a whole capture as the pack hook of a single
    ``saved_tensors_hooks`` pair; :meth:`start` and :meth:`stop` bracket each op, so
    a tensor saved outside any op (nothing of ours running) is not counted.
    """

    __slots__ = ("_current", "_last")

    def __init__(self) -> None:
        self._current: dict[Any, int] | None = None
        self._last: dict[Any, int] = {}

    def start(self, active: bool) -> None:
        """Begin an op; ``active=False`` records nothing for it."""
        self._current = {} if active else None
        self._last = self._current if self._current is not None else {}

    def stop(self) -> None:
        """End the running op."""
        self._current = None

    def totals(self) -> tuple[int, int]:
        """``(bytes, count)`` saved by the last op, deduplicated by storage."""
        return sum(self._last.values()), len(self._last)

    def pack(self, t: torch.Tensor) -> torch.Tensor:
        """The pack hook: note ``t``'s storage and keep a detached alias of it.

        Keeping ``t`` itself would tie a saved output to its own ``grad_fn`` in a
        reference cycle that not even the garbage collector breaks, and every
        activation of the pass would outlive the capture.
        """
        current = self._current
        if current is not None:
            try:
                storage = t.untyped_storage()
                # Host and device allocations never share an address: the pointer alone
                # identifies the storage.
                current[storage.data_ptr()] = storage.nbytes()
            except (RuntimeError, NotImplementedError):
                # Tensors without storage (e.g. some subclasses): count their elements.
                current[("opaque", id(t))] = nbytes(t)
        return t.detach()

    @staticmethod
    def unpack(t: torch.Tensor) -> torch.Tensor:
        """The unpack hook: the tensor unchanged."""
        return t


# -- user source locations ----------------------------------------------------------
_TORCH_DIR: Final = os.path.dirname(torch.__file__) + os.sep
_OWN_DIR: Final = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_STOP, _SKIP, _USER = 0, 1, 2
_kinds: dict[CodeType, int] = {
    nn.Module._call_impl.__code__: _STOP,
    nn.Module._wrapped_call_impl.__code__: _STOP,
}


def add_boundary(code: CodeType) -> None:
    """Make frames of ``code`` end every source chain (like a module's ``__call__``)."""
    _kinds[code] = _STOP


def _kind(code: CodeType) -> int:
    filename = code.co_filename
    kind = _SKIP if filename.startswith((_TORCH_DIR, _OWN_DIR)) else _USER
    _kinds[code] = kind
    return kind


def source_chain(frame: FrameType | None) -> tuple[tuple[CodeType, int], ...]:
    """The user source locations from ``frame`` outwards, up to the innermost module
    call: every frame outside torch and this package, as ``(code, instruction)``.

    The instruction offset (not just the line) tells apart two calls of one function on
    one line, such as the two adds of ``a + b + c``, while every pass of a loop still
    issues its call from the same instruction.
    """
    chain: list[tuple[CodeType, int]] = []
    kinds = _kinds
    while frame is not None:
        code = frame.f_code
        kind = kinds.get(code)
        if kind is None:
            kind = _kind(code)
        if kind == _STOP:
            break
        if kind == _USER:
            chain.append((code, frame.f_lasti))
        frame = frame.f_back
    return tuple(chain)
