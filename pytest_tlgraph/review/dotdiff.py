"""The unified DOT diff shared by the syrupy extension and the failure report, and the
cut of its long lines for a terminal."""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Sequence
from typing import Final

__all__ = ["CONTEXT_CHARS", "cut_diff_lines", "cut_line", "unified_dot_diff"]

#: Characters kept before the first difference of a cut ``-``/``+`` pair.
CONTEXT_CHARS: Final = 40
_HEAD_CUT: Final = "..."


def unified_dot_diff(snapshot: str, received: str) -> Iterator[str]:
    """``--- snapshot`` / ``+++ received`` unified diff lines (three lines of context)."""
    yield from difflib.unified_diff(
        snapshot.splitlines(), received.splitlines(), "snapshot", "received", lineterm=""
    )


def cut_line(line: str, limit: int) -> str:
    """``line`` when it fits in ``limit`` characters, else its start and how much was cut."""
    if len(line) <= limit:
        return line
    tail = ""
    for _ in range(2):  # the tail's own length decides how much it must cut
        tail = f" ... (+{len(line) - (limit - len(tail))} chars)"
    return line[: limit - len(tail)] + tail


def _first_difference(old: str, new: str) -> int:
    """The index of the first character where ``old`` and ``new`` differ."""
    for i, (a, b) in enumerate(zip(old, new, strict=False)):
        if a != b:
            return i
    return min(len(old), len(new))


def _cut_pair(old: str, new: str, limit: int) -> tuple[str, str]:
    """A ``-``/``+`` pair cut to ``limit``, both lines from the same place: their start
    when the first difference shows there, else ``CONTEXT_CHARS`` before it, the cut
    start marked ``...`` after the mark (so the two printed lines never read alike)."""
    at = _first_difference(old[1:], new[1:])
    if at + CONTEXT_CHARS <= limit // 2:
        return cut_line(old, limit), cut_line(new, limit)
    start = 1 + at - CONTEXT_CHARS
    return (
        cut_line(old[0] + _HEAD_CUT + old[start:], limit),
        cut_line(new[0] + _HEAD_CUT + new[start:], limit),
    )


def cut_diff_lines(lines: Sequence[str], limit: int) -> list[str]:
    """Each unified diff line cut to ``limit`` characters (:func:`cut_line`); the k-th
    ``-`` line of a change and the k-th ``+`` line after it are cut together around
    their first differing character, so a difference past the cut still shows."""
    out = [cut_line(line, limit) for line in lines]
    i = 0
    while i < len(lines):
        removed = i
        while removed < len(lines) and _marked(lines[removed], "-"):
            removed += 1
        added = removed
        while added < len(lines) and _marked(lines[added], "+"):
            added += 1
        for k in range(min(removed - i, added - removed)):
            old, new = lines[i + k], lines[removed + k]
            if len(old) > limit or len(new) > limit:
                out[i + k], out[removed + k] = _cut_pair(old, new, limit)
        i = max(added, i + 1)
    return out


def _marked(line: str, mark: str) -> bool:
    """A removed (``-``) or added (``+``) line, not the ``---``/``+++`` file header."""
    return line.startswith(mark) and not line.startswith(mark * 3 + " ")
