"""What the ``tlgraph`` command prints: every line through the terminal's one escaping
function (``escaping.terminal``), so a module name, a test id or a stored file cannot
reach the terminal as an escape sequence (a new title, a cleared screen, a fake line)."""

from __future__ import annotations

import sys
from typing import TextIO

from pytest_tlgraph.escaping import terminal

__all__ = ["say"]


def say(text: str, file: TextIO | None = None) -> None:
    """Print ``text``, each of its lines with every control character made visible."""
    out = sys.stdout if file is None else file
    for line in text.split("\n"):
        out.write(terminal(line) + "\n")
