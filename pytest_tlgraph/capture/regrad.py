"""``grad_norm`` inside reentrant checkpoints: the forward runs them without a graph,
and the backward runs their ops again, with one. ``Regrad`` watches that second run
and hooks each recomputed output's gradient to the op the forward recorded.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import torch
from torch.overrides import TorchFunctionMode

from pytest_tlgraph.capture.measure import dtype_name, first_tensor, magnitude
from pytest_tlgraph.capture.naming import func_name
from pytest_tlgraph.capture.raw import RawOp

__all__ = ["Regrad", "grad_hook"]

#: Relative difference of magnitudes under which a recomputed output is the recorded
#: one (a checkpoint recomputes the same values, with its RNG state put back).
_SAME: Final = 1e-5


def is_fake(t: torch.Tensor) -> bool:
    """Whether ``t`` is a fake tensor (shapes and dtypes, no values). No fake tensor
    exists before torch's fake-tensor module is imported, and importing it here would
    import sympy (seconds): a process that never imported it has none."""
    fake_tensor = sys.modules.get("torch._subclasses.fake_tensor")
    return fake_tensor is not None and bool(fake_tensor.is_fake(t))


def grad_hook(
    norms: dict[int, float], index: int, valueless: list[int] | None = None
) -> Callable[[torch.Tensor], None]:
    """The hook writing the norm of an output's gradient to ``norms[index]``; a
    gradient without values (meta, fake) writes none and lists ``index`` in
    ``valueless``."""

    # Written to a dict, never to the record: a backward the user runs after the
    # capture (through a tensor the model kept) must not touch the frozen trace.
    def hook(grad: torch.Tensor) -> None:
        if grad.is_meta or (type(grad) is not torch.Tensor and is_fake(grad)):
            if valueless is not None:
                valueless.append(index)  # shapes, no values: no norm
            return
        # The hook sees the gradient w.r.t. the whole output once it is complete.
        norms[index] = float(torch.linalg.vector_norm(grad.detach(), dtype=torch.float64))

    return hook


class Regrad(TorchFunctionMode):
    """While a backward recomputes checkpointed ops: each recomputed output that has
    a graph is matched to a recorded op the forward ran without one (same function,
    shape and dtype, the nearest magnitude, within rounding) and its gradient's norm
    is written for that op. Each recorded op is matched once."""

    def __init__(
        self, ops: Sequence[RawOp], unhooked: Mapping[int, float], norms: dict[int, float]
    ):
        super().__init__()
        self._ops = ops
        self._values = unhooked  # float outputs only: nothing else has a gradient
        self._norms = norms
        self._waiting: dict[tuple[Any, ...], list[int]] = {}
        for index in unhooked:
            raw = ops[index]
            self._waiting.setdefault((raw.func, raw.shape, raw.dtype), []).append(index)

    def __torch_function__(
        self,
        func: Callable[..., Any],
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        out = func(*args, **kwargs) if kwargs else func(*args)
        if self._waiting:
            first = first_tensor(out)
            if first is not None and first.grad_fn is not None:
                self._match(func_name(func), first)
        return out

    def _match(self, name: str, t: torch.Tensor) -> None:
        waiting = self._waiting.get((name, tuple(t.shape), dtype_name(t.dtype)))
        if not waiting:
            return
        value = magnitude(t)
        if value is None:
            return
        values = self._values
        best = min(waiting, key=lambda i: abs(values[i] - value))
        if abs(values[best] - value) > _SAME * max(1.0, abs(value)):
            return
        waiting.remove(best)
        t.register_hook(grad_hook(self._norms, best))  # type: ignore[no-untyped-call]
