"""Channels on collapsed drawings: module boxes, segments and repeat folds (§4)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import torch
from torch import nn

from pytest_tlgraph import Drawing, Trace
from pytest_tlgraph.capture import capture
from tests.models import MLP, SharedModule, _ResidualBlock, seeded, without_pool_flops

ADDITIVE = {
    "time": "func_duration",
    "bytes": "activation_memory",
    "flops": "flops_forward",
    "flops_backward": "flops_backward",
    "flops_total": "flops_total",
    "macs_forward": "macs_forward",
}
COLLAPSED = ("box", "segment", "fold")


class Tower(nn.Module):
    """Root ops around four identical blocks: segments, and a fold under ``max``."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(_ResidualBlock(8) for _ in range(4))
        self.head = nn.Linear(8, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x * 2
        for block in self.blocks:
            x = block(x)
        out: torch.Tensor = self.head(torch.relu(x))
        return out


@pytest.fixture(scope="module")
def tower() -> Trace:
    return capture(seeded(Tower()), torch.randn(2, 8), magnitudes=True)


def collapsed(drawing: Drawing) -> dict[str, Any]:
    return {k: n for k, n in drawing.nodes.items() if n.kind in COLLAPSED}


def exact_sum(trace: Trace, members: tuple[str, ...], field: str) -> float:
    ops = [trace.op(label) for label in members if trace.op(label).has_function]
    return float(sum(getattr(op, field) for op in ops))


@pytest.mark.parametrize("token", sorted(ADDITIVE))
@pytest.mark.parametrize("options", [{"depth": 0}, {"collapse": "max"}])
def test_boxes_and_segments_show_the_exact_sum_of_member_ops(
    tower: Trace, token: str, options: dict[str, Any]
) -> None:
    drawing = tower.draw(color_by=token, size_by=token, **options)
    assert drawing.state is not None
    nodes = collapsed(drawing)
    assert any(n.kind == "box" for n in nodes.values())
    for channel in ("color_by", "size_by"):
        values = drawing.state.channels[channel].values
        for node_id, node in nodes.items():
            if node.kind == "fold":
                continue  # a fold shows one block: checked below
            assert values[node_id] == pytest.approx(
                exact_sum(tower, node.members, ADDITIVE[token]), rel=1e-12
            )


def test_aggregation_lines_name_boxes_and_segments(tower: Trace) -> None:
    boxed = tower.draw(color_by="flops", depth=0).state
    assert boxed is not None
    assert boxed.aggregation == ("module boxes: sum over member ops",)
    capsules = tower.draw(color_by="flops", collapse="max").state
    assert capsules is not None
    assert set(capsules.aggregation) == {
        "module boxes: sum over member ops",
        "segments: sum over member ops",
    }


def test_rolled_boxes_sum_every_call() -> None:
    trace = capture(seeded(SharedModule()), torch.randn(2, 6))
    drawing = trace.draw(view="rolled", depth=0, color_by="flops")
    assert drawing.state is not None
    shared = drawing.nodes["@shared"]
    assert shared.members == ("linear_1:1", "linear_1:2")
    assert drawing.state.channels["color_by"].values["@shared"] == 2 * 2 * 2 * 6 * 6
    assert drawing.state.aggregation == ("module boxes: sum over member ops across all calls",)
    unrolled = trace.draw(depth=0, color_by="flops").state
    assert unrolled is not None
    assert unrolled.channels["color_by"].values["@shared#1"] == 2 * 2 * 6 * 6


def test_a_box_with_a_member_missing_a_value_is_unencoded_with_a_note(cnn: Trace) -> None:
    cnn = without_pool_flops(cnn)
    drawing = cnn.draw(color_by="flops", depth=0)
    assert drawing.state is not None
    features = drawing.nodes["@features#1"]
    missing = [label for label in features.members if cnn.op(label).flops_forward is None]
    assert missing  # pooling has no FLOP count: no partial sum is shown
    assert "@features#1" not in drawing.state.channels["color_by"].values
    assert "@features#1" not in drawing.state.channels["color_by"].fills
    assert "@features#1: unencoded, a member op has no forward FLOPs value" in (drawing.state.notes)
    assert "@head#1" in drawing.state.channels["color_by"].fills


@pytest.mark.parametrize(
    ("options", "name"),
    [
        ({"color_by": "magnitude"}, "magnitude"),
        ({"color_by": "autograd_memory"}, "autograd_memory"),
        ({"size_by": "dims"}, "output numel"),
        ({"size_by": "num_autograd_tensors"}, "num_autograd_tensors"),
    ],
)
def test_sources_without_an_exact_sum_leave_every_box_unencoded(
    tower: Trace, options: dict[str, Any], name: str
) -> None:
    drawing = tower.draw(collapse="max", **options)
    assert drawing.state is not None
    (channel,) = drawing.state.channels.values()
    assert not set(channel.values) & set(collapsed(drawing))
    assert f"collapsed nodes unencoded: {name} has no exact sum over ops" in drawing.state.notes
    assert drawing.state.aggregation == ()
    assert set(channel.values) <= {"input_1", "output_1"}


def test_grad_norm_boxes_are_unencoded() -> None:
    trace = capture(seeded(MLP()), torch.randn(2, 8), backward=True)
    drawing = trace.draw(depth=0, color_by="grad_norm")
    assert drawing.state is not None
    assert "collapsed nodes unencoded: grad norm has no exact sum over ops" in (drawing.state.notes)
    assert not set(drawing.state.channels["color_by"].values) & set(collapsed(drawing))


def test_callables_are_not_called_on_collapsed_nodes(tower: Trace) -> None:
    seen: list[str] = []

    def value(record: Any) -> float:
        seen.append(type(record).__name__)
        return 1.0

    drawing = tower.draw(collapse="max", color_by=value)
    assert set(seen) == {"Op"} and len(seen) == 2  # the input and output records
    assert drawing.state is not None
    assert "collapsed nodes unencoded: callable value has no exact sum over ops" in (
        drawing.state.notes
    )


def test_a_fold_shows_its_representative_block_only(tower: Trace) -> None:
    drawing = tower.draw(collapse="max", color_by="flops")
    assert drawing.state is not None
    (fold_id,) = [k for k, n in drawing.nodes.items() if n.kind == "fold"]
    fold = drawing.nodes[fold_id]
    blocks = [call for call in tower.modules if call.address.startswith("blocks.")]
    first = next(call for call in blocks if call.address == "blocks.0")
    value = drawing.state.channels["color_by"].values[fold_id]
    assert value == exact_sum(tower, first.ops, "flops_forward")
    assert value * 4 == exact_sum(tower, fold.members, "flops_forward")
    assert f"{fold_id}: repeat fold shows its representative module blocks.0 only" in (
        drawing.state.notes
    )


def test_device_time_boxes_sum_a_joined_trace(tower: Trace) -> None:
    ops = tuple(
        dataclasses.replace(op, device_time=1000 * (op.index + 1) if op.has_function else None)
        for op in tower.ops
    )
    trace = dataclasses.replace(tower, ops=ops, device_join="joined", device_join_reason="")
    drawing = trace.draw(depth=0, color_by="device_time")
    assert drawing.state is not None
    values = drawing.state.channels["color_by"].values
    for node_id, node in collapsed(drawing).items():
        assert values[node_id] == exact_sum(trace, node.members, "device_time")
    assert drawing.state.aggregation == ("module boxes: sum over member ops",)


def test_collapsed_drawing_keeps_its_structure_under_channels(tower: Trace) -> None:
    plain = tower.draw(collapse="max")
    encoded = tower.draw(collapse="max", color_by="flops", size_by="bytes")
    assert {k: v for k, v in encoded.nodes.items() if v.kind != "key"} == dict(plain.nodes)
    assert encoded.edges == plain.edges and encoded.clusters == plain.clusters
