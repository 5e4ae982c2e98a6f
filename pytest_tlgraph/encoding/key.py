"""The drawn key: one node, compact lines only (ENCODING.md §3.5)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from pytest_tlgraph.draw.dot import html_escape
from pytest_tlgraph.encoding.ramps import Ramp

__all__ = ["KEY_ID", "BarLine", "KeyLine", "TextLine", "key_label"]

KEY_ID: Final = "tlgraph_key"
_BAR_CELLS: Final = 9


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
    """``time: 0.098 ms [bar] 1.46 ms``: a colour bar with its end labels."""

    quantity: str
    low: str
    high: str
    ramp: Ramp

    @property
    def plain(self) -> str:
        """The line as plain text, the bar written ``[bar]``."""
        return f"{self.quantity}: {self.low} [bar] {self.high}"


KeyLine = TextLine | BarLine


def _cells(ramp: Ramp) -> str:
    steps = [i / (_BAR_CELLS - 1) for i in range(_BAR_CELLS)]
    return "".join(
        f'<TD BGCOLOR="{ramp.sample(f)}" WIDTH="8" HEIGHT="10" FIXEDSIZE="TRUE"></TD>'
        for f in steps
    )


def key_label(lines: Sequence[KeyLine]) -> str:
    """The key node's HTML-like label: a borderless table, one row per line."""
    width = _BAR_CELLS + 2
    rows = []
    for line in lines:
        if isinstance(line, BarLine):
            rows.append(
                f'<TR><TD ALIGN="RIGHT">{html_escape(line.quantity)}: {html_escape(line.low)}</TD>'
                f"{_cells(line.ramp)}"
                f'<TD ALIGN="LEFT">{html_escape(line.high)}</TD></TR>'
            )
        else:
            rows.append(f'<TR><TD COLSPAN="{width}">{html_escape(line.text)}</TD></TR>')
    return (
        '<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="2">'
        + "".join(rows)
        + "</TABLE>>"
    )
