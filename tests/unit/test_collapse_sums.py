"""Collapsed records carry the exact sums of their member ops (ENCODING.md §4)."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from pytest_tlgraph import capture
from pytest_tlgraph.draw import build_plan
from pytest_tlgraph.draw.collapse import COLLAPSED_KINDS, BoxRecord
from pytest_tlgraph.draw.collapse.records import member_sums
from pytest_tlgraph.fields import BOX_SUMMED
from pytest_tlgraph.trace import Trace


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(5, 5)
        self.norm = nn.LayerNorm(5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x + torch.relu(self.fc(x)))


class Model(nn.Module):
    """Three identical blocks called in a row, one twice, and root ops between."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(Block() for _ in range(3))
        self.head = nn.Linear(5, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x * 3
        for block in self.blocks:
            x = block(x)
        x = self.blocks[0](x.tanh())
        return self.head(x)


class Sorting(nn.Module):
    """A pseudo-inverse has no FLOP count: the box holding it has no exact FLOP sum."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.linalg.pinv(x).T)


class Wrapped(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.inner = Sorting()
        self.tail = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.tail(self.inner(x))


@pytest.fixture(scope="module")
def trace() -> Trace:
    torch.manual_seed(0)
    return capture(Model(), torch.randn(2, 5))


def expected_sum(trace: Trace, labels: tuple[str, ...], name: str) -> Any:
    """The sum of one field over member ops, computed straight from the trace."""
    ops = [trace.op(label) for label in labels]
    values = [getattr(op, name) for op in ops if op.func not in ("input", "output")]
    if None in values:
        return None
    return math.fsum(values) if name == "func_duration" else sum(values)


OPTIONS = [{"depth": 0}, {"depth": 1}, {"collapse": "max"}, {"collapse": "auto", "depth": 1}]


@pytest.mark.parametrize("view", ["unrolled", "rolled"])
@pytest.mark.parametrize("options", OPTIONS)
def test_box_and_segment_fields_are_exact_member_sums(
    trace: Trace, view: str, options: dict[str, Any]
) -> None:
    plan = build_plan(trace, view=view, **options)
    collapsed = [n for n in plan.nodes if n.kind in ("box", "segment")]
    assert collapsed
    for node in collapsed:
        # A box inside a repeat fold stands for every repetition's ops (node.members) and
        # shows its representative's (record.members); anywhere else the two are one.
        assert set(node.record.members) <= set(node.members)
        if node.record.members != node.members:
            assert options.get("collapse") == "auto" and view == "unrolled"
        for name in BOX_SUMMED:
            assert getattr(node.record, name) == expected_sum(trace, node.record.members, name), (
                node.id,
                name,
            )
    # The measurements exist on this CPU trace: these sums are numbers, not None.
    assert all(n.record.flops_forward is not None for n in collapsed)
    assert all(n.record.func_duration > 0 for n in collapsed)


def test_rolled_box_sums_across_all_calls(trace: Trace) -> None:
    plan = build_plan(trace, view="rolled", depth=0)
    box = next(n.record for n in plan.nodes if n.id == "@blocks.0")
    calls = [c for c in trace.modules if c.address == "blocks.0"]
    assert box.num_calls == len(calls) == 2
    members = calls[0].ops + calls[1].ops
    assert sorted(box.members) == sorted(members)
    for name in BOX_SUMMED:
        assert getattr(box, name) == expected_sum(trace, members, name)
    unrolled = build_plan(trace, depth=0)
    per_call = [n.record for n in unrolled.nodes if n.module == "blocks.0"]
    assert box.flops_forward == sum(r.flops_forward for r in per_call)
    assert box.activation_memory == sum(r.activation_memory for r in per_call)


def test_fold_shows_its_representative_only(trace: Trace) -> None:
    plan = build_plan(trace, collapse="max")
    fold = next(n for n in plan.nodes if n.kind == "fold")
    record = fold.record
    assert record.count == 3  # the fourth block call is not consecutive: tanh between
    assert record.representative == "blocks.0"
    first_call = next(c for c in trace.modules if c.key == ("blocks.0", 1))
    assert record.members == first_call.ops
    for name in BOX_SUMMED:
        assert getattr(record, name) == expected_sum(trace, first_call.ops, name)
    assert set(fold.members) == {label for box in record.boxes for label in box.members}
    assert len(fold.members) == 3 * len(first_call.ops)


def test_a_member_without_a_value_leaves_the_sum_unset() -> None:
    trace = capture(Wrapped(), torch.randn(1, 4))
    assert next(op for op in trace.ops if op.func == "linalg_pinv").flops_forward is None
    plan = build_plan(trace, depth=0)
    inner, tail = (n.record for n in plan.nodes if n.kind == "box")
    assert inner.flops_forward is None and inner.flops_total is None
    assert inner.activation_memory == expected_sum(trace, inner.members, "activation_memory")
    assert tail.flops_forward == expected_sum(trace, tail.members, "flops_forward") > 0
    # No profiler session: no device time, so no box has a device-time sum.
    assert inner.device_time is None and tail.device_time is None


def test_box_shape_is_the_output_of_the_call_not_its_last_op() -> None:
    class Probe(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(4, 6)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = self.fc(x)
            y.mean()  # last op of the call, but its result never leaves the module
            return y

    class Outer(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.probe = Probe()

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.relu(self.probe(x))

    trace = capture(Outer(), torch.randn(3, 4))
    box = next(n.record for n in build_plan(trace, depth=0).nodes if n.kind == "box")
    assert isinstance(box, BoxRecord)
    assert trace.op(box.members[-1]).func == "mean"
    assert box.shape == (3, 6)
    assert box.input_shape == (3, 4)
    assert box.dtype == "float32"


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), cut=st.integers(0, 40))
def test_member_sums_are_additive_and_order_free(trace: Trace, seed: int, cut: int) -> None:
    ops = [op for op in trace.ops if op.has_function]
    shuffled = ops[:]
    random.Random(seed).shuffle(shuffled)
    whole = member_sums(ops)
    assert member_sums(shuffled) == whole  # fsum: the total does not depend on order
    left, right = member_sums(shuffled[: cut % len(ops)]), member_sums(shuffled[cut % len(ops) :])
    for name in BOX_SUMMED:
        if whole[name] is None:
            assert left[name] is None or right[name] is None
        elif name == "func_duration":
            assert math.isclose(left[name] + right[name], whole[name], rel_tol=1e-12)
        else:
            assert left[name] + right[name] == whole[name]


def test_ops_without_a_function_count_zero(trace: Trace) -> None:
    inputs = [op for op in trace.ops if not op.has_function]
    assert inputs and all(op.activation_memory for op in inputs)
    sums = member_sums(inputs)
    assert sums == {name: 0 for name in BOX_SUMMED}


def test_every_collapsed_kind_is_covered(trace: Trace) -> None:
    seen = {
        n.kind
        for options in OPTIONS
        for n in build_plan(trace, **options).nodes  # type: ignore[arg-type]
    }
    assert seen >= COLLAPSED_KINDS
