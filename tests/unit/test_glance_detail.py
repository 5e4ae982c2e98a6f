"""Same class, same detail (issue 24, item 1): within one drawing every call of a module
class is drawn at one detail, in ``collapse="auto"`` and ``depth=N`` alike."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch import nn

from pytest_tlgraph import capture
from pytest_tlgraph.draw import build_plan
from pytest_tlgraph.draw.collapse.detail import CONTAINERS
from pytest_tlgraph.draw.plan import Plan
from pytest_tlgraph.trace import Trace
from tests.corpus.traces import corpus_trace
from tests.plan_checks import check_plan


def _details(trace: Trace, plan: Plan) -> tuple[set[str], set[str]]:
    """The classes with a call drawn as a box, and those with a call drawn op by op."""
    types = {call.key: call.type_name for call in trace.modules}
    boxes: set[str] = set()
    expanded: set[str] = set()
    for node in plan.nodes:
        if node.kind == "box":
            boxes.update(types[key] for key in node.record.calls)
        elif node.kind == "fold":
            boxes.update(types[key] for box in node.record.boxes for key in box.calls)
        elif node.kind == "op":
            expanded.update(types[key] for key in node.record.module_calls if key[0])
    return boxes, expanded


@pytest.mark.parametrize("name", ["llama", "phi3", "gemma3", "mixtral", "t5", "bert"])
@pytest.mark.parametrize("options", [{"collapse": "auto"}, {"depth": 1}, {"depth": 2}])
def test_every_call_of_a_class_is_drawn_at_one_detail(name: str, options: Any) -> None:
    trace = corpus_trace(name)
    plan = build_plan(trace, **options)
    check_plan(trace, plan)
    boxes, expanded = _details(trace, plan)
    assert not (boxes & expanded) - CONTAINERS, boxes & expanded


@pytest.mark.parametrize(("name", "norm"), [("llama", "LlamaRMSNorm"), ("phi3", "Phi3RMSNorm")])
def test_the_final_norm_is_a_box_like_the_layer_norms(name: str, norm: str) -> None:
    trace = corpus_trace(name)
    plan = build_plan(trace, depth=2)  # the layers' norms are at depth 3
    kinds = {node.id: node.kind for node in plan.nodes}
    assert kinds["@model.norm#1"] == "box"
    assert kinds["@model.layers.0.input_layernorm#1"] == "box"
    assert not any(c.type_name == norm for c in plan.clusters)
    # Auto draws them alike too: the final norm is a box exactly when the layers' are.
    kinds = {node.id: node.kind for node in build_plan(trace, collapse="auto").nodes}
    assert ("@model.norm#1" in kinds) == ("@model.layers.0.input_layernorm#1" in kinds)


class _Recursive(nn.Module):
    """A U-Net-like block that nests itself: its calls play different roles."""

    def __init__(self, levels: int) -> None:
        super().__init__()
        self.down = nn.Linear(4, 4)
        self.inner = _Recursive(levels - 1) if levels > 1 else None
        self.up = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.down(x))
        if self.inner is not None:
            y = y + self.inner(y)
        return self.up(y)


def test_a_class_whose_calls_nest_keeps_its_depths() -> None:
    trace = capture(nn.Sequential(_Recursive(3)), torch.randn(2, 4))
    plan = build_plan(trace, depth=2)
    boxes = [node.id for node in plan.nodes if node.kind == "box"]
    assert boxes == ["@0.down#1", "@0.inner.down#1", "@0.inner.inner#1", "@0.inner.up#1",
                     "@0.up#1"]  # fmt: skip


class _Stage(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.block = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
        self.skip = nn.Sequential(nn.Linear(4, 4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.block(x) + self.skip(x)


class _Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stage = _Stage()
        self.head = nn.Sequential(nn.Linear(4, 4), nn.ReLU())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.stage(x))


def test_containers_are_left_at_their_depth() -> None:
    # The stage's Sequentials are boxes at depth=1; the top-level head Sequential is
    # drawn open, its layers boxed at their own depth.
    trace = capture(_Net(), torch.randn(2, 4))
    plan = build_plan(trace, depth=1)
    assert [(node.kind, node.id) for node in plan.nodes if node.kind != "input"] == [
        ("box", "@stage.block#1"), ("box", "@stage.skip#1"), ("op", "add_1"),
        ("box", "@head.0#1"), ("box", "@head.1#1"), ("output", "output_1"),
    ]  # fmt: skip
