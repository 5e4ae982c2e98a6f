"""Plain-torch models for the shape of the graph: a chain of modules nested 1,000 deep."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

import torch
from torch import nn

from tests.corpus.registry import Case, register

__all__ = ["DEEP", "FRAMES_PER_LEVEL", "DeepChain", "stack_depth"]

#: How deep the chain nests its modules.
DEEP = 1000
#: Recursion-limit units one level of an eager forward takes (the frames of
#: ``__call__``, ``_call_impl`` and ``forward``, and the C call into the module), so a
#: model of ``DEEP`` levels needs this many times ``DEEP``.
FRAMES_PER_LEVEL = 4
#: Frames the innermost level's own calls take (its ``Linear``, torch's functions).
_LEAF_FRAMES = 40
#: Units a level takes under torch's ``FlopCounterMode`` (its module tracker's hooks).
_COUNTER_FRAMES = 8


def stack_depth() -> int:
    """Python frames on the stack of the caller."""
    depth = 0
    frame = sys._getframe(1)
    while frame is not None:
        depth += 1
        frame = frame.f_back  # type: ignore[assignment]
    return depth


@contextmanager
def frames_for(levels: int, per_level: int = FRAMES_PER_LEVEL) -> Iterator[None]:
    """A recursion limit for ``levels`` nested eager module calls from here, as a
    model this deep must set for itself (``per_level`` units each); put back
    afterwards."""
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(stack_depth() + per_level * levels + _LEAF_FRAMES)
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


class _Level(nn.Module):
    def __init__(self, inner: _Level | None) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.inner = inner

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.tanh(self.proj(x))
        return x if self.inner is None else self.inner(x)


class DeepChain(nn.Module):
    """``levels`` modules each holding (and calling) the next: ``chain.inner.inner...``.

    Built and walked without recursion (``nn.Module.eval`` would recurse once per
    level); the forward recurses as written, under a recursion limit set for it:
    ``per_level`` units a level (the default is just enough for a plain call).
    """

    def __init__(self, levels: int = DEEP, per_level: int = FRAMES_PER_LEVEL) -> None:
        super().__init__()
        inner: _Level | None = None
        for _ in range(levels):
            inner = _Level(inner)
        self.chain = inner
        self.levels = levels
        self.per_level = per_level

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with frames_for(self.levels, self.per_level):
            return self.chain(x) if self.chain is not None else x

    def train(self, mode: bool = True) -> DeepChain:
        """Set ``training`` on every level without recursing through them."""
        todo: list[nn.Module] = [self]
        while todo:
            module = todo.pop()
            module.training = mode
            todo.extend(child for child in module._modules.values() if child is not None)
        return self


@register("deep_chain_1000")
def deep_chain_1000() -> Case:
    """Modules nested 1,000 deep, each calling the next (one ``Linear`` and ``tanh``)."""
    # Room for torch's own FlopCounterMode too, whose module hooks add frames per level
    # (the depth tests hold the capture to the plain forward's limit).
    return Case("deep_chain_1000", DeepChain(per_level=_COUNTER_FRAMES), (torch.randn(2, 4),))
