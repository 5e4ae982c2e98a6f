"""Snapshot file names checked for collisions across the whole session.

A file name drops characters a file system cannot hold (``/ \\ : * ? "``) and some file
systems ignore case, so two tests can name the same file: parametrize ids ``a/b`` and
``ab`` both store ``test_variant[ab].gv``. Each would overwrite the other's baseline.

Two checks, one rule (the same file, ignoring case and Unicode normalisation, in the
same folder):

* at collection, over every collected test that requests the fixture, the name of its
  first snapshot: the same on every pytest-xdist worker, so both tests fail, each
  naming the other, before anything is written;
* at each call, over the names claimed so far in this process (a ``name=`` can make a
  file that another test's first snapshot or named call already uses).
"""

from __future__ import annotations

import unicodedata
from collections import defaultdict
from collections.abc import Iterable, MutableMapping
from typing import TYPE_CHECKING

from pytest_tlgraph.errors import UsageError

if TYPE_CHECKING:
    import pytest

__all__ = ["Claims", "claim", "collisions", "message"]

#: ``(snapshot folder, file name)``, both folded (:func:`folded`) -> the node id that
#: claimed it.
Claims = MutableMapping[tuple[str, str], str]


def folded(name: str) -> str:
    """``name`` as a file system that ignores case and Unicode normalisation stores it
    (macOS's: ``café`` written NFC or NFD is one file): NFC-normalised, case-folded,
    and normalised again (folding can denormalise)."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", name).casefold())


def _where(item: pytest.Item) -> tuple[str, str] | None:
    """The folder and the name of ``item``'s first snapshot (``None``: no fixture)."""
    from syrupy.location import PyTestLocation

    from pytest_tlgraph.snapshots.extensions import TlgraphPairExtension

    if "tlgraph_snapshot" not in getattr(item, "fixturenames", ()):
        return None
    try:
        location = PyTestLocation(item)
    except (AttributeError, ValueError):  # not a test function: no snapshots of ours
        return None
    folder = TlgraphPairExtension.dirname(test_location=location)
    name = TlgraphPairExtension.get_snapshot_name(test_location=location, index=0)
    return folder, name


def message(file: str, this: str, other: str) -> str:
    """The error of two tests that store the same file."""
    return (
        f"tlgraph_snapshot: the tests {this} and {other} both store their snapshots as "
        f'{file!r} (file names drop characters such as / \\ : * ? and " and ignore case '
        "and Unicode normalisation on some systems), and would overwrite each other's "
        "baseline; give them parametrize ids (or names) that differ in letters or digits"
    )


def collisions(items: Iterable[pytest.Item]) -> dict[str, str]:
    """Node id -> the error, for every test whose first snapshot's file is another
    collected test's too."""
    by_file: defaultdict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for item in items:
        found = _where(item)
        if found is not None:
            folder, name = found
            by_file[(folded(folder), folded(name))].append((item.nodeid, name))
    errors: dict[str, str] = {}
    for tests in by_file.values():
        for nodeid, name in tests if len(tests) > 1 else ():
            other = tests[1][0] if nodeid == tests[0][0] else tests[0][0]
            errors[nodeid] = message(name, nodeid, other)
    return errors


def claim(claims: Claims, folder: str, file: str, nodeid: str) -> None:
    """Claim ``file`` in ``folder`` for ``nodeid``; raise ``ValueError`` naming both
    tests when another test of this session claimed it."""
    other = claims.setdefault((folded(folder), folded(file)), nodeid)
    if other != nodeid:
        raise UsageError(message(file, other, nodeid))
