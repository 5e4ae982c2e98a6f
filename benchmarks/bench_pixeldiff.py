"""Benchmark: compare_png against the pure-Python ``pixelmatch`` package.

Run as ``python benchmarks/bench_pixeldiff.py``. Draws graph-like images (boxes
with text joined by lines, as a rendered model graph looks), then times, in one run
and as best of a few repeats:

* a 1000x1000 pair with a local change, and the same image shifted by 2 pixels,
  with ours and with pixelmatch (both starting from PNG bytes and producing a diff
  image, timed in alternation), checking that the mismatch counts are equal;
* a 6-megapixel pair with a local change and with a 2-pixel shift, ours only (the
  reference would take tens of seconds per repeat).
"""

from __future__ import annotations

import io
import sys
import time
from collections.abc import Callable
from functools import partial

from PIL import Image, ImageDraw

from pytest_tlgraph.snapshots.pixeldiff import compare_png


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


def to_png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def local_change(image: Image.Image) -> Image.Image:
    """Relabel one box, as when a layer's arguments change."""
    changed = image.copy()
    draw = ImageDraw.Draw(changed)
    draw.rectangle((30, 50, 195, 75), fill=(55, 220, 235))
    draw.text((30, 52), "in_features=32", fill="black")
    return changed


def shifted(image: Image.Image, dx: int = 2, dy: int = 2) -> Image.Image:
    moved = Image.new(image.mode, image.size, "white")
    moved.paste(image, (dx, dy))
    return moved


def timed(func: Callable[[], int]) -> tuple[float, int]:
    start = time.perf_counter()
    result = func()
    return time.perf_counter() - start, result


def race(
    rounds: int, fast: Callable[[], int], slow: Callable[[], int]
) -> tuple[float, int, float, int]:
    """Best times of ``fast`` (5 calls a round) and ``slow`` (1), interleaved so a busy
    machine slows both alike; returns (fast time, fast result, slow time, slow result)."""
    best_fast = best_slow = float("inf")
    fast_result = slow_result = 0
    for _ in range(rounds):
        for _ in range(5):
            elapsed, fast_result = timed(fast)
            best_fast = min(best_fast, elapsed)
        elapsed, slow_result = timed(slow)
        best_slow = min(best_slow, elapsed)
    return best_fast, fast_result, best_slow, slow_result


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


def main() -> int:
    with_reference: list[tuple[str, float, float]] = []
    ours_only: list[tuple[str, float]] = []
    failures = 0
    base = draw_graph(1000, 1000)
    for label, other in (
        ("1000x1000 local change", local_change(base)),
        ("1000x1000 2-px shift", shifted(base)),
    ):
        pair = (to_png(base), to_png(other))
        t_ours, n_ours, t_ref, n_ref = race(3, partial(ours, *pair), partial(reference, *pair))
        status = "equal" if n_ours == n_ref else f"DIFFER (pixelmatch {n_ref})"
        failures += n_ours != n_ref
        print(f"{label}: {n_ours} mismatched pixels, counts {status}")
        with_reference.append((label, t_ours, t_ref))

    big = draw_graph(3000, 2000, seed=1)
    for label, other in (
        ("3000x2000 local change", local_change(big)),
        ("3000x2000 2-px shift", shifted(big)),
    ):
        pair = (to_png(big), to_png(other))
        t_ours, n_ours = min(timed(partial(ours, *pair)) for _ in range(7))
        print(f"{label}: {n_ours} mismatched pixels")
        ours_only.append((label, t_ours))

    print()
    print(f"{'case':<26}{'ours (s)':>10}{'pixelmatch (s)':>16}{'speed-up':>10}")
    for label, t_ours, t_ref in with_reference:
        print(f"{label:<26}{t_ours:>10.4f}{t_ref:>16.3f}{t_ref / t_ours:>9.0f}x")
    for label, t_ours in ours_only:
        print(f"{label:<26}{t_ours:>10.4f}{'-':>16}{'-':>10}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
