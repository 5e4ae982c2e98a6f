"""The size limits, stated once: the dpi a PNG is rendered at, the largest image the
plugin renders or decodes, the largest file it reads, and the widest line it prints.

Every check reads these names: the draw options and the CLI (``check_dpi``), the
canvas estimate of the size guard (``draw/canvas.py``), the pixel comparison
(``pixels/pixeldiff.py``), every reader of a stored or recorded file
(``disk/bounded.py``) and the failure report's lines
(``review/report.py``).
"""

from __future__ import annotations

from typing import Final

from pytest_tlgraph.errors import UsageError

__all__ = [
    "MAX_DPI",
    "MAX_FILE_BYTES",
    "MAX_IMAGE_PIXELS",
    "MAX_MEGAPIXELS",
    "MAX_REPORT_LINE",
    "MAX_SIDE",
    "check_dpi",
]

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
#: The largest file the plugin reads: a stored ``.gv`` or ``.png``, a record, a
#: manifest, an image ``tlgraph report`` inlines, a file given to ``tlgraph diff``.
#: Larger files are refused in one line (a stored snapshot is a few MB at most).
MAX_FILE_BYTES: Final = 256 * 1024 * 1024
#: The widest story line or DOT diff line a failure shows (its record, report.html,
#: the summaries, the terminal before it wraps): a longer one is cut, saying how many
#: characters were left out and where the full text is kept in the results folder.
MAX_REPORT_LINE: Final = 500


def check_dpi(dpi: object) -> int:
    """``dpi`` as given when it is a whole number from 1 to :data:`MAX_DPI`; else
    :class:`UsageError` (a ``ValueError``) naming the value and a remedy."""
    if isinstance(dpi, bool) or not isinstance(dpi, int) or not 1 <= dpi <= MAX_DPI:
        raise UsageError(
            f"dpi must be a whole number from 1 to {MAX_DPI}, got {dpi!r}; e.g. dpi=96 or 192"
        )
    return dpi
