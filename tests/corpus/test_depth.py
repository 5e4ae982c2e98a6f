"""A model nested 1,000 modules deep: capture adds no recursion limit of its own, and
nothing that draws it recurses on the module tree."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import torch
from torch import nn

from pytest_tlgraph import capture
from pytest_tlgraph.trace import Trace
from tests.corpus.models_graph import DEEP, DeepChain, stack_depth
from tests.corpus.traces import corpus_trace

#: Frames a drawing may use above its caller: a few hundred, far fewer than the
#: module tree is deep, so one frame per level of nesting anywhere fails.
_DRAW_FRAMES = 300


@contextmanager
def _shallow_stack() -> Iterator[None]:
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(stack_depth() + _DRAW_FRAMES)
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


@pytest.fixture(scope="module")
def deep() -> Trace:
    return corpus_trace("deep_chain_1000")


def test_capture_nests_every_module_call_and_leaves_the_recursion_limit_as_it_was(
    deep: Trace,
) -> None:
    before = sys.getrecursionlimit()
    trace = capture(DeepChain(DEEP), torch.randn(2, 4))
    assert sys.getrecursionlimit() == before
    # The root at depth 0, level k at depth k + 1, the innermost level's Linear below.
    assert max(call.depth for call in trace.modules) == DEEP + 1
    assert [op.func for op in deep.ops[1:5]] == ["linear", "tanh", "linear", "tanh"]
    innermost = deep.ops[-2]
    assert innermost.module == ".".join(["chain", *["inner"] * (DEEP - 1)])
    assert len(innermost.module_calls) == DEEP + 1  # the root, then every level


def test_grad_norm_is_recorded_at_every_level_with_backward() -> None:
    torch.manual_seed(0)
    trace = capture(DeepChain(DEEP), torch.randn(2, 4), backward=True)
    norms = [op.grad_norm for op in trace.ops if op.func == "tanh"]
    assert len(norms) == DEEP and all(norm is not None for norm in norms)


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"view": "rolled"},
        {"depth": DEEP // 2},
        {"collapse": "max"},
        {"color_by": "flops", "size_by": "params"},
    ],
    ids=["full", "rolled", "half-depth", "collapse-max", "encoded"],
)
def test_drawing_never_recurses_on_the_module_tree(deep: Trace, options: dict[str, Any]) -> None:
    with _shallow_stack():
        drawing = deep.draw(**options)
    dot = drawing.dot
    opened = dot.startswith("digraph tlgraph {")
    clusters = dot.count("subgraph ")
    del drawing, dot  # a failing assert would otherwise print the 10 MB text
    assert opened
    if not options or "color_by" in options:
        # One cluster per level, each inside the one before.
        assert clusters == DEEP


def test_a_plain_nested_model_the_default_stack_cannot_hold_still_fails_as_it_would() -> None:
    """The capture grows the limit by its own frames only: a model too deep to run
    without it (one that sets no limit for itself) raises as it does plainly."""

    class Level(nn.Module):
        def __init__(self, inner: nn.Module | None) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x + 1 if self.inner is None else self.inner(x)

    model: nn.Module | None = None
    for _ in range(sys.getrecursionlimit()):
        model = Level(model)
    assert model is not None
    with pytest.raises(RecursionError):
        model(torch.zeros(1))
    with pytest.raises(Exception, match="RecursionError"):
        capture(model, torch.zeros(1))
