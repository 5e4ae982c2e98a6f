"""Text colour for a node's fill: WCAG 2 contrast of at least 4.5:1 (docs/decisions.md, "Channels").

A node keeps the page's text colour when it reads on its fill; otherwise its text is
black or white, whichever contrasts more. Between them they reach at least 4.58:1 on
any sRGB fill (the worst fill is the grey whose contrast against both is equal).
"""

from __future__ import annotations

import functools
import re
from typing import Final

from pytest_tlgraph.errors import UsageError

__all__ = ["MIN_CONTRAST", "contrast_ratio", "relative_luminance", "text_colour"]

#: WCAG 2 level AA for normal text.
MIN_CONTRAST: Final = 4.5
_HEX: Final = re.compile(r"#[0-9A-Fa-f]{6}")
_BLACK: Final = "#000000"
_WHITE: Final = "#FFFFFF"


def _channel(value: int) -> float:
    c = value / 255
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


@functools.cache
def relative_luminance(colour: str) -> float:
    """WCAG 2 relative luminance of ``"#RRGGBB"`` (0 black .. 1 white)."""
    if not _HEX.fullmatch(colour):
        raise UsageError(f"not an sRGB hex colour: {colour!r}; pass '#RRGGBB'")
    r, g, b = (_channel(int(colour[i : i + 2], 16)) for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(first: str, second: str) -> float:
    """WCAG 2 contrast ratio of two ``"#RRGGBB"`` colours (1 .. 21)."""
    a, b = relative_luminance(first), relative_luminance(second)
    high, low = (a, b) if a >= b else (b, a)
    return (high + 0.05) / (low + 0.05)


@functools.cache
def text_colour(fill: str, default: str) -> str | None:
    """The text colour a node filled ``fill`` needs, or ``None`` when ``default`` (the
    page's text colour) already reaches :data:`MIN_CONTRAST` on it. A fill that is not
    a ``#RRGGBB`` colour (a named colour a ``node_spec_fn`` set) is left alone."""
    if not _HEX.fullmatch(fill) or contrast_ratio(default, fill) >= MIN_CONTRAST:
        return None
    black, white = contrast_ratio(_BLACK, fill), contrast_ratio(_WHITE, fill)
    return _BLACK if black >= white else _WHITE
