"""The fixture's size guard: an oversized drawing compares its DOT and skips the PNG."""

from __future__ import annotations

import textwrap

import pytest

from tests.integration.project import snapshot_names

pytest_plugins = ["pytester"]

CHAIN_TEST = textwrap.dedent(
    """
    import torch
    from torch import nn


    class Chain(nn.Module):
        def forward(self, x):
            for _ in range(6000):
                x = x + 1
            return x


    def test_chain(tlgraph_snapshot):
        tlgraph_snapshot(Chain(), torch.zeros(2))
    """
)


def test_an_oversized_drawing_stores_its_dot_and_says_why_no_png(project: pytest.Pytester) -> None:
    project.makepyfile(test_graph=CHAIN_TEST)
    update = project.runpytest("--snapshot-update", "-W", "always")
    update.assert_outcomes(passed=1)
    assert snapshot_names(project) == ["test_chain.gv"]
    update.stdout.fnmatch_lines(["*test_chain: PNG not rendered: the estimated canvas is *px*"])
    again = project.runpytest("-W", "always")
    again.assert_outcomes(passed=1)
    again.stdout.fnmatch_lines(["*PNG not rendered*collapse='auto'*png=False*"])


def test_a_failing_call_whose_png_the_guard_skipped_says_why_not_that_pngs_are_off(
    project: pytest.Pytester,
) -> None:
    """Issue 31, item 13: PNGs are on; the size guard skipped this one."""
    project.makepyfile(test_graph=CHAIN_TEST)
    project.runpytest("--snapshot-update", "-W", "always").assert_outcomes(passed=1)
    project.makepyfile(test_graph=CHAIN_TEST.replace("x + 1", "x + 2"))
    failed = project.runpytest("-W", "always")
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines(["*PNG not compared: PNG not rendered: the estimated canvas*"])
    assert "PNG comparison off" not in failed.stdout.str()
