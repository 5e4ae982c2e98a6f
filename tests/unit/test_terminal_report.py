"""The failure message in a terminal (REVIEW.md §2.5) and the rescale line (§2.4)."""

from __future__ import annotations

import torch

from pytest_tlgraph.capture import capture
from pytest_tlgraph.diff.view.comparison import compare
from pytest_tlgraph.diff.view.story import recolour_line
from pytest_tlgraph.review.dotdiff import CONTEXT_CHARS, cut_diff_lines
from pytest_tlgraph.review.report import (
    EVERY_CHANGE,
    DotOutcome,
    EncodingShown,
    LeftOut,
    Report,
    build_report,
    comparison_of,
)
from pytest_tlgraph.review.terminal import (
    MAX_LINE_CHARS,
    TERMINAL_DIFF_LINES,
    cut_line,
    terminal_report,
)
from tests.models import TwoBranches


def test_cut_line_keeps_short_lines_and_counts_what_it_cuts() -> None:
    assert cut_line("short") == "short"
    line = "x" * 900
    cut = cut_line(line)
    assert len(cut) == MAX_LINE_CHARS
    kept = cut.split(" ... ")[0]
    assert cut.endswith(f"(+{900 - len(kept)} chars)")


def _report(
    diff: list[str],
    state: list[str],
    left_out: LeftOut | None = None,
    encoding: EncodingShown | None = None,
) -> Report:
    return Report(
        "tlgraph snapshot test_x does not match (t.py::test_x)",
        (
            ("structure (snapshot -> received):", ("added gelu_1 @head.1",)),
            ("DOT diff (- snapshot / + received):", tuple(diff)),
            ("encoding state (received):", tuple(state)),
            ("PNG:", ("PNG size changed: snapshot 10x10 px, received 10x12 px",)),
            (EVERY_CHANGE, ("added gelu_1 @head.1", "edge added linear_1 -> gelu_1")),
        ),
        left_out=left_out,
        encoding=encoding,
    )


def test_the_terminal_keeps_the_story_and_leaves_every_change_to_report_html() -> None:
    shown = terminal_report(_report(["+ x"], ["no channel active"]))
    assert [heading for heading, _ in shown.sections] == [
        "structure (snapshot -> received):",
        "DOT diff (- snapshot / + received):",
        "encoding state (received):",
        "PNG:",
    ]
    assert dict(shown.sections)["structure (snapshot -> received):"] == ("added gelu_1 @head.1",)
    assert "edge added" not in shown.text()


def test_terminal_caps_diff_lines_and_widths() -> None:
    diff = [f"+ line {i} " + "y" * 400 for i in range(120)]
    left = LeftOut(80, "r/t.dot.diff")
    diff.append(left.line())
    assert diff[-1] == "... 80 more diff lines left out (full diff: r/t.dot.diff)"
    shown = terminal_report(_report(diff, ["no channel active"], left))
    lines = dict(shown.sections)["DOT diff (- snapshot / + received):"]
    assert len(lines) == TERMINAL_DIFF_LINES + 1
    assert lines[-1] == "... 160 more diff lines left out (full diff: r/t.dot.diff)"
    assert shown.left_out == LeftOut(160, "r/t.dot.diff")
    text = shown.text()
    assert max(len(line) for line in text.splitlines()) <= MAX_LINE_CHARS


def test_the_terminal_counts_from_the_reports_value_never_its_sentence() -> None:
    # A diff line that reads like the count is a line of the diff: only the report's
    # value says lines were left out, and where.
    diff = [f"+ line {i}" for i in range(50)]
    diff.append("... 7 more diff lines left out (full diff: elsewhere.diff)")
    lines = dict(terminal_report(_report(diff, ["no channel active"])).sections)[
        "DOT diff (- snapshot / + received):"
    ]
    assert lines[-1] == "... 11 more diff lines left out (all of it in report.html)"
    few = terminal_report(_report(["+ a", "... 3 more"], [], LeftOut(3)))
    assert dict(few.sections)["DOT diff (- snapshot / + received):"] == (
        "+ a",
        "... 3 more diff lines left out (all of it in report.html)",
    )


def test_the_report_hands_its_cut_and_its_state_layout_to_the_terminal() -> None:
    x = torch.randn(1, 3, 8, 8)
    old = capture(TwoBranches(3), x).draw(color_by="flops")
    new = capture(TwoBranches(7), x).draw(color_by="flops")
    diff = [f"+ {i}" for i in range(300)]
    report = build_report(
        name="t", nodeid="t.py::t", dot=DotOutcome("p.gv", old.dot, new.dot, False),
        png=None, diff=diff, full_diff_path="r/t.dot.diff", state_text="color_by: flops",
    )  # fmt: skip
    assert report.left_out == LeftOut(100, "r/t.dot.diff")
    section = dict(report.sections)["DOT diff (- snapshot / + received):"]
    assert section[-1] == report.left_out.line()
    assert report.encoding is not None and report.encoding.active
    state = dict(report.sections)["encoding state (received):"]
    assert report.encoding.changed_from is not None
    assert state[report.encoding.changed_from].startswith("changed against the snapshot")
    shown = terminal_report(report)
    # "stored: p.gv" and 200 diff lines in the report; the terminal shows 40 of them.
    assert dict(shown.sections)["DOT diff (- snapshot / + received):"][-1] == (
        "... 261 more diff lines left out (full diff: r/t.dot.diff)"
    )
    assert dict(shown.sections)["encoding state (received):"] == state[
        report.encoding.changed_from :
    ]


def test_prose_wraps_whole() -> None:
    remedy = "renderer mismatch: " + "word " * 60 + "Run with --tlgraph-renderer=pure to compare."
    shown = terminal_report(Report("t", (("PNG:", (remedy,)),))).text()
    assert max(len(line) for line in shown.splitlines()) <= MAX_LINE_CHARS
    assert "--tlgraph-renderer=pure to compare." in shown
    assert " ".join(shown.split()) == " ".join(f"t PNG: {remedy}".split())


def test_state_only_where_it_changed() -> None:
    listing = ["color_by: forward FLOPs", "  domain: 0 .. 9", "  nodes:", "    a: 1 -> #000"]
    quiet = terminal_report(_report([], listing, encoding=EncodingShown(active=True)))
    assert dict(quiet.sections)["encoding state (received):"] == (
        "unchanged against the snapshot's key and caption (full state in report.html)",
    )
    changed = [*listing, "changed against the snapshot (from its key and caption):",
               "  key line now drawn: x"]  # fmt: skip
    loud = terminal_report(_report([], changed, encoding=EncodingShown(True, changed_from=4)))
    assert dict(loud.sections)["encoding state (received):"] == tuple(changed[4:])


def test_rescale_is_named_with_the_nodes_it_recoloured() -> None:
    x = torch.randn(1, 3, 8, 8)
    old = capture(TwoBranches(3), x).draw(color_by="flops")
    new = capture(TwoBranches(7), x).draw(color_by="flops")
    comparison = compare(old.dot, new.dot)
    line = recolour_line(comparison)
    assert line is not None
    assert line.startswith("colour domain 0 FLOPs .. ") and " -> 0 FLOPs .. " in line
    # Branch b's conv and the add kept their rows and values but not their fills; a's
    # own change (its kernel row) is not counted.
    assert line.endswith(": 2 nodes recoloured by the rescale alone")
    assert len(comparison.recoloured) == 2
    assert not set(comparison.recoloured) & set(comparison.changed)
    assert recolour_line(compare(old.dot, old.dot)) is None
    plain = capture(TwoBranches(7), x).draw()
    assert recolour_line(compare(plain.dot, plain.dot)) is None
    # A damaged stored side is no comparison at all: one line says so, no rescale line.
    found = comparison_of(DotOutcome("p.gv", "garbage", new.dot, False))
    assert isinstance(found, str) and "is not a tlgraph drawing" in found


def test_a_long_changed_pair_is_cut_around_its_first_difference() -> None:
    common = '  "linear_1" [label=<' + "x" * 300
    old, new = f"-{common}A, tail>];", f"+{common}B, tail>];"
    lines = ["--- snapshot", "+++ received", "@@ -1 +1 @@", " context", old, new]
    cut = cut_diff_lines(lines, MAX_LINE_CHARS)
    assert cut[:4] == lines[:4]
    shown_old, shown_new = cut[4], cut[5]
    assert shown_old != shown_new
    assert len(shown_old) <= MAX_LINE_CHARS and len(shown_new) <= MAX_LINE_CHARS
    assert shown_old.startswith("-...x") and shown_new.startswith("+...x")
    assert "A, tail>];" in shown_old and "B, tail>];" in shown_new
    assert shown_old.index("A") == shown_new.index("B") == 4 + CONTEXT_CHARS


def test_a_pair_differing_early_and_a_lone_long_line_keep_their_start() -> None:
    old, new = "-a" + "x" * 300, "+b" + "x" * 300
    assert cut_diff_lines([old, new], 100) == [cut_line(old, 100), cut_line(new, 100)]
    lone = "+" + "y" * 300
    assert cut_diff_lines([" ctx", lone], 100) == [" ctx", cut_line(lone, 100)]


def test_the_terminal_report_cuts_the_dot_diff_pair_around_its_difference() -> None:
    common = "z" * 400
    report = terminal_report(_report([f"-{common}1", f"+{common}2"], ["no channel active"]))
    diff = dict(report.sections)["DOT diff (- snapshot / + received):"]
    assert diff[0] != diff[1] and diff[0].endswith("1") and diff[1].endswith("2")
