"""Channels on the rolled view: per-pass quantities, varying fields and exact
cross-pass totals (ENCODING.md §3.1, §3.3)."""

from __future__ import annotations

import pytest
import torch

from pytest_tlgraph import EncodingRefusal, Layer, Trace
from pytest_tlgraph.capture import capture
from tests.models import Shrink

ROLLED_NOTE = "rolled multi-pass nodes unencoded: {} is not single-valued across passes"


@pytest.fixture(scope="module")
def shrink() -> Trace:
    # A recurrence over shrinking slices: x[..., :16] -> 8 -> 4 across passes.
    return capture(Shrink(), torch.randn(2, 16), magnitudes=True)


def multi_pass(trace: Trace) -> list[str]:
    return [label for label, layer in trace.layers.items() if layer.num_passes > 1]


def test_time_leaves_rolled_nodes_uncoloured_with_a_note(recurrent: Trace) -> None:
    assert multi_pass(recurrent) == ["linear_1", "add_1", "tanh_1"]
    drawing = recurrent.draw(view="rolled", color_by="time")
    assert drawing.state is not None
    channel = drawing.state.channels["color_by"]
    assert set(channel.values) == {"input_1", "output_1"}
    assert not set(channel.fills) & set(multi_pass(recurrent))
    assert ROLLED_NOTE.format("time") in drawing.state.notes
    assert drawing.nodes["tlgraph_key"].rows == ("time: all 0 ms",)


def test_time_refuses_to_size_a_rolled_node(recurrent: Trace) -> None:
    with pytest.raises(EncodingRefusal) as info:
        recurrent.draw(view="rolled", size_by="time")
    assert info.value.code == "size_by_rolled_varying"
    assert "'linear_1'" in info.value.cause and "3 passes" in info.value.cause
    assert "view='unrolled'" in info.value.remedy


def test_a_field_varying_across_passes_is_not_single_valued(recurrent: Trace) -> None:
    layer = recurrent.layers["linear_1"]
    assert "magnitude" in layer.varying and layer.magnitude is None
    drawing = recurrent.draw(view="rolled", color_by="magnitude")
    assert drawing.state is not None
    assert ROLLED_NOTE.format("magnitude") in drawing.state.notes
    assert "linear_1" not in drawing.state.channels["color_by"].values
    with pytest.raises(EncodingRefusal) as info:
        recurrent.draw(view="rolled", size_by="magnitude")
    assert info.value.code == "size_by_rolled_varying"
    assert "size_by='magnitude'" in info.value.cause


def test_a_field_equal_on_every_pass_is_encoded_as_that_value(recurrent: Trace) -> None:
    layer = recurrent.layers["linear_1"]
    per_pass = {recurrent.op(label).flops_forward for label in layer.ops}
    assert per_pass == {256}  # 2 * batch 2 * 8 * 8, the same on every pass
    for channel in ("color_by", "size_by"):
        drawing = recurrent.draw(view="rolled", **{channel: "flops"})
        assert drawing.state is not None
        assert drawing.state.channels[channel].values["linear_1"] == 256.0
        assert drawing.state.aggregation == ()  # one pass's value, not a sum
        assert drawing.state.notes == ()


def test_dims_on_a_rolled_node_with_varying_shape_names_the_summary(shrink: Trace) -> None:
    varying = [layer for layer in shrink.layers.values() if layer.shape_summary]
    assert [layer.shape_summary for layer in varying] == ["8->4", "8->4"]
    with pytest.raises(EncodingRefusal) as info:
        shrink.draw(view="rolled", size_by="dims")
    assert info.value.code == "size_by_rolled_varying"
    assert f"'{varying[0].label}'" in info.value.cause
    assert "8->4" in info.value.cause and "size_by='dims'" in info.value.cause


def test_dims_on_the_unrolled_shrinking_recurrence_sizes_every_pass(shrink: Trace) -> None:
    drawing = shrink.draw(size_by="dims")
    assert drawing.state is not None
    values = drawing.state.channels["size_by"].values
    assert values["relu_1:1"] == 8.0 and values["relu_1:2"] == 4.0
    sizes = drawing.state.channels["size_by"].sizes
    assert sizes["relu_1:1"][0] > sizes["relu_1:2"][0]
    assert drawing.nodes["tlgraph_key"].rows == ("size: output numel, 4 ... 16",)


def test_dims_on_a_rolled_node_with_one_shape_is_encoded(recurrent: Trace) -> None:
    drawing = recurrent.draw(view="rolled", size_by="dims")
    assert drawing.state is not None
    assert drawing.state.channels["size_by"].values["linear_1"] == 8.0


def test_exact_cross_pass_total_encodes_with_an_aggregation_line(recurrent: Trace) -> None:
    layer = recurrent.layers["linear_1"]
    per_pass = [recurrent.op(label).autograd_memory or 0 for label in layer.ops]
    assert all(v > 0 for v in per_pass)
    for channel in ("color_by", "size_by"):
        drawing = recurrent.draw(view="rolled", **{channel: "autograd_memory"})
        assert drawing.state is not None
        assert drawing.state.channels[channel].values["linear_1"] == float(sum(per_pass))
        assert drawing.state.aggregation == ("rolled nodes: autograd_memory summed across passes",)


def test_a_callable_gives_the_users_value_for_the_whole_layer(recurrent: Trace) -> None:
    def passes(layer: Layer) -> int:
        return layer.num_passes

    drawing = recurrent.draw(view="rolled", size_by=passes, color_by=passes)
    assert drawing.state is not None
    assert drawing.state.channels["size_by"].values["tanh_1"] == 3.0
    assert drawing.state.channels["color_by"].values["tanh_1"] == 3.0
    assert drawing.state.notes == ()


def test_unrolled_passes_are_encoded_one_by_one(recurrent: Trace) -> None:
    drawing = recurrent.draw(color_by="time", size_by="time")
    assert drawing.state is not None
    encoded = set(drawing.state.channels["color_by"].values)
    assert {"linear_1:1", "linear_1:2", "linear_1:3"} <= encoded
    assert drawing.state.notes == ()
