"""Issue 31, item 16: report.html stays under a stated size however many calls fail:
past its image budget, images are named by their files and the page says so."""

from __future__ import annotations

import pytest

from pytest_tlgraph.snapshots.review import html_images

pytest_plugins = ["pytester"]

TEST = """
import os
import pytest
from tinymodels import MLP

@pytest.mark.parametrize("n", range(6))
def test_m(tlgraph_snapshot, n):
    tlgraph_snapshot(MLP())
"""

BUDGET = 40_000


def test_many_failures_give_a_page_within_its_image_budget(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.makepyfile(test_graph=TEST)
    project.runpytest("--snapshot-update", "-p", "no:randomly").assert_outcomes(passed=6)
    monkeypatch.setenv("TL_HIDDEN", "32")  # every call's model changes width
    monkeypatch.setattr(html_images, "MAX_INLINED_BYTES", BUDGET)
    project.runpytest("-p", "no:randomly").assert_outcomes(failed=6)
    page = (project.path / "tlgraph-results" / "report.html").read_text()
    uris = page.count("data:image/png;base64,")
    inlined = sum(len(part.split('"', 1)[0]) for part in page.split("data:image/png;base64,")[1:])
    assert inlined <= BUDGET and uris >= 1
    assert "The page inlines at most 0 MB of images" in page
    assert "later images are named by their files in the results folder instead" in page
    assert "open test_graph/test_m" in page
