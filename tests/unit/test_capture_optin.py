"""Magnitudes are measured only when asked (``capture(magnitudes=True)``); a channel
reading them on a trace without them refuses, and nothing reads values on meta."""

from __future__ import annotations

import sys
from typing import Any

import pytest
import torch

from pytest_tlgraph import EncodingRefusal
from pytest_tlgraph.capture import capture
from pytest_tlgraph.capture.regrad import is_fake
from pytest_tlgraph.draw.request import DrawRequest
from tests.corpus.registry import build
from tests.models import CNN, MLP, RecurrentCell, seeded

recorder = sys.modules["pytest_tlgraph.capture.recorder"]
magnitudes = sys.modules["pytest_tlgraph.capture.magnitudes"]


def _never(*args: object) -> None:
    raise AssertionError("a magnitude was measured without being asked for")


def test_a_default_capture_measures_no_magnitude(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recorder, "magnitude", _never)
    monkeypatch.setattr(magnitudes.MagnitudeBatch, "add", _never)
    trace = capture(seeded(CNN()), torch.randn(1, 3, 8, 8))
    assert not trace.magnitudes and trace.values
    assert all(op.magnitude is None for op in trace.ops)
    assert all(layer.magnitude is None for layer in trace.layers.values())
    # What the drawing reads by default stays: shapes, FLOPs, args, saved-tensor sizes.
    conv = trace.op("conv2d_1")
    assert conv.flops_forward and conv.shape and conv.module_args
    assert any(op.autograd_memory for op in trace.ops)


@pytest.mark.parametrize("name", ["gpt2", "lstm_bidirectional", "vit"])
def test_asking_for_magnitudes_changes_no_other_field_and_no_drawing(name: str) -> None:
    case = build(name)
    plain = capture(case.model, case.inputs, kwargs=case.kwargs)
    measured = capture(case.model, case.inputs, kwargs=case.kwargs, magnitudes=True)
    assert measured.magnitudes and not plain.magnitudes
    assert any(op.magnitude is not None for op in measured.ops)
    for a, b in zip(plain.ops, measured.ops, strict=True):
        assert (a.label, a.shape, a.flops_forward, a.params, a.autograd_memory) == (
            b.label, b.shape, b.flops_forward, b.params, b.autograd_memory
        )  # fmt: skip
    for options in ({}, {"collapse": "auto"}, {"color_by": "flops", "depth": 1}):
        assert plain.draw(**options).dot == measured.draw(**options).dot


@pytest.mark.parametrize("channel", ["color_by", "size_by", "stack_by"])
def test_a_channel_reading_magnitudes_refuses_without_them(channel: str) -> None:
    trace = capture(seeded(MLP()), torch.randn(2, 8))
    with pytest.raises(EncodingRefusal) as info:
        trace.draw(**{channel: "magnitude"})
    assert info.value.code == "magnitude_unavailable"
    assert f"{channel}='magnitude'" in info.value.cause
    assert "magnitudes=True" in info.value.remedy
    measured = capture(seeded(MLP()), torch.randn(2, 8), magnitudes=True)
    assert measured.draw(**{channel: "magnitude"}).state is not None


def reads_magnitudes(options: dict[str, Any]) -> bool:
    return DrawRequest.parse(options).reads_magnitudes


def test_reads_magnitudes_names_exactly_the_channels_that_read_them() -> None:
    assert reads_magnitudes({"color_by": "magnitude"})
    assert reads_magnitudes({"size_by": "magnitude", "color_by": "flops"})
    assert reads_magnitudes({"stack_by": "magnitude"})
    assert not reads_magnitudes({})
    assert not reads_magnitudes({"color_by": "flops", "size_by": "bytes", "stack_by": True})
    assert not reads_magnitudes({"node_label_fields": ["magnitude"], "color_by": len})


def test_on_meta_nothing_reads_values_and_the_state_says_so_once() -> None:
    with torch.device("meta"):
        model = seeded(RecurrentCell())
    x = torch.randn(2, 8, device="meta", requires_grad=True)
    trace = capture(model, x, backward=True, magnitudes=True)
    assert not trace.values
    assert all(op.magnitude is None and op.grad_norm is None for op in trace.ops)
    drawing = trace.draw(color_by="magnitude", size_by="grad_norm")
    assert drawing.state is not None
    notes = [note for note in drawing.state.notes if "without values" in note]
    assert notes == [
        "color_by='magnitude', size_by='grad_norm': no values, the trace was captured on "
        "tensors without values (meta device or fake tensors)"
    ]
    assert not [n for n in trace.draw(color_by="flops").state.notes if "without values" in n]  # type: ignore[union-attr]


def test_on_meta_the_default_capture_also_knows_it_holds_no_values() -> None:
    with torch.device("meta"):
        model = seeded(MLP())
    trace = capture(model, torch.randn(2, 8, device="meta"))
    assert not trace.values
    real = capture(seeded(MLP()), torch.randn(2, 8))
    assert real.values


def test_fake_tensors_are_told_without_reading_values() -> None:
    from torch._subclasses.fake_tensor import FakeTensorMode

    assert not is_fake(torch.nn.Parameter(torch.ones(2)))
    with FakeTensorMode() as mode:
        fake = mode.from_tensor(torch.ones(2, 3))
    assert is_fake(fake) and not is_fake(torch.ones(2))


@pytest.mark.filterwarnings("ignore:Accessing the data pointer of FakeTensor")
def test_under_fake_tensors_nothing_reads_values() -> None:
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        model, x = MLP(), torch.randn(2, 8)
        trace = capture(model, x, magnitudes=True, backward=True)
    assert not trace.values
    assert all(op.magnitude is None and op.grad_norm is None for op in trace.ops)
