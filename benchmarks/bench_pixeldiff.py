"""Benchmark: compare_png against the pure-Python ``pixelmatch`` package.

Run as ``python benchmarks/bench_pixeldiff.py [--rounds N]``. Every pair starts from
PNG bytes, as a snapshot test's does, and both sides decode them and produce a diff
image. Pairs with the reference are timed in alternation (five calls of ours, then one
of pixelmatch, ``N`` rounds, best of each), so a busy machine slows both alike:

* a graph-like 1000x1000 grid (labelled boxes joined by edges), with a local change
  and shifted by 2 pixels;
* a text-heavy 1000x1000 scene: 300 anti-aliased labels in outlined boxes, drawn
  with Pillow's own FreeType font, with a local change and shifted by 2 pixels;
* a real drawing: the example zoo's TinyTransformer, captured and rendered with the
  project's own renderer, before and after a one-layer change;
* 6-megapixel pairs (a local change, a 2-pixel shift), ours only (the reference
  would take minutes per repeat).

Each row prints both times, the speed-up and both mismatch counts. The target is a
speed-up of at least 50x on every text-heavy row (the scene and the real drawing) and
equal counts on every row; the exit status is 1 when either fails.
"""

from __future__ import annotations

import argparse
import io
import random
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import NamedTuple

from PIL import Image, ImageDraw, ImageFont

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pytest_tlgraph.pixels.pixeldiff import compare_png  # noqa: E402

TARGET = 50.0
OPS = ["conv2d", "linear", "relu", "batch_norm", "dropout", "gelu", "layer_norm", "add"]


def draw_graph(width: int, height: int, *, seed: int = 0) -> Image.Image:
    """A white canvas with a grid of labelled boxes joined by anti-aliased edges."""
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    box_w, box_h, step_x, step_y = 180, 60, 250, 140
    for row, top in enumerate(range(20, height - box_h, step_y)):
        for col, left in enumerate(range(20, width - box_w, step_x)):
            fill = ((seed * 7 + row * 40 + col * 25) % 200 + 55, 220, 235)
            draw.rounded_rectangle(
                (left, top, left + box_w, top + box_h), 8, fill=fill, outline="black"
            )
            draw.text((left + 10, top + 10), f"conv{row}_{col}", fill="black")
            draw.text((left + 10, top + 32), "3x32x32 -> 16x30x30", fill="dimgray")
            if top + step_y < height - box_h:
                x = left + box_w // 2
                draw.line((x, top + box_h, x + 20 * ((col % 3) - 1), top + step_y), "black", 2)
    return image


def graph_local_change(image: Image.Image) -> Image.Image:
    """Relabel one box of :func:`draw_graph`, as when a layer's arguments change."""
    changed = image.copy()
    draw = ImageDraw.Draw(changed)
    draw.rectangle((30, 50, 195, 75), fill=(55, 220, 235))
    draw.text((30, 52), "in_features=32", fill="black")
    return changed


def label_font() -> ImageFont.FreeTypeFont:
    """Pillow's bundled FreeType font (anti-aliased), at a drawing's label size."""
    font = ImageFont.load_default(size=11)
    if not isinstance(font, ImageFont.FreeTypeFont):
        raise SystemExit("this benchmark needs Pillow built with FreeType (pip wheels are)")
    return font


def label_box(draw: ImageDraw.ImageDraw, left: int, top: int, text: str) -> None:
    """One outlined box of the text-heavy scene, 92 x 28 pixels, with its label."""
    draw.rounded_rectangle(
        (left, top, left + 92, top + 28), 5, fill=(242, 243, 245), outline=(70, 80, 90)
    )
    draw.text((left + 5, top + 7), text, fill=(20, 20, 20), font=label_font())


def draw_text_scene(width: int = 1000, height: int = 1000, *, seed: int = 0) -> Image.Image:
    """300 anti-aliased labels in outlined boxes (10 columns of 30), joined by edges."""
    rng = random.Random(seed)
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    step_x, step_y = width // 10, height // 30
    for row in range(30):
        for col in range(10):
            left, top = col * step_x + 3, row * step_y + 2
            label_box(draw, left, top, f"{rng.choice(OPS)}_{row * 10 + col}")
            if row % 3 == 0 and col < 9:  # a few edges, as between a drawing's nodes
                draw.line((left + 92, top + 14, left + step_x, top + step_y + 14), (60, 60, 60))
    return image


def text_local_change(image: Image.Image) -> Image.Image:
    """Relabel one box of :func:`draw_text_scene`."""
    changed = image.copy()
    label_box(ImageDraw.Draw(changed), 403, 5 * (1000 // 30) + 2, "linear_54")
    return changed


def shifted(image: Image.Image, dx: int = 2, dy: int = 2) -> Image.Image:
    moved = Image.new(image.mode, image.size, "white")
    moved.paste(image, (dx, dy))
    return moved


def to_png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def rendered_pair() -> tuple[bytes, bytes]:
    """TinyTransformer drawn by the project's renderer, before and after one of its
    feed-forward activations changes (``GELU()`` to ``GELU(approximate="tanh")``)."""
    import torch
    from torch import nn

    from examples.models import TinyTransformer, TransformerBlock
    from pytest_tlgraph import capture
    from pytest_tlgraph.render import render_png

    torch.manual_seed(0)
    model = TinyTransformer().eval()

    def png() -> bytes:
        dot = capture(model, model.example_input_array).draw().dot
        return render_png(dot, renderer="pure", dpi=96)

    before = png()
    block = model.blocks[2]
    assert isinstance(block, TransformerBlock)
    block.ff[1] = nn.GELU(approximate="tanh")
    return before, png()


def timed(func: Callable[[], int]) -> tuple[float, int]:
    start = time.perf_counter()
    result = func()
    return time.perf_counter() - start, result


class Row(NamedTuple):
    label: str
    ours: float
    ours_count: int
    reference: float | None = None
    reference_count: int | None = None
    text_heavy: bool = False


def race(label: str, pair: tuple[bytes, bytes], rounds: int, *, text_heavy: bool) -> Row:
    """Best times of ours (5 calls a round) and pixelmatch (1), interleaved."""
    best_ours = best_ref = float("inf")
    ours_count = ref_count = 0
    for _ in range(rounds):
        for _ in range(5):
            elapsed, ours_count = timed(partial(ours, *pair))
            best_ours = min(best_ours, elapsed)
        elapsed, ref_count = timed(partial(reference, *pair))
        best_ref = min(best_ref, elapsed)
    return Row(label, best_ours, ours_count, best_ref, ref_count, text_heavy)


def ours(expected: bytes, actual: bytes) -> int:
    return compare_png(expected, actual).mismatched


def reference(expected: bytes, actual: bytes) -> int:
    """pixelmatch from the same PNG bytes, writing its diff image as ours does."""
    from pixelmatch.contrib.PIL import pixelmatch

    img1 = Image.open(io.BytesIO(expected))
    img2 = Image.open(io.BytesIO(actual))
    diff = Image.new("RGBA", img1.size)
    count: int = pixelmatch(img1, img2, diff)
    return count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="pixelmatch calls per pair")
    rounds = parser.parse_args(argv).rounds
    rows: list[Row] = []
    grid, text = draw_graph(1000, 1000), draw_text_scene()
    cases = [
        ("grid 1000x1000 local change", grid, graph_local_change(grid), False),
        ("grid 1000x1000 2-px shift", grid, shifted(grid), False),
        ("text 1000x1000 local change", text, text_local_change(text), True),
        ("text 1000x1000 2-px shift", text, shifted(text), True),
    ]
    for label, before, after, text_heavy in cases:
        rows.append(race(label, (to_png(before), to_png(after)), rounds, text_heavy=text_heavy))
        print(f"{label}: done", file=sys.stderr)
    before_png, after_png = rendered_pair()
    size = Image.open(io.BytesIO(before_png)).size
    label = f"TinyTransformer {size[0]}x{size[1]} one layer"
    rows.append(race(label, (before_png, after_png), rounds, text_heavy=True))

    big = draw_graph(3000, 2000, seed=1)
    for label, other in (
        ("grid 3000x2000 local change", graph_local_change(big)),
        ("grid 3000x2000 2-px shift", shifted(big)),
    ):
        pair = (to_png(big), to_png(other))
        elapsed, count = min(timed(partial(ours, *pair)) for _ in range(7))
        rows.append(Row(label, elapsed, count))
    return report(rows)


def report(rows: list[Row]) -> int:
    """Print the table; 1 if a count differs or a text-heavy row misses the target."""
    print(
        f"\n{'case':<36}{'ours (ms)':>10}{'pixelmatch (s)':>15}{'speed-up':>10}"
        f"{'ours count':>12}{'pm count':>10}  verdict"
    )
    failed = False
    for row in rows:
        if row.reference is None or row.reference_count is None:
            print(f"{row.label:<36}{row.ours * 1000:>10.1f}{'-':>15}{'-':>10}{row.ours_count:>12}")
            continue
        ratio = row.reference / row.ours
        verdict = "counts equal" if row.ours_count == row.reference_count else "COUNTS DIFFER"
        failed |= row.ours_count != row.reference_count
        if row.text_heavy:
            met = ratio >= TARGET
            failed |= not met
            verdict += f", {TARGET:.0f}x target {'met' if met else 'MISSED'}"
        print(
            f"{row.label:<36}{row.ours * 1000:>10.1f}{row.reference:>15.2f}{ratio:>9.0f}x"
            f"{row.ours_count:>12}{row.reference_count:>10}  {verdict}"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
