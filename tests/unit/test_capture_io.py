"""Inputs and outputs (ENCODING.md §1): what becomes an ``input`` / ``output`` record."""

from __future__ import annotations

import pytest
import torch

from pytest_tlgraph import Trace, capture
from tests.models import MLP, DataclassOut, DictOut, KwargsModel, Pair, TupleOut


def _records(trace: Trace, func: str) -> list[str]:
    return [op.label for op in trace.ops if op.func == func]


def test_one_tensor_is_one_input() -> None:
    trace = capture(MLP(), torch.randn(2, 8))
    assert _records(trace, "input") == ["input_1"]
    assert trace.op("input_1").shape == (2, 8)


@pytest.mark.parametrize("pack", [tuple, list])
def test_a_tuple_or_list_gives_positional_arguments_and_non_tensors_pass_through(
    pack: type,
) -> None:
    a, b = torch.ones(2, 3), torch.zeros(2, 3)
    trace = capture(Pair(), pack([a, b, 4.0]), magnitudes=True)
    assert _records(trace, "input") == ["input_1", "input_2"]
    assert trace.op("sub_1").parents == ("input_1", "input_2")
    # The scalar really reached forward: (1 - 0) * 4 has magnitude 4.
    assert trace.op("mul_1").magnitude == pytest.approx(4.0)
    assert trace.op("mul_1").parents == ("sub_1",)


def test_keyword_tensors_are_inputs_after_the_positional_ones() -> None:
    x, mask = torch.randn(2, 3), torch.ones(2, 3)
    trace = capture(KwargsModel(), x, kwargs={"mask": mask})
    assert _records(trace, "input") == ["input_1", "input_2"]
    assert trace.op("mul_1").parents == ("relu_1", "input_2")
    without = capture(KwargsModel(), x)
    assert [op.func for op in without.ops] == ["input", "relu", "output"]


def test_nested_tuple_outputs_each_feed_one_output_record_in_order() -> None:
    trace = capture(TupleOut(), torch.randn(3))
    assert _records(trace, "output") == ["output_1", "output_2", "output_3"]
    assert [trace.op(f"output_{i}").parents for i in (1, 2, 3)] == [
        ("add_1",), ("mul_1",), ("exp_1",),
    ]  # fmt: skip
    assert trace.ops[-3:] == tuple(trace.op(f"output_{i}") for i in (1, 2, 3))


def test_dict_outputs_walk_values_including_lists_and_skip_non_tensors() -> None:
    trace = capture(DictOut(), torch.randn(3))
    outputs = [trace.op(label) for label in _records(trace, "output")]
    assert [op.parents for op in outputs] == [("neg_1",), ("abs_1",), ("square_1",)]


def test_dataclass_outputs_walk_fields_in_order() -> None:
    trace = capture(DataclassOut(), torch.randn(3))
    outputs = [trace.op(label) for label in _records(trace, "output")]
    assert [op.parents for op in outputs] == [("cos_1",), ("sin_1",)]


def test_an_input_returned_unchanged_feeds_the_output_directly() -> None:
    class Identity(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x

    trace = capture(Identity(), torch.randn(2))
    assert [op.label for op in trace.ops] == ["input_1", "output_1"]
    assert trace.op("output_1").parents == ("input_1",)
    assert trace.op("input_1").children == ("output_1",)


def test_output_records_copy_their_tensor_metadata() -> None:
    trace = capture(MLP().double(), torch.randn(2, 8).double().requires_grad_(), magnitudes=True)
    out = trace.op("output_1")
    assert out.shape == (2, 4) and out.dtype == "float64"
    assert out.activation_memory == 2 * 4 * 8
    assert out.magnitude == trace.op("linear_2").magnitude


def test_a_model_without_tensor_inputs_draws_what_it_computes_as_one_constant() -> None:
    class Constant(torch.nn.Module):
        def forward(self, n: int) -> torch.Tensor:
            return torch.arange(n) * 2

    trace = capture(Constant(), (5,))
    # Computed from literals alone: folded into one constant, written by its values.
    assert [op.func for op in trace.ops] == ["const", "output"]
    assert trace.op("const_1").parents == ()
    assert [(a.name, a.text) for a in trace.op("const_1").call] == [("values", "[0, 2, 4, 6, 8]")]
    assert trace.op("output_1").parents == ("const_1",)
