"""report.html reads from the top down (issue 40, item 4), checked in headless Chromium:
per call the story first, then the structural diff drawing, then the pixel views, the
DOT diff folded at the end; past the page's inline budget, images load lazily from
their files in the results folder instead of being left out.

The project fails a real corpus change (ResNet-18 with its activation swapped) and
tiny MLPs whose width changed."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_tlgraph.review import html_images
from tests.browser import Browser

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]

TESTS = """
import os
import pytest
import torch
from tinymodels import MLP
from tests.corpus.changes import CHANGES

def test_resnet(tlgraph_snapshot):
    before, after = CHANGES["activation_swapped"]()
    case = after if os.environ.get("TL_HIDDEN") else before
    tlgraph_snapshot(case.model, case.inputs, collapse="auto")

@pytest.mark.parametrize("n", range(5))
def test_mlp(tlgraph_snapshot, n):
    tlgraph_snapshot(MLP())
"""

#: Per failure, the kinds of its blocks in page order, and the page's images.
LAYOUT = """(() => {
  const kind = (c) => c.matches('ol.story') ? 'story' : c.matches('.viewer') ? 'drawing'
      : c.matches('.compare') ? 'pixels' : c.matches('details.dotdiff') ? 'dotdiff' : null;
  const sections = [...document.querySelectorAll('section.failure')];
  return {
    orders: sections.map(s => [...s.children].map(kind).filter(Boolean)),
    story: sections.map(s => [...s.querySelectorAll('ol.story li')].map(li => li.textContent)),
    folded: [...document.querySelectorAll('details.dotdiff')].map(d => d.open),
    diffShown: [...document.querySelectorAll('details.dotdiff pre')].map(p => p.checkVisibility()),
    linked: [...document.images].filter(i => i.loading === 'lazy').map(i => i.getAttribute('src')),
    inlined: [...document.images].filter(i => (i.src || '').startsWith('data:')).length,
  };
})()"""

#: Click the first story line that has a place: the drawing shows its node, outlined,
#: in the middle of the viewer at 100 %.
CLICK_PLACE = """(() => {
  const link = document.querySelector('ol.story a.place');
  const box = link.closest('section.failure').querySelector('.viewer');
  const before = box.dataset.scale;
  box.querySelector('button[data-act="fit"]').click();
  link.click();
  const port = box.querySelector('.port').getBoundingClientRect();
  const mark = box.querySelector('.mark');
  const r = mark.getBoundingClientRect();
  return {
    text: link.textContent, scale: box.dataset.scale, hidden: mark.hidden,
    dx: Math.abs((r.left + r.right) / 2 - (port.left + port.right) / 2),
    dy: Math.abs((r.top + r.bottom) / 2 - (port.top + port.bottom) / 2),
    places: document.querySelectorAll('ol.story a.place').length,
  };
})()"""

SCROLL_TO_LAST = """new Promise((done) => {
  const sections = [...document.querySelectorAll('section.failure')];
  const last = sections[sections.length - 1];
  last.scrollIntoView({block: 'start'});
  setTimeout(() => {
    const imgs = [...last.querySelectorAll('img[loading="lazy"]')]
        .filter(i => !i.closest('[hidden]'));
    done({shown: imgs.length, decoded: imgs.filter(i => i.complete && i.naturalWidth > 0).length});
  }, 1500);
})"""


def test_story_then_drawing_then_pixels_and_lazy_images_past_the_budget(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(ROOT))  # the corpus, for the project's test
    project.makepyfile(test_page=TESTS)
    project.runpytest("--snapshot-update", "-p", "no:randomly").assert_outcomes(passed=6)
    monkeypatch.setenv("TL_HIDDEN", "24")
    budget = 400_000  # the ResNet's pictures fit; the MLPs' later ones do not
    monkeypatch.setattr(html_images, "MAX_INLINED_BYTES", budget)
    project.runpytest("-p", "no:randomly").assert_outcomes(failed=6)
    results = project.path / "tlgraph-results"
    report = results / "report.html"
    with Browser(timeout=60) as browser:
        browser.open(report)
        layout = browser.evaluate(LAYOUT)
        clicked = browser.evaluate(CLICK_PLACE)
        last = browser.evaluate(SCROLL_TO_LAST)
        assert browser.errors == []
    assert layout["orders"] == [["story", "drawing", "pixels", "dotdiff"]] * 6
    # The story is the comparison's, line by line, above its drawing.
    stories = layout["story"]
    assert ["replaced relu -> silu on 16 ops @layer*.*.relu"] in stories, stories
    assert sum("shape 2x16 -> 2x24" in " ".join(lines) for lines in stories) == 5
    assert layout["folded"] == [False] * 6 and set(layout["diffShown"]) == {False}
    assert layout["inlined"] >= 4 and layout["linked"]  # inlined first, then linked
    assert all(not src.startswith(("data:", "/")) for src in layout["linked"])
    assert all((results / src).is_file() for src in layout["linked"])
    # Every MLP's story names linear_1, which its drawing shows: each line links there.
    assert clicked["places"] >= 5 and "linear_1" in clicked["text"]
    assert clicked["scale"] == "1" and clicked["hidden"] is False
    assert clicked["dx"] <= 4 and clicked["dy"] <= 4  # the node in the middle of the viewer
    assert last["shown"] >= 1 and last["decoded"] == last["shown"]  # loaded once scrolled to
