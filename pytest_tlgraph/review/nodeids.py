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

__all__ = ["as_printed", "call_heading", "call_key", "to_rootdir"]


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


def call_key(call: object, name: str) -> str:
    """What ``tlgraph accept --call`` takes for one call: its ``name=``, else the
    snapshot's name (``test_x``, ``test_x.1``)."""
    return call if isinstance(call, str) and call else name


def call_heading(nodeid: str, call: object, name: str, *, numbered: bool = False) -> str:
    """The call as a heading names it, so two calls of one test are told apart:
    ``test_m.py::test_rescnn, call "depth1"`` for a named call, ``..., call 2`` for
    the second unnamed one (the first is numbered only when ``numbered``: its test has
    other calls on the page). A record before 0.4 (no ``call``) is read from the
    snapshot's name (``test_x[depth1]``, ``test_x.1``)."""
    if not isinstance(call, (int, str)) or isinstance(call, bool):
        test = nodeid.rpartition("::")[2]
        rest = name[len(test) :] if name.startswith(test) else ""
        if rest.startswith("[") and rest.endswith("]"):
            call = rest[1:-1]
        elif rest.startswith(".") and rest[1:].isdigit():
            call = int(rest[1:])
        else:
            call = 0
    if isinstance(call, str):
        return f'{nodeid}, call "{call}"'
    if call or numbered:
        return f"{nodeid}, call {call + 1}"
    return nodeid
