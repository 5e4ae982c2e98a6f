"""Layers and passes (ENCODING.md §1.2): which ops are passes of one layer, and what a
``Layer`` records about them."""

from __future__ import annotations

import dataclasses

import torch
from torch import nn

from pytest_tlgraph import Layer, Trace, capture
from pytest_tlgraph.trace import SUMMED_FIELDS
from tests.models import CNN, BareLoop, RecurrentCell, SharedModule, Shrink, seeded


def _passes(trace: Trace) -> dict[str, int]:
    return {label: layer.num_passes for label, layer in trace.layers.items()}


def test_a_module_reused_in_a_loop_is_one_layer_per_call_site() -> None:
    trace = capture(RecurrentCell(steps=4), torch.randn(2, 8))
    assert _passes(trace) == {"input_1": 1, "linear_1": 4, "add_1": 4, "tanh_1": 4, "output_1": 1}
    layer = trace.layers["linear_1"]
    assert layer.ops == ("linear_1:1", "linear_1:2", "linear_1:3", "linear_1:4")
    assert [trace.op(label).layer for label in layer.ops] == ["linear_1"] * 4


def test_a_loop_of_bare_torch_calls_is_one_layer_per_call() -> None:
    trace = capture(BareLoop(steps=5), torch.randn(3))
    assert _passes(trace) == {"input_1": 1, "mul_1": 5, "sigmoid_1": 5, "output_1": 1}


def test_a_shared_module_called_from_two_places_is_one_layer() -> None:
    trace = capture(SharedModule(), torch.randn(2, 6))
    assert _passes(trace)["linear_1"] == 2  # the shared Linear, both call sites
    assert _passes(trace)["linear_2"] == 1  # the other Linear
    assert [trace.op(f"linear_1:{n}").module for n in (1, 2)] == ["shared", "shared"]


def test_one_function_at_two_call_sites_outside_a_loop_is_two_layers() -> None:
    class TwoSites(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            a = torch.relu(x)
            b = torch.relu(-x)
            return a + b + x  # two adds on one line are two different calls

    trace = capture(TwoSites(), torch.randn(3))
    assert _passes(trace) == {
        "input_1": 1, "relu_1": 1, "neg_1": 1, "relu_2": 1, "add_1": 1, "add_2": 1,
        "output_1": 1,
    }  # fmt: skip


def test_a_helper_called_in_a_loop_is_one_layer_and_from_two_lines_two() -> None:
    def helper(t: torch.Tensor) -> torch.Tensor:
        return torch.sin(t)

    class Helper(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            for _ in range(3):
                x = helper(x)
            y = helper(x)
            return y

    trace = capture(Helper(), torch.randn(3))
    assert _passes(trace)["sin_1"] == 3
    assert _passes(trace)["sin_2"] == 1


def test_two_instances_of_one_module_class_are_different_layers() -> None:
    trace = capture(CNN(), torch.randn(1, 3, 8, 8))
    assert _passes(trace)["conv2d_1"] == 1 and _passes(trace)["conv2d_2"] == 1
    assert trace.layers["conv2d_1"].module == "features.0"
    assert trace.layers["conv2d_2"].module == "features.4"


def test_layers_are_in_order_of_first_appearance() -> None:
    trace = capture(RecurrentCell(steps=2), torch.randn(2, 8))
    first_seen = list(dict.fromkeys(op.layer for op in trace.ops))
    assert list(trace.layers) == first_seen


def test_layer_edges_join_layers_and_a_loop_feeds_itself() -> None:
    trace = capture(BareLoop(steps=3), torch.randn(3))
    assert trace.layers["mul_1"].parents == ("input_1", "sigmoid_1")
    assert trace.layers["sigmoid_1"].children == ("mul_1", "output_1")


def test_layer_fields_hold_the_shared_value_and_varying_the_per_pass_values() -> None:
    x = torch.tensor([[1.0, 2.0, 3.0, 4.0]])
    trace = capture(BareLoop(steps=3), x, magnitudes=True)
    layer = trace.layers["mul_1"]
    ops = [trace.op(label) for label in layer.ops]
    assert layer.func == "mul" and layer.shape == (1, 4) and layer.dtype == "float32"
    assert layer.flops_forward == ops[0].flops_forward == 4
    # Passes see different values: magnitude varies, and time is never single-valued.
    assert layer.magnitude is None
    assert layer.varying["magnitude"] == tuple(op.magnitude for op in ops)
    assert layer.func_duration is None
    assert layer.varying["func_duration"] == tuple(op.func_duration for op in ops)
    assert "shape" not in layer.varying and "flops_forward" not in layer.varying


def test_summed_fields_hold_the_exact_total_across_passes() -> None:
    model = seeded(RecurrentCell(steps=3))
    trace = capture(model, torch.randn(2, 8, requires_grad=True))
    layer = trace.layers["linear_1"]
    ops = [trace.op(label) for label in layer.ops]
    for name in SUMMED_FIELDS - {"device_time"}:
        values = [getattr(op, name) for op in ops]
        assert all(v is not None for v in values)
        assert getattr(layer, name) == sum(values), name
    assert layer.device_time is None  # no pass has one


def test_a_single_pass_layer_carries_its_op_values_exactly() -> None:
    trace = capture(seeded(CNN()), torch.randn(1, 3, 8, 8))
    for op in trace.ops:
        layer = trace.layers[op.layer]
        assert layer.num_passes == 1 and layer.ops == (op.label,)
        for f in dataclasses.fields(Layer):
            if f.name in ("label", "ops", "num_passes", "parents", "children", "varying"):
                continue
            if f.name == "shape_summary":
                assert layer.shape_summary is None
                continue
            assert getattr(layer, f.name) == getattr(op, f.name), (op.label, f.name)
        assert layer.parents == op.parents and layer.children == op.children
        assert layer.varying == {}


def test_shape_summary_names_the_axis_that_changes() -> None:
    trace = capture(Shrink(), torch.randn(2, 8))
    layer = trace.layers["getitem_1"]
    assert layer.num_passes == 2 and layer.shape is None
    assert layer.varying["shape"] == ((2, 4), (2, 2))
    assert layer.shape_summary == "4->2"
