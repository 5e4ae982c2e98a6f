"""The diff image of two PNGs of different sizes, drawn on their union canvas.

An architecture change nearly always changes the rendered size, so this is the usual
case of a failing snapshot. Both images are placed at the top-left of a canvas as wide
and as tall as the larger of each, the uncovered area filled with the page white, and
compared pixel by pixel as equal-sized images are (:func:`compare_png`). The area that
lies outside one of the two images is then marked with light-blue diagonal stripes, so
a reader sees where one picture ends; pixels that differ keep their red (or yellow).
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Final

import numpy as np
from PIL import Image

if TYPE_CHECKING:
    from pytest_tlgraph.snapshots.pixeldiff import PngComparison

__all__ = ["MISSING_STRIPE", "union_canvas_diff"]

#: The stripe colour of the area outside one of the two images.
MISSING_STRIPE: Final = (120, 190, 250)
_PAD: Final = (255, 255, 255, 255)
_STRIPE_PERIOD: Final = 8


def _padded(image: Image.Image, size: tuple[int, int]) -> bytes:
    canvas = Image.new("RGBA", size, _PAD)
    canvas.paste(image.convert("RGBA"), (0, 0))
    out = io.BytesIO()
    canvas.save(out, format="PNG", compress_level=1)
    return out.getvalue()


def union_canvas_diff(
    expected: Image.Image, actual: Image.Image, *, threshold: float
) -> tuple[bytes, int]:
    """The diff PNG of ``expected`` and ``actual`` on their union canvas, and the
    number of mismatched pixels found there (the missing area counts where it differs
    from the padding)."""
    from pytest_tlgraph.snapshots.pixeldiff import compare_png

    width = max(expected.width, actual.width)
    height = max(expected.height, actual.height)
    size = (width, height)
    found: PngComparison = compare_png(
        _padded(expected, size), _padded(actual, size), threshold=threshold
    )
    if found.diff_png is None:  # only padding differs: show the expected image faded
        base = Image.open(io.BytesIO(_padded(expected, size))).convert("RGB")
        pixels = 255 - ((255 - np.asarray(base, dtype=np.int16)) // 10)
        rgb = pixels.astype(np.uint8)
    else:
        rgb = np.array(Image.open(io.BytesIO(found.diff_png)).convert("RGB"))
    ys, xs = np.mgrid[0:height, 0:width]
    outside = ~((xs < expected.width) & (ys < expected.height)) | ~(
        (xs < actual.width) & (ys < actual.height)
    )
    stripes = ((xs + ys) % _STRIPE_PERIOD) < 2
    marked = (rgb[..., 2] < 100) & (rgb[..., 0] > 200)  # red or yellow: a difference
    paint = outside & stripes & ~marked
    rgb[paint] = MISSING_STRIPE
    out = io.BytesIO()
    Image.fromarray(rgb, "RGB").save(out, format="PNG", compress_level=1)
    return out.getvalue(), found.mismatched
