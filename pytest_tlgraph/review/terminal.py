"""The failure message as a terminal shows it: short, with everything in full elsewhere.

A :class:`~pytest_tlgraph.review.report.Report` holds every line (``report.html``
shows them all, the results folder keeps the full DOT diff). In a terminal or a CI log
(docs/decisions.md, "Failures a reviewer can act on (0.2)"): no line is longer than
:data:`MAX_LINE_CHARS` characters (DOT diff lines are cut, saying how much, a changed
pair around its first difference; prose wraps, so a remedy is never lost), the DOT
diff stops at :data:`MAX_DIFF_LINES` lines, and the encoding state is shown only where
it changed against the snapshot, and the list of every change node by node is left to
``report.html``.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Final

from pytest_tlgraph.review.dotdiff import cut_diff_lines
from pytest_tlgraph.review.dotdiff import cut_line as _cut_line
from pytest_tlgraph.review.report import (
    DOT_DIFF,
    ENCODING_STATE,
    EVERY_CHANGE,
    EncodingShown,
    LeftOut,
    Report,
)

__all__ = [
    "MAX_LINE_CHARS",
    "TERMINAL_DIFF_LINES",
    "cut_line",
    "terminal_report",
]

MAX_LINE_CHARS: Final = 160
#: DOT diff lines the terminal shows of the report's (``report.MAX_DIFF_LINES``): a
#: screenful beside the story and the PNG verdict; the rest is counted and named
#: (``.dot.diff``, report.html).
TERMINAL_DIFF_LINES: Final = 40
#: Where the diff lines the terminal leaves out are, when no file keeps the whole diff.
_ELSEWHERE: Final = "all of it in report.html"
_INDENT: Final = 2  # Report.text indents section lines by two spaces


def cut_line(line: str, limit: int = MAX_LINE_CHARS) -> str:
    """``line`` when it fits in ``limit`` characters, else its start and how much was cut."""
    return _cut_line(line, limit)


def _diff(lines: Sequence[str], left_out: LeftOut | None) -> tuple[list[str], LeftOut | None]:
    """At most :data:`TERMINAL_DIFF_LINES` lines of the DOT diff, then how many were left
    out (the report's own count, ``left_out``, on its last line, plus the terminal's),
    and that count as a value."""
    body, left, where = list(lines), 0, None
    if body and left_out is not None:
        body, left, where = body[:-1], left_out.count, left_out.where
    if len(body) <= TERMINAL_DIFF_LINES and not left:
        return body, None
    rest = LeftOut(left + max(len(body) - TERMINAL_DIFF_LINES, 0), where)
    return [*body[:TERMINAL_DIFF_LINES], rest.line(_ELSEWHERE)], rest


def wrap_line(line: str, limit: int = MAX_LINE_CHARS) -> list[str]:
    """``line`` wrapped at word boundaries to ``limit`` characters, continuation lines
    indented two spaces past the line's own indent."""
    if len(line) <= limit:
        return [line]
    indent = " " * (len(line) - len(line.lstrip(" ")))
    return textwrap.wrap(
        line, width=limit, initial_indent="", subsequent_indent=indent + "  ",
        break_on_hyphens=False, drop_whitespace=True,
    )  # fmt: skip


def _state(lines: Sequence[str], shown: EncodingShown | None) -> list[str]:
    """Only what changed against the snapshot; one line when nothing did (``shown``:
    the section's layout; ``None``, a report without one: every line)."""
    if not lines or shown is None or not shown.active:
        return list(lines)
    if shown.changed_from is not None:
        return list(lines[shown.changed_from :])
    return ["unchanged against the snapshot's key and caption (full state in report.html)"]


def terminal_report(report: Report) -> Report:
    """``report`` cut for a terminal (see the module docstring)."""
    sections = []
    left_out = None
    for heading, lines in report.sections:
        if heading == EVERY_CHANGE:
            continue  # report.html lists them; the terminal keeps the grouped story
        if heading == DOT_DIFF:
            shown, left_out = _diff(lines, report.left_out)
        elif heading == ENCODING_STATE:
            shown = _state(lines, report.encoding)
        else:
            shown = list(lines)
        limit = MAX_LINE_CHARS - _INDENT
        if heading == DOT_DIFF:
            fitted = tuple(cut_diff_lines(shown, limit))
        else:
            fitted = tuple(part for line in shown for part in wrap_line(line, limit))
        sections.append((heading, fitted))
    title = "\n".join(wrap_line(report.title))
    return Report(title, tuple(sections), left_out=left_out)
