"""The cut of every long line a failure shows: its story, its list of changes, its
DOT diff, wherever it is shown (the terminal, report.html, the summaries).

A changed row can hold a list of a million characters; printed whole, one failure
floods a CI log and a step summary past GitHub's limit. Each line is cut at
:data:`~pytest_tlgraph.limits.MAX_REPORT_LINE` characters, saying how many were left
out (``dotdiff.cut_line``); a changed ``-``/``+`` pair of the DOT diff is cut around its
first difference. The full text stays in the results folder (``<stem>.dot.diff`` and
``<stem>.story.txt``), and the section that was cut names it in one line.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from pytest_tlgraph.limits import MAX_REPORT_LINE
from pytest_tlgraph.review.dotdiff import cut_diff_lines, cut_line

__all__ = ["cut_lines", "cut_text", "is_long", "place_note"]


def is_long(lines: Sequence[str]) -> bool:
    """Any of ``lines`` is over :data:`~pytest_tlgraph.limits.MAX_REPORT_LINE`."""
    return any(len(line) > MAX_REPORT_LINE for line in lines)


#: Characters shown before the first difference of a cut ``old -> new`` edit.
_BEFORE: Final = 40
#: Characters of each side shown from there.
_SIDE: Final = (MAX_REPORT_LINE - 2 * _BEFORE) // 3


def cut_text(line: str) -> str:
    """``line`` cut at :data:`~pytest_tlgraph.limits.MAX_REPORT_LINE` characters; an
    edit ``<what> old -> new`` whose values are long shows both sides from a little
    before their first difference (``...9998, 9999, 10000, ... -> ...9999, 0, ...``)."""
    if len(line) <= MAX_REPORT_LINE:
        return line
    head, sep, new = line.partition(" -> ")
    start = head.rfind(new[:20]) if sep and len(new) >= 20 else -1
    if start < 0:
        return cut_line(line, MAX_REPORT_LINE)
    old = head[start:]
    pairs = enumerate(zip(old, new, strict=False))
    at = next((i for i, (a, b) in pairs if a != b), min(len(old), len(new)))
    left = max(at - _BEFORE, 0)
    shown = [head[: min(start, _BEFORE)] + ("..." if start > _BEFORE else "")]
    shown.append(("..." if left else "") + old[left : at + _SIDE] + " ...")
    shown.append(" -> " + ("..." if left else "") + new[left : at + _SIDE] + " ...")
    return cut_line("".join(shown), MAX_REPORT_LINE)


def cut_lines(lines: Sequence[str], *, diff: bool = False) -> list[str]:
    """Every line cut (``diff``: as unified DOT diff lines, a changed pair around its
    first difference)."""
    if diff:
        return cut_diff_lines(lines, MAX_REPORT_LINE)
    return [cut_text(line) for line in lines]


def place_note(where: str | None) -> str:
    """The one line saying lines were cut and where their full text is."""
    full = f"; full text: {where}" if where else ""
    return f"lines over {MAX_REPORT_LINE} characters are cut{full}"
