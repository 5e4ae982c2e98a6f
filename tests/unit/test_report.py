"""The failure report, built from real drawings and real PNG comparisons."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from pytest_tlgraph import capture
from pytest_tlgraph.draw import Drawing
from pytest_tlgraph.pixels.match import PngMatch
from pytest_tlgraph.pixels.pixeldiff import compare_png
from pytest_tlgraph.review.report import (
    EVERY_CHANGE,
    MAX_DIFF_LINES,
    DotOutcome,
    PngOutcome,
    Report,
    build_report,
    unified_dot_diff,
)
from pytest_tlgraph.snapshots.provenance import render_snapshot_png
from tests.models import MLP, seeded

HEADINGS = [
    "structure (snapshot -> received):",
    "DOT diff (- snapshot / + received):",
    "encoding state (received):",
    "PNG:",
]


def _draw(hidden: int = 16, **options: Any) -> Drawing:
    return capture(seeded(MLP(d_hidden=hidden)), torch.zeros(2, 8)).draw(**options)


def _report(old: Drawing | None, new: Drawing, png: PngOutcome | None = None) -> Report:
    expected = None if old is None else old.dot
    diff = [] if expected is None else list(unified_dot_diff(expected, new.dot))
    return build_report(
        name="test_mlp",
        nodeid="test_m.py::test_mlp",
        dot=DotOutcome("__snapshots__/test_m/test_mlp.gv", expected, new.dot, old == new),
        png=png,
        diff=diff,
        full_diff_path="tlgraph-results/test_m/test_mlp.dot.diff",
        state_text=None if new.state is None else new.state.describe(),
    )


def test_sections_come_in_order_with_the_args_callout() -> None:
    report = _report(_draw(), _draw(show_redundant_args=True))
    assert [heading for heading, _ in report.sections] == [*HEADINGS, EVERY_CHANGE]
    sections = dict(report.sections)
    # fc1, fc2 and the ReLU between them (inplace=False): every arg comes back, each
    # named by its node id and full module address.
    assert sections[HEADINGS[0]] == (
        "linear_1 @fc1: now shows in_features=8; now shows out_features=16",
        "2 nodes (linear_1, linear_2) @fc*: now shows bias=True",
        "relu_1 @act: now shows inplace=False",
        "linear_2 @fc2: now shows in_features=16; now shows out_features=4",
    )
    # report.html's list: every change on its own line, node by node.
    assert "linear_1 @fc1: now shows in_features=8" in sections[EVERY_CHANGE]
    assert "linear_2 @fc2: now shows bias=True" in sections[EVERY_CHANGE]
    diff = sections[HEADINGS[1]]
    stored = "stored: __snapshots__/test_m/test_mlp.gv"
    assert diff[:3] == (stored, "--- snapshot", "+++ received")
    assert any(line.startswith("+") and "in_features=8" in line for line in diff)
    assert sections[HEADINGS[2]] == ("no channel active",)
    assert sections[HEADINGS[3]] == ("PNG comparison off",)
    assert report.title == "tlgraph snapshot test_mlp does not match (test_m.py::test_mlp)"


def test_a_long_diff_is_capped_with_the_count_and_the_full_diff_path() -> None:
    old = _draw()
    new_dot = old.dot.replace("\n}", "".join(f'\n  "x{i}" -> "y{i}";' for i in range(400)) + "\n}")
    report = build_report(
        name="n",
        nodeid="id",
        dot=DotOutcome("p.gv", old.dot, new_dot, False),
        png=None,
        diff=list(unified_dot_diff(old.dot, new_dot)),
        full_diff_path="out/n.dot.diff",
        state_text=None,
    )
    diff = dict(report.sections)[HEADINGS[1]]
    total = len(list(unified_dot_diff(old.dot, new_dot)))
    assert len(diff) == MAX_DIFF_LINES + 2  # the stored file, the lines, the rest counted
    assert diff[-1] == (
        f"... {total - MAX_DIFF_LINES} more diff lines left out (full diff: out/n.dot.diff)"
    )


def test_a_missing_snapshot_gets_a_short_message() -> None:
    png = PngOutcome("__snapshots__/test_m/test_mlp.png", exists=False, passed=False, match=None)
    text = _report(None, _draw(), png).text()
    assert text.splitlines() == [
        "tlgraph snapshot test_mlp does not exist yet (test_m.py::test_mlp)",
        "  snapshot __snapshots__/test_m/test_mlp.gv does not exist: run pytest "
        "--snapshot-update to create it",
        "  snapshot __snapshots__/test_m/test_mlp.png does not exist: run pytest "
        "--snapshot-update to create it",
    ]


def test_a_damaged_snapshot_is_named_not_diffed_into_a_crash() -> None:
    new = _draw()
    report = build_report(
        name="n",
        nodeid="id",
        dot=DotOutcome("p.gv", "\ufffd\ufffd garbage", new.dot, False),
        png=None,
        diff=list(unified_dot_diff("\ufffd\ufffd garbage", new.dot)),
        full_diff_path=None,
        state_text=None,
    )
    (line,) = dict(report.sections)[HEADINGS[0]]
    assert line.startswith("the stored DOT p.gv is not a tlgraph drawing (damaged or foreign")
    assert "--snapshot-update" in line
    assert EVERY_CHANGE not in dict(report.sections)  # nothing was compared


def test_state_section_shows_the_received_state_and_what_the_key_no_longer_says() -> None:
    old, new = _draw(16, color_by="flops"), _draw(32, color_by="flops")
    assert new.state is not None
    state = dict(_report(old, new).sections)[HEADINGS[2]]
    assert state[: len(new.state.describe().splitlines())] == tuple(
        new.state.describe().splitlines()
    )
    old_key, new_key = old.nodes["tlgraph_key"].rows, new.nodes["tlgraph_key"].rows
    assert old_key != new_key
    assert "changed against the snapshot (from its key and caption):" in state
    assert f"  key line no longer drawn: {old_key[0]}" in state
    assert f"  key line now drawn: {new_key[0]}" in state


def test_png_verdict_lists_the_count_and_the_images() -> None:
    old, new = _draw(16), _draw(17)
    expected, actual = render_snapshot_png(old.dot, "pure"), render_snapshot_png(new.dot, "pure")
    comparison = compare_png(expected, actual)
    images = {"actual": "r/a.png", "expected": "r/e.png", "diff": "r/d.png"}
    png = PngOutcome("s.png", True, False, PngMatch(comparison, None, None), images)
    lines = dict(_report(old, new, png).sections)[HEADINGS[3]]
    assert not comparison.size_changed and comparison.mismatched > 0
    assert lines[0] == f"{comparison.mismatched} mismatched pixels (threshold 0.1, budget 0)"
    assert lines[1:] == (
        "stored: s.png",
        "actual:   r/a.png",
        "expected: r/e.png",
        "diff:     r/d.png",
    )


def test_a_size_change_names_both_sizes() -> None:
    old, new = _draw(), _draw(direction="leftright")
    comparison = compare_png(
        render_snapshot_png(old.dot, "pure"), render_snapshot_png(new.dot, "pure")
    )
    assert comparison.size_changed
    png = PngOutcome("s.png", True, False, PngMatch(comparison, None, None))
    line, stored = dict(_report(old, new, png).sections)[HEADINGS[3]]
    assert stored == "stored: s.png"
    (ew, eh), (aw, ah) = comparison.expected_size, comparison.actual_size
    assert line == f"PNG size changed: snapshot {ew}x{eh} px, received {aw}x{ah} px"


def test_renderer_mismatch_is_the_only_png_line() -> None:
    old, new = _draw(16), _draw(17)
    png = PngOutcome("s.png", True, False, PngMatch(None, "renderer mismatch: x", None))
    assert dict(_report(old, new, png).sections)[HEADINGS[3]] == ("renderer mismatch: x",)


@pytest.mark.parametrize("color", [True, False])
def test_colour_only_when_asked(color: bool) -> None:
    text = _report(_draw(16), _draw(17)).text(color=color)
    assert ("\x1b[31m-" in text) == color
    assert ("\x1b[32m+" in text) == color
    assert ("\x1b[" in text) == color


def test_the_report_tells_the_comparison_it_is_handed() -> None:
    # The call compares once and every view reads that value: the report does not
    # compare the texts again when it is given the comparison.
    from pytest_tlgraph.diff.view.comparison import compare
    from pytest_tlgraph.diff.view.story import story_lines
    from pytest_tlgraph.review.report import comparison_of

    old, new = _draw(16), _draw(32)
    outcome = DotOutcome("p.gv", old.dot, new.dot, False)
    found = comparison_of(outcome)
    assert not isinstance(found, str)
    assert found == compare(old.dot, new.dot)
    other = compare(old.dot, _draw(show_redundant_args=True).dot)
    report = build_report(
        name="n",
        nodeid="id",
        dot=outcome,
        png=None,
        diff=list(unified_dot_diff(old.dot, new.dot)),
        full_diff_path=None,
        state_text=None,
        comparison=other,
    )
    assert dict(report.sections)[HEADINGS[0]] == tuple(story_lines(other))
    assert comparison_of(DotOutcome("p.gv", None, new.dot, False)) == (
        "snapshot p.gv does not exist: run pytest --snapshot-update to create it"
    )
