"""Invariants of collapsed plans over randomly nested real models (hypothesis)."""

from __future__ import annotations

from typing import Any

import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch import nn

from pytest_tlgraph import capture
from pytest_tlgraph.draw import build_plan
from pytest_tlgraph.draw.collapse import COLLAPSED_KINDS
from pytest_tlgraph.draw.plan import Plan
from pytest_tlgraph.trace import Trace
from tests.plan_checks import check_plan


class Node(nn.Module):
    """Runs its items in order: submodules, or ``"op"`` for a bare ``torch.sin`` issued
    by this module itself. ``residual`` adds the input back at the end."""

    def __init__(self, items: list[Any], residual: bool) -> None:
        super().__init__()
        self.residual = residual
        self.plan: list[int | None] = []
        self.parts = nn.ModuleList()
        for item in items:
            if item == "op":
                self.plan.append(None)
            else:
                self.plan.append(len(self.parts))
                self.parts.append(build(item))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x
        for index in self.plan:
            y = torch.sin(y) if index is None else self.parts[index](y)
        return x + y if self.residual else y


def build(spec: Any) -> nn.Module:
    if spec == "linear":
        return nn.Linear(3, 3)
    if spec == "relu":
        return nn.ReLU()
    kind, items = spec
    return Node(items, residual=kind == "res")


leaf = st.sampled_from(["linear", "relu", "op"])
specs = st.recursive(
    leaf,
    lambda inner: st.tuples(
        st.sampled_from(["seq", "res"]), st.lists(inner, min_size=1, max_size=3)
    ),
    max_leaves=10,
)
models = st.lists(specs, min_size=1, max_size=4)


def trace_of(items: list[Any]) -> Trace:
    torch.manual_seed(0)
    return capture(Node(items, residual=False), torch.randn(1, 3))


def assert_same_class_same_detail(trace: Trace, plan: Plan) -> None:
    """No class but the nesting ``Node`` has one call drawn as a box and another drawn
    op by op."""
    types = {call.key: call.type_name for call in trace.modules}
    boxes = {types[key] for n in plan.nodes if n.kind == "box" for key in n.record.calls}
    expanded = {
        types[key]
        for n in plan.nodes
        if n.kind == "op"
        for key in n.record.module_calls
        if key[0] != ""
    }
    assert boxes & expanded <= {"Node"}, (boxes, expanded)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=models)
def test_collapsed_plans_partition_ops_and_map_edges(items: list[Any]) -> None:
    trace = trace_of(items)
    top = max(c.depth for c in trace.modules)
    for view in ("unrolled", "rolled"):
        counts = []
        for depth in range(top + 1):
            plan = build_plan(trace, view=view, depth=depth)
            check_plan(trace, plan)
            assert "fold" not in {n.kind for n in plan.nodes}
            counts.append(len(plan.nodes))
            if view == "unrolled":
                boxed = [n.record.depth for n in plan.nodes if n.kind == "box"]
                # Shallower boxes only where their class is boxed deeper (same class,
                # same detail).
                assert max(boxed, default=0) <= depth + 1
                assert_same_class_same_detail(trace, plan)
        # A shallower depth only merges nodes: never more nodes than a deeper one.
        assert counts == sorted(counts)
        for collapse in ("max", "auto"):
            plan = build_plan(trace, view=view, collapse=collapse)
            check_plan(trace, plan)
            assert plan == build_plan(trace, view=view, collapse=collapse)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=models)
def test_max_leaves_no_root_op_and_no_nested_module_visible(items: list[Any]) -> None:
    trace = trace_of(items)
    for view in ("unrolled", "rolled"):
        plan = build_plan(trace, view=view, collapse="max")
        assert {n.kind for n in plan.nodes} <= {"input", "output", *COLLAPSED_KINDS}
        # The only frames are repeat folds of a period over one call (``(Linear, ReLU)
        # x2000``), drawn as a frame around one repetition's boxes, never nested.
        assert all(c.caption is not None and c.parent is None for c in plan.clusters)
        segments = [n for n in plan.nodes if n.kind == "segment"]
        for node in segments:
            assert all(trace.op(label).module == "" for label in node.members)
