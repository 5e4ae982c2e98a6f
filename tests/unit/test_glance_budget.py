"""Auto spends the budget where the compute is (issue 24, item 2): it opens the drawn
boxes with the most FLOPs first (the most ops when FLOPs are unknown), per subtree, not
one depth for the whole model."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from torch import nn

from pytest_tlgraph import capture
from pytest_tlgraph.draw import build_plan
from pytest_tlgraph.draw.collapse import AUTO_NODE_BUDGET
from pytest_tlgraph.trace import Trace
from tests.corpus.traces import corpus_trace
from tests.plan_checks import check_plan


def _open(trace: Trace, **options: object) -> tuple[set[str], set[str]]:
    """The module types drawn as frames and those drawn as boxes."""
    plan = build_plan(trace, collapse="auto", **options)  # type: ignore[arg-type]
    check_plan(trace, plan)
    assert len(plan.nodes) <= AUTO_NODE_BUDGET
    frames = {c.type_name for c in plan.clusters}
    boxes = {n.record.module_type for n in plan.nodes if n.kind == "box"}
    return frames, boxes


@pytest.mark.parametrize(
    ("name", "opened", "boxed"),
    [
        # The decoder layer opens down to its attention and MLP (Llama), its MoE block
        # (Mixtral), its MLP (Phi-3); what stays a box is lighter. (A rotary embedding
        # computes constants alone: its tables are ``const`` nodes, it has no box.)
        ("llama", {"LlamaAttention", "LlamaMLP"}, {"LlamaRMSNorm"}),
        ("mixtral", {"MixtralSparseMoeBlock", "MixtralExperts"}, {"MixtralRMSNorm"}),
        ("phi3", {"Phi3Attention", "Phi3MLP"}, {"Phi3RMSNorm"}),
    ],
)
def test_auto_opens_the_heaviest_subtrees_first(
    name: str, opened: set[str], boxed: set[str]
) -> None:
    frames, boxes = _open(corpus_trace(name))
    assert opened <= frames, frames
    assert boxed <= boxes, boxes


class _Heavy(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(64, 64)
        self.b = nn.Linear(64, 64)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(torch.relu(self.a(x)))  # three ops, most FLOPs


class _Light(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sin(torch.cos(torch.tanh(torch.exp(x))))  # four ops, few FLOPs


class _TwoBranches(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.light = _Light()
        self.heavy = _Heavy()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.heavy(x) + self.light(x)


def test_the_subtree_with_the_most_flops_opens_first() -> None:
    trace = capture(_TwoBranches(), torch.randn(2, 64))
    # Five nodes: input, two boxes, add, output. Opening the heavy box makes 7, the
    # light one 8, both 10: a budget of 8 fits one, whichever opens first.
    frames, boxes = _open(trace, collapse_budget=8)
    assert frames == {"_Heavy"} and "_Light" in boxes


def test_without_flops_the_subtree_with_the_most_ops_opens_first() -> None:
    trace = capture(_TwoBranches(), torch.randn(2, 64))
    ops = tuple(dataclasses.replace(op, flops_forward=None) for op in trace.ops)
    blind = dataclasses.replace(trace, ops=ops)
    frames, boxes = _open(blind, collapse_budget=8)
    assert frames == {"_Light"} and "_Heavy" in boxes


def test_depth_caps_what_auto_opens() -> None:
    # The top-level Linear is shallow enough to open, the blocks' Linears are not: the
    # class stays boxed everywhere rather than opening past the cap.
    model = nn.Sequential(_Heavy(), _Heavy(), nn.Linear(64, 2))
    trace = capture(model, torch.randn(2, 64))
    plan = build_plan(trace, collapse="auto", depth=1)
    check_plan(trace, plan)
    assert all(n.record.depth <= 2 for n in plan.nodes if n.kind == "box")
    assert "@2#1" in {n.id for n in plan.nodes}  # the head: a Linear box like the rest
