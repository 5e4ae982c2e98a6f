"""The device-time join: exact kernel attribution on recorded profiler event lists."""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path
from typing import Any

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.profiler import ProfilerActivity, profile, record_function

from pytest_tlgraph.capture.profiler_join import (
    DeviceTimeJoin,
    RecordedEvent,
    events_from_profiler,
    join_device_time,
)

DATA = Path(__file__).parent / "data"


def load(name: str) -> list[RecordedEvent]:
    """A recorded event list from ``data/profiler_events_<name>.json``."""
    rows: list[dict[str, Any]] = json.loads((DATA / f"profiler_events_{name}.json").read_text())
    return [RecordedEvent(**row) for row in rows]


def ev(
    name: str,
    kind: str,
    start: int,
    end: int,
    thread: int | None = 1,
    corr: int | None = None,
) -> RecordedEvent:
    return RecordedEvent(name, kind, start, end, thread, corr)  # type: ignore[arg-type]


def test_two_linears_and_a_relu_join_exactly() -> None:
    labels = ["flatten_1", "linear_1", "relu_1", "linear_2"]
    join = join_device_time(load("two_linears_relu"), labels)
    assert join.status == "joined"
    assert join.reason == ""
    assert join.kernels == 4
    assert join.unattributed == 0
    assert join.missing == ()
    # linear_2 launched a gemm and a split-K reduction: summed. flatten_1 launched
    # nothing: n/a, not zero.
    assert dict(join.per_op) == {
        "flatten_1": None,
        "linear_1": 3800,
        "relu_1": 1500,
        "linear_2": 9200,
    }
    assert list(join.per_op) == labels


def test_device_overlap_never_decides() -> None:
    # linear_1's gemm ran on the device entirely inside relu_1's host range; it still
    # belongs to linear_1, whose range enclosed the launch call.
    events = load("two_linears_relu")
    gemm = next(e for e in events if e.correlation_id == 101 and e.kind == "kernel")
    relu = next(e for e in events if e.name == "tlgraph::relu_1")
    assert relu.start_ns <= gemm.start_ns and gemm.end_ns <= relu.end_ns
    join = join_device_time(events, ["linear_1", "relu_1"])
    assert join.per_op["linear_1"] == gemm.duration_ns


def test_nested_ranges_go_to_the_innermost_of_ours() -> None:
    join = join_device_time(load("nested"), ["custom_1", "matmul_1"])
    assert join.status == "joined"
    # matmul_1 owns its own launch and the one inside tlgraph::foreign_1, a range of
    # an op not in this capture; custom_1 owns its direct launches, including the one
    # inside the plain user range "helper".
    assert dict(join.per_op) == {"custom_1": 500 + 600 + 700, "matmul_1": 6000 + 500}


def test_foreign_range_becomes_ours_when_requested() -> None:
    join = join_device_time(load("nested"), ["custom_1", "matmul_1", "foreign_1"])
    assert join.status == "joined"
    assert dict(join.per_op) == {"custom_1": 1800, "matmul_1": 6000, "foreign_1": 500}


def test_unattributable_kernels_make_the_join_partial() -> None:
    join = join_device_time(load("partial"), ["linear_1", "relu_1"])
    assert join.status == "partial"
    assert join.kernels == 5
    # The H2D copy before the model and the launch on another thread are outside our
    # ranges; one kernel has no launch record; one launch was never tied to a thread.
    assert join.unattributed == 4
    assert dict(join.per_op) == {"linear_1": 1200, "relu_1": None}
    assert join.reason == (
        "4 of 5 device kernels could not be attributed to a captured op "
        "(1 with no recorded launch call, 1 whose launch call torch did not tie to a "
        "host op, 2 launched outside every captured op)."
    )


def test_kernel_without_correlation_id_is_unattributed() -> None:
    events = [
        ev("tlgraph::relu_1", "user_range", 0, 100),
        ev("cudaLaunchKernel", "runtime", 10, 20, corr=7),
        ev("k", "kernel", 30, 40, corr=None),
    ]
    join = join_device_time(events, ["relu_1"])
    assert (join.status, join.unattributed, join.per_op["relu_1"]) == ("partial", 1, None)
    assert "no recorded launch call" in join.reason


def test_launch_records_in_different_ops_are_ambiguous() -> None:
    events = [
        ev("tlgraph::a_1", "user_range", 0, 100),
        ev("cudaLaunchKernel", "runtime", 10, 20, corr=7),
        ev("tlgraph::b_1", "user_range", 200, 300),
        ev("cuLaunchKernel", "runtime", 210, 220, corr=7),
        ev("k", "kernel", 400, 450, corr=7),
    ]
    join = join_device_time(events, ["a_1", "b_1"])
    assert (join.status, join.unattributed) == ("partial", 1)
    assert dict(join.per_op) == {"a_1": None, "b_1": None}
    assert "launch records in different ops" in join.reason


def test_duplicate_launch_records_in_one_op_agree() -> None:
    # A runtime call and the driver call beneath it may share one correlation id.
    events = [
        ev("tlgraph::a_1", "user_range", 0, 100),
        ev("cudaLaunchKernel", "runtime", 10, 40, corr=7),
        ev("cuLaunchKernel", "runtime", 20, 30, corr=7),
        ev("k", "kernel", 400, 450, corr=7),
    ]
    join = join_device_time(events, ["a_1"])
    assert (join.status, dict(join.per_op)) == ("joined", {"a_1": 50})


def test_launch_straddling_a_range_edge_is_not_enclosed() -> None:
    events = [
        ev("tlgraph::a_1", "user_range", 0, 100),
        ev("cudaLaunchKernel", "runtime", 90, 110, corr=7),
        ev("k", "kernel", 400, 450, corr=7),
    ]
    join = join_device_time(events, ["a_1"])
    assert (join.status, join.unattributed) == ("partial", 1)


def test_op_without_a_range_makes_the_join_partial() -> None:
    # n/a would be a claim that the op launched nothing; without its range we cannot
    # know that.
    join = join_device_time(load("two_linears_relu"), ["linear_1", "relu_1", "gelu_1"])
    assert join.status == "partial"
    assert join.unattributed == 2  # linear_2's kernels now fall outside our ranges
    assert join.missing == ("gelu_1",)
    assert join.per_op["gelu_1"] is None
    assert "1 captured ops have no profiler range (gelu_1)" in join.reason


def test_empty_event_list_has_no_kernels() -> None:
    join = join_device_time([], ["linear_1"])
    assert join.status == "no_kernels"
    assert dict(join.per_op) == {"linear_1": None}
    assert (join.kernels, join.unattributed) == (0, 0)
    assert join.missing == ("linear_1",)
    assert "no device kernels" in join.reason


def test_ranges_without_kernels_have_no_kernels() -> None:
    events = [e for e in load("two_linears_relu") if e.kind != "kernel"]
    join = join_device_time(events, ["linear_1", "relu_1", "linear_2"])
    assert (join.status, join.missing) == ("no_kernels", ())


def test_join_result_is_frozen() -> None:
    join = join_device_time(load("nested"), ["custom_1"])
    with pytest.raises(dataclasses.FrozenInstanceError):
        join.status = "joined"  # type: ignore[misc]
    with pytest.raises(TypeError):
        join.per_op["custom_1"] = 0  # type: ignore[index]
    assert isinstance(join, DeviceTimeJoin)


@pytest.mark.parametrize("name", ["two_linears_relu", "nested", "partial"])
def test_event_order_does_not_matter(name: str) -> None:
    events = load(name)
    labels = sorted(
        {e.name.removeprefix("tlgraph::") for e in events if e.name.startswith("tlgraph::")}
    )
    expected = join_device_time(events, labels)
    shuffled = events[:]
    random.Random(0).shuffle(shuffled)
    assert join_device_time(shuffled, labels) == expected


@st.composite
def host_timelines(draw: st.DrawFn) -> list[RecordedEvent]:
    """Random strictly nested ranges on two threads, with launches and their kernels."""
    events: list[RecordedEvent] = []
    stacks: dict[int, list[tuple[str, int]]] = {1: [], 2: []}
    clock = 0
    for step in range(draw(st.integers(0, 40))):
        thread = draw(st.sampled_from([1, 2]))
        action = draw(st.sampled_from(["open", "close", "launch"]))
        clock += draw(st.integers(1, 5))
        if action == "open":
            name = draw(st.sampled_from(["tlgraph::op_", "tlgraph::other_", "plain_"]))
            stacks[thread].append((f"{name}{step}", clock))
        elif action == "close" and stacks[thread]:
            name, start = stacks[thread].pop()
            events.append(ev(name, "user_range", start, clock, thread))
        elif action == "launch":
            end = clock + draw(st.integers(0, 3))
            events.append(ev("cudaLaunchKernel", "runtime", clock, end, thread, step))
            dur = draw(st.integers(1, 1000))
            events.append(ev("k", "kernel", end + 7, end + 7 + dur, thread, step))
            clock = end
    for thread, stack in stacks.items():
        while stack:
            clock += 1
            name, start = stack.pop()
            events.append(ev(name, "user_range", start, clock, thread))
    return events


@settings(max_examples=200, deadline=None)
@given(host_timelines())
def test_matches_brute_force_innermost_range(events: list[RecordedEvent]) -> None:
    ours = [e for e in events if e.name.startswith("tlgraph::op_")]
    labels = [e.name.removeprefix("tlgraph::") for e in ours]
    expected: dict[str, int] = {}
    unattributed = 0
    for launch in (e for e in events if e.kind == "runtime"):
        kernel = next(
            e for e in events if e.kind == "kernel" and e.correlation_id == launch.correlation_id
        )
        enclosing = [
            r
            for r in ours
            if r.thread == launch.thread
            and r.start_ns <= launch.start_ns
            and launch.end_ns <= r.end_ns
        ]
        if not enclosing:
            unattributed += 1
            continue
        owner = max(enclosing, key=lambda r: r.start_ns).name.removeprefix("tlgraph::")
        expected[owner] = expected.get(owner, 0) + kernel.duration_ns
    join = join_device_time(events, labels)
    assert join.unattributed == unattributed
    assert {k: v for k, v in join.per_op.items() if v is not None} == expected


def test_real_cpu_profile_finds_every_range_and_no_kernels() -> None:
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    labels = ["linear_1", "relu_1", "linear_2"]
    x = torch.randn(2, 4)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for label, layer in zip(labels, model, strict=True):
            with record_function(f"tlgraph::{label}"):
                x = layer(x)
    events = events_from_profiler(prof)
    ranges = [e for e in events if e.kind == "user_range"]
    assert sorted(e.name for e in ranges) == sorted(f"tlgraph::{label}" for label in labels)
    assert all(isinstance(e.thread, int) for e in ranges)
    assert not [e for e in events if e.kind in ("runtime", "kernel")]
    assert any(e.kind == "cpu_op" and e.name == "aten::addmm" for e in events)
    join = join_device_time(events, labels)
    assert join.status == "no_kernels"
    assert join.missing == ()
    assert dict(join.per_op) == dict.fromkeys(labels)
    assert join.reason


def test_unfinished_profiler_is_refused() -> None:
    with pytest.raises(ValueError, match="not finished"):
        events_from_profiler(profile(activities=[ProfilerActivity.CPU]))
