"""Node ids as pytest prints them, and back.

pytest names a test relative to its rootdir (``tests/test_m.py::test_a``) but a user
runs from anywhere: from ``tests/`` the same file is ``test_m.py``, and a file outside
the folder pytest ran in is ``../test_m.py``. :func:`as_printed` writes an id so that it
works from where pytest ran; :func:`to_rootdir` reads one given relative to the rootdir,
to the current folder, or absolute.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["as_printed", "to_rootdir"]


def as_printed(nodeid: str, rootdir: Path | None, here: Path) -> str:
    """``nodeid`` (relative to ``rootdir``) with its path relative to ``here``, the
    folder pytest ran in; unchanged when both are the same folder or unknown."""
    path, sep, rest = nodeid.partition("::")
    if rootdir is None or not path:
        return nodeid
    try:
        relative = os.path.relpath(os.path.abspath(rootdir / path), os.path.abspath(here))
    except ValueError:  # another drive: the absolute path works from anywhere
        relative = str(rootdir / path)
    return Path(relative).as_posix() + sep + rest


def to_rootdir(given: str, rootdir: Path, here: Path) -> str | None:
    """``given`` (an id, file or folder with its path relative to ``here`` or absolute)
    with its path relative to ``rootdir``, as pytest's node ids are; ``""`` for the
    rootdir itself; ``None`` when the path does not exist or lies outside ``rootdir``."""
    path, sep, rest = given.partition("::")
    where = Path(path or ".")
    where = where if where.is_absolute() else here / where
    if not where.exists():
        return None
    try:
        relative = Path(os.path.relpath(where.resolve(), rootdir.resolve())).as_posix()
    except ValueError:  # another drive
        return None
    if relative == ".." or relative.startswith("../"):
        return None
    return (relative if relative != "." else "") + sep + rest
