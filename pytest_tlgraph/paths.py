"""How a path is printed, stated once: relative to a folder, as a user can paste it."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["display_path"]


def display_path(path: str | os.PathLike[str], base: Path | None = None) -> str:
    """``path`` relative to ``base`` (default: the current folder), ``../`` when it
    lies outside, in ``/`` form; as given when no relative path exists (another drive).
    No part is resolved here: a caller that wants links followed resolves first, and a
    link left unresolved is named as the link."""
    where = Path.cwd() if base is None else base
    try:
        return Path(os.path.relpath(os.path.abspath(path), os.path.abspath(where))).as_posix()
    except ValueError:  # another drive
        return str(path)
