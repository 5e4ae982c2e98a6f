"""Collapsed plans: depth boxes, edge rerouting, views, shared modules, determinism."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from pytest_tlgraph import capture
from pytest_tlgraph.draw import build_plan
from pytest_tlgraph.draw.collapse import COLLAPSED_KINDS, BoxRecord, build_collapsed_plan
from pytest_tlgraph.draw.plan import Plan
from pytest_tlgraph.trace import Trace
from tests.models import SharedModule
from tests.plan_checks import check_plan


class Block(nn.Module):
    """Residual inside the block: ``x + relu(fc(x))``."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.act = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.act(self.fc(x))


class Nested(nn.Module):
    """Root ops around a Sequential of two blocks (depth 1 -> 2 -> 3) and a head."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(Block(4), Block(4))
        self.head = nn.Linear(4, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.blocks(x * 2)
        return self.head(torch.tanh(x))


@pytest.fixture(scope="module")
def nested() -> Trace:
    torch.manual_seed(0)
    return capture(Nested(), torch.randn(1, 4))


@pytest.fixture(scope="module")
def shared() -> Trace:
    torch.manual_seed(0)
    return capture(SharedModule(), torch.randn(2, 6))


def ids(plan: Plan) -> list[str]:
    return [n.id for n in plan.nodes]


def node(plan: Plan, node_id: str):  # type: ignore[no-untyped-def]
    return next(n for n in plan.nodes if n.id == node_id)


def call_ops(trace: Trace, address: str, number: int = 1) -> tuple[str, ...]:
    return next(c.ops for c in trace.modules if c.key == (address, number))


def test_depth_zero_boxes_every_top_level_call(nested: Trace) -> None:
    plan = build_plan(nested, depth=0)
    assert ids(plan) == ["input_1", "mul_1", "@blocks#1", "tanh_1", "@head#1", "output_1"]
    assert node(plan, "@blocks#1").members == call_ops(nested, "blocks")
    assert node(plan, "@head#1").members == call_ops(nested, "head")
    assert plan.clusters == ()  # a top-level box has only the root around it
    assert plan.edges == (
        ("input_1", "mul_1"),
        ("mul_1", "@blocks#1"),
        ("@blocks#1", "tanh_1"),
        ("tanh_1", "@head#1"),
        ("@head#1", "output_1"),
    )


def test_depth_one_keeps_the_parent_as_a_cluster_around_its_boxes(nested: Trace) -> None:
    plan = build_plan(nested, depth=1)
    boxes = [n for n in plan.nodes if n.kind == "box"]
    assert [b.id for b in boxes] == ["@blocks.0#1", "@blocks.1#1"]
    assert {b.cluster for b in boxes} == {"cluster_blocks#1"}
    assert [c.title for c in plan.clusters] == ["@blocks (Sequential)"]
    # ``head`` sits at depth 1: it is not deeper than 1, so its op stays visible.
    head_op = call_ops(nested, "head")[0]
    assert node(plan, head_op).kind == "op"
    assert ("@blocks.0#1", "@blocks.1#1") in plan.edges


def test_box_record_names_its_module(nested: Trace) -> None:
    record = node(build_plan(nested, depth=1), "@blocks.1#1").record
    assert isinstance(record, BoxRecord)
    assert (record.module, record.module_type, record.num_calls) == ("blocks.1", "Block", 1)
    assert record.members == call_ops(nested, "blocks.1")
    assert record.module_args is None  # a user module has no constructor args row
    head = node(build_plan(nested, depth=0), "@head#1").record
    assert head.module_family == "linear"
    assert dict(head.module_args) == {"in_features": 4, "out_features": 2, "bias": True}


def test_outside_op_feeding_a_box_twice_gives_one_edge(nested: Trace) -> None:
    # mul_1 feeds both blocks.0's fc and its residual add: two op edges, one box edge.
    inside = set(call_ops(nested, "blocks.0"))
    feeding = [(p, op) for op in inside for p in nested.op(op).parents if p == "mul_1"]
    assert len(feeding) == 2
    edges = build_plan(nested, depth=1).edges
    assert edges.count(("mul_1", "@blocks.0#1")) == 1
    assert len(edges) == len(set(edges))


@pytest.mark.parametrize("view", ["unrolled", "rolled"])
@pytest.mark.parametrize(
    "options", [{"depth": 0}, {"depth": 1}, {"depth": 2}, {"collapse": "max"}, {"collapse": "auto"}]
)
def test_edges_are_the_op_edges_mapped_onto_nodes(
    nested: Trace, view: str, options: dict[str, object]
) -> None:
    plan = build_plan(nested, view=view, **options)  # type: ignore[arg-type]
    check_plan(nested, plan)  # every op in one node, edges mapped onto nodes, once each
    kinds = {n.id: n.kind for n in plan.nodes}
    assert not [e for e in plan.edges if e[0] == e[1] and kinds[e[0]] in COLLAPSED_KINDS]


def test_shared_module_unrolled_has_one_box_per_call(shared: Trace) -> None:
    plan = build_plan(shared, depth=0)
    assert ids(plan) == ["input_1", "@shared#1", "@other#1", "@shared#2", "add_1", "output_1"]
    first, second = node(plan, "@shared#1"), node(plan, "@shared#2")
    assert first.members == call_ops(shared, "shared", 1)
    assert second.members == call_ops(shared, "shared", 2)
    assert first.record.num_calls == second.record.num_calls == 1
    assert ("@other#1", "@shared#2") in plan.edges


def test_shared_module_rolled_is_one_box_over_both_calls(shared: Trace) -> None:
    plan = build_plan(shared, view="rolled", depth=0)
    assert ids(plan) == ["input_1", "@shared", "@other", "add_1", "output_1"]
    box = node(plan, "@shared").record
    assert box.num_calls == 2
    assert box.calls == (("shared", 1), ("shared", 2))
    assert set(box.members) == set(call_ops(shared, "shared", 1) + call_ops(shared, "shared", 2))
    # The second call reads @other's output and both calls feed the add.
    assert set(plan.edges) == {
        ("input_1", "@shared"),
        ("input_1", "@other"),
        ("@other", "@shared"),
        ("@shared", "add_1"),
        ("add_1", "output_1"),
    }


def test_rolled_box_in_a_loop_keeps_the_cycle_but_no_self_edge() -> None:
    class Loop(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.cell = nn.Linear(3, 3)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            for _ in range(3):
                x = torch.tanh(self.cell(x))
            return x

    trace = capture(Loop(), torch.randn(1, 3))
    plan = build_plan(trace, view="rolled", depth=0)
    assert ids(plan) == ["input_1", "@cell", "tanh_1", "output_1"]
    assert node(plan, "@cell").record.num_calls == 3
    assert set(plan.edges) == {
        ("input_1", "@cell"),
        ("@cell", "tanh_1"),
        ("tanh_1", "@cell"),
        ("tanh_1", "output_1"),
    }


@pytest.mark.parametrize("view", ["unrolled", "rolled"])
def test_depth_at_or_past_the_deepest_call_is_the_plain_drawing(nested: Trace, view: str) -> None:
    deepest = max(c.depth for c in nested.modules)
    plain = nested.draw(view=view).dot
    assert nested.draw(view=view, depth=deepest).dot == plain
    assert nested.draw(view=view, depth=deepest + 5).dot == plain
    assert nested.draw(view=view, depth=deepest - 1).dot != plain


@pytest.mark.parametrize(
    "options",
    [
        {"depth": 0},
        {"depth": 1},
        {"collapse": "max"},
        {"collapse": "auto"},
        {"depth": 1, "view": "rolled"},
    ],
)
def test_collapsed_dot_is_identical_across_captures(options: dict[str, object]) -> None:
    def dot() -> str:
        torch.manual_seed(0)
        model = Nested()
        return capture(model, torch.randn(1, 4)).draw(**options).dot

    first = dot()
    assert first == dot()
    assert "@blocks" in first


def test_plan_is_a_pure_function_of_trace_and_options(nested: Trace) -> None:
    assert build_plan(nested, depth=1) == build_plan(nested, depth=1)
    assert build_plan(nested, collapse="max", view="rolled") == build_plan(
        nested, collapse="max", view="rolled"
    )


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"collapse": "max", "depth": 1}, ["collapse='max'", "Drop depth="]),
        ({"depth": -1}, ["depth=-1", "non-negative"]),
        ({"depth": True}, ["depth=True"]),
        ({"collapse": "all"}, ["collapse='all'", "'auto' or 'max'"]),
        ({"view": "flat", "depth": 0}, ["view='flat'", "'unrolled' or 'rolled'"]),
    ],
)
def test_bad_options_name_cause_and_remedy(
    nested: Trace, options: dict[str, object], words: list[str]
) -> None:
    with pytest.raises(ValueError) as caught:
        build_collapsed_plan(nested, **options)  # type: ignore[arg-type]
    for word in words:
        assert word in str(caught.value)
