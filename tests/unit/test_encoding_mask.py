"""``mask_volatile``: channels reading run-to-run noise snapshot on structure only."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from pytest_tlgraph import Trace
from pytest_tlgraph.capture import capture
from pytest_tlgraph.draw import draw
from tests.models import CNN, RecurrentCell, seeded


def two_captures(model: torch.nn.Module, inputs: torch.Tensor) -> tuple[Trace, Trace]:
    return capture(model, inputs, magnitudes=True), capture(model, inputs, magnitudes=True)


@pytest.fixture(scope="module")
def cnn_pair() -> tuple[Trace, Trace]:
    return two_captures(seeded(CNN()), torch.randn(1, 3, 8, 8))


@pytest.mark.parametrize(
    "options",
    [
        {"color_by": "time"},
        {"size_by": "time"},
        {"color_by": "time", "size_by": "time", "page": "dark"},
        {"color_by": "time", "depth": 0},
        {"color_by": "func_duration"},
    ],
)
def test_two_captures_give_the_same_masked_dot(
    cnn_pair: tuple[Trace, Trace], options: dict[str, Any]
) -> None:
    first, second = cnn_pair
    durations = [
        (a.func_duration, b.func_duration) for a, b in zip(first.ops, second.ops, strict=True)
    ]
    assert any(a != b for a, b in durations)  # the raw measurements do differ
    masked = [draw(t, mask_volatile=True, **options) for t in (first, second)]
    assert masked[0].dot == masked[1].dot
    assert masked[0].dot != draw(first, **options).dot


def test_masking_is_noted_and_the_key_ends_are_placeholders(
    cnn_pair: tuple[Trace, Trace],
) -> None:
    drawing = draw(cnn_pair[0], mask_volatile=True, color_by="time", size_by="time")
    assert drawing.nodes["tlgraph_key"].rows == (
        "time: masked [bar] masked",
        "size: time, masked ... masked",
    )
    assert drawing.state is not None
    assert [n for n in drawing.state.notes if "masked" in n] == [
        "color_by: time masked for the snapshot (fills and key ends are placeholders)",
        "size_by: time masked for the snapshot (sizes and key ends are placeholders)",
    ]
    # describe() lists no measured value of a masked channel.
    assert " ms" not in drawing.state.describe()


def test_masked_drawing_keeps_which_nodes_are_encoded(cnn_pair: tuple[Trace, Trace]) -> None:
    trace = capture(seeded(RecurrentCell()), torch.randn(2, 8), magnitudes=True)
    masked = draw(trace, mask_volatile=True, view="rolled", color_by="time")
    real = draw(trace, view="rolled", color_by="time")
    assert masked.state is not None and real.state is not None
    assert set(masked.state.channels["color_by"].fills) == set(
        real.state.channels["color_by"].fills
    )


@pytest.mark.parametrize(
    "options",
    [
        {"color_by": "flops"},
        {"size_by": "bytes", "size_scale": "linear"},
        {"color_by": "magnitude", "size_by": "dims"},
        {"stack_by": "pass_number"},
        {"color_by": lambda op: op.index},
    ],
)
def test_deterministic_sources_are_not_masked(
    cnn_pair: tuple[Trace, Trace], options: dict[str, Any]
) -> None:
    trace = cnn_pair[0]
    masked = draw(trace, mask_volatile=True, **options)
    assert masked.dot == draw(trace, **options).dot
    assert masked.state is not None
    assert not any("masked" in note for note in masked.state.notes)


def test_plain_draw_is_unaffected_by_the_switch(cnn_pair: tuple[Trace, Trace]) -> None:
    assert draw(cnn_pair[0], mask_volatile=True).dot == cnn_pair[0].draw().dot
