"""The stages of one failed ``tlgraph_snapshot`` call, each a function of typed values.

:meth:`.call.SnapshotCall.compare` runs them in order: what syrupy recalled
(:func:`recalled`: the stored pair, the read or write error, the DOT outcome), the
structural diff drawings (:func:`graph_diffs`), the files the results folder keeps
(:func:`write_failure`), the PNG outcome (:func:`png_outcome`), the story in full
when a line of it is cut (:func:`full_story`), the records' extras
(:func:`story_places`), the call's one outcome (:func:`failed_outcome`, a pure function
of what the stages found) and the hint that closes the message (:func:`accept_hint`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

from pytest_tlgraph.diff.view.comparison import Comparison
from pytest_tlgraph.diff.view.drawing import graph_diff_layout, graph_diff_png
from pytest_tlgraph.diff.view.story import every_change, headline, story_lines
from pytest_tlgraph.disk.bounded import NotAFile, TooLarge
from pytest_tlgraph.disk.files import SnapshotWriteError
from pytest_tlgraph.disk.nofollow import FileInTheWay, file_in_the_way, in_the_way
from pytest_tlgraph.draw.canvas import png_problem
from pytest_tlgraph.paths import display_path
from pytest_tlgraph.results.artifacts import Artifacts
from pytest_tlgraph.review.cut import cut_text, is_long
from pytest_tlgraph.review.nodeids import as_printed
from pytest_tlgraph.review.outcome import (
    Acceptance,
    CallOutcome,
    Drift,
    Place,
    Structure,
    Where,
)
from pytest_tlgraph.review.report import DotOutcome, PngOutcome, Report
from pytest_tlgraph.snapshots.pair import PairMatch, ReceivedPair, StoredPair
from pytest_tlgraph.snapshots.storage import png_location

if TYPE_CHECKING:
    from syrupy.assertion import AssertionResult

    from pytest_tlgraph.snapshots.settings import Settings

__all__ = [
    "GraphDiffs",
    "Recalled",
    "Written",
    "accept_hint",
    "failed_outcome",
    "from_rootdir",
    "full_story",
    "graph_diffs",
    "notes",
    "png_outcome",
    "recalled",
    "shown",
    "story_places",
    "structure_of",
    "unsaved_line",
    "write_failure",
]

_UPDATE: Final = "run pytest --snapshot-update"


@dataclass(frozen=True, slots=True)
class Recalled:
    """What a failed assertion found: the stored pair (``None``: missing or
    unreadable), its one comparison with the received pair, the DOT outcome, and the
    lines of an update that could not be written."""

    stored: StoredPair | None
    match: PairMatch | None
    dot: DotOutcome
    write_errors: tuple[str, ...] = ()


def recalled(result: AssertionResult, received: ReceivedPair, dot: str, root: Path) -> Recalled:
    """The failed assertion ``result`` read once: the stored pair, why it could not be
    read or written (a file in the way of the snapshot folder named as such), and the
    DOT outcome against the received ``dot``."""
    stored = result.recalled_data if isinstance(result.recalled_data, StoredPair) else None
    found = None if stored is None else received.against(stored)
    written = result.exception if isinstance(result.exception, SnapshotWriteError) else None
    read_error = result.exception if written is None else None
    error = None if read_error is None else repr(read_error)
    if isinstance(read_error, (NotAFile, TooLarge)):  # the reader's own one line
        error = str(read_error)
    blocker = file_in_the_way(Path(result.snapshot_location))
    blocked = isinstance(read_error, FileInTheWay)
    if blocker is not None and (read_error is not None or stored is None):
        error, blocked = in_the_way(display_path(blocker, root), _UPDATE), True
    outcome = DotOutcome(
        path=display_path(result.snapshot_location, root),
        expected=None if stored is None else stored.dot,
        received=dot,
        passed=found is not None and found.dot_passed,
        error=error,
        blocked=blocked,
    )
    errors = () if written is None else (shown(written, root),)
    return Recalled(stored, found, outcome, errors)


@dataclass(frozen=True, slots=True)
class GraphDiffs:
    """The structural diff drawings of a failure: around the change (``png``, with its
    ``layout`` for report.html's links) and the whole graph (``full``), or the line
    saying why one was not drawn (``note``)."""

    png: bytes | None = None
    full: bytes | None = None
    note: str | None = None
    layout: str = ""


def graph_diffs(comparison: Comparison | None, settings: Settings) -> GraphDiffs:
    """The structural diff drawings of ``comparison`` (none without one, or with PNGs
    off)."""
    if comparison is None or not settings.png:
        return GraphDiffs()
    png, note, layout = graph_diff_layout(comparison, settings.renderer)
    full = None
    if png is not None:
        full, why = graph_diff_png(comparison, settings.renderer, context=None)
        if why is not None:  # over the size guard: said, never silently left out
            note = why.replace("structural diff drawing", "whole-graph drawing", 1)
    return GraphDiffs(png, full, note, layout)


@dataclass(frozen=True, slots=True)
class Written:
    """What the results folder kept of a failure: its files, the line saying they were
    not saved (``None``: they were), and the images over the size guard's limits."""

    artifacts: Artifacts
    unsaved: str | None = None
    refused: list[str] = field(default_factory=list)


def write_failure(
    settings: Settings, stem: Path, nodeid: str, found: Recalled, received: ReceivedPair,
    diff: Sequence[str], drawings: GraphDiffs,
) -> Written:  # fmt: skip
    """Write the failure's images and DOT diff to the results folder. A full disk may
    refuse the folder too: the failure is still reported, with one line saying its
    files were not saved (never a traceback)."""
    compared = received.compares_png
    stored_png = None if found.stored is None or not compared else found.stored.png
    match = None if found.match is None else found.match.png
    refused: list[str] = []  # images over the size guard's limits: not written
    try:
        artifacts = settings.results.write_failure(
            stem,
            actual=received.png if compared else None,
            expected=_guarded(
                stored_png,
                "the stored PNG's copy",
                f"it is not copied to the results; {_UPDATE} to redraw it",
                refused,
            ),
            diff=_guarded(
                match.comparison.diff_png if match and match.comparison else None,
                "the pixel diff",
                "it is not written; the pixel count above stands",
                refused,
            ),
            dot_diff="\n".join(diff) + "\n" if diff and not found.dot.passed else None,
            graphdiff=drawings.png,
            graphdiff_full=drawings.full,
            nodeid=nodeid,
        )
    except SnapshotWriteError as error:
        unsaved = unsaved_line(error, settings.results.root, settings.rootdir)
        return Written(Artifacts(), unsaved, refused)
    return Written(artifacts, None, refused)


def png_outcome(
    result: AssertionResult, found: Recalled, written: Artifacts, root: Path
) -> PngOutcome:
    """The PNG half of a failed call that compares PNGs."""
    stored, match = found.stored, found.match
    stale = stored is not None and stored.png_stale_against(found.dot.expected)
    return PngOutcome(
        path=display_path(png_location(result.snapshot_location), root),
        exists=stored is not None and stored.png is not None,
        passed=match is not None and match.png_passed and not match.rewrite,
        match=None if match is None else match.png,
        images={k: display_path(p, root) for k, p in written.images().items()},
        stale_against=found.dot.path if stale else None,
    )


def story_places(
    story: Sequence[str], comparison: Comparison | None, png: bytes | None, layout: str
) -> tuple[Place | None, ...]:
    """Per story line, the box ``[x, y, w, h]`` (pixels) in the structural diff drawing
    of the node it names first (``None``: none drawn), for report.html's links."""
    from pytest_tlgraph.pngheader import read_png_size
    from pytest_tlgraph.review.places import node_boxes
    from pytest_tlgraph.review.places import story_places as places

    size = None if png is None else read_png_size(png)
    if comparison is None or size is None or not layout:
        return (None,) * len(story)
    found = places(comparison, node_boxes(layout, size))  # the story's first lines
    found += [None] * (len(story) - len(found))  # a caption's or rescale's line
    return tuple(found[: len(story)])


def from_rootdir(settings: Settings) -> str | None:
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


def notes(note: str | None, written: Artifacts, root: Path) -> list[str]:
    """Lines after the structural summary: where the diff drawings are (or why not)."""
    if written.graphdiff is None:
        return [] if note is None else [note]
    out = [f"structural diff drawing: {display_path(written.graphdiff, root)}"]
    if written.graphdiff_full is not None:
        out.append(f"the whole graph: {display_path(written.graphdiff_full, root)}")
    elif note is not None:
        out.append(note)
    return out


def _not_drawn(note: str | None, written: Artifacts) -> tuple[str, ...]:
    """Why a structural diff drawing is missing (the images name those written)."""
    if note is None or (written.graphdiff is not None and written.graphdiff_full is not None):
        return ()
    return (note,)


def full_story(
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


def accept_hint(update: bool, unsaved: str | None, nodeid: str, settings: Settings) -> str:
    """The message's last line: how to accept the received drawing (none while
    updating; without the record ``tlgraph accept`` reads, only ``--snapshot-update``)."""
    if update:
        return ""
    if unsaved is not None:
        return "\nto accept the received drawing: pytest --snapshot-update"
    return (
        "\nto accept the received drawing: tlgraph accept "
        f"{as_printed(nodeid, settings.project, settings.rootdir)} "
        "(or pytest --snapshot-update)"
    )


def shown(error: SnapshotWriteError, base: Path) -> str:
    """The error's one line, its file shown relative to ``base``."""
    if error.path is None:
        return str(error)
    text = str(error).replace(str(error.path), display_path(error.path, base), 1)
    if error.link is not None and error.link != error.path:
        text = text.replace(str(error.link), display_path(error.link, base), 1)
    return text


def unsaved_line(error: SnapshotWriteError, results: Path, base: Path) -> str:
    """One line: the failure's files could not be saved in the results folder."""
    return (
        f"the failure's report files were not saved in {display_path(results, base)}: "
        f"{error.reason or shown(error, base)}"
    )


@dataclass(frozen=True, slots=True)
class Failed:
    """What the stages of a failed call found and made (:meth:`.call.SnapshotCall.compare`)."""

    found: Recalled
    comparison: Comparison | None
    drawings: GraphDiffs
    written: Written
    report: Report
    drift: Drift | None


def structure_of(comparison: Comparison) -> Structure:
    """The comparison of a DOT mismatch as data: its headline, story, typed edits and
    each kind of change, every text cut at the report's width (the full text:
    ``<stem>.story.txt``)."""
    from pytest_tlgraph.diff.edits import from_json, to_json
    from pytest_tlgraph.diff.view.story import recolour_line
    from pytest_tlgraph.review.cut import cut_lines
    from pytest_tlgraph.review.drift import upgrade_kinds

    upgrade = upgrade_kinds(comparison)
    c = comparison
    return Structure(
        headline=cut_text(headline(c)),
        story=tuple(cut_lines(story_lines(c))),
        edits=tuple(from_json(_cut_values(to_json(edit))) for edit in c.edits),
        changes=tuple(cut_lines(every_change(c))),
        nodes_added=tuple(c.added), nodes_removed=tuple(c.removed),
        replaced=tuple(tuple(p) for p in c.replaced), changed_nodes=tuple(c.changed),
        moved=tuple(tuple(m) for m in c.moved), renumbered=tuple(tuple(p) for p in c.renumbered),
        edges_added=tuple(tuple(e) for e in c.edges_added),
        edges_removed=tuple(tuple(e) for e in c.edges_removed),
        clusters_added=tuple(c.clusters_added), clusters_removed=tuple(c.clusters_removed),
        clusters_changed=tuple(x.id for x in c.clusters_changed), unsigned=tuple(c.unsigned),
        recolour=recolour_line(c), upgrade=None if upgrade is None else tuple(upgrade),
    )  # fmt: skip


def _cut_values(data: dict[str, object]) -> dict[str, object]:
    """An edit's JSON form with each text value (and each text of a list) cut at the
    report's width, as every other line of a record is (a 20k-entry row changed)."""

    def one(value: object) -> object:
        return cut_text(value) if isinstance(value, str) else value

    return {k: [one(x) for x in v] if isinstance(v, list) else one(v) for k, v in data.items()}


def failed_outcome(
    failed: Failed, *, nodeid: str, name: str, call: int | str | None,
    accept: Acceptance | None, settings: Settings,
) -> CallOutcome:  # fmt: skip
    """The one outcome of a failed call, from what its stages found: the verdict, the
    report, the story's places, the notes, the typed comparison, the drift, what
    accepting needs, the files kept and where the call ran."""
    dot, comparison, drawings = failed.found.dot, failed.comparison, failed.drawings
    missing = dot.expected is None and dot.error is None
    results = settings.results
    artifacts = failed.written.artifacts
    story = failed.report.story
    return CallOutcome(
        nodeid=nodeid,
        name=name,
        verdict="missing" if missing else "failed",
        call=call,
        report=failed.report,
        places=story_places(story, comparison, drawings.png, drawings.layout),
        notes=(*_not_drawn(drawings.note, artifacts), *failed.written.refused),
        structure=None if dot.passed or comparison is None else structure_of(comparison),
        drift=failed.drift,
        accept=accept,
        images={k: results.relative(p) for k, p in artifacts.images().items()},
        files=tuple(results.relative(p) for p in artifacts.files()),
        where=Where(
            base=str(settings.rootdir.resolve()),
            rootdir=None if settings.project is None else str(settings.project.resolve()),
            results=str(results.root.resolve()),
            results_from_rootdir=from_rootdir(settings),
        ),
    )
