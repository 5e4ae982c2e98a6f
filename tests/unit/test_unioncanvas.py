"""Diff images on a size change, drawn on the union canvas (REVIEW.md §2.2)."""

from __future__ import annotations

import io

import numpy as np
import torch
from PIL import Image, ImageDraw
from torch import nn

from pytest_tlgraph.capture import capture
from pytest_tlgraph.pixels.unioncanvas import MISSING_STRIPE
from pytest_tlgraph.snapshots import compare_png

RED = (255, 0, 0)


def _png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def _boxes(width: int, height: int, boxes: list[tuple[int, int, int, int]]) -> Image.Image:
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    for box in boxes:
        draw.rectangle(box, fill=(40, 90, 160))
    return image


def _diff(expected: Image.Image, actual: Image.Image) -> np.ndarray:
    found = compare_png(_png(expected), _png(actual))
    assert found.size_changed and not found.passed
    assert found.diff_png is not None
    return np.array(Image.open(io.BytesIO(found.diff_png)).convert("RGB"))


def _count(pixels: np.ndarray, colour: tuple[int, int, int]) -> int:
    return int(np.all(pixels == colour, axis=-1).sum())


def test_taller_actual_marks_the_new_box_and_the_missing_area() -> None:
    top = (10, 10, 50, 30)
    expected = _boxes(60, 40, [top])
    actual = _boxes(80, 70, [top, (10, 45, 70, 65)])  # wider and taller, a box added
    diff = _diff(expected, actual)
    assert diff.shape == (70, 80, 3)  # the union canvas
    # The shared box is unchanged: no red where both images have it.
    assert _count(diff[10:31, 10:51], RED) == 0
    # The added box lies outside the expected image: red, not striped over.
    assert _count(diff[46:65, 11:70], RED) == 19 * 59
    # The area outside the expected image (right strip, bottom band) is striped.
    outside = np.concatenate([diff[:40, 60:].reshape(-1, 3), diff[40:, :].reshape(-1, 3)])
    assert _count(outside[None], MISSING_STRIPE) > 0
    # Inside both images there is no stripe.
    assert _count(diff[:40, :60], MISSING_STRIPE) == 0


def test_smaller_actual_is_drawn_on_the_expected_canvas() -> None:
    expected = _boxes(60, 60, [(5, 5, 20, 20), (5, 40, 50, 55)])
    actual = _boxes(60, 35, [(5, 5, 20, 20)])  # the lower box removed: shorter
    diff = _diff(expected, actual)
    assert diff.shape == (60, 60, 3)
    assert _count(diff[41:55, 6:50], RED) == 14 * 44  # where the removed box was
    assert _count(diff[:35], MISSING_STRIPE) == 0 and _count(diff[35:], MISSING_STRIPE) > 0


def test_only_padding_differs_still_gives_an_image() -> None:
    blank = Image.new("RGB", (30, 30), "white")
    diff = _diff(blank, Image.new("RGB", (30, 50), "white"))
    assert diff.shape == (50, 30, 3)
    assert _count(diff, RED) == 0 and _count(diff[30:], MISSING_STRIPE) > 0


class _Stack(nn.Module):
    def __init__(self, layers: int) -> None:
        super().__init__()
        self.body = nn.Sequential(*[nn.Linear(8, 8) for _ in range(layers)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


def test_real_renders_of_an_added_layer() -> None:
    x = torch.zeros(1, 8)
    old = capture(_Stack(2), x).draw().png()
    new = capture(_Stack(3), x).draw().png()
    found = compare_png(old, new)
    assert found.size_changed and found.diff_png is not None
    (ow, oh), (nw, nh) = found.expected_size, found.actual_size
    diff = Image.open(io.BytesIO(found.diff_png))
    assert diff.size == (max(ow, nw), max(oh, nh))
    pixels = np.array(diff.convert("RGB"))
    assert _count(pixels, RED) > 0
