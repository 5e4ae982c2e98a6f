"""The size limits of a rendered picture, stated once: the dpi a PNG is rendered at and
the largest image the plugin renders or decodes.

Every check reads these names: the draw options and the CLI (``check_dpi``), the
canvas estimate of the size guard (``draw/canvas.py``) and the pixel comparison
(``snapshots/pixels/pixeldiff.py``).
"""

from __future__ import annotations

from typing import Final

from pytest_tlgraph.errors import UsageError

__all__ = ["MAX_DPI", "MAX_IMAGE_PIXELS", "MAX_MEGAPIXELS", "MAX_SIDE", "check_dpi"]

#: Highest dpi a PNG is rendered at (1 to 600, 6.25x the 96 dpi of snapshots): the
#: renderer allocates the whole canvas, and a higher dpi asks for gigabytes.
MAX_DPI: Final = 600
#: Above this many megapixels a PNG is neither rendered nor decoded. Pillow's own
#: decompression-bomb guard warns from about 89 megapixels, which a big graph drawn at
#: 96 dpi can reach; snapshots are our own renders, so they are held to this cap
#: instead (about 1.6 GB for a decoded pair) and Pillow's global limit is left alone.
MAX_MEGAPIXELS: Final = 200
#: The same cap in pixels.
MAX_IMAGE_PIXELS: Final = MAX_MEGAPIXELS * 1_000_000
#: The longest side, in pixels, a PNG may have (cairo's and libpng's own limit).
MAX_SIDE: Final = 32_767


def check_dpi(dpi: object) -> int:
    """``dpi`` as given when it is a whole number from 1 to :data:`MAX_DPI`; else
    :class:`UsageError` (a ``ValueError``) naming the value and a remedy."""
    if isinstance(dpi, bool) or not isinstance(dpi, int) or not 1 <= dpi <= MAX_DPI:
        raise UsageError(
            f"dpi must be a whole number from 1 to {MAX_DPI}, got {dpi!r}; e.g. dpi=96 or 192"
        )
    return dpi
