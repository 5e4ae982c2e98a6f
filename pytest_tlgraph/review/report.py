"""The failure report: one message, readable in a CI log
(docs/usage.md, "What a failure looks like").

Sections, in order: the structural summary (the comparison's story,
:mod:`.compare.story`), the unified DOT diff (capped), the encoding state of the
received draw with what changed against the snapshot, the PNG verdict with the paths
of the images, and every change node by node (``report.html`` shows it; the terminal
keeps the grouped story). Pure text in, text out: no files, no pytest.

The snapshot's encoding state is not stored (the DOT holds only the drawing), so what
changed is derived from what the stored drawing does carry: the key's lines and the
caption's lines, read from both sides' graph models.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from pytest_tlgraph.diff.dotparse import DotParseError
from pytest_tlgraph.diff.view.comparison import Comparison, compare
from pytest_tlgraph.diff.view.story import (
    UNCHANGED,
    every_change,
    recolour_line,
    story_lines,
)
from pytest_tlgraph.escaping import reviewer as visible
from pytest_tlgraph.review.cut import cut_lines, cut_text, is_long, place_note
from pytest_tlgraph.review.dotdiff import unified_dot_diff

if TYPE_CHECKING:
    from pytest_tlgraph.pixels.match import PngMatch

__all__ = [
    "DOT_DIFF",
    "ENCODING_STATE",
    "EVERY_CHANGE",
    "MAX_DIFF_LINES",
    "STRUCTURE",
    "DotOutcome",
    "EncodingShown",
    "LeftOut",
    "PngOutcome",
    "Report",
    "build_report",
    "capped",
    "comparison_of",
    "state_changes",
    "unified_dot_diff",
]

#: DOT diff lines a failure's report keeps (its record, report.html): enough to read a
#: changed block whole; the full diff goes to ``<stem>.dot.diff`` in the results folder.
#: The terminal shows fewer (``terminal.TERMINAL_DIFF_LINES``).
MAX_DIFF_LINES: Final = 200
#: Story lines the structure section shows before counting the rest.
MAX_STORY_LINES: Final = 24
#: The section ``report.html`` lists every change in, node by node (the terminal
#: shows the grouped story only).
EVERY_CHANGE: Final = "every change, node by node:"
#: The headings of the story and of the DOT diff (``report.html`` places them).
STRUCTURE: Final = "structure (snapshot -> received):"
DOT_DIFF: Final = "DOT diff (- snapshot / + received):"
#: The heading of the received draw's encoding state.
ENCODING_STATE: Final = "encoding state (received):"
#: The line that opens, in the encoding state section, what changed against the snapshot.
STATE_CHANGED: Final = "changed against the snapshot (from its key and caption):"
_RED, _GREEN, _CYAN, _BOLD, _RESET = "\x1b[31m", "\x1b[32m", "\x1b[36m", "\x1b[1m", "\x1b[0m"


@dataclass(frozen=True, slots=True)
class DotOutcome:
    """The DOT comparison: the stored text (``None`` when missing) and the received."""

    path: str
    expected: str | None
    received: str
    passed: bool
    error: str | None = None
    #: ``error`` is a file standing where the snapshot's folder belongs (its line
    #: names the file and the remedy).
    blocked: bool = False


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
class LeftOut:
    """DOT diff lines a section leaves out: how many, and the file that keeps the whole
    diff (``None``: none written). The one place their line is worded; a reader that
    shows fewer lines makes its own :class:`LeftOut`, never reads the line back."""

    count: int
    where: str | None = None

    def line(self, elsewhere: str | None = None) -> str:
        """``... 80 more diff lines left out (full diff: r/t.dot.diff)``; without a file,
        ``elsewhere`` (``all of it in report.html``) in the brackets, or none."""
        place = f"full diff: {self.where}" if self.where else elsewhere
        return f"... {self.count} more diff lines left out" + (f" ({place})" if place else "")


@dataclass(frozen=True, slots=True)
class EncodingShown:
    """What the encoding state section holds, as values: whether a channel is active,
    and the index of its line :data:`STATE_CHANGED` (``None``: nothing changed against
    the snapshot's key and caption)."""

    active: bool
    changed_from: int | None = None


@dataclass(frozen=True, slots=True)
class Report:
    """Everything one failure message says, as plain lines per section."""

    title: str
    sections: tuple[tuple[str, tuple[str, ...]], ...]
    #: What changed, every line (the structure section caps it; ``report.html`` lists
    #: it whole): the drift line first, then the story, or the one line saying why
    #: nothing could be compared. Empty for a missing or unwritten snapshot.
    story: tuple[str, ...] = ()
    #: The DOT diff section's last line as a value, when that line counts lines left
    #: out (:func:`capped`); ``None`` when the section lists the whole diff.
    left_out: LeftOut | None = None
    #: The encoding state section's layout (``None``: the report has no such section).
    encoding: EncodingShown | None = None

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


def left_out_of(lines: Sequence[str], limit: int, where: str | None) -> LeftOut | None:
    """The lines :func:`capped` leaves out of ``lines`` (``None``: it keeps them all)."""
    return None if len(lines) <= limit else LeftOut(len(lines) - limit, where)


def capped(lines: Sequence[str], limit: int, where: str | None) -> tuple[str, ...]:
    """At most ``limit`` lines, then one line counting the rest and naming ``where``."""
    rest = left_out_of(lines, limit, where)
    return tuple(lines) if rest is None else (*lines[:limit], rest.line())


def state_changes(comparison: Comparison) -> list[str]:
    """What the stored drawing shows differently about the encoding: key and caption
    lines (the model line of the caption is the structure's, not the encoding's)."""
    out: list[str] = []
    old, new = comparison.old, comparison.new
    for name, before, after in (
        ("key", old.key_rows, new.key_rows),
        ("caption", old.caption_rows[1:], new.caption_rows[1:]),
    ):
        out.extend(f"{name} line no longer drawn: {line}" for line in before if line not in after)
        out.extend(f"{name} line now drawn: {line}" for line in after if line not in before)
    return out


def _png_lines(outcome: PngOutcome, blocked: str | None = None) -> list[str]:
    match = outcome.match
    out: list[str] = []
    if not outcome.exists:
        out.append(_missing(outcome.path) if blocked is None else f"{outcome.path}: {blocked}")
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


def comparison_of(dot: DotOutcome) -> Comparison | str:
    """The comparison of the stored DOT with the received one, or the line saying why
    there is none (no stored file, an unreadable one, a damaged or foreign one)."""
    if dot.error is not None:
        if dot.blocked:
            return f"the stored DOT {dot.path} cannot exist: {dot.error}"
        return f"the stored DOT {dot.path} could not be read: {dot.error}"
    if dot.expected is None:
        return _missing(dot.path)
    try:
        return compare(dot.expected, dot.received)
    except DotParseError as error:
        return (
            f"the stored DOT {dot.path} is not a tlgraph drawing (damaged or foreign "
            f"file: {error}); run pytest --snapshot-update to rewrite it"
        )


def _story(comparison: Comparison, cap: int | None = MAX_STORY_LINES) -> list[str]:
    """The story's lines, at most ``cap`` of them before a line counting the rest
    (``None``: every line), then the caption's and the colour domain's changes."""
    lines = story_lines(comparison)
    if cap is not None and len(lines) > cap:
        rest = len(lines) - cap
        lines = [*lines[:cap], f"... and {rest} more (every change: report.html)"]
    old, new = comparison.old.caption_rows[:1], comparison.new.caption_rows[:1]
    if old != new:
        caption = f"caption {old[0] if old else '(none)'} -> {new[0] if new else '(none)'}"
        lines = [caption] if lines == [UNCHANGED] else [*lines, caption]
    rescale = recolour_line(comparison)
    return lines if rescale is None else [*lines, rescale]


def build_report(
    *,
    name: str,
    nodeid: str,
    dot: DotOutcome,
    png: PngOutcome | None,
    diff: Sequence[str],
    full_diff_path: str | None,
    state_text: str | None,
    notes: Sequence[str] = (),
    write_errors: Sequence[str] = (),
    comparison: Comparison | str | None = None,
    png_skipped: str | None = None,
    drift: str | None = None,
    full_text_path: str | None = None,
) -> Report:
    """The failure message of one snapshot, section by section
    (docs/usage.md, "What a failure looks like").

    A snapshot that does not exist yet gets a short message instead: nothing to compare.
    So does one that ``--snapshot-update`` could not write (``write_errors``): the
    message says what failed to be written and why. ``comparison`` is what
    :func:`comparison_of` gave the caller already (else it is made here). ``drift``
    (``review.drift.drift_line``: the baseline was drawn with other versions) is the
    story's first line. Every line is cut at ``limits.MAX_REPORT_LINE`` characters
    (:mod:`.cut`); a section that was cut names where its full text is
    (``full_text_path``: the story and every change; ``full_diff_path``: the DOT diff).
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
    found = comparison if comparison is not None else comparison_of(dot)
    compared = found if isinstance(found, Comparison) else None
    structure = [found] if isinstance(found, str) else _story(found)
    story = [found] if isinstance(found, str) else _story(found, cap=None)
    structure.extend(notes)  # the structural diff drawings' paths
    if drift is not None:  # the cause a reviewer checks first
        structure.insert(0, drift)
        story.insert(0, drift)
    left_out = None
    if dot.expected is None or dot.error is not None:
        diff_lines = ["no stored DOT to compare with"]
    elif compared is None:
        # A damaged or foreign file is never echoed: its bytes could be anything.
        diff_lines = [f"left out: the stored file is not a tlgraph drawing ({len(diff)} lines)"]
    elif dot.passed:
        diff_lines = ["DOT matches the snapshot"]
    else:
        diff_lines = [f"stored: {dot.path}", *capped(diff, MAX_DIFF_LINES, full_diff_path)]
        left_out = left_out_of(diff, MAX_DIFF_LINES, full_diff_path)
    state, encoding = _state_section(state_text, compared)
    sections: list[tuple[str, tuple[str, ...]]] = [
        (STRUCTURE, tuple(structure)),
        (DOT_DIFF, tuple(diff_lines)),
        (ENCODING_STATE, tuple(state)),
        (
            "PNG:",
            tuple(_png_lines(png, _blocked(dot))) if png is not None else (_no_png(png_skipped),),
        ),
    ]
    if compared is not None and not compared.unchanged:
        sections.append((EVERY_CHANGE, tuple(every_change(compared))))
    report = Report(title, tuple(sections), tuple(story), left_out, encoding)
    return _fitted(_visible(report), full_text_path, full_diff_path)


def _state_section(
    state_text: str | None, compared: Comparison | None
) -> tuple[list[str], EncodingShown]:
    """The encoding state section's lines (the received draw's state, then what changed
    against the snapshot's key and caption) and their layout as a value."""
    state = state_text.splitlines() if state_text else ["no channel active"]
    changes = state_changes(compared) if compared is not None else []
    if not changes:
        return state, EncodingShown(active=bool(state_text))
    shown = EncodingShown(active=bool(state_text), changed_from=len(state))
    return [*state, STATE_CHANGED, *(f"  {line}" for line in changes)], shown


def _blocked(dot: DotOutcome) -> str | None:
    """The line of a file standing where the snapshot folder belongs, if one does."""
    if dot.error is not None and dot.blocked:
        return dot.error
    return None


def _no_png(skipped: str | None) -> str:
    """The PNG section of a call that compared no PNG: why (the size guard's line), or
    that PNG comparison is off."""
    return "PNG comparison off" if skipped is None else f"PNG not compared: {skipped}"


def _fitted(report: Report, text_path: str | None, diff_path: str | None) -> Report:
    """Every line of ``report`` cut at the report's width; a section that had a longer
    line says so, naming where the full text is kept."""
    sections = []
    for heading, lines in report.sections:
        if not is_long(lines):
            sections.append((heading, lines))
            continue
        diff = heading == DOT_DIFF
        fitted = cut_lines(lines, diff=diff)
        note = place_note(diff_path if diff else text_path)
        if diff:  # after "stored: ...", before a last "... more diff lines left out"
            fitted.insert(min(1, len(fitted)), note)
        else:
            fitted.append(note)
        sections.append((heading, tuple(fitted)))
    story = tuple(cut_lines(report.story, diff=False)) if is_long(report.story) else report.story
    return Report(cut_text(report.title), tuple(sections), story, report.left_out, report.encoding)


def _visible(report: Report) -> Report:
    """The report with every control character shown as its escape: lines read from a
    stored file must not reach the terminal as escape sequences."""
    return Report(
        visible(report.title),
        tuple(
            (heading, tuple(visible(line) for line in lines)) for heading, lines in report.sections
        ),
        tuple(visible(line) for line in report.story),
        None if report.left_out is None else _visible_left_out(report.left_out),
        report.encoding,
    )


def _visible_left_out(left: LeftOut) -> LeftOut:
    """``left`` with its path's control characters shown as escapes, as its line is."""
    return LeftOut(left.count, None if left.where is None else visible(left.where))
