"""report.html in a real browser (REVIEW.md §2.7): headless Chromium over CDP.

A pytester run with real failures (a changed hidden size, a tall graph with a layer
added) writes the report; Chromium then loads it and the page is checked as a reader
would meet it: every image decoded and inlined once, no script or console error, every
index link lands on its failure, the structural diff first, long DOT lines wrapped, a
tall graph shown at the page's width inside a scrolling frame, and a click enlarging it.
(The review views, keys and the pan and zoom viewer: ``test_report_review.py``.)
"""

from __future__ import annotations

import io

import pytest
from PIL import Image

from tests.browser import Browser

pytest_plugins = ["pytester"]

TESTS = """
import os
import torch
from torch import nn
from tinymodels import MLP


class Tall(nn.Module):
    def __init__(self):
        super().__init__()
        layers = int(os.environ.get("TL_LAYERS", "12"))
        self.body = nn.Sequential(*[nn.Linear(8, 8) for _ in range(layers)])

    def forward(self, x):
        return self.body(x)


def test_mlp(tlgraph_snapshot):
    tlgraph_snapshot(MLP())


def test_tall(tlgraph_snapshot):
    tlgraph_snapshot(Tall(), torch.zeros(1, 8), color_by="flops")
"""

CHECKS = """(() => {
  const imgs = [...document.images].filter(i => i.getAttribute('src'));
  const links = [...document.querySelectorAll('nav a[href^="#"]')];
  const pres = [...document.querySelectorAll('pre')];
  const frames = [...document.querySelectorAll('.frame')];
  const first = [...document.querySelectorAll('section.failure')].map(
    s => s.querySelector('figure, .viewer') && s.querySelector('figure, .viewer').className);
  return {
    images: imgs.length,
    broken: imgs.filter(i => !i.complete || i.naturalWidth === 0).map(i => i.alt),
    links: links.length,
    dangling: links.filter(a => !document.getElementById(a.hash.slice(1))).map(a => a.hash),
    overflowing: pres.filter(p => p.scrollWidth > p.clientWidth + 1).length,
    framesOverHeight: frames.filter(f => f.clientHeight > innerHeight * 0.9 + 1).length,
    tallScaled: imgs.some(i => i.closest('figure') && i.naturalHeight > innerHeight
      && i.width <= i.naturalWidth
      && i.closest('.frame').scrollHeight > i.closest('.frame').clientHeight),
    firstFigures: first,
    width: innerWidth,
    height: innerHeight,
  };
})()"""

CLICK = """(() => {
  const img = document.querySelectorAll('figure.actual img')[1];
  const before = img.getBoundingClientRect().width;
  img.click();
  const after = img.getBoundingClientRect().width;
  return {full: img.classList.contains('full'), before, after, natural: img.naturalWidth};
})()"""


def test_report_in_headless_chromium(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.makepyfile(test_graph=TESTS)
    project.runpytest("--snapshot-update").assert_outcomes(passed=2)
    monkeypatch.setenv("TL_HIDDEN", "12")
    monkeypatch.setenv("TL_LAYERS", "13")
    project.runpytest().assert_outcomes(failed=2)
    report = project.path / "tlgraph-results" / "report.html"
    with Browser() as browser:
        browser.open(report)
        found = browser.evaluate(CHECKS)
        # graph diff, expected, actual, pixel diff each, and the whole graph where it is
        # not the diff drawing itself; the slider and the onion skin show the expected
        # and actual images again without inlining them again
        results = project.path / "tlgraph-results"
        whole = [
            p for p in results.rglob("*-graphdiff-full.png")
            if p.read_bytes() != p.with_name(p.name.replace("-full", "")).read_bytes()
        ]  # fmt: skip
        assert whole  # the tall model's one added layer is drawn in context
        assert found["images"] == 2 * 4 + len(whole)
        assert found["broken"] == []
        assert found["links"] == 2 and found["dangling"] == []
        assert found["firstFigures"] == ["viewer graphdiff", "viewer graphdiff"]
        assert found["overflowing"] == 0  # long DOT lines wrap
        assert found["framesOverHeight"] == 0
        assert found["tallScaled"]
        clicked = browser.evaluate(CLICK)
        assert clicked["full"]
        assert clicked["after"] >= clicked["before"]
        shot = browser.screenshot()
        assert browser.errors == []
    assert Image.open(io.BytesIO(shot)).size == (found["width"], found["height"])
    (project.path / "report-screenshot.png").write_bytes(shot)  # kept with the run's files
