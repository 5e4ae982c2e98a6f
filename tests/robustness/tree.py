"""The whole project tree as hashes, to prove a run touched nothing it should not."""

from __future__ import annotations

import hashlib
from pathlib import Path

__all__ = ["before_short_summary", "changes_outside", "tree_hashes"]


def tree_hashes(root: Path) -> dict[str, str]:
    """``relative path -> sha256`` of every file below ``root`` (links by their
    target text, folders as ``dir``)."""
    out: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            out[rel] = "link:" + str(path.readlink())
        elif path.is_dir():
            out[rel] = "dir"
        else:
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def changes_outside(
    before: dict[str, str], after: dict[str, str], allowed: tuple[str, ...]
) -> list[str]:
    """Paths created, changed or deleted that are not inside one of ``allowed``
    (top-level folder names, e.g. ``__snapshots__`` and the results folder)."""
    changed = {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}
    return sorted(p for p in changed if p.split("/", 1)[0] not in allowed)


def before_short_summary(lines: list[str]) -> list[str]:
    """The output lines before pytest's short test summary, which repeats each failure's
    message (in full, every line of it, when ``$CI`` is set)."""
    for i, line in enumerate(lines):
        if "short test summary info" in line:
            return lines[:i]
    return lines
