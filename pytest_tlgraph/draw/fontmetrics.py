"""Deterministic node-label box estimates, with no renderer round trip
(docs/decisions.md, "One house (0.4)").

Label-aware ``size_by`` needs every label's box before anything is rendered. The
nodes it sizes are ``shape=box`` with ``fontname="Helvetica"`` and an HTML-like
label whose rows are joined by ``<BR/>``, the first row usually bold. This module
reproduces how graphviz-pure (a port of Graphviz 16.1) sizes such a node:

* Text width is the sum of per-character advance widths. graphviz-pure lays
  Helvetica out with Arimo, which is metric-compatible with Arial and Helvetica,
  so the table below holds the Arial advance widths in font units (2048 per em)
  for printable ASCII, regular and bold. There is no kerning.
* A non-ASCII character is the documented fallback: the renderer's layout
  estimator charges 569 units (the width of a space) per UTF-8 byte, whatever
  the glyph: the multiplication sign and ``µ`` count 1138 units, ``→``, ``…``
  and CJK 1707, an emoji 2276.
  Control characters (below U+0020, and U+007F) are dropped and count zero.
* Row height follows Graphviz's HTML text sizing: a single row is
  ``1.2 * fontsize`` tall; several rows are ``1.2 * fontsize`` each when the
  label has no font change, but only ``fontsize`` each once any row is bold.
  A trailing empty row (a final ``<BR/>``) adds no line.
* The node adds ``margin`` on every side, unrounded (Graphviz 16 no longer
  rounds margins to whole points).

Graphviz's minimum node size (``width=0.75``, ``height=0.5`` by default) is NOT
applied: callers want the label's own box, and the size channel emits its
result as a minimum anyway, so the renderer applies the floor itself.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

__all__ = [
    "DEFAULT_MARGIN",
    "LINE_SPACING",
    "estimate_label_box",
    "text_width_points",
]

POINTS_PER_INCH = 72.0
UNITS_PER_EM = 2048
LINE_SPACING = 1.2
"""Graphviz's LINESPACING: a line of plain text is this many font sizes tall."""
DEFAULT_MARGIN = (0.11, 0.055)
"""Graphviz's default node margin in inches, (horizontal, vertical)."""

# Advance widths for U+0020..U+007E in units of 1/2048 em (Arial / Arimo).
_REGULAR = (
    569, 569, 727, 1139, 1139, 1821, 1366, 391, 682, 682, 797, 1196, 569, 682, 569, 569,
    1139, 1139, 1139, 1139, 1139, 1139, 1139, 1139, 1139, 1139, 569, 569, 1196, 1196, 1196, 1139,
    2079, 1366, 1366, 1479, 1479, 1366, 1251, 1593, 1479, 569, 1024, 1366, 1139, 1706, 1479, 1593,
    1366, 1593, 1479, 1366, 1251, 1479, 1366, 1933, 1366, 1366, 1251, 569, 569, 569, 961, 1139,
    682, 1139, 1139, 1024, 1139, 1139, 569, 1139, 1139, 455, 455, 1024, 455, 1706, 1139, 1139,
    1139, 1139, 682, 1024, 569, 1139, 1024, 1479, 1024, 1024, 1024, 684, 532, 684, 1196,
)  # fmt: skip
_BOLD = (
    569, 682, 971, 1139, 1139, 1821, 1479, 487, 682, 682, 797, 1196, 569, 682, 569, 569,
    1139, 1139, 1139, 1139, 1139, 1139, 1139, 1139, 1139, 1139, 682, 682, 1196, 1196, 1196, 1251,
    1997, 1479, 1479, 1479, 1479, 1366, 1251, 1593, 1479, 569, 1139, 1479, 1251, 1706, 1479, 1593,
    1366, 1593, 1479, 1366, 1251, 1479, 1366, 1933, 1366, 1366, 1251, 682, 569, 682, 1196, 1139,
    682, 1139, 1251, 1139, 1251, 1139, 682, 1251, 1251, 569, 569, 1139, 569, 1821, 1251, 1251,
    1251, 1251, 797, 1139, 682, 1251, 1139, 1593, 1139, 1139, 1024, 797, 573, 797, 1196,
)  # fmt: skip

_FALLBACK_PER_UTF8_BYTE = 569
"""Units charged per UTF-8 byte of a character outside printable ASCII."""


def _char_units(char: str, table: tuple[int, ...]) -> int:
    code = ord(char)
    if 0x20 <= code <= 0x7E:
        return table[code - 0x20]
    if code < 0x20 or code == 0x7F:
        return 0
    return _FALLBACK_PER_UTF8_BYTE * len(char.encode("utf-8"))


def text_width_points(text: str, *, fontsize: float, bold: bool = False) -> float:
    """Width in points of one line of plain (already unescaped) ``text``.

    Helvetica/Arial metrics as graphviz-pure lays them out; see the module
    docstring for non-ASCII and control characters.
    """
    table = _BOLD if bold else _REGULAR
    units = sum(_char_units(char, table) for char in text)
    return units * fontsize / UNITS_PER_EM


def _display_text(row: str) -> str:
    # Rows are label source: Graphviz decodes entities, and its escape pass turns
    # a doubled backslash into one before measuring.
    return html.unescape(row).replace("\\\\", "\\")


def estimate_label_box(
    rows: Sequence[str],
    *,
    fontsize: float = 10.0,
    bold_first: bool = True,
    margin: tuple[float, float] = DEFAULT_MARGIN,
) -> tuple[float, float]:
    """``(width_in, height_in)`` of a box node whose HTML label has these rows.

    ``rows`` are the label's rows as written into the DOT source between
    ``<BR/>`` separators: HTML-escaped text (``&lt;`` counts as one ``<``) with
    no markup; ``bold_first`` says the first row is wrapped in ``<B>``. The
    result is the text block plus ``margin`` (inches, per side) as graphviz-pure
    computes it, without Graphviz's minimum node size.
    """
    if not rows:
        raise ValueError("a label needs at least one row")
    lines = list(rows)
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    text_width = max(
        text_width_points(_display_text(row), fontsize=fontsize, bold=bold_first and i == 0)
        for i, row in enumerate(lines)
    )
    if len(lines) == 1 or not bold_first:
        text_height = len(lines) * fontsize * LINE_SPACING
    else:
        # A font change makes Graphviz stack rows at the bare font size.
        text_height = len(lines) * fontsize
    margin_x, margin_y = margin
    return (
        text_width / POINTS_PER_INCH + 2 * margin_x,
        text_height / POINTS_PER_INCH + 2 * margin_y,
    )
