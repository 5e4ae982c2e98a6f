"""pixelmatch's anti-aliasing detector, for many candidate pixels at once.

The reference (the ``pixelmatch`` package's ``antialiased`` and
``has_many_siblings``) walks the 8 neighbours of one pixel at a time. Here the work
is split by what it costs:

* raw-equal sibling counts are computed for a band of whole rows (the rows spanned
  by the candidates, plus the two rows either side their neighbours need) with
  shifted slices: every equal pair of neighbours is found once and counted for
  both of its pixels;
* the brightness of every pixel of that band is computed once, in the reference's
  float64 operation order, into a buffer with a NaN frame: a missing neighbour
  then fails every comparison, as the reference's loop never visits it;
* only candidates with at most two raw-equal siblings (three or more settle "not
  anti-aliased" in the reference before any brightness is compared) gather their
  8 brightness deltas, in the reference's visiting order.
"""

from __future__ import annotations

from itertools import pairwise
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

__all__ = ["BAND_PIXELS", "antialiased"]

#: About how many pixels :func:`antialiased` works on at once (whole rows of them).
BAND_PIXELS = 1 << 17

_U8 = npt.NDArray[np.uint8]
_U32 = npt.NDArray[np.uint32]
_F64 = npt.NDArray[np.float64]
_INT = npt.NDArray[np.intp]
_BOOL = npt.NDArray[np.bool_]

# The 8 neighbours in the reference's visiting order (x outer, y inner): the order
# decides which of two equally dark (or bright) neighbours is remembered.
_DX = np.array([-1, -1, -1, 0, 0, 1, 1, 1])
_DY = np.array([-1, 0, 1, -1, 1, -1, 0, 1])
_Y_WEIGHTS = (0.29889531, 0.58662247, 0.11448223)  # the reference's rgb2y


class _Image(NamedTuple):
    """One image, restricted to a band of whole rows ``[top, top + rows)``."""

    flat: _U8  # (rows * width, 4) RGBA
    px: _U32  # (rows * width,) the same pixels as raw 32-bit values
    rows: int
    width: int
    top_is_border: bool
    bottom_is_border: bool

    def siblings(self) -> _U8:
        """Per pixel: 1 on the image border, plus its raw-equal neighbours."""
        grid = self.px.reshape(self.rows, self.width)
        count = np.zeros((self.rows, self.width), dtype=np.uint8)
        count[:, [0, -1]] = 1
        if self.top_is_border:
            count[0] = 1
        if self.bottom_is_border:
            count[-1] = 1
        # Each pair is compared once and counted on both sides: right, down,
        # down-right and down-left cover all 8 directions.
        for a, b in (
            (np.s_[:, 1:], np.s_[:, :-1]),
            (np.s_[1:, :], np.s_[:-1, :]),
            (np.s_[1:, 1:], np.s_[:-1, :-1]),
            (np.s_[1:, :-1], np.s_[:-1, 1:]),
        ):
            equal = grid[a] == grid[b]
            np.add(count[a], equal, out=count[a])
            np.add(count[b], equal, out=count[b])
        return count.reshape(-1)

    def brightness(self) -> _F64:
        """The reference's ``rgb2y`` of every pixel (alpha blended against white),
        in a (rows + 2, width + 2) buffer framed with NaN, flattened."""
        framed = np.full((self.rows + 2, self.width + 2), np.nan)
        inner = framed[1:-1, 1:-1]
        pixels = self.flat.reshape(self.rows, self.width, 4)
        channels: list[npt.NDArray[np.generic]]
        if bool((self.flat[:, 3] == 255).all()):
            channels = [pixels[..., k] for k in range(3)]
        else:
            # The reference blends only below alpha 255, where the formula gives
            # the channel back exactly (a / 255 == 1.0): it applies to every pixel.
            alpha = pixels[..., 3] / 255.0
            channels = [255.0 + (pixels[..., k] - 255.0) * alpha for k in range(3)]
        # (r * wr + g * wg) + b * wb, each product in float64, as the reference adds.
        np.multiply(channels[0], _Y_WEIGHTS[0], out=inner)
        term = np.multiply(channels[1], _Y_WEIGHTS[1])
        np.add(inner, term, out=inner)
        np.multiply(channels[2], _Y_WEIGHTS[2], out=term)
        np.add(inner, term, out=inner)
        return framed.reshape(-1)


def antialiased(
    flat1: _U8, px1: _U32, flat2: _U8, px2: _U32, idx: _INT, width: int, height: int
) -> _BOOL:
    """Whether each pixel of ``idx`` (flat indices, sorted) is anti-aliasing, as the
    reference decides it: ``antialiased(img1, ...) or antialiased(img2, ...)``."""
    result = np.zeros(idx.size, dtype=np.bool_)
    if not idx.size:
        return result
    # Candidates go by bands of about BAND_PIXELS: a band's arrays stay small (in
    # cache, and a few MB even on the largest drawing) whatever the image's size.
    band = (idx // width) // max(1, BAND_PIXELS // width)
    bounds = [0, *(np.flatnonzero(band[1:] != band[:-1]) + 1).tolist(), idx.size]
    for start, stop in pairwise(bounds):
        result[start:stop] = _band(flat1, px1, flat2, px2, idx[start:stop], width, height)
    return result


def _band(
    flat1: _U8, px1: _U32, flat2: _U8, px2: _U32, idx: _INT, width: int, height: int
) -> _BOOL:
    """:func:`antialiased` for candidates on nearby rows, on the rows they need."""
    # Candidates' rows, their neighbours' rows, and those neighbours' neighbours.
    first, last = int(idx[0]) // width, int(idx[-1]) // width
    top, bottom = max(first - 2, 0), min(last + 3, height)
    span = np.s_[top * width : bottom * width]
    one = _Image(flat1[span], px1[span], bottom - top, width, top == 0, bottom == height)
    two = _Image(flat2[span], px2[span], bottom - top, width, top == 0, bottom == height)
    local = idx - top * width
    ys, xs = idx // width, idx % width
    bonus = ((xs == 0) | (xs == width - 1) | (ys == 0) | (ys == height - 1)).astype(np.uint8)
    counts1, counts2 = one.siblings(), two.siblings()
    near = _near_settled(counts1, counts2, bottom - top, width)
    result = _detect(one, counts1, counts2, near, local, bonus)
    rest = np.flatnonzero(~result)  # the reference tests the other image only for these
    result[rest] = _detect(two, counts2, counts1, near, local[rest], bonus[rest])
    return result


def _near_settled(counts1: _U8, counts2: _U8, rows: int, width: int) -> _BOOL:
    """Pixels within one step of a pixel with 3+ equal siblings in both images.

    Only such a neighbour can make a pixel anti-aliased, whichever image is tested;
    the 3x3 box includes the pixel itself, which only widens this filter.
    """
    settled = ((counts1 > 2) & (counts2 > 2)).reshape(rows, width)
    across = settled.copy()
    across[:, 1:] |= settled[:, :-1]
    across[:, :-1] |= settled[:, 1:]
    box = across.copy()
    box[1:] |= across[:-1]
    box[:-1] |= across[1:]
    return box.reshape(-1)


def _detect(
    image: _Image, counts: _U8, other_counts: _U8, near: _BOOL, local: _INT, bonus: _U8
) -> _BOOL:
    """The reference's ``antialiased(image, ..., other)`` for band-local pixels."""
    result = np.zeros(local.size, dtype=np.bool_)
    # Raw-equal neighbours have brightness delta 0, so 3+ of them settle "not
    # anti-aliased" with integer work alone; most candidates of a shift stop here.
    rows = np.flatnonzero((counts[local] <= 2) & near[local])
    if not rows.size:
        return result
    centre = local[rows]
    framed_width = image.width + 2
    framed = centre + (centre // image.width) * 2 + framed_width + 1
    luma = image.brightness()
    # Deltas to the 8 neighbours, in visiting order along each row; NaN for a
    # neighbour outside the image fails every comparison below.
    delta = luma[framed][:, None] - luma[framed[:, None] + (_DY * framed_width + _DX)]
    zeroes = bonus[rows] + np.count_nonzero(delta == 0, axis=1)
    # First darkest / brightest neighbour in visiting order: the reference's strict
    # comparisons keep the first one they meet, as argmin / argmax do. fmin and fmax
    # take 0 for NaN, so a missing neighbour is never picked.
    darker, brighter = np.fmin(delta, 0.0).reshape(-1), np.fmax(delta, 0.0).reshape(-1)
    k_min, k_max = darker.reshape(-1, 8).argmin(axis=1), brighter.reshape(-1, 8).argmax(axis=1)
    row_start = np.arange(0, rows.size * 8, 8)
    keep = (zeroes <= 2) & (darker[row_start + k_min] < 0) & (brighter[row_start + k_max] > 0)
    centre, k_min, k_max = centre[keep], k_min[keep], k_max[keep]
    # Anti-aliased if the darkest or the brightest neighbour has 3+ equal siblings
    # in both images.
    steps = _DY * image.width + _DX
    darkest, brightest = centre + steps[k_min], centre + steps[k_max]
    many_dark = (counts[darkest] > 2) & (other_counts[darkest] > 2)
    many_bright = (counts[brightest] > 2) & (other_counts[brightest] > 2)
    result[rows[keep]] = many_dark | many_bright
    return result
