"""How a path is printed, stated once: relative to a folder, as a user can paste it."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["display_path"]


def display_path(path: str | os.PathLike[str], base: Path | None = None) -> str:
    """``path`` relative to ``base`` (default: the current folder), ``../`` when it
    lies outside, in ``/`` form; as given when no relative path exists (another drive).
    No part is resolved here: a caller that wants links followed resolves first, and a
    link left unresolved is named as the link. A control or format character in it is
    shown as its escape (``escaping.reviewer``): a printed path is one line."""
    from pytest_tlgraph.escaping import reviewer

    where = Path.cwd() if base is None else base
    try:
        shown = Path(os.path.relpath(os.path.abspath(path), os.path.abspath(where))).as_posix()
    except ValueError:  # another drive
        shown = str(path)
    return reviewer(shown)
