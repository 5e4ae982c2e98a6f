"""The size guard (REVIEW.md §1.7): an oversized canvas is refused before any render."""

from __future__ import annotations

import io

import pytest
import torch
from PIL import Image
from torch import nn

from pytest_tlgraph import RenderError, capture
from pytest_tlgraph.draw.canvas import MAX_SIDE, canvas_problem, estimate_canvas
from tests.corpus.traces import corpus_trace


class _Chain(nn.Module):
    def __init__(self, length: int) -> None:
        super().__init__()
        self.length = length

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(self.length):
            x = x + 1
        return x


@pytest.fixture(scope="module")
def chain() -> object:
    return capture(_Chain(6000), torch.zeros(2))


def test_a_6000_op_chain_is_refused_without_rendering(
    chain: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    drawing = chain.draw()  # type: ignore[attr-defined]
    from pytest_tlgraph import render

    def never(*args: object, **kwargs: object) -> bytes:
        raise AssertionError("a renderer ran")

    monkeypatch.setattr(render, "render_png", never)
    # The renderer is never reached (its time is measured in benchmarks/).
    with pytest.raises(RenderError) as info:
        drawing.png()
    message = str(info.value)
    assert "PNG not rendered" in message and "32,767 px" in message
    assert "collapse='auto'" in message and "png=False" in message
    _, height = estimate_canvas(drawing)
    assert height * 96 > MAX_SIDE and "\n" not in message


@pytest.mark.parametrize("name", ["bert", "gpt2", "t5", "llama", "whisper"])
def test_the_estimate_tracks_real_renders(name: str) -> None:
    drawing = corpus_trace(name).draw(collapse="auto")
    assert canvas_problem(drawing, 96) is None
    width, height = estimate_canvas(drawing)
    real = Image.open(io.BytesIO(drawing.png(dpi=96))).size
    assert 0.9 <= real[1] / (height * 96) <= 1.25
    # Widths within a factor of two (docs/decisions.md, "Size guard"); 2.5 above.
    assert 0.5 <= real[0] / (width * 96) <= 2.5


@pytest.mark.parametrize("dpi", [0, 601, 96.0, True, "96"])
def test_dpi_is_checked(dpi: object) -> None:
    drawing = corpus_trace("lstm_bidirectional").draw()
    with pytest.raises(ValueError, match="from 1 to 600"):
        drawing.png(dpi=dpi)  # type: ignore[arg-type]
