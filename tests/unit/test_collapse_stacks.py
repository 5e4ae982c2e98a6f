"""Folds are stacks (issue 21, item 2): a run of calls folds only when each call reads
the previous call's output."""

from __future__ import annotations

import re
from typing import Any

import pytest
import torch
from torch import nn

from pytest_tlgraph import capture


class _Heads(nn.Module):
    """Three same-structure heads on one input, summed: siblings, not a stack."""

    def __init__(self) -> None:
        super().__init__()
        self.heads = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        outs = [head(x) for head in self.heads]
        return outs[0] + outs[1] + outs[2]


class _Stack(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return x


class _Pairs(nn.Module):
    """Period-two repetitions (Linear, ReLU): the second pair reads the first's output,
    the third pair reads the input again."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.ModuleList(nn.Linear(4, 4) if i % 2 == 0 else nn.ReLU() for i in range(6))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.body[1](self.body[0](x))
        y = self.body[3](self.body[2](y))
        z = self.body[5](self.body[4](x))
        return y * z


def _folded(model: nn.Module, **opts: Any) -> list[str]:
    drawing = capture(model, torch.zeros(1, 4)).draw(**opts)
    folds = [n.rows[0] for n in drawing.nodes.values() if n.kind == "fold"]
    return [*folds, *(t for t in drawing.clusters if re.match(r"x\d+ ", t))]


@pytest.mark.parametrize("opts", [{"collapse": "auto"}, {"collapse": "max"}])
def test_siblings_on_one_input_do_not_fold(opts: dict[str, Any]) -> None:
    assert _folded(_Heads(), **opts) == []


@pytest.mark.parametrize(
    ("opts", "title"),
    [
        ({"collapse": "auto"}, "x3 @layers.0-2 (Linear)"),
        ({"collapse": "max"}, "x3 @layers.0-2 (Linear)"),
    ],
)
def test_a_stack_still_folds(opts: dict[str, Any], title: str) -> None:
    assert _folded(_Stack(), **opts) == [title]


def test_a_period_two_run_stops_where_the_chain_breaks() -> None:
    assert _folded(_Pairs(), collapse="auto") == ["x2 @body.0-3 (Linear, ReLU)"]
