"""``Drawing.state``: channel records, notes, aggregation and ``describe()`` (§3.6)."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from pytest_tlgraph import EncodingState, Trace
from pytest_tlgraph.capture import capture
from pytest_tlgraph.draw.encoding.state import ChannelState
from tests.models import MLP, seeded, without_pool_flops


def test_plain_draw_has_no_state(cnn: Trace) -> None:
    assert cnn.draw().state is None
    assert cnn.draw(color_by=None, size_by=False, stack_by=False).state is None


def test_channel_records_carry_every_field(cnn: Trace) -> None:
    drawing = cnn.draw(color_by="flops", size_by="bytes", stack_by="pass_number")
    state = drawing.state
    assert isinstance(state, EncodingState)
    assert list(state.channels) == ["color_by", "size_by", "stack_by"]
    color, size, stack = (state.channels[k] for k in ("color_by", "size_by", "stack_by"))
    assert all(isinstance(c, ChannelState) for c in (color, size, stack))
    assert (color.source, size.source, stack.source) == (
        "forward FLOPs",
        "output bytes",
        "pass_number",
    )
    assert (color.transform, size.transform) == ("linear", "sqrt")
    with_flops = [op for op in cnn.ops if op.flops_forward is not None]
    assert color.eligible == len(cnn.ops)
    assert color.encoded == len(color.fills) == len(with_flops)
    assert set(color.values) == {op.label for op in with_flops}
    assert all(isinstance(v, float) for v in color.values.values())
    assert size.encoded == len(size.sizes)
    assert all(isinstance(w, float) and isinstance(h, float) for w, h in size.sizes.values())
    assert size.domain == (
        float(min(op.activation_memory or 0 for op in cnn.ops)),
        float(max(op.activation_memory or 0 for op in cnn.ops)),
    )
    assert stack.domain is None and stack.fills == {} and stack.sizes == {}
    assert dict(stack.groups) == {1: tuple(op.label for op in cnn.ops)}
    assert color.sizes == {} and color.groups == {} and size.fills == {}


def test_state_is_immutable(cnn: Trace) -> None:
    state = cnn.draw(color_by="flops").state
    assert state is not None
    with pytest.raises(dataclasses.FrozenInstanceError):
        state.notes = ()  # type: ignore[misc]
    with pytest.raises(TypeError):
        state.channels["color_by"].fills["input_1"] = "#000000"  # type: ignore[index]


def test_notes_keep_insertion_order_without_duplicates(recurrent: Trace) -> None:
    # Rolled view, in node order: input_1 has no gradient (n/a), then linear_1's
    # gradient varies across its passes. The size channel repeats the n/a note.
    drawing = recurrent.draw(view="rolled", color_by="grad_norm", size_by="bytes")
    assert drawing.state is not None
    assert drawing.state.notes == (
        "n/a = unencoded",
        "rolled multi-pass nodes unencoded: grad norm is not single-valued across passes",
    )
    both = recurrent.draw(color_by="grad_norm", size_by="grad_norm")
    assert both.state is not None
    assert both.state.notes == ("n/a = unencoded",)  # noted by both channels, kept once


def test_aggregation_lines_name_cross_pass_and_box_sums(recurrent: Trace) -> None:
    rolled = recurrent.draw(view="rolled", color_by="autograd_memory")
    assert rolled.state is not None
    assert rolled.state.aggregation == ("rolled nodes: autograd_memory summed across passes",)
    boxed = capture(seeded(MLP()), torch.randn(2, 8)).draw(color_by="flops", depth=0)
    assert boxed.state is not None
    assert boxed.state.aggregation == ("module boxes: sum over member ops",)


def test_describe_is_stable_and_complete(cnn: Trace) -> None:
    cnn = without_pool_flops(cnn)
    first = cnn.draw(color_by="flops", size_by="bytes", stack_by="pass_number")
    second = cnn.draw(color_by="flops", size_by="bytes", stack_by="pass_number")
    assert first.state is not None and second.state is not None
    text = first.state.describe()
    assert text == first.state.describe() == second.state.describe()
    lines = text.splitlines()
    assert lines[0] == "color_by: forward FLOPs"
    high = first.nodes["tlgraph_key"].rows[0].split(" [bar] ")[1].removesuffix(" [n/a]")
    assert "  domain: 0 FLOPs .. " + high in lines
    assert "size_by: output bytes" in lines and "stack_by: pass_number" in lines
    assert "notes:" in lines and "  n/a = unencoded" in lines
    # Every encoded node is listed with its key-formatted value and what it drew.
    color = first.state.channels["color_by"]
    conv = next(op for op in cnn.ops if op.func == "conv2d")
    assert f"    {conv.label}: 27.6 KFLOPs -> {color.fills[conv.label]}" in lines
    width, height = first.state.channels["size_by"].sizes[conv.label]
    assert f"    {conv.label}: 2 KB -> {width:.3f} x {height:.3f} in" in lines


def test_describe_lists_values_that_drew_nothing(cnn: Trace) -> None:
    ops = tuple(dataclasses.replace(op, flops_forward=5) for op in cnn.ops)
    state = dataclasses.replace(cnn, ops=ops).draw(color_by="flops").state
    assert state is not None
    assert "  domain: 5 FLOPs .. 5 FLOPs" in state.describe().splitlines()
    assert "    input_1: 5 FLOPs (unencoded)" in state.describe().splitlines()
