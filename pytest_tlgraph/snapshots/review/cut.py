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

from pytest_tlgraph.limits import MAX_REPORT_LINE
from pytest_tlgraph.snapshots.review.dotdiff import cut_diff_lines, cut_line

__all__ = ["cut_lines", "cut_text", "is_long", "place_note"]


def is_long(lines: Sequence[str]) -> bool:
    """Any of ``lines`` is over :data:`~pytest_tlgraph.limits.MAX_REPORT_LINE`."""
    return any(len(line) > MAX_REPORT_LINE for line in lines)


def cut_text(line: str) -> str:
    """``line`` cut at :data:`~pytest_tlgraph.limits.MAX_REPORT_LINE` characters."""
    return cut_line(line, MAX_REPORT_LINE)


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
