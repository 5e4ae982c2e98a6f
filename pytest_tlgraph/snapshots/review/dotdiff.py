"""The unified DOT diff shared by the syrupy extension and the failure report."""

from __future__ import annotations

import difflib
from collections.abc import Iterator

__all__ = ["unified_dot_diff"]


def unified_dot_diff(snapshot: str, received: str) -> Iterator[str]:
    """``--- snapshot`` / ``+++ received`` unified diff lines (three lines of context)."""
    yield from difflib.unified_diff(
        snapshot.splitlines(), received.splitlines(), "snapshot", "received", lineterm=""
    )
