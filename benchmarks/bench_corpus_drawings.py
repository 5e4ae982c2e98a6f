"""Benchmark: what a reviewer gets for each corpus model, plain and ``collapse="auto"``.

Run as ``python benchmarks/bench_corpus_drawings.py [names...]``. For every corpus model
(tests/corpus) it prints the visible nodes and the PNG size at 96 dpi of the plain and
the auto drawing, the render time of each (one run; ratios only mean something within
one run), and the lowest text-on-fill contrast over the plain, auto and
``color_by="flops"`` drawings on both pages. A plain drawing the size guard refuses
prints its estimated size instead. Last, the time ``Drawing.png()`` takes to refuse a
6,000-op chain (the size guard decides before any renderer runs).
"""

from __future__ import annotations

import io
import os
import sys
import time

from PIL import Image

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from pytest_tlgraph import RenderError
from pytest_tlgraph.draw.canvas import estimate_canvas
from tests.colours import lowest_contrast
from tests.corpus import names
from tests.corpus.traces import corpus_trace


def _size(drawing: object) -> tuple[str, float]:
    start = time.perf_counter()
    try:
        png = drawing.png(dpi=96)  # type: ignore[attr-defined]
    except RenderError:
        width, height = estimate_canvas(drawing)  # type: ignore[arg-type]
        return f"refused (est. {width * 96:,.0f} x {height * 96:,.0f})", 0.0
    w, h = Image.open(io.BytesIO(png)).size
    return f"{w} x {h}", time.perf_counter() - start


def main(selected: list[str]) -> None:
    """Print one line per corpus model."""
    print("model | nodes plain/auto | png plain | png auto | render plain/auto s | contrast")
    for name in selected or names():
        trace = corpus_trace(name)
        plain, auto = trace.draw(), trace.draw(collapse="auto")
        plain_size, plain_s = _size(plain)
        auto_size, auto_s = _size(auto)
        contrast = min(
            lowest_contrast(trace.draw(page=page, **options))
            for page in ("light", "dark")
            for options in ({}, {"collapse": "auto"}, {"color_by": "flops"},
                            {"color_by": "flops", "collapse": "auto"})
        )  # fmt: skip
        print(
            f"{name} | {len(plain.nodes)}/{len(auto.nodes)} | {plain_size} | {auto_size} | "
            f"{plain_s:.2f}/{auto_s:.2f} | {contrast:.2f}"
        )


def refusal_time(length: int = 6000) -> None:
    """Print how long ``Drawing.png()`` takes to refuse a chain of ``length`` ops."""
    import torch
    from torch import nn

    from pytest_tlgraph import capture

    class Chain(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            for _ in range(length):
                x = x + 1
            return x

    drawing = capture(Chain(), torch.zeros(2)).draw()
    start = time.perf_counter()
    try:
        drawing.png()
    except RenderError:
        print(f"{length}-op chain: png() refused in {time.perf_counter() - start:.3f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
    refusal_time()
