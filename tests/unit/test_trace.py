"""The frozen data model: a ``Trace`` is plain data, O(number of ops) in size."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping
from typing import Any

import pytest
import torch

from pytest_tlgraph import Trace, capture
from tests.models import CNN, MLP, RecurrentCell, seeded


def _walk(value: Any, seen: set[int]) -> Any:
    """Yield every object reachable through dataclass fields, mappings and sequences."""
    if id(value) in seen:
        return
    seen.add(id(value))
    yield value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        children: Any = [getattr(value, f.name) for f in dataclasses.fields(value)]
    elif isinstance(value, Mapping):
        children = [*value.keys(), *value.values()]
    elif isinstance(value, (tuple, list, set, frozenset)):
        children = list(value)
    else:
        return
    for child in children:
        yield from _walk(child, seen)


def _deep_size(trace: Trace) -> int:
    return sum(sys.getsizeof(obj) for obj in _walk(trace, set()))


@pytest.mark.parametrize("backward", [False, True])
def test_a_trace_holds_no_tensor_anywhere(backward: bool) -> None:
    trace = capture(seeded(CNN()), torch.randn(2, 3, 8, 8), backward=backward)
    reached = list(_walk(trace, set()))
    assert len(reached) > len(trace.ops) * 10  # the walk really went through the records
    assert not [obj for obj in reached if isinstance(obj, torch.Tensor)]
    # dtypes are kept by name: no torch object at all, so nothing after capture needs torch
    assert not [obj for obj in reached if type(obj).__module__.split(".")[0] == "torch"]


def test_trace_size_does_not_grow_with_tensor_size() -> None:
    model = seeded(MLP(d_in=64, d_hidden=64, d_out=64))
    small = capture(model, torch.randn(2, 64))
    large = capture(model, torch.randn(4096, 64))  # 2048x more activation bytes
    assert _activation_bytes(large) == 2048 * _activation_bytes(small)
    assert _deep_size(large) < 1.1 * _deep_size(small)


def test_trace_size_grows_linearly_with_the_number_of_ops() -> None:
    sizes = {
        steps: _deep_size(capture(seeded(RecurrentCell(steps=steps)), torch.randn(2, 8)))
        for steps in (10, 20, 40)
    }
    per_step_first = (sizes[20] - sizes[10]) / 10
    per_step_second = (sizes[40] - sizes[20]) / 20
    assert per_step_second == pytest.approx(per_step_first, rel=0.25)


def test_records_are_frozen() -> None:
    trace = capture(MLP(), torch.randn(2, 8))
    with pytest.raises(dataclasses.FrozenInstanceError):
        trace.ops[1].label = "x"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        trace.layers["linear_1"].shape = (1,)  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        trace.modules[0].address = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        trace.layers["x"] = trace.layers["linear_1"]  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        trace.model_name = "x"  # type: ignore[misc]


def test_op_looks_up_by_label() -> None:
    trace = capture(RecurrentCell(steps=2), torch.randn(2, 8))
    assert trace.op("linear_1:2") is trace.ops[4]  # input, linear, add, tanh, linear
    with pytest.raises(KeyError, match=r"layer of 2 passes.*'linear_1:1' \.\.\. 'linear_1:2'"):
        trace.op("linear_1")  # a layer label is not an op label when it has passes
    with pytest.raises(KeyError, match=r"no op labelled 'conv_9'.*trace\.ops"):
        trace.op("conv_9")


def test_labels_are_unique_and_every_layer_lists_its_ops() -> None:
    trace = capture(RecurrentCell(steps=3), torch.randn(2, 8))
    labels = [op.label for op in trace.ops]
    assert len(labels) == len(set(labels))
    assert sorted(label for layer in trace.layers.values() for label in layer.ops) == sorted(labels)


def test_model_name_and_totals() -> None:
    model = seeded(CNN())
    trace = capture(model, torch.randn(1, 3, 8, 8))
    assert trace.model_name == "CNN"
    assert trace.param_count == sum(p.numel() for p in model.parameters())


def test_module_calls_are_listed_in_call_order_with_their_chain() -> None:
    trace = capture(CNN(), torch.randn(1, 3, 8, 8))
    addresses = [call.address for call in trace.modules]
    assert addresses[:3] == ["", "features", "features.0"]
    assert addresses[-1] == "head"
    by_key = {call.key: call for call in trace.modules}
    for call in trace.modules:
        if call.parent is not None:
            assert by_key[call.parent].depth == call.depth - 1
            assert set(call.ops) <= set(by_key[call.parent].ops)
    assert by_key[("features.1", 1)].type_name == "BatchNorm2d"
    assert by_key[("features.1", 1)].module_family == "norm"


def _activation_bytes(trace: Trace) -> int:
    """Bytes of every op's tensor outputs (the input and output records excluded)."""
    return sum(op.activation_memory or 0 for op in trace.ops if op.has_function)
