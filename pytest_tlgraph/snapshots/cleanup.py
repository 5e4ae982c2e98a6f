"""When ``--snapshot-update`` may delete unused snapshots: only after a run that ran
every collected test to its end.

syrupy deletes every stored snapshot no test used. After a collection error, an
interrupt (Ctrl-C, ``pytest.exit``), a ``-x`` / ``--maxfail`` stop, or for a module
skipped at import (``pytest.importorskip``, ``pytest.skip(allow_module_level=True)``),
"unused" only means "not reached", and deleting would lose baselines of tests that
never ran. :class:`RunLedger` follows the run through pytest's hooks and, before
syrupy's end of session, turns its cleanup off (a run that stopped early) or hides a
skipped module from it (that module's snapshots stay, the rest of the run's cleanup
goes on), and says in one line what it kept and why.

A test whose body never ran (a fixture's set-up failed, ``--setup-only``,
``--setup-plan``) owns nothing the update may delete: once its teardown is reported it
is recorded in syrupy's own bookkeeping as skipped, and syrupy keeps a skipped test's
snapshots. A session in which no test body ran deletes nothing at all.

Selection (``-k``, node ids, ``--deselect``, ``--lf``) is not a stop: the tests it
leaves out are not collected items of the run, and syrupy keeps their snapshots itself.
A test dropped by a ``pytest_collection_modifyitems`` hook that runs before syrupy's
(stepwise resuming, a conftest's ``--run-slow`` recipe, a plugin's) never reaches
syrupy's record of the collection, so it looked obsolete: the ledger hands those items
back to syrupy as collected but not selected, so their snapshots are kept, and says so.
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator
from pathlib import Path
from typing import Any, Final

import pytest
from syrupy.location import PyTestLocation

from pytest_tlgraph.snapshots.syrupy_private import (
    collected_items,
    collected_modules,
    syrupy_session,
)

__all__ = ["RunLedger"]

#: pytest's exit code of an interrupted session (``pytest.ExitCode.INTERRUPTED``).
_INTERRUPTED: Final = 2


class RunLedger:
    """What the run collected, what ran to its end, and what stopped it: a pytest
    plugin object, registered for the session by ``pytest_tlgraph.plugin``."""

    NAME: Final = "tlgraph-run-ledger"

    def __init__(self, config: pytest.Config) -> None:
        self._config = config
        #: Node ids of the tests the run selected (after ``-k``, ``--deselect``, ...).
        self.expected: set[str] = set()
        #: Node ids of the tests whose whole protocol (setup, call, teardown) finished.
        self.finished: set[str] = set()
        #: Node ids of the tests whose body (the call phase) ran.
        self.bodies: set[str] = set()
        self.collection_errors = 0
        #: Test modules whose import raised pytest's skip.
        self.skipped_modules: list[Path] = []
        #: The one line for the terminal summary, once the session finished.
        self.line: str | None = None
        self._reason: str | None = None
        self._held_stop = False
        #: Tests a ``pytest_collection_modifyitems`` hook dropped before syrupy recorded
        #: the collection: node id -> the item.
        self.dropped: dict[str, pytest.Item] = {}

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        """Count collection errors, and note a test module skipped at import (on the
        xdist controller too: workers send both kinds of report)."""
        if report.failed:
            self.collection_errors += 1
        elif report.skipped and "::" not in report.nodeid and report.nodeid.endswith(".py"):
            module = self._config.rootpath / report.nodeid
            if module not in self.skipped_modules:
                self.skipped_modules.append(module)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_collection_modifyitems(
        self, items: list[pytest.Item]
    ) -> Generator[None, None, None]:
        """Around every ``pytest_collection_modifyitems`` hook: the tests any of them
        dropped that syrupy never saw go back into syrupy's collected items, so syrupy
        treats them as collected and not selected (their snapshots are not unused)."""
        before = list(items)
        yield
        syrupy = syrupy_session(self._config)
        if syrupy is None:
            return
        recorded = collected_items(syrupy)
        selected = {item.nodeid for item in items}
        missed = [i for i in before if i.nodeid not in selected and i.nodeid not in recorded]
        if missed:
            syrupy.collect_items(missed)
            self.dropped.update((item.nodeid, item) for item in missed)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """The tests this run selected; syrupy learns of the pair extension."""
        from pytest_tlgraph.snapshots.extensions import announce_pairs

        self.expected.update(item.nodeid for item in session.items)
        announce_pairs(self._config, session.items)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """On the xdist controller: the tests a worker collected (each collects the
        same set, and runs its share)."""
        self.expected.update(ids)

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """After syrupy's own record of the phase: a test whose body never ran (a
        fixture's set-up failed or was skipped, ``--setup-only``, ``--setup-plan``)
        is recorded in syrupy's bookkeeping as skipped once its teardown is reported,
        so it owns nothing the update may delete (syrupy keeps a skipped test's
        snapshots)."""
        if report.when == "call":
            self.bodies.add(report.nodeid)
        elif report.when == "teardown" and report.nodeid not in self.bodies:
            syrupy = syrupy_session(self._config)
            if syrupy is not None:
                syrupy.ran_item(report.nodeid, "skipped")

    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        """A test's whole protocol finished."""
        self.finished.add(nodeid)

    @pytest.hookimpl(wrapper=True)
    def pytest_sessionfinish(
        self, session: pytest.Session, exitstatus: int
    ) -> Generator[None, None, None]:
        """Around syrupy's end of session, where it deletes unused snapshots."""
        update = bool(getattr(self._config.option, "update_snapshots", False))
        self._hold(session, exitstatus, update=update)
        yield
        if update and not hasattr(self._config, "workerinput"):
            self.line = self._kept_line()

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """The one line saying how many unused snapshots the update kept, and why."""
        if self.line is not None:
            terminalreporter.write_line(f"tlgraph: {self.line}")

    def stop_reason(self, session: pytest.Session, exitstatus: int) -> str | None:
        """Why the run did not run every collected test to its end, or ``None``."""
        if self.collection_errors:
            count = self.collection_errors
            return f"{count} error{'s' if count != 1 else ''} during collection"
        stop = session.shouldfail or session.shouldstop
        if isinstance(stop, str) and stop:
            return f"the run stopped early: {stop}"
        if stop or int(exitstatus) == _INTERRUPTED:
            return "the run was interrupted"
        missing = len(self.expected - self.finished)
        if missing:
            return f"{missing} of {len(self.expected)} collected tests did not run to their end"
        if not self.bodies:
            return "no test body ran (--setup-only, --setup-plan, or every set-up failed)"
        return None

    def _hold(self, session: pytest.Session, exitstatus: int, *, update: bool) -> None:
        """Before syrupy's end of session: keep what this run cannot prove unused.

        A skipped module is taken out of syrupy's collected modules, as a module left
        out with ``--ignore`` is: its snapshots are neither unused nor deleted, in any
        run. In an update that stopped early, syrupy's cleanup is off for the run
        (``--snapshot-no-cleanup``). Both are syrupy's to honour: the versions checked
        are pinned by ``tests/unit/test_syrupy_private.py``."""
        syrupy = syrupy_session(self._config)
        if syrupy is not None:
            for module in self.skipped_modules:
                collected_modules(syrupy).discard(PyTestLocation.module_path_key(module))
        self._reason = self.stop_reason(session, exitstatus) if update else None
        if self._reason is None:
            return
        if not getattr(self._config.option, "no_cleanup", False):
            self._config.option.no_cleanup = True
            self._held_stop = True

    def _kept_line(self) -> str | None:
        """After syrupy's end of session: what was kept and why, or ``None``."""
        kept, reasons = 0, []
        if self._held_stop:
            report = getattr(syrupy_session(self._config), "report", None)
            kept = int(getattr(report, "num_unused", 0) or 0)
            if kept and self._reason:
                reasons.append(self._reason)
        if self.dropped and not self._held_stop:
            report = getattr(syrupy_session(self._config), "report", None)
            count = _count_kept(report, list(self.dropped.values()))
            if count:
                kept += count
                reasons.append(self._dropped_reason())
        for module in self.skipped_modules:
            count = _count_snapshots(self._snapshot_folder(module))
            if count:
                kept += count
                reasons.append(f"{module.name} was skipped at import")
        if not kept:
            return None
        return (
            f"kept {kept} unused snapshot{'s' if kept != 1 else ''} "
            f"({'; '.join(reasons)}): --snapshot-update deletes unused snapshots only "
            "after a run that ran every collected test to its end"
        )

    def _dropped_reason(self) -> str:
        """Who dropped the tests syrupy never saw: stepwise, or some other hook."""
        count = len(self.dropped)
        tests = f"{count} test{'s' if count != 1 else ''}"
        stepwise = getattr(self._config.option, "stepwise", False) or getattr(
            self._config.option, "stepwise_skip", False
        )
        by = "--stepwise" if stepwise else "a pytest_collection_modifyitems hook"
        return f"{tests} deselected by {by}, not run"

    def _snapshot_folder(self, module: Path) -> Path:
        """``<module folder>/__snapshots__/<module stem>``: where its snapshots are."""
        dirname = getattr(self._config.option, "snapshot_dirname", None) or "__snapshots__"
        return module.parent / str(dirname) / module.stem


def _count_snapshots(folder: Path) -> int:
    """The tlgraph snapshots in ``folder``: each pair (``.gv`` with its ``.png``, or
    either alone) counts once, as syrupy counts it."""
    from pytest_tlgraph.snapshots.storage import owned_dot, owned_png

    if not folder.is_dir():
        return 0
    return len({p.stem for p in folder.iterdir() if owned_dot(p) or owned_png(p)})


def _count_kept(report: Any, dropped: list[pytest.Item]) -> int:
    """The stored snapshots of the ``dropped`` tests that syrupy's ``report`` found,
    saw unused and did not delete (any extension's: a ``.gv``, a ``.png``, an amber
    entry)."""
    discovered = getattr(report, "discovered", None)
    used, unused = getattr(report, "used", None), getattr(report, "unused", None)
    if discovered is None or used is None or unused is None:
        return 0
    locations = []
    for item in dropped:
        with contextlib.suppress(AttributeError, ValueError):
            locations.append(PyTestLocation(item))
    kept = 0
    for collection in discovered:
        where = collection.location
        done = {s.name for c in (used.get(where), unused.get(where)) if c for s in c}
        for snapshot in collection:
            if snapshot.name in done:
                continue
            if any(
                test.matches_snapshot_location(where) and test.matches_snapshot_name(snapshot.name)
                for test in locations
            ):
                kept += 1
    return kept
