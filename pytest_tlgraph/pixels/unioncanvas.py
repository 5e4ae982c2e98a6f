"""The diff image of two PNGs of different sizes, drawn on their union canvas.

An architecture change nearly always changes the rendered size, so this is the usual
case of a failing snapshot. Both images are placed at the top-left of a canvas as wide
and as tall as the larger of each, the uncovered area filled with the page white, and
compared pixel by pixel as equal-sized images are (``compare_png`` pads them with
:func:`padded_pair` and passes its diff to :func:`mark_missing`). The area that lies
outside one of the two images is then marked with light-blue diagonal stripes, so
a reader sees where one picture ends; pixels that differ keep their red (or yellow).
"""

from __future__ import annotations

import io
from typing import Final

import numpy as np
from PIL import Image

__all__ = ["MISSING_STRIPE", "mark_missing", "padded_pair"]

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


def padded_pair(expected: Image.Image, actual: Image.Image) -> tuple[bytes, bytes]:
    """Both images as PNGs of their union size, each at the top-left on white."""
    size = (max(expected.width, actual.width), max(expected.height, actual.height))
    return _padded(expected, size), _padded(actual, size)


#: Rows the striping works on at once.
_BAND = 256


def mark_missing(
    diff_png: bytes | None, padded_expected: bytes, expected: Image.Image, actual: Image.Image
) -> bytes:
    """The union-canvas diff image: ``diff_png`` (the comparison of the padded pair, or
    ``None`` when only padding differs: the expected image faded) with the area outside
    either image striped."""
    if diff_png is None:
        rgb = np.array(Image.open(io.BytesIO(padded_expected)).convert("RGB"))
    else:
        rgb = np.array(Image.open(io.BytesIO(diff_png)).convert("RGB"))
    height, width = rgb.shape[:2]
    xs = np.arange(width)[None, :]
    inside_x = (xs < expected.width, xs < actual.width)
    # Band by band: the temporaries are a band's size, never the canvas's.
    for top in range(0, height, _BAND):
        band = rgb[top : top + _BAND]
        if diff_png is None:  # only padding differs: the expected image, faded
            band[...] = 255 - ((255 - band.astype(np.int16)) // 10)
        ys = np.arange(top, top + band.shape[0])[:, None]
        outside = ~(inside_x[0] & (ys < expected.height)) | ~(inside_x[1] & (ys < actual.height))
        stripes = ((xs + ys) % _STRIPE_PERIOD) < 2
        marked = (band[..., 2] < 100) & (band[..., 0] > 200)  # red or yellow: a difference
        band[outside & stripes & ~marked] = MISSING_STRIPE
    out = io.BytesIO()
    Image.fromarray(rgb, "RGB").save(out, format="PNG", compress_level=1)
    return out.getvalue()
