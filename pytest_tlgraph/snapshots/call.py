"""One ``tlgraph_snapshot`` call against syrupy: its DOT and PNG assertions, the PNG to
compare (rendered, or reused when provably unchanged), and the failure it reports.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_tlgraph.draw.canvas import png_problem
from pytest_tlgraph.snapshots.compare.comparison import Comparison
from pytest_tlgraph.snapshots.compare.drawing import graph_diff_png
from pytest_tlgraph.snapshots.compare.story import headline
from pytest_tlgraph.snapshots.extensions import (
    Provenance,
    TlgraphDotExtension,
    TlgraphPngExtension,
    dot_sha256,
    render_snapshot_png,
    reusable,
)
from pytest_tlgraph.snapshots.files import SnapshotWriteError
from pytest_tlgraph.snapshots.results.artifacts import Artifacts
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
from pytest_tlgraph.snapshots.storage import written_together
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
    session = getattr(config, "_syrupy", None)  # set by syrupy's own sessionstart hook
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
        extension_class=TlgraphDotExtension,
        test_location=PyTestLocation(request.node),
        session=session,
        **options,
    )


class SnapshotCall:
    """The syrupy assertions of one fixture call: the DOT and, when compared, the PNG.

    Both derive from the test's :func:`base_assertion`, so syrupy does the storage,
    ``--snapshot-update`` writes and unused-snapshot accounting (xdist included).
    """

    def __init__(
        self,
        snapshot: SnapshotAssertion,
        index: SnapshotIndex,
        *,
        threshold: float,
        max_diff_pixels: int,
    ) -> None:
        self.index = index
        self.update = bool(snapshot.update_snapshots)
        self.dot = snapshot.use_extension(TlgraphDotExtension)
        self.png = snapshot.use_extension(TlgraphPngExtension)
        extension = self.png.extension
        assert isinstance(extension, TlgraphPngExtension)
        extension.threshold = threshold
        extension.max_diff_pixels = max_diff_pixels
        extension.update = self.update
        self.png_extension = extension

    @property
    def name(self) -> str:
        """The snapshot's name: ``test_x``, ``test_x.1`` or ``test_x[name]``."""
        location = self.dot.test_location
        return TlgraphDotExtension.get_snapshot_name(test_location=location, index=self.index)

    def location(self, assertion: SnapshotAssertion) -> str:
        """Where ``assertion`` stores this call's snapshot."""
        return assertion.extension.get_location(
            test_location=assertion.test_location, index=self.index
        )

    def stored(self, assertion: SnapshotAssertion) -> Any:
        """The stored snapshot, or ``None`` when missing or unreadable."""
        try:
            return assertion.extension.read_snapshot_data_from_location(
                snapshot_location=self.location(assertion), snapshot_name=self.name, session_id=""
            )
        except OSError:
            return None

    def check(self, assertion: SnapshotAssertion, data: Any) -> AssertionResult:
        """Run the assertion (syrupy records it, and writes under --snapshot-update)."""
        # syrupy numbers an unnamed assertion by its own executions: a fresh assertion
        # per call gives 0, and a truthy index is passed as the name.
        bound = assertion(name=self.index) if self.index else assertion
        _ = bound == data
        return bound.executions[bound.num_executions - 1]

    def received_png(self, dot: str, renderer: str, *, force: bool) -> bytes:
        """The PNG to compare: the stored one when :func:`reusable` (unless ``force``),
        else a fresh render."""
        if not force:
            stored = self.stored(self.png)
            if isinstance(stored, bytes) and reusable(stored, dot, renderer):
                return stored
        return render_snapshot_png(dot, renderer)

    def drop_stale_png(self) -> bool:
        """Remove the stored PNG when it was drawn from another DOT than the stored one
        (an update that draws no PNG, ``--tlgraph-no-png``, changed the DOT): a stale
        picture is not kept as a baseline. Returns whether it was removed."""
        png, dot = self.stored(self.png), self.stored(self.dot)
        if not _drawn_from_another(png, dot if isinstance(dot, str) else None):
            return False
        Path(self.location(self.png)).unlink(missing_ok=True)
        return True

    def _acceptance(
        self, dot: str, png: bytes | None, settings: Settings, stem: Path, nodeid: str
    ) -> dict[str, Any]:
        """What ``tlgraph accept`` needs of this failing call (``pending.acceptance``)."""
        return acceptance(
            settings.results,
            stem,
            nodeid=nodeid,
            name=self.name,
            dot=dot,
            png=png,
            dot_location=self.location(self.dot),
            png_location=self.location(self.png),
            rootdir=settings.project,
        )

    def _drift(self, stored_png: Any) -> dict[str, Any] | None:
        """The versions that drew the stored PNG against the running ones, with the
        line that names them (``None``: no stored PNG, none recorded, none differs)."""
        png = stored_png if isinstance(stored_png, bytes) else self.stored(self.png)
        if not isinstance(png, bytes):
            return None
        stored = dict(Provenance.of(png).versions)
        running = running_versions()
        line = drift_line(stored, running)
        if line is None:
            return None
        return {"stored": stored, "running": running, "line": line}

    def keep(self, assertion: SnapshotAssertion) -> None:
        """Count an existing snapshot as used, unchanged (it is compared with itself)."""
        stored = self.stored(assertion)
        if stored is not None:
            self.check(assertion, stored)

    def _check_pair(
        self, dot: str, png: bytes | None
    ) -> tuple[AssertionResult, AssertionResult | None]:
        """Both assertions, their writes (under --snapshot-update) made all or nothing:
        the ``.gv`` and ``.png`` are both replaced or neither is. A write that fails
        turns both results into failures carrying the one-line error."""
        dot_result: AssertionResult | None = None
        png_result: AssertionResult | None = None
        try:
            with written_together() as staged:
                dot_result = self.check(self.dot, dot)
                png_result = self.check(self.png, png) if png is not None else None
                if not all(r.success for r in (dot_result, png_result) if r is not None):
                    staged.clear()  # one side failed: the other is not written alone
        except SnapshotWriteError as error:
            for result in (dot_result, png_result):
                if result is not None and (result.created or result.updated):
                    result.success = result.created = result.updated = False
                    result.exception = error
        assert dot_result is not None
        return dot_result, png_result

    def compare(
        self,
        drawing: Drawing,
        received_png: bytes | None,
        settings: Settings,
        stem: Path,
        nodeid: str,
        png_skipped: str | None = None,
    ) -> str | None:
        """Compare the DOT and the PNG (both, always: a DOT failure never leaves the PNG
        unused); on failure write the artifacts and the HTML record, return the message.
        ``png_skipped``: why no PNG was drawn although PNGs are on (the size guard)."""
        dot_result, png_result = self._check_pair(drawing.dot, received_png)
        if dot_result.success and (png_result is None or png_result.success):
            if settings.summary:
                fresh = any(
                    r is not None and (r.created or r.updated) for r in (dot_result, png_result)
                )
                verdict = "written" if fresh else "passed"
                record: dict[str, Any] = {"nodeid": nodeid, "name": self.name, "verdict": verdict}
                with contextlib.suppress(SnapshotWriteError):  # the summary leaves it out
                    write_call(settings.results, stem, {**record, "artifacts": {}})
            return None
        root = settings.rootdir
        stored = dot_result.recalled_data
        results = [dot_result] if png_result is None else [dot_result, png_result]
        write_errors = list(
            dict.fromkeys(
                _shown(r.exception, root)
                for r in results
                if isinstance(r.exception, SnapshotWriteError)
            )
        )
        read_error = dot_result.exception if not write_errors else None
        in_the_way = _file_in_the_way(Path(dot_result.snapshot_location), root)
        error = None if read_error is None else repr(read_error)
        if in_the_way is not None and (read_error is not None or stored is None):
            error = in_the_way
        dot = DotOutcome(
            path=display_path(dot_result.snapshot_location, root),
            expected=None if stored is None else str(stored),
            received=drawing.dot,
            passed=dot_result.success,
            error=error,
        )
        diff = [] if dot.expected is None else list(unified_dot_diff(dot.expected, drawing.dot))
        match = self.png_extension.last if png_result is not None else None
        expected_png = png_result.recalled_data if png_result is not None else None
        # The stored and received drawings are compared once; every view reads it.
        found = comparison_of(dot) if dot.expected is not None else None
        comparison = found if isinstance(found, Comparison) else None
        graphdiff, graphdiff_full, graphdiff_note = None, None, None
        if comparison is not None and not dot.passed and settings.png:
            graphdiff, graphdiff_note = graph_diff_png(comparison, settings.renderer)
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
                    expected_png if isinstance(expected_png, bytes) else None,
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
        if png_result is not None:
            png = PngOutcome(
                path=display_path(png_result.snapshot_location, root),
                exists=png_result.recalled_data is not None,
                passed=png_result.success,
                match=match,
                images={k: display_path(p, root) for k, p in written.images().items()},
                stale_against=dot.path if _drawn_from_another(expected_png, dot.expected) else None,
            )
        drift = self._drift(expected_png)
        report = build_report(
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
                accept = self._acceptance(drawing.dot, received_png, settings, stem, nodeid)
                accept |= about | {"results_from_rootdir": _from(settings)}
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


def _file_in_the_way(location: Path, root: Path) -> str | None:
    """The line naming a file that stands where a folder of ``location`` belongs
    (``__snapshots__/test_m`` a regular file), or ``None``."""
    for folder in reversed(location.parents):
        if folder.is_symlink() or not folder.exists():
            continue
        if not folder.is_dir():
            return (
                f"{display_path(str(folder), root)} is a file where a folder belongs: "
                "move it away (or delete it), then run pytest --snapshot-update"
            )
    return None


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
    """The failure in one line: the comparison's headline (``None`` without one: a
    missing or unreadable snapshot, whose report's first line says it)."""
    return None if comparison is None else headline(comparison)


def _drawn_from_another(png: Any, dot: str | None) -> bool:
    """True when the stored ``png`` records the hash of a DOT other than the stored
    ``dot``: it is stale (an update that drew no PNG, or half a pair left by a kill)."""
    if not isinstance(png, bytes) or dot is None:
        return False
    recorded = Provenance.of(png).dot_sha256
    return recorded is not None and recorded != dot_sha256(dot)


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


def display_path(path: str | os.PathLike[str], base: Path) -> str:
    """``path`` relative to ``base``, the folder pytest was started in (``../`` when it
    lies outside), as a user can paste it; absolute when no relative path exists. Its
    no part is resolved: a link is named as the link."""
    try:
        return Path(os.path.relpath(os.path.abspath(path), os.path.abspath(base))).as_posix()
    except ValueError:  # another drive
        return str(path)
