"""The one module that reads syrupy's private state, for what its public API cannot do.

* ``config._syrupy``: the session syrupy's own ``pytest_sessionstart`` made; the
  fixture's assertion joins it without requesting syrupy's ``snapshot`` fixture (whose
  default amber extension would claim every unknown file under ``__snapshots__``).
* ``SnapshotSession._collected_items`` / ``collect_items``: tests a collection hook
  dropped before syrupy recorded them are handed back as collected, not selected.
* ``SnapshotSession._collected_modules``: a module skipped at import is taken out, as
  a module left out with ``--ignore`` is.
* ``SnapshotSession._assertions``: a retired attempt's assertions are taken out (a
  rerun plugin ran the test again).

Each is checked against the syrupy versions in :data:`CHECKED_VERSIONS`
(``tests/unit/test_syrupy_private.py`` fails on any other installed version).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import pytest
    from syrupy.session import SnapshotSession

__all__ = [
    "CHECKED_VERSIONS",
    "collected_items",
    "collected_modules",
    "forget_assertions",
    "syrupy_session",
]

#: The syrupy versions whose private names above are checked (constraints/test.txt).
CHECKED_VERSIONS: Final = ("7.0.2",)


def syrupy_session(config: pytest.Config) -> SnapshotSession | None:
    """syrupy's session of this run, ``None`` when its plugin is not active."""
    from syrupy.session import SnapshotSession

    session = getattr(config, "_syrupy", None)
    return session if isinstance(session, SnapshotSession) else None


def collected_items(session: SnapshotSession) -> dict[str, pytest.Item]:
    """The test items syrupy recorded as collected, by node id."""
    return session._collected_items


def collected_modules(session: SnapshotSession) -> set[str]:
    """The test modules syrupy recorded as collected (``PyTestLocation.module_path_key``)."""
    return session._collected_modules


def forget_assertions(session: SnapshotSession, nodeid: str) -> None:
    """Take the assertions of the test ``nodeid`` out of syrupy's session."""
    session._assertions[:] = [
        a for a in session._assertions if getattr(a.test_location, "nodeid", None) != nodeid
    ]
