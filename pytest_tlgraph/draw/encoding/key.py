"""The drawn key: one node, compact lines only (docs/decisions.md, "One house (0.4)")."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from pytest_tlgraph.draw.dot import html_escape
from pytest_tlgraph.draw.encoding.ramps import Ramp

__all__ = ["KEY_ID", "NA_TEXT", "BarLine", "KeyLine", "TextLine", "key_label"]

KEY_ID: Final = "tlgraph_key"
_BAR_CELLS: Final = 9


NA_TEXT: Final = "n/a"


def _na(fill: str | None) -> str:
    return "" if fill is None else f" [{NA_TEXT}]"


@dataclass(frozen=True, slots=True)
class TextLine:
    """A plain key line such as ``size: output bytes, 15 KB ... 60 KB``."""

    text: str

    @property
    def plain(self) -> str:
        """The line as plain text."""
        return self.text


@dataclass(frozen=True, slots=True)
class BarLine:
    """``time: 0.098 ms [bar] 1.46 ms``: a colour bar with its end labels.

    ``na_fill``: some drawn node is unencoded, and the line ends in one small swatch
    of that fill labelled ``n/a``.
    """

    quantity: str
    low: str
    high: str
    ramp: Ramp
    na_fill: str | None = None

    @property
    def plain(self) -> str:
        """The line as plain text, the bar written ``[bar]`` (the swatch ``[n/a]``)."""
        return f"{self.quantity}: {self.low} [bar] {self.high}" + _na(self.na_fill)


KeyLine = TextLine | BarLine


def _span(columns: int) -> str:
    return f' COLSPAN="{columns}"' if columns > 1 else ""


def _cells(ramp: Ramp) -> str:
    steps = [i / (_BAR_CELLS - 1) for i in range(_BAR_CELLS)]
    return "".join(
        f'<TD BGCOLOR="{ramp.sample(f)}" WIDTH="8" HEIGHT="10" FIXEDSIZE="TRUE"></TD>'
        for f in steps
    )


def _swatch(fill: str | None) -> str:
    """The ``n/a`` swatch cells: a small outlined cell of the unencoded fill, labelled."""
    if fill is None:
        return ""
    return (
        f'<TD WIDTH="6"></TD><TD BGCOLOR="{fill}" BORDER="1" WIDTH="8" HEIGHT="10" '
        f'FIXEDSIZE="TRUE"></TD><TD ALIGN="LEFT">{NA_TEXT}</TD>'
    )


def key_label(lines: Sequence[KeyLine]) -> str:
    """The key node's HTML-like label: a borderless table, one row per line."""
    width = _BAR_CELLS + 2
    if any(isinstance(line, BarLine) and line.na_fill is not None for line in lines):
        width += 3
    rows = []
    for line in lines:
        if isinstance(line, BarLine):
            span = width - _BAR_CELLS - 1 - (3 if line.na_fill is not None else 0)
            rows.append(
                f'<TR><TD ALIGN="RIGHT">{html_escape(line.quantity)}: {html_escape(line.low)}</TD>'
                f"{_cells(line.ramp)}"
                f'<TD ALIGN="LEFT"{_span(span)}>{html_escape(line.high)}</TD>'
                f"{_swatch(line.na_fill)}</TR>"
            )
        else:
            rows.append(f"<TR><TD{_span(width)}>{html_escape(line.text)}</TD></TR>")
    return (
        '<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="2">'
        + "".join(rows)
        + "</TABLE>>"
    )
