"""The failure report: one message, readable in a CI log (PLUGIN.md §5).

Sections, in order: the structural summary, the unified DOT diff (capped), the encoding
state of the received draw with what changed against the snapshot, and the PNG verdict
with the paths of the images. Pure text in, text out: no files, no pytest.

The snapshot's encoding state is not stored (the DOT holds only the drawing), so what
changed is derived from what the stored drawing does carry: the key's lines and the
caption's lines, read from both DOT texts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from pytest_tlgraph.controls import visible
from pytest_tlgraph.encoding.key import KEY_ID
from pytest_tlgraph.snapshots.dotdiff import unified_dot_diff
from pytest_tlgraph.snapshots.graphdata import (
    DotParseError,
    GraphData,
    html_label_body,
    label_rows,
    parse_dot,
)
from pytest_tlgraph.snapshots.structure import StructureSummary, summarize

if TYPE_CHECKING:
    from pytest_tlgraph.snapshots.extensions import PngMatch

__all__ = [
    "MAX_DIFF_LINES",
    "DotOutcome",
    "PngOutcome",
    "Report",
    "build_report",
    "capped",
    "caption_rows",
    "state_changes",
    "summary_lines",
    "unified_dot_diff",
]

#: DOT diff lines shown in the message; the full diff goes to the results directory.
MAX_DIFF_LINES: Final = 200
#: Longest list of names a summary line prints before saying how many it left out.
MAX_LISTED: Final = 20
_UNCHANGED: Final = "no structural change (same nodes, edges, label rows and clusters)"
_RED, _GREEN, _CYAN, _BOLD, _RESET = "\x1b[31m", "\x1b[32m", "\x1b[36m", "\x1b[1m", "\x1b[0m"


@dataclass(frozen=True, slots=True)
class DotOutcome:
    """The DOT comparison: the stored text (``None`` when missing) and the received."""

    path: str
    expected: str | None
    received: str
    passed: bool
    error: str | None = None


@dataclass(frozen=True, slots=True)
class PngOutcome:
    """The PNG comparison and where its images were written."""

    path: str
    exists: bool
    passed: bool
    match: PngMatch | None
    images: dict[str, str] = field(default_factory=dict)  # actual / expected / diff -> path
    #: The stored DOT the stored PNG was not drawn from (its metadata names another
    #: DOT): the PNG is stale. ``None`` when it was drawn from the stored DOT.
    stale_against: str | None = None


@dataclass(frozen=True, slots=True)
class Report:
    """Everything one failure message says, as plain lines per section."""

    title: str
    sections: tuple[tuple[str, tuple[str, ...]], ...]

    def text(self, *, color: bool = False) -> str:
        """The message; ``color`` adds ANSI colours (off for ``NO_COLOR`` and logs)."""
        out = [_paint(self.title, _BOLD, color)]
        for heading, lines in self.sections:
            if heading:
                out.append(_paint(heading, _BOLD, color))
            out.extend("  " + _diff_colour(line, color) for line in lines)
        return "\n".join(out)


def _paint(text: str, code: str, color: bool) -> str:
    return f"{code}{text}{_RESET}" if color else text


def _diff_colour(line: str, color: bool) -> str:
    if not color:
        return line
    if line.startswith(("---", "+++")):
        return _paint(line, _BOLD, True)
    if line.startswith("-"):
        return _paint(line, _RED, True)
    if line.startswith("+"):
        return _paint(line, _GREEN, True)
    if line.startswith("@@"):
        return _paint(line, _CYAN, True)
    return line


def capped(lines: Sequence[str], limit: int, where: str | None) -> tuple[str, ...]:
    """At most ``limit`` lines, then one line counting the rest and naming ``where``."""
    if len(lines) <= limit:
        return tuple(lines)
    rest = f"... {len(lines) - limit} more diff lines left out"
    return (*lines[:limit], rest + (f" (full diff: {where})" if where else ""))


def _listing(items: Sequence[str]) -> str:
    shown = ", ".join(items[:MAX_LISTED])
    if len(items) > MAX_LISTED:
        shown += f", ... and {len(items) - MAX_LISTED} more"
    return shown


def summary_lines(summary: StructureSummary) -> list[str]:
    """The structural summary, one change or list per line."""
    if summary.unchanged:
        return [_UNCHANGED]
    out: list[str] = []
    for title, items in (
        ("nodes added", summary.nodes_added),
        ("nodes removed", summary.nodes_removed),
        ("renumbered", tuple(f"{a} is now {b}" for a, b in summary.renumbered)),
        ("edges added", tuple(f"{a} -> {b}" for a, b in summary.edges_added)),
        ("edges removed", tuple(f"{a} -> {b}" for a, b in summary.edges_removed)),
    ):
        if items:
            out.append(f"{title} ({len(items)}): {_listing(items)}")
    if summary.row_changes:
        count = len(summary.changed_nodes)
        out.append(f"label rows changed ({count} node{'' if count == 1 else 's'}):")
        shown = summary.row_changes[:MAX_LISTED]
        out.extend(f"  {change}" for change in shown)
        if len(summary.row_changes) > len(shown):
            out.append(f"  ... and {len(summary.row_changes) - len(shown)} more row changes")
    for title, items in (
        ("clusters added", summary.clusters_added),
        ("clusters removed", summary.clusters_removed),
        ("clusters changed", summary.clusters_changed),
    ):
        if items:
            out.append(f"{title} ({len(items)}): {_listing(items)}")
    if summary.unsigned:
        count = len(summary.unsigned)
        out.append(
            f"content signature on one side only ({count}): {_listing(summary.unsigned)}; "
            "the stored drawing predates the signatures of collapsed nodes (0.2): if "
            "nothing else changed, run pytest --snapshot-update to rewrite it"
        )
    return out


def caption_rows(dot: str) -> tuple[str, ...]:
    """The graph caption's lines (model line first, then channel lines)."""
    for line in dot.splitlines()[1:3]:
        if line.strip().startswith("graph ["):
            body = html_label_body(line)
            return () if body is None else label_rows(body)
    return ()


def state_changes(
    snapshot_dot: str,
    received_dot: str,
    snapshot_key: Sequence[str],
    received_key: Sequence[str],
) -> list[str]:
    """What the stored drawing shows differently about the encoding: key and caption lines."""
    out: list[str] = []
    for name, old, new in (
        ("key", tuple(snapshot_key), tuple(received_key)),
        ("caption", _safe_caption(snapshot_dot)[1:], caption_rows(received_dot)[1:]),
    ):
        out.extend(f"{name} line no longer drawn: {line}" for line in old if line not in new)
        out.extend(f"{name} line now drawn: {line}" for line in new if line not in old)
    return out


def _safe_caption(dot: str) -> tuple[str, ...]:
    try:
        return caption_rows(dot)
    except DotParseError:
        return ()


def _png_lines(outcome: PngOutcome) -> list[str]:
    match = outcome.match
    out: list[str] = []
    if not outcome.exists:
        out.append(_missing(outcome.path))
    elif outcome.passed:
        out.append("PNG matches the snapshot")
    else:
        if outcome.stale_against is not None:
            out.append(
                "stale PNG: its metadata says it was drawn from another DOT than "
                f"{outcome.stale_against}; run pytest --snapshot-update to redraw it"
            )
        out.extend(_png_verdict(outcome.path, match))
    if match is not None and match.comparison is not None and not outcome.passed:
        out.append(f"stored: {outcome.path}")
    for kind in ("actual", "expected", "diff"):
        if kind in outcome.images:
            out.append(f"{kind + ':':<9} {outcome.images[kind]}")
    return out


def _png_verdict(path: str, match: PngMatch | None) -> list[str]:
    """What the pixel comparison of a failed PNG found."""
    if match is None:
        return []
    if match.mismatch_line is not None:
        return [match.mismatch_line]
    if match.error is not None:
        return [
            f"the stored PNG {path} could not be compared: {match.error}; "
            "run pytest --snapshot-update to redraw it"
        ]
    if match.comparison is None:
        return []
    c = match.comparison
    if c.size_changed:
        (ew, eh), (aw, ah) = c.expected_size, c.actual_size
        return [f"PNG size changed: snapshot {ew}x{eh} px, received {aw}x{ah} px"]
    return [
        f"{c.mismatched} mismatched pixels (threshold {c.threshold:g}, budget {c.max_diff_pixels})"
    ]


def _missing(path: str) -> str:
    return f"snapshot {path} does not exist: run pytest --snapshot-update to create it"


def _structure_lines(dot: DotOutcome, received: GraphData) -> tuple[list[str], GraphData | None]:
    if dot.error is not None:
        return [f"the stored DOT {dot.path} could not be read: {dot.error}"], None
    if dot.expected is None:
        return [_missing(dot.path)], None
    try:
        snapshot = parse_dot(dot.expected)
    except DotParseError as error:
        return [
            f"the stored DOT {dot.path} is not a tlgraph drawing (damaged or foreign "
            f"file: {error}); run pytest --snapshot-update to rewrite it"
        ], None
    lines = summary_lines(summarize(snapshot, received))
    old, new = caption_rows(dot.expected)[:1], caption_rows(dot.received)[:1]
    if old != new:
        caption = f"caption {old[0] if old else '(none)'} -> {new[0] if new else '(none)'}"
        lines = [caption] if lines == [_UNCHANGED] else [*lines, caption]
    return lines, snapshot


def build_report(
    *,
    name: str,
    nodeid: str,
    dot: DotOutcome,
    png: PngOutcome | None,
    received: GraphData,
    diff: Sequence[str],
    full_diff_path: str | None,
    state_text: str | None,
    notes: Sequence[str] = (),
    write_errors: Sequence[str] = (),
) -> Report:
    """The failure message of one snapshot, section by section (PLUGIN.md §5).

    A snapshot that does not exist yet gets a short message instead: nothing to compare.
    So does one that ``--snapshot-update`` could not write (``write_errors``): the
    message says what failed to be written and why.
    """
    if write_errors:
        return _visible(
            Report(
                f"tlgraph snapshot {name} could not be written ({nodeid})",
                (("", tuple(write_errors)),),
            )
        )
    if dot.expected is None and dot.error is None and (png is None or not png.exists):
        lines = [_missing(dot.path)] + ([_missing(png.path)] if png is not None else [])
        if png is not None and "actual" in png.images:
            lines.append(f"received picture: {png.images['actual']}")
        return _visible(
            Report(f"tlgraph snapshot {name} does not exist yet ({nodeid})", (("", tuple(lines)),))
        )
    title = f"tlgraph snapshot {name} does not match ({nodeid})"
    structure, snapshot = _structure_lines(dot, received)
    structure.extend(notes)  # the rescale line, the structural diff drawing's path
    if dot.expected is None or dot.error is not None:
        diff_lines = ["no stored DOT to compare with"]
    elif snapshot is None:
        # A damaged or foreign file is never echoed: its bytes could be anything.
        diff_lines = [f"left out: the stored file is not a tlgraph drawing ({len(diff)} lines)"]
    elif dot.passed:
        diff_lines = ["DOT matches the snapshot"]
    else:
        diff_lines = [f"stored: {dot.path}", *capped(diff, MAX_DIFF_LINES, full_diff_path)]
    state = state_text.splitlines() if state_text else ["no channel active"]
    if snapshot is not None and dot.expected is not None:
        changes = state_changes(
            dot.expected,
            dot.received,
            snapshot.nodes.get(KEY_ID, ()),
            received.nodes.get(KEY_ID, ()),
        )
        if changes:
            state += ["changed against the snapshot (from its key and caption):"]
            state += [f"  {line}" for line in changes]
    sections: list[tuple[str, tuple[str, ...]]] = [
        ("structure (snapshot -> received):", tuple(structure)),
        ("DOT diff (- snapshot / + received):", tuple(diff_lines)),
        ("encoding state (received):", tuple(state)),
        ("PNG:", tuple(_png_lines(png)) if png is not None else ("PNG comparison off",)),
    ]
    return _visible(Report(title, tuple(sections)))


def _visible(report: Report) -> Report:
    """The report with every control character shown as its escape: lines read from a
    stored file must not reach the terminal as escape sequences."""
    return Report(
        visible(report.title),
        tuple(
            (heading, tuple(visible(line) for line in lines)) for heading, lines in report.sections
        ),
    )
