"""Items 8 and 9 of issue 37: a changed row holding a long list (an index list of
thousands of entries) makes a story in linear time, and no line a failure shows is
longer than ``limits.MAX_REPORT_LINE``: the full text stays in the results folder.

0.4 built the story in time quadratic in the row's length (5k / 10k / 20k entries took
10.8 / 48.8 / 188.6 s: its generalised edit split the row again at every space), and
printed every line whole (a 1 MiB row: 1 MB and thousands of terminal lines per
failure, a step summary past GitHub's 1 MiB). The time is checked as a ratio in one
run (``test_hostile_gv.assert_linear``); ``benchmarks/bench_long_row.py`` measures it.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable

import pytest
import torch
from torch import nn

from pytest_tlgraph import capture
from pytest_tlgraph.diff.view.comparison import compare
from pytest_tlgraph.diff.view.story import story_lines
from pytest_tlgraph.draw import draw
from pytest_tlgraph.limits import MAX_REPORT_LINE
from tests.robustness.test_hostile_gv import assert_linear

pytest_plugins = ["pytester"]


class Gather(nn.Module):
    """Picks columns by a Python index list (a row of the op's args)."""

    def __init__(self, index: list[int]) -> None:
        super().__init__()
        self.index = index

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[:, self.index]


def index_dots(count: int) -> tuple[str, str]:
    """The drawings of a gather by ``count`` indices, and by the same with one changed."""
    index = list(range(count))
    changed = [*index[: count // 2], 0, *index[count // 2 + 1 :]]
    x = torch.zeros(2, count)
    return draw(capture(Gather(index), x)).dot, draw(capture(Gather(changed), x)).dot


def test_the_story_of_a_long_changed_row_is_linear() -> None:
    def make(count: int) -> Callable[[], object]:
        comparison = compare(*index_dots(count))
        return lambda: story_lines(comparison)

    # A base of a few ms, the large side best of 5 (60 ms each): a test running beside it
    # on the other core once read 27x for 8x the input, where alone it reads 6-7x.
    assert_linear(make, 4_000, large_runs=5)


TEST = textwrap.dedent(
    """
    import os
    import torch
    from torch import nn

    class Gather(nn.Module):
        def forward(self, x):
            index = list(range(20_000))
            index[int(os.environ.get("TL_AT", "-1"))] = 0
            return x[:, index]

    def test_gather(tlgraph_snapshot):
        tlgraph_snapshot(Gather(), torch.zeros(2, 20_000), png=False)
    """
)


def test_no_line_of_a_failure_is_longer_than_the_report_width(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.makepyfile(test_long=TEST)
    project.runpytest("--snapshot-update").assert_outcomes(passed=1)
    monkeypatch.setenv("TL_AT", "10000")
    result = project.runpytest("--tlgraph-summary=json,markdown")
    result.assert_outcomes(failed=1)
    assert max(len(line) for line in result.outlines) <= MAX_REPORT_LINE
    assert len(result.outlines) < 200
    results = project.path / "tlgraph-results"
    summary = (results / "summary.md").read_text()
    assert max(len(line) for line in summary.splitlines()) <= 2 * MAX_REPORT_LINE
    for record in (results / ".records").iterdir():
        assert len(record.read_bytes()) < 40 * MAX_REPORT_LINE
    result.stdout.fnmatch_lines([f"*lines over {MAX_REPORT_LINE} characters are cut*"])
    full = (results / "test_long" / "test_gather.story.txt").read_text()
    assert "9998, 9999, 0, 10001" in full  # the whole row, where the cut line points
    assert (results / "test_long" / "test_gather.dot.diff").stat().st_size > 100_000
