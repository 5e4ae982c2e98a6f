"""The failure message as a terminal shows it: short, with everything in full elsewhere.

A :class:`~pytest_tlgraph.snapshots.review.report.Report` holds every line (``report.html``
shows them all, the results folder keeps the full DOT diff). In a terminal or a CI log
(docs/decisions.md, "Failures a reviewer can act on (0.2)"): no line is longer than
:data:`MAX_LINE_CHARS` characters (DOT diff lines are cut, saying how much, a changed
pair around its first difference; prose wraps, so a remedy is never lost), the DOT
diff stops at :data:`MAX_DIFF_LINES` lines, and the encoding state is shown only where
it changed against the snapshot, and the list of every change node by node is left to
``report.html``.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from typing import Final

from pytest_tlgraph.snapshots.review.dotdiff import cut_diff_lines
from pytest_tlgraph.snapshots.review.dotdiff import cut_line as _cut_line
from pytest_tlgraph.snapshots.review.report import EVERY_CHANGE, Report

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
_CHANGED: Final = "changed against the snapshot"
_LEFT_OUT: Final = re.compile(r"\.\.\. (\d+) more diff lines left out(?: \(full diff: (.*)\))?")
_INDENT: Final = 2  # Report.text indents section lines by two spaces


def cut_line(line: str, limit: int = MAX_LINE_CHARS) -> str:
    """``line`` when it fits in ``limit`` characters, else its start and how much was cut."""
    return _cut_line(line, limit)


def _diff(lines: Sequence[str]) -> list[str]:
    """At most :data:`TERMINAL_DIFF_LINES` lines of the DOT diff, then how many were left
    out."""
    body, left, where = list(lines), 0, None
    if body and (found := _LEFT_OUT.fullmatch(body[-1])):
        body, left, where = body[:-1], int(found[1]), found[2]
    if len(body) <= TERMINAL_DIFF_LINES and not left:
        return body
    left += max(len(body) - TERMINAL_DIFF_LINES, 0)
    place = f"full diff: {where}" if where else "all of it in report.html"
    return [*body[:TERMINAL_DIFF_LINES], f"... {left} more diff lines left out ({place})"]


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


def _state(lines: Sequence[str]) -> list[str]:
    """Only what changed against the snapshot; one line when nothing did."""
    if not lines or lines[0] == "no channel active":
        return list(lines)
    for i, line in enumerate(lines):
        if line.startswith(_CHANGED):
            return list(lines[i:])
    return ["unchanged against the snapshot's key and caption (full state in report.html)"]


def terminal_report(report: Report) -> Report:
    """``report`` cut for a terminal (see the module docstring)."""
    sections = []
    for heading, lines in report.sections:
        if heading == EVERY_CHANGE:
            continue  # report.html lists them; the terminal keeps the grouped story
        if heading.startswith("DOT diff"):
            shown = _diff(lines)
        elif heading.startswith("encoding state"):
            shown = _state(lines)
        else:
            shown = list(lines)
        limit = MAX_LINE_CHARS - _INDENT
        if heading.startswith("DOT diff"):
            fitted = tuple(cut_diff_lines(shown, limit))
        else:
            fitted = tuple(part for line in shown for part in wrap_line(line, limit))
        sections.append((heading, fitted))
    title = "\n".join(wrap_line(report.title))
    return Report(title, tuple(sections))
