"""One ``tlgraph_snapshot`` call against syrupy: its DOT and PNG assertions, the PNG to
compare (rendered, or reused when provably unchanged), and the failure it reports.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_tlgraph.diff.view.comparison import Comparison
from pytest_tlgraph.disk.files import SnapshotWriteError
from pytest_tlgraph.paths import display_path
from pytest_tlgraph.review.dotdiff import unified_dot_diff
from pytest_tlgraph.review.drift import drift_line
from pytest_tlgraph.review.outcome import Acceptance, CallOutcome, Drift, write_outcome
from pytest_tlgraph.review.pending import acceptance
from pytest_tlgraph.review.report import build_report, comparison_of
from pytest_tlgraph.review.terminal import terminal_report
from pytest_tlgraph.snapshots.extensions import TlgraphPairExtension
from pytest_tlgraph.snapshots.failure import (
    Failed,
    accept_hint,
    failed_outcome,
    full_story,
    graph_diffs,
    notes,
    png_outcome,
    recalled,
    unsaved_line,
    write_failure,
)
from pytest_tlgraph.snapshots.pair import KEEP, Keep, ReceivedPair, StoredPair
from pytest_tlgraph.snapshots.provenance import render_snapshot_png, reusable
from pytest_tlgraph.snapshots.storage import png_location
from pytest_tlgraph.snapshots.syrupy_private import syrupy_session
from pytest_tlgraph.snapshots.versions import running_versions

if TYPE_CHECKING:
    import pytest
    from syrupy.assertion import AssertionResult, SnapshotAssertion
    from syrupy.types import SnapshotIndex

    from pytest_tlgraph.draw import Drawing
    from pytest_tlgraph.snapshots.settings import Settings

__all__ = ["SnapshotCall", "base_assertion", "display_path"]


def base_assertion(request: pytest.FixtureRequest) -> SnapshotAssertion:
    """A syrupy assertion for the requesting test, made as syrupy's ``snapshot`` fixture
    makes its own but with our DOT extension.

    Requesting ``snapshot`` itself would register syrupy's default (amber) extension,
    whose discovery claims every unknown file under ``__snapshots__/`` as an obsolete
    snapshot, so ``--snapshot-update`` would delete foreign files next to ours.
    """
    from syrupy.assertion import SnapshotAssertion
    from syrupy.location import PyTestLocation

    config = request.config
    session = syrupy_session(config)  # made by syrupy's own sessionstart hook
    if session is None:
        raise RuntimeError(
            "tlgraph_snapshot stores its snapshots with syrupy, whose pytest plugin is not "
            "active in this run; remove -p no:syrupy (or load it with -p syrupy)"
        )
    options: dict[str, Any] = {}
    update_new = getattr(config.option, "update_new_snapshots_only", None)
    if update_new is not None:
        options["update_new_snapshots_only"] = bool(update_new)
    return SnapshotAssertion(
        update_snapshots=bool(config.option.update_snapshots),
        extension_class=TlgraphPairExtension,
        test_location=PyTestLocation(request.node),
        session=session,
        **options,
    )


class SnapshotCall:
    """The one syrupy assertion of a fixture call: its pair (``.gv`` and ``.png``).

    It derives from the test's :func:`base_assertion`, so syrupy does the
    ``--snapshot-update`` writes and the unused-snapshot accounting (xdist included).
    """

    def __init__(self, snapshot: SnapshotAssertion, index: SnapshotIndex) -> None:
        self.index = index
        self.update = bool(snapshot.update_snapshots)
        self.pair = snapshot.use_extension(TlgraphPairExtension)

    @property
    def name(self) -> str:
        """The snapshot's name: ``test_x``, ``test_x.1`` or ``test_x[name]``."""
        location = self.pair.test_location
        return TlgraphPairExtension.get_snapshot_name(test_location=location, index=self.index)

    @property
    def dot_location(self) -> str:
        """Where the pair's ``.gv`` is stored (the snapshot's location)."""
        return self.pair.extension.get_location(
            test_location=self.pair.test_location, index=self.index
        )

    def stored(self) -> StoredPair | None:
        """The stored pair (read once for the call), or ``None`` when missing or
        unreadable."""
        try:
            found = self.pair.extension.read_snapshot_data_from_location(
                snapshot_location=self.dot_location, snapshot_name=self.name, session_id=""
            )
        except OSError:
            return None
        return found if isinstance(found, StoredPair) else None

    def check(self, data: ReceivedPair | Keep) -> AssertionResult:
        """Run the assertion (syrupy records it, and writes under --snapshot-update)."""
        # syrupy numbers an unnamed assertion by its own executions: a fresh assertion
        # per call gives 0, and a truthy index is passed as the name.
        bound = self.pair(name=self.index) if self.index else self.pair
        _ = bound == data
        return bound.executions[bound.num_executions - 1]

    def received_png(self, dot: str, renderer: str, *, force: bool) -> bytes:
        """The PNG to compare: the stored one when :func:`reusable` (unless ``force``),
        else a fresh render."""
        if not force:
            stored = self.stored()
            png = None if stored is None else stored.png
            known = None if stored is None else stored.provenance
            if png is not None and reusable(png, dot, renderer, known):
                return png
        return render_snapshot_png(dot, renderer)

    def keep(self) -> None:
        """Count the stored pair as used, unchanged (:data:`pair.KEEP` matches it)."""
        if self.stored() is not None:
            self.check(KEEP)

    def _acceptance(
        self, dot: str, png: bytes | None, settings: Settings, stem: Path, nodeid: str,
        stored: StoredPair | None,
    ) -> Acceptance:  # fmt: skip
        """What ``tlgraph accept`` needs of this failing call (``pending.acceptance``)."""
        return acceptance(
            settings.results,
            stem,
            nodeid=nodeid,
            dot=dot,
            png=png,
            dot_location=self.dot_location,
            png_location=str(png_location(self.dot_location)),
            stored_sha256=None if stored is None else stored.sha256,
        )

    @staticmethod
    def _drift(stored: StoredPair | None) -> Drift | None:
        """The versions that drew the stored PNG against the running ones, with the
        line that names them (``None``: no stored PNG, none recorded, none differs)."""
        if stored is None or stored.provenance is None:
            return None
        recorded = dict(stored.provenance.versions)
        running = running_versions()
        line = drift_line(recorded, running)
        return None if line is None else Drift(recorded, running, line)

    def compare(
        self,
        drawing: Drawing,
        received: ReceivedPair,
        settings: Settings,
        stem: Path,
        nodeid: str,
        png_skipped: str | None = None,
    ) -> str | None:
        """Compare the pair (DOT and PNG, both, always); on failure write the artifacts
        and the HTML record, return the message. ``png_skipped``: why no PNG was drawn
        although PNGs are on (the size guard)."""
        result = self.check(received)
        if result.success:
            self._passed(result, settings, stem, nodeid)
            return None
        root = settings.rootdir
        found = recalled(result, received, drawing.dot, root)
        dot = found.dot
        diff = [] if dot.expected is None else list(unified_dot_diff(dot.expected, drawing.dot))
        # The stored and received drawings are compared once; every view reads it.
        looked = comparison_of(dot) if dot.expected is not None else None
        comparison = looked if isinstance(looked, Comparison) else None
        drawings = graph_diffs(None if dot.passed else comparison, settings)
        written = write_failure(settings, stem, nodeid, found, received, diff, drawings)
        artifacts = written.artifacts
        png = png_outcome(result, found, artifacts, root) if received.compares_png else None
        drift = self._drift(found.stored)
        full_text = None
        if written.unsaved is None:
            full_text = full_story(settings, stem, nodeid, comparison)
        report = build_report(
            full_text_path=None if full_text is None else display_path(full_text, root),
            drift=None if drift is None else drift.line,
            name=self.name,
            nodeid=nodeid,
            dot=dot,
            png=png,
            diff=diff,
            full_diff_path=None
            if artifacts.dot_diff is None
            else display_path(artifacts.dot_diff, root),
            state_text=drawing.state.describe() if drawing.state is not None else None,
            notes=[*notes(drawings.note, artifacts, root), *written.refused],
            write_errors=found.write_errors,
            png_skipped=png_skipped,
            comparison=looked,
        )
        failed = Failed(found, comparison, drawings, written, report, drift)
        unsaved = self._record(failed, drawing.dot, received, settings, stem, nodeid)
        text = terminal_report(report).text(color=settings.color)  # the outcome's report
        lines = [text] if unsaved is None else [text, unsaved]
        return "\n".join(lines) + accept_hint(self.update, unsaved, nodeid, settings)

    def _passed(self, result: AssertionResult, settings: Settings, stem: Path, nodeid: str) -> None:
        """A passing call's outcome, kept for the run's summaries (when they are on)."""
        if not settings.summary:
            return
        verdict = "written" if result.created or result.updated else "passed"
        outcome = CallOutcome(nodeid, self.name, verdict, call=self.index)
        with contextlib.suppress(SnapshotWriteError):  # the summary leaves it out
            write_outcome(settings.results, stem, outcome)

    def _record(
        self, failed: Failed, dot: str, received: ReceivedPair, settings: Settings,
        stem: Path, nodeid: str,
    ) -> str | None:  # fmt: skip
        """Write the failure's one outcome (what report.html, the summaries, ``tlgraph
        report``, ``accept`` and ``review`` read; the terminal prints its report) to the
        results folder; the line saying its files were not saved, if they were not
        (``None``: they were)."""
        unsaved = failed.written.unsaved
        accept = None
        try:
            if unsaved is None:
                png = received.png if received.compares_png else None
                accept = self._acceptance(dot, png, settings, stem, nodeid, failed.found.stored)
        except SnapshotWriteError as error:
            unsaved = unsaved_line(error, settings.results.root, settings.rootdir)
        outcome = failed_outcome(
            failed, nodeid=nodeid, name=self.name, call=self.index, accept=accept,
            settings=settings,
        )  # fmt: skip
        try:
            if unsaved is None or settings.summary:
                write_outcome(settings.results, stem, outcome)
        except SnapshotWriteError as error:
            unsaved = unsaved or unsaved_line(error, settings.results.root, settings.rootdir)
        return unsaved
