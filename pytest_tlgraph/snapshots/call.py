"""One ``tlgraph_snapshot`` call against syrupy: its DOT and PNG assertions, the PNG to
compare (rendered, or reused when provably unchanged), and the failure it reports.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_tlgraph.draw.canvas import png_problem
from pytest_tlgraph.paths import display_path
from pytest_tlgraph.snapshots.compare.comparison import Comparison
from pytest_tlgraph.snapshots.compare.drawing import graph_diff_layout, graph_diff_png
from pytest_tlgraph.snapshots.compare.story import every_change, headline, story_lines
from pytest_tlgraph.snapshots.disk.bounded import NotAFile, TooLarge
from pytest_tlgraph.snapshots.disk.files import SnapshotWriteError
from pytest_tlgraph.snapshots.disk.nofollow import file_in_the_way, in_the_way
from pytest_tlgraph.snapshots.extensions import TlgraphPairExtension
from pytest_tlgraph.snapshots.pair import KEEP, Keep, ReceivedPair, StoredPair
from pytest_tlgraph.snapshots.provenance import render_snapshot_png, reusable
from pytest_tlgraph.snapshots.results.artifacts import Artifacts
from pytest_tlgraph.snapshots.review.cut import cut_text, is_long
from pytest_tlgraph.snapshots.review.dotdiff import unified_dot_diff
from pytest_tlgraph.snapshots.review.drift import drift_line, upgrade_kinds
from pytest_tlgraph.snapshots.review.nodeids import as_printed
from pytest_tlgraph.snapshots.review.pending import acceptance
from pytest_tlgraph.snapshots.review.report import (
    DotOutcome,
    PngOutcome,
    build_report,
    comparison_of,
)
from pytest_tlgraph.snapshots.review.summary import structure_data, write_call
from pytest_tlgraph.snapshots.review.terminal import terminal_report
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
        self,
        dot: str,
        png: bytes | None,
        settings: Settings,
        stem: Path,
        nodeid: str,
        stored: StoredPair | None,
    ) -> dict[str, Any]:
        """What ``tlgraph accept`` needs of this failing call (``pending.acceptance``)."""
        return acceptance(
            settings.results,
            stem,
            nodeid=nodeid,
            name=self.name,
            dot=dot,
            png=png,
            dot_location=self.dot_location,
            png_location=str(png_location(self.dot_location)),
            stored_sha256=None if stored is None else stored.sha256,
            rootdir=settings.project,
        )

    @staticmethod
    def _drift(stored: StoredPair | None) -> dict[str, Any] | None:
        """The versions that drew the stored PNG against the running ones, with the
        line that names them (``None``: no stored PNG, none recorded, none differs)."""
        if stored is None or stored.provenance is None:
            return None
        recorded = dict(stored.provenance.versions)
        running = running_versions()
        line = drift_line(recorded, running)
        if line is None:
            return None
        return {"stored": recorded, "running": running, "line": line}

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
            if settings.summary:
                verdict = "written" if result.created or result.updated else "passed"
                record: dict[str, Any] = {"nodeid": nodeid, "name": self.name, "verdict": verdict}
                with contextlib.suppress(SnapshotWriteError):  # the summary leaves it out
                    write_call(settings.results, stem, {**record, "artifacts": {}})
            return None
        root = settings.rootdir
        stored = result.recalled_data if isinstance(result.recalled_data, StoredPair) else None
        found_match = None if stored is None else received.against(stored)
        written_error = (
            result.exception if isinstance(result.exception, SnapshotWriteError) else None
        )
        write_errors = [] if written_error is None else [_shown(written_error, root)]
        read_error = result.exception if written_error is None else None
        blocker = file_in_the_way(Path(result.snapshot_location))
        error = None if read_error is None else repr(read_error)
        if isinstance(read_error, (NotAFile, TooLarge)):  # the reader's own one line
            error = str(read_error)
        if blocker is not None and (read_error is not None or stored is None):
            error = in_the_way(display_path(blocker, root), "run pytest --snapshot-update")
        dot = DotOutcome(
            path=display_path(result.snapshot_location, root),
            expected=None if stored is None else stored.dot,
            received=drawing.dot,
            passed=found_match is not None and found_match.dot_passed,
            error=error,
        )
        diff = [] if dot.expected is None else list(unified_dot_diff(dot.expected, drawing.dot))
        compared = received.compares_png
        received_png = received.png if compared else None
        match = None if found_match is None else found_match.png
        expected_png = None if stored is None or not compared else stored.png
        # The stored and received drawings are compared once; every view reads it.
        found = comparison_of(dot) if dot.expected is not None else None
        comparison = found if isinstance(found, Comparison) else None
        graphdiff, graphdiff_full, graphdiff_note, layout = None, None, None, ""
        if comparison is not None and not dot.passed and settings.png:
            graphdiff, graphdiff_note, layout = graph_diff_layout(comparison, settings.renderer)
            if graphdiff is not None:
                graphdiff_full, why = graph_diff_png(comparison, settings.renderer, context=None)
                if why is not None:  # over the size guard: said, never silently left out
                    graphdiff_note = why.replace(
                        "structural diff drawing", "whole-graph drawing", 1
                    )
        # A full disk may refuse the results folder too: the failure is still reported,
        # with one line saying its files were not saved (never a traceback).
        unsaved: str | None = None
        refused: list[str] = []  # images over the size guard's limits: not written
        try:
            written = settings.results.write_failure(
                stem,
                actual=received_png,
                expected=_guarded(
                    expected_png,
                    "the stored PNG's copy",
                    "it is not copied to the results; run pytest --snapshot-update to redraw it",
                    refused,
                ),
                diff=_guarded(
                    match.comparison.diff_png if match and match.comparison else None,
                    "the pixel diff",
                    "it is not written; the pixel count above stands",
                    refused,
                ),
                dot_diff="\n".join(diff) + "\n" if diff and not dot.passed else None,
                graphdiff=graphdiff,
                graphdiff_full=graphdiff_full,
                nodeid=nodeid,
            )
        except SnapshotWriteError as error:
            written, unsaved = Artifacts(), _unsaved(error, settings.results.root, root)
        png = None
        if compared:
            stale = stored is not None and stored.png_stale_against(dot.expected)
            png = PngOutcome(
                path=display_path(png_location(result.snapshot_location), root),
                exists=expected_png is not None,
                passed=found_match is not None
                and found_match.png_passed
                and not found_match.rewrite,
                match=match,
                images={k: display_path(p, root) for k, p in written.images().items()},
                stale_against=dot.path if stale else None,
            )
        drift = self._drift(stored)
        full_text = None if unsaved is not None else _full_text(settings, stem, nodeid, comparison)
        report = build_report(
            full_text_path=None if full_text is None else display_path(full_text, root),
            drift=None if drift is None else drift["line"],
            name=self.name,
            nodeid=nodeid,
            dot=dot,
            png=png,
            diff=diff,
            full_diff_path=None
            if written.dot_diff is None
            else display_path(written.dot_diff, root),
            state_text=drawing.state.describe() if drawing.state is not None else None,
            notes=[*_notes(graphdiff_note, written, root), *refused],
            write_errors=write_errors,
            png_skipped=png_skipped,
            comparison=found,
        )
        upgrade = upgrade_kinds(comparison) if comparison is not None and not dot.passed else None
        about = {"call": self.index, "drift": drift, "upgrade": upgrade}
        try:
            if unsaved is None:
                accept = self._acceptance(drawing.dot, received_png, settings, stem, nodeid, stored)
                accept |= about | {"results_from_rootdir": _from(settings)}
                accept["story_lines"] = list(report.story)  # report.html lists it whole
                accept["story_places"] = _places(report.story, comparison, graphdiff, layout)
                accept["results"] = str(settings.results.root.resolve())
                settings.results.write_record(
                    stem, nodeid=nodeid, report=report, artifacts=written, base=root,
                    rootdir=settings.project,
                    story=_story(comparison), extra=accept,
                )  # fmt: skip
            if settings.summary:
                missing = dot.expected is None and dot.error is None
                record = {
                    "nodeid": nodeid, "name": self.name, **about,
                    "verdict": "missing" if missing else "failed",
                    "structure": None if dot.passed else structure_data(comparison),
                    "artifacts": {
                        k: settings.results.relative(p) for k, p in written.images().items()
                    },
                }  # fmt: skip
                write_call(settings.results, stem, record)
        except SnapshotWriteError as error:
            unsaved = unsaved or _unsaved(error, settings.results.root, root)
        notes = [] if unsaved is None else [unsaved]
        if self.update:
            hint = ""
        elif unsaved is None:
            hint = (
                "\nto accept the received drawing: tlgraph accept "
                f"{as_printed(nodeid, settings.project, root)} "
                "(or pytest --snapshot-update)"
            )
        else:
            hint = "\nto accept the received drawing: pytest --snapshot-update"
        text = terminal_report(report).text(color=settings.color)
        return "\n".join([text, *notes]) + hint


def _places(
    story: Sequence[str], comparison: Comparison | None, png: bytes | None, layout: str
) -> list[list[int] | None]:
    """Per story line, the box ``[x, y, w, h]`` (pixels) in the structural diff drawing
    of the node it names first (``None``: none drawn), for report.html's links."""
    from pytest_tlgraph.pngheader import read_png_size
    from pytest_tlgraph.snapshots.review.places import node_boxes, story_places

    size = None if png is None else read_png_size(png)
    if comparison is None or size is None or not layout:
        return [None] * len(story)
    found = story_places(story, comparison, node_boxes(layout, size))
    return [None if box is None else list(box) for box in found]


def _from(settings: Settings) -> str | None:
    """The results folder relative to pytest's rootdir (the ``--results`` a copied
    ``tlgraph accept`` command gives), ``None`` outside it."""
    if settings.project is None:
        return None
    try:
        where = settings.results.root.resolve().relative_to(settings.project.resolve())
    except ValueError:
        return None
    return where.as_posix()


def _guarded(png: bytes | None, what: str, remedy: str, refused: list[str]) -> bytes | None:
    """``png``, or ``None`` with the one-line reason added to ``refused`` when it is over
    the size guard's limits (a stored baseline can be any size: it is not copied then)."""
    problem = None if png is None else png_problem(png, what, remedy)
    if problem is None:
        return png
    refused.append(problem)
    return None


def _notes(note: str | None, written: Artifacts, root: Path) -> list[str]:
    """Lines after the structural summary: where the diff drawings are (or why not)."""
    if written.graphdiff is None:
        return [] if note is None else [note]
    out = [f"structural diff drawing: {display_path(written.graphdiff, root)}"]
    if written.graphdiff_full is not None:
        out.append(f"the whole graph: {display_path(written.graphdiff_full, root)}")
    elif note is not None:
        out.append(note)
    return out


def _story(comparison: Comparison | None) -> str | None:
    """The failure in one line: the comparison's headline, cut at the report's width
    (``None`` without one: a missing or unreadable snapshot, whose report's first line
    says it)."""
    return None if comparison is None else cut_text(headline(comparison))


def _full_text(
    settings: Settings, stem: Path, nodeid: str, comparison: Comparison | None
) -> Path | None:
    """``<stem>.story.txt``: the story and every change in full, written when a line of
    them is longer than the report shows (``review.cut``); ``None`` when none is (or
    the results folder refuses the file: the report still says lines were cut)."""
    if comparison is None:
        return None
    lines = [*story_lines(comparison), "", *every_change(comparison)]
    if not is_long(lines):
        return None
    path = stem.with_name(stem.name + ".story.txt")
    try:
        settings.results.write(path, ("\n".join(lines) + "\n").encode("utf-8"), nodeid=nodeid)
    except SnapshotWriteError:
        return None
    return path


def _shown(error: SnapshotWriteError, base: Path) -> str:
    """The error's one line, its file shown relative to ``base``."""
    if error.path is None:
        return str(error)
    text = str(error).replace(str(error.path), display_path(error.path, base), 1)
    if error.link is not None and error.link != error.path:
        text = text.replace(str(error.link), display_path(error.link, base), 1)
    return text


def _unsaved(error: SnapshotWriteError, results: Path, base: Path) -> str:
    """One line: the failure's files could not be saved in the results folder."""
    return (
        f"the failure's report files were not saved in {display_path(results, base)}: "
        f"{error.reason or _shown(error, base)}"
    )
