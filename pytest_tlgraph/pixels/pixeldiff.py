"""Fast pixel comparison of two PNGs, counting exactly as ``pixelmatch`` does.

The ``pixelmatch`` package is the reference: for the same pair of images and the
same threshold, :func:`compare_png` returns its count to the pixel. It reimplements
the same algorithm (the YIQ colour delta of Kotsarenko and Ramos, alpha blended
against white, and the anti-aliasing detector of Vysniauskas), vectorised with numpy
and applied only to pixels whose raw RGBA differs: a pixel that did not change can
never exceed the threshold, and in a rendered graph almost all of them did not.
Every float operation runs in the reference's order, in float64, so borderline
pixels fall on the same side of the threshold (for opaque pixels the YIQ terms come
from tables of those same products). The anti-aliasing detector, where a shifted
drawing spends its time, is in :mod:`pytest_tlgraph.pixels.antialias`.
"""

from __future__ import annotations

import io
import zlib
from dataclasses import dataclass
from functools import cache, partial
from typing import Final

import numpy as np
import numpy.typing as npt
from PIL import Image, PngImagePlugin

from pytest_tlgraph.errors import UsageError
from pytest_tlgraph.limits import MAX_IMAGE_PIXELS
from pytest_tlgraph.pixels.antialias import antialiased
from pytest_tlgraph.pixels.defaults import DEFAULT_MAX_DIFF_PIXELS, DEFAULT_THRESHOLD
from pytest_tlgraph.pixels.unioncanvas import mark_missing, padded_pair
from pytest_tlgraph.pngheader import read_png_size

__all__ = ["MAX_IMAGE_PIXELS", "PngComparison", "compare_png"]

#: The largest union canvas (pixels) a size change is drawn on; above it the change is
#: reported from the PNG headers alone, without decoding either image.
UNION_DIFF_MAX_PIXELS: Final = 25_000_000

_BLOCK: Final = 1 << 15  # candidate pixels whose colour deltas are computed at once
_NOT_PNG = "{side} image is not a PNG (no PNG signature and IHDR header)"

_U8 = npt.NDArray[np.uint8]
_U32 = npt.NDArray[np.uint32]
_F64 = npt.NDArray[np.float64]
_INT = npt.NDArray[np.intp]
_BOOL = npt.NDArray[np.bool_]

# Diff image palette. Greys are the reference's draw_gray_pixel (fade 0.1 towards
# white by alpha) indexed [luma, alpha]; they never go below 229, so palette slots
# 0 and 1 are free for the highlight colours.
_LEVELS = np.arange(256, dtype=np.float64)
_FADED = (255.0 + (_LEVELS[:, None] - 255.0) * (0.1 * _LEVELS[None, :] / 255.0)).astype(np.uint8)
_FADED_OPAQUE = _FADED[:, 255].tolist()
_RED, _YELLOW = 0, 1
_PALETTE = bytes([255, 0, 0, 255, 255, 0]) + bytes(np.repeat(np.arange(2, 256, dtype=np.uint8), 3))


@dataclass(frozen=True)
class PngComparison:
    """The verdict of :func:`compare_png`.

    ``mismatched`` counts pixels that differ beyond ``threshold`` and are not
    anti-aliasing. When the sizes differ no pixel is compared: ``size_changed`` is
    true, ``passed`` is false whatever the budget, and ``mismatched`` is the pixel
    count of the larger image (every pixel is taken as changed). ``diff_png`` is a
    pixelmatch-style diff image (the expected image in faded grey, mismatched pixels
    red, anti-aliased differing pixels yellow), set whenever the images differ: when
    the sizes differ it is drawn on the union canvas (both images at the top-left, the
    area outside either striped light blue; see :mod:`.unioncanvas`). It is ``None``
    when no pixel differs beyond the threshold. Sizes are ``(width, height)``.
    """

    passed: bool
    mismatched: int
    size_changed: bool
    diff_png: bytes | None
    expected_size: tuple[int, int]
    actual_size: tuple[int, int]
    threshold: float
    max_diff_pixels: int


def compare_png(
    expected: bytes,
    actual: bytes,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    max_diff_pixels: int = DEFAULT_MAX_DIFF_PIXELS,
) -> PngComparison:
    """Compare two PNG images pixel by pixel, as ``pixelmatch`` with ``includeAA=False``.

    ``threshold`` (0 to 1) is pixelmatch's per-pixel colour threshold; the comparison
    passes when at most ``max_diff_pixels`` pixels mismatch. Identical bytes pass
    without decoding. Raises ``ValueError`` naming the side (expected or actual) that
    is not a decodable PNG or is larger than :data:`MAX_IMAGE_PIXELS`.
    """
    if not 0.0 <= threshold <= 1.0:
        raise UsageError(f"threshold must be between 0 and 1, got {threshold!r}")
    if max_diff_pixels < 0:
        raise UsageError(f"max_diff_pixels must be >= 0, got {max_diff_pixels!r}")
    verdict = partial(PngComparison, threshold=threshold, max_diff_pixels=max_diff_pixels)
    if expected == actual:  # nothing is decoded, so the size cap does not apply
        size = read_png_size(expected)
        if size is None:
            raise UsageError(_NOT_PNG.format(side="expected"))
        return verdict(True, 0, False, None, size, size)
    size1, size2 = _header_size(expected, "expected"), _header_size(actual, "actual")
    if size1 != size2:  # read from the headers
        larger = max(size1[0] * size1[1], size2[0] * size2[1])
        union = max(size1[0], size2[0]) * max(size1[1], size2[1])
        if union > UNION_DIFF_MAX_PIXELS:  # reported without decoding either image
            return verdict(False, larger, True, None, size1, size2)
        return verdict(False, larger, True, _union_diff(expected, actual, threshold), size1, size2)
    image1, image2 = _decode(expected, "expected"), _decode(actual, "actual")
    width, height = image1.size
    flat1, flat2 = _rgba(image1), _rgba(image2)
    # Little-endian words: r | g << 8 | b << 16 | a << 24 on every machine.
    px1, px2 = flat1.view("<u4").reshape(-1), flat2.view("<u4").reshape(-1)
    idx = _over_threshold(flat1, px1, flat2, px2, 35215 * threshold * threshold)
    aa = antialiased(flat1, px1, flat2, px2, idx, width, height)
    mismatched = int(idx.size - np.count_nonzero(aa))
    diff_png = _diff_png(image1, flat1, px1, idx, aa) if idx.size else None
    passed = mismatched <= max_diff_pixels
    return verdict(passed, mismatched, False, diff_png, image1.size, image2.size)


def _union_diff(expected: bytes, actual: bytes, threshold: float) -> bytes | None:
    """The diff image of two differently sized PNGs on their union canvas."""
    image1, image2 = _decode(expected, "expected"), _decode(actual, "actual")
    padded = padded_pair(image1, image2)
    union = compare_png(*padded, threshold=threshold).diff_png
    return mark_missing(union, padded[0], image1, image2)


def _header_size(png: bytes, side: str) -> tuple[int, int]:
    size = read_png_size(png)
    if size is None:
        raise UsageError(_NOT_PNG.format(side=side))
    return size


def _checked_size(png: bytes, side: str) -> tuple[int, int]:
    size = read_png_size(png)
    if size is None:
        raise UsageError(_NOT_PNG.format(side=side))
    if size[0] * size[1] > MAX_IMAGE_PIXELS:
        raise UsageError(
            f"{side} image is {size[0]}x{size[1]} pixels, above the cap of "
            f"{MAX_IMAGE_PIXELS:,} pixels (pytest_tlgraph.limits."
            "MAX_IMAGE_PIXELS); draw the graph smaller (lower dpi, depth or collapse)"
        )
    return size


def _decode(png: bytes, side: str) -> Image.Image:
    """Decode to a loaded RGB or RGBA image, naming ``side`` in any error."""
    _checked_size(png, side)
    try:
        # Building the PNG reader directly skips Image.open's bomb check, which reads
        # a process-wide limit; _checked_size has applied our own cap instead.
        image: Image.Image = PngImagePlugin.PngImageFile(io.BytesIO(png))
        image.load()
        if image.mode in ("RGB", "RGBA") and "transparency" not in image.info:
            return image
        # Palette, grey and tRNS images as the reference sees them (it converts too).
        return image.convert("RGBA")
    except Exception as exc:  # Pillow reports damage with many exception types
        raise UsageError(f"{side} image could not be decoded as PNG: {exc}") from exc


def _rgba(image: Image.Image) -> _U8:
    """Raw pixels as a read-only (width * height, 4) RGBA array."""
    if image.mode == "RGBA":
        return np.frombuffer(image.tobytes(), dtype=np.uint8).reshape(-1, 4)
    # Pillow keeps RGB padded to 4 bytes a pixel, and fills the pad with 255 when it
    # decodes: read that way, RGB is already opaque RGBA, without convert("RGBA")
    # and its extra full-size buffer (page faults dominate at 6 megapixels).
    flat = np.frombuffer(image.tobytes("raw", "RGBX"), dtype=np.uint8).reshape(-1, 4)
    if flat[:, 3].min() == 255:  # a reduction: checks the pad without a temporary
        return flat
    return _rgba(image.convert("RGBA"))


def _over_threshold(flat1: _U8, px1: _U32, flat2: _U8, px2: _U32, limit: float) -> _INT:
    """Flat indices of the pixels whose colour delta exceeds ``limit``."""
    idx = np.flatnonzero(px1 != px2)
    over = np.empty(idx.size, dtype=np.bool_)
    # In blocks, so that the float temporaries stay in cache on a whole-image shift.
    for start in range(0, idx.size, _BLOCK):
        block = idx[start : start + _BLOCK]
        over[start : start + _BLOCK] = _deltas(flat1, px1, flat2, px2, block) > limit
    return idx[over]


def _deltas(flat1: _U8, px1: _U32, flat2: _U8, px2: _U32, idx: _INT) -> _F64:
    """The reference's ``color_delta`` of the pixels ``idx`` of both images."""
    word1, word2 = px1[idx], px2[idx]
    if bool((word1 >= 0xFF000000).all()) and bool((word2 >= 0xFF000000).all()):
        return _opaque_deltas(word1, word2)
    return _colour_delta(_rgb(flat1, idx), _rgb(flat2, idx))


@cache
def _yiq_tables() -> tuple[tuple[_F64, _F64], ...]:
    """Per YIQ component, its red-green part indexed by ``g << 8 | r`` and its blue
    term indexed by ``b`` (subtracted for I), as the reference computes them."""
    levels = np.arange(256, dtype=np.float64)
    red, green = levels[None, :], levels[:, None]  # [g, r]: row g, column r
    y = red * 0.29889531 + green * 0.58662247
    i = red * 0.59597799 - green * 0.27417610
    q = red * 0.21147017 - green * 0.52261711
    return (
        (y.reshape(-1), levels * 0.11448223),
        (i.reshape(-1), levels * 0.32180189),
        (q.reshape(-1), levels * 0.31114694),
    )


def _opaque_deltas(word1: _U32, word2: _U32) -> _F64:
    """``color_delta`` of opaque pixel pairs given as RGBA words, by table look-up:
    the same float64 products and sums, in the same order, as the reference's."""
    (y_rg, y_b), (i_rg, i_b), (q_rg, q_b) = _yiq_tables()
    rg1, rg2 = (word1 & 0xFFFF).astype(np.intp), (word2 & 0xFFFF).astype(np.intp)
    b1, b2 = ((word1 >> 16) & 0xFF).astype(np.intp), ((word2 >> 16) & 0xFF).astype(np.intp)
    y = (y_rg[rg1] + y_b[b1]) - (y_rg[rg2] + y_b[b2])
    i = (i_rg[rg1] - i_b[b1]) - (i_rg[rg2] - i_b[b2])
    q = (q_rg[rg1] + q_b[b1]) - (q_rg[rg2] + q_b[b2])
    delta: _F64 = 0.5053 * y * y + 0.299 * i * i + 0.1957 * q * q
    return delta


def _rgb(flat: _U8, idx: _INT) -> _F64:
    """Channels of the given pixels as floats, blended against white by alpha."""
    px = flat[idx]
    if bool((px[..., 3] == 255).all()):
        return px[..., :3].astype(np.float64)
    # The reference blends only when alpha < 255; for alpha 255 the formula gives
    # the channel back exactly (a / 255 == 1.0), so it applies to every pixel.
    alpha = px[..., 3:] / 255.0
    blended: _F64 = 255.0 + (px[..., :3] - 255.0) * alpha
    return blended


def _brightness(rgb: _F64) -> _F64:
    y: _F64 = rgb[..., 0] * 0.29889531 + rgb[..., 1] * 0.58662247 + rgb[..., 2] * 0.11448223
    return y


def _colour_delta(rgb1: _F64, rgb2: _F64) -> _F64:
    """Squared YIQ distance of pixel pairs (the reference's ``color_delta``)."""
    r1, g1, b1 = rgb1[..., 0], rgb1[..., 1], rgb1[..., 2]
    r2, g2, b2 = rgb2[..., 0], rgb2[..., 1], rgb2[..., 2]
    y = _brightness(rgb1) - _brightness(rgb2)
    i = (r1 * 0.59597799 - g1 * 0.27417610 - b1 * 0.32180189) - (
        r2 * 0.59597799 - g2 * 0.27417610 - b2 * 0.32180189
    )
    q = (r1 * 0.21147017 - g1 * 0.52261711 + b1 * 0.31114694) - (
        r2 * 0.21147017 - g2 * 0.52261711 + b2 * 0.31114694
    )
    delta: _F64 = 0.5053 * y * y + 0.299 * i * i + 0.1957 * q * q
    return delta


def _diff_png(expected: Image.Image, flat: _U8, px: _U32, idx: _INT, aa: _BOOL) -> bytes:
    """Encode the diff image as a palette PNG (grey levels plus red and yellow)."""
    # Pillow's integer luma stands in for the reference's float brightness: within
    # one grey level of it, and ten times cheaper on a large image. The opaque fade
    # for every pixel is a Pillow point LUT.
    index = np.array(expected.convert("L").point(_FADED_OPAQUE)).reshape(-1)
    if expected.mode != "RGB":
        # The pixels that are not opaque (a rendered graph's margin at most) fade by
        # alpha; their grey is the reference's brightness, truncated.
        clear = np.flatnonzero(px < 0xFF000000)
        if clear.size:
            levels = _brightness(flat[clear, :3].astype(np.float64)).astype(np.uint8)
            index[clear] = _FADED[levels, flat[clear, 3]]
    index[idx] = np.where(aa, _YELLOW, _RED)
    image = Image.frombuffer("P", expected.size, index, "raw", "P", 0, 1)  # no copy
    image.putpalette(_PALETTE)
    out = io.BytesIO()
    # Speed over size: the diff is a throwaway artifact, written only on failure.
    # Run-length deflate suits it (flat grey areas): faster than level 1 and smaller.
    image.save(out, format="PNG", compress_level=1, compress_type=zlib.Z_RLE)
    return out.getvalue()
