"""``device_time`` as a channel source: only on a joined profiler session (§8)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import pytest
import torch

from pytest_tlgraph import EncodingRefusal, Trace
from pytest_tlgraph.capture import capture
from pytest_tlgraph.draw import draw
from tests.models import MLP, RecurrentCell, seeded


def joined(trace: Trace, per_op: Mapping[str, int | None]) -> Trace:
    """``trace`` as if its profiler join had reached ``joined`` with these values.

    Layers hold the exact cross-pass total, ``None`` when any pass has none, as the
    capture stores them.
    """
    ops = tuple(dataclasses.replace(op, device_time=per_op.get(op.label)) for op in trace.ops)
    layers = {}
    for label, layer in trace.layers.items():
        passes = [per_op.get(op_label) for op_label in layer.ops]
        total = None if any(v is None for v in passes) else sum(v for v in passes if v)
        layers[label] = dataclasses.replace(layer, device_time=total)
    return dataclasses.replace(
        trace, ops=ops, layers=layers, device_join="joined", device_join_reason=""
    )


@pytest.fixture(scope="module")
def mlp_joined(mlp: Trace) -> Trace:
    # relu launched no kernel; inputs and outputs never do.
    return joined(mlp, {"linear_1": 1_460_000, "relu_1": None, "linear_2": 98_000})


@pytest.mark.parametrize("channel", ["color_by", "size_by", "stack_by"])
def test_without_a_profiler_session_it_refuses(mlp: Trace, channel: str) -> None:
    assert mlp.device_join is None
    with pytest.raises(EncodingRefusal) as info:
        mlp.draw(**{channel: "device_time"})
    assert info.value.code == "device_time_unavailable"
    assert "without a profiler session" in info.value.cause
    assert "profile=True" in info.value.remedy and "'time'" in info.value.remedy


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU run has kernels to join")
def test_a_cpu_profile_has_no_kernels_and_refuses_rather_than_reading_zero() -> None:
    trace = capture(seeded(MLP()), torch.randn(2, 8), profile=True)
    assert trace.device_join == "no_kernels"
    assert all(op.device_time is None or op.device_time == 0 for op in trace.ops)
    for channel in ("color_by", "size_by"):
        with pytest.raises(EncodingRefusal) as info:
            trace.draw(**{channel: "device_time"})
        assert info.value.code == "device_time_unavailable"
        assert "'no_kernels'" in info.value.cause
        assert "no device kernels" in info.value.cause


def test_a_partial_join_refuses(mlp_joined: Trace) -> None:
    partial = dataclasses.replace(
        mlp_joined, device_join="partial", device_join_reason="2 kernels matched no op."
    )
    with pytest.raises(EncodingRefusal) as info:
        partial.draw(color_by="device_time")
    assert "'partial'" in info.value.cause and "2 kernels matched no op" in info.value.cause


def test_the_field_name_is_fenced_like_the_token(mlp: Trace) -> None:
    # A callable reading the field is the user's own claim and is not fenced.
    with pytest.raises(EncodingRefusal):
        mlp.draw(color_by="device_time")
    assert mlp.draw(color_by=lambda op: op.device_time).nodes["tlgraph_key"].rows == (
        "callable <lambda>: no values",
    )


def test_a_joined_trace_encodes_in_milliseconds(mlp_joined: Trace) -> None:
    drawing = mlp_joined.draw(color_by="device_time", size_by="device_time")
    assert drawing.nodes["tlgraph_key"].rows == (
        "device time: 0.098 ms [bar] 1.46 ms [n/a]",  # relu_1 ran no kernel
        "size: device time, 0.098 ms ... 1.46 ms",
    )
    assert drawing.state is not None
    color = drawing.state.channels["color_by"]
    assert dict(color.values) == {"linear_1": 1_460_000.0, "linear_2": 98_000.0}
    assert set(color.fills) == set(drawing.state.channels["size_by"].sizes) == set(color.values)


def test_a_joined_node_without_kernels_reads_n_a(mlp_joined: Trace) -> None:
    drawing = mlp_joined.draw(color_by="device_time")
    assert drawing.state is not None
    assert "relu_1" not in drawing.state.channels["color_by"].values
    assert drawing.state.notes == ("n/a = unencoded",)
    assert "    relu_1:" not in drawing.state.describe()


def test_rolled_nodes_sum_across_passes_with_an_aggregation_line() -> None:
    trace = capture(seeded(RecurrentCell()), torch.randn(2, 8))
    per_op = {}
    for op in trace.ops:
        if op.has_function:
            per_op[op.label] = 100_000 * op.pass_number  # 0.1, 0.2, 0.3 ms per pass
    rolled = joined(trace, per_op)
    for channel in ("color_by", "size_by"):
        drawing = rolled.draw(view="rolled", **{channel: "device_time"})
        assert drawing.state is not None
        values = drawing.state.channels[channel].values
        assert values == {"linear_1": 600_000.0, "add_1": 600_000.0, "tanh_1": 600_000.0}
        assert drawing.state.aggregation == ("rolled nodes: device time summed across passes",)
    unrolled = rolled.draw(color_by="device_time")
    # The input and output records have no kernels: the key's n/a swatch.
    assert unrolled.nodes["tlgraph_key"].rows == ("device time: 0.1 ms [bar] 0.3 ms [n/a]",)
    assert unrolled.state is not None and unrolled.state.aggregation == ()


def test_a_rolled_layer_with_a_kernel_less_pass_reads_n_a() -> None:
    trace = capture(seeded(RecurrentCell()), torch.randn(2, 8))
    per_op: dict[str, int | None] = {
        op.label: 50_000 for op in trace.ops if op.has_function and op.func != "add"
    }
    per_op["tanh_1:2"] = None  # a partial sum would under-report: the layer is n/a
    drawing = joined(trace, per_op).draw(view="rolled", color_by="device_time")
    assert drawing.state is not None
    assert set(drawing.state.channels["color_by"].values) == {"linear_1"}
    assert "n/a = unencoded" in drawing.state.notes


def test_device_time_is_masked_for_snapshots(mlp_joined: Trace) -> None:
    drawing = draw(mlp_joined, mask_volatile=True, color_by="device_time")
    assert drawing.nodes["tlgraph_key"].rows == ("device time: masked [bar] masked [n/a]",)
    assert drawing.state is not None
    assert any("masked" in note for note in drawing.state.notes)
