"""report.html as a review tool, driven in headless Chromium with real keys and mouse.

Two real failures with pictures of different sizes: the corpus ResNet-18 with a third
``BasicBlock`` inserted in ``layer1`` (taller), and a model that gains a parallel branch
(wider). The records are then given a whole-graph drawing (one the very bytes of its
context drawing, offered by no button; one a picture of its own) and an image kind the
report does not know, and the page is rendered again from them. One browser session
checks, as a reviewer meets it: the structural diff opens at 100 %, the wheel zooms
around the pointer, a drag pans, fit and 100 % work, the whole graph opens in the same
viewer; the slider's split follows a drag and the range (expected left of it, actual
right), the onion skin's opacity follows its range; ``j``/``k``/``n``/``p`` and the
arrows move the current failure and ``1``/``2``/``3`` switch its view, never while an
input has the focus; ``?`` opens the help; every image is inlined once; no script or
console error. Screenshots of each view are kept with the run's files.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

# Imported before the in-process pytester runs: they drop what a run imported, and the
# corpus registry (kept, when another test imported it first) refuses a module that
# registers its models a second time.
import tests.corpus.models_faithful_collapse  # noqa: F401
from pytest_tlgraph.review.html import write_html
from pytest_tlgraph.review.outcome import CallOutcome
from pytest_tlgraph.review.pending import pending_calls
from tests.browser import Browser

pytest_plugins = ["pytester"]

TESTS = """
import os
import torch
from torch import nn
from tests.corpus.models_faithful_collapse import BasicBlock, resnet18_basic_case


class Branches(nn.Module):
    def __init__(self):
        super().__init__()
        count = int(os.environ.get("TL_BRANCHES", "2"))
        self.paths = nn.ModuleList(
            nn.Sequential(nn.Linear(8, 8), nn.ReLU()) for _ in range(count))
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        return self.head(sum(path(x) for path in self.paths))


def test_resnet(tlgraph_snapshot):
    case = resnet18_basic_case()
    if os.environ.get("TL_INSERT"):
        case.model.layer1.append(BasicBlock(8, 8))
    tlgraph_snapshot(case.model, *case.inputs)


def test_branches(tlgraph_snapshot):
    tlgraph_snapshot(Branches(), torch.zeros(1, 8))
"""

LOADED = """(() => {
  const shown = [...document.images].filter(i => i.getAttribute('src'));
  return {
    shown: shown.length,
    broken: shown.filter(i => !i.complete || i.naturalWidth === 0).map(i => i.alt),
    waiting: [...document.images].filter(i => !i.getAttribute('src') && !i.closest('[hidden]'))
      .length,
    failures: [...document.querySelectorAll('section.failure')].map(s => s.id),
    others: [...document.querySelectorAll('.others figcaption')].map(f => f.textContent),
  };
})()"""

#: The shown picture of failure N's diff viewer: scale, natural and displayed size, the
#: offset in the port, and the port's box (viewport pixels).
VIEWER = """((n) => {
  const box = document.querySelector(`#f${n} .viewer`);
  const port = box.querySelector('.port');
  const img = [...port.querySelectorAll('img')].find(i => !i.hidden);
  const r = img.getBoundingClientRect(), p = port.getBoundingClientRect();
  return {scale: Number(box.dataset.scale), natural: [img.naturalWidth, img.naturalHeight],
    shown: [r.width, r.height], offset: [r.left - p.left, r.top - p.top], alt: img.alt,
    port: [p.left, p.top, p.width, p.height], readout: box.querySelector('.zoom').textContent,
    whole: !!box.querySelector('button[data-act="whole"]')};
})"""

#: Failure N's stage in view ``kind``: its box, and along its middle row which layer
#: each x shows (the layer hit there: clip-path clips hit testing as it clips paint).
STAGE = """((n, kind) => {
  const view = document.querySelector(`#f${n} .view.${kind}`);
  const stage = view.querySelector('.stage');
  const r = stage.getBoundingClientRect();
  const y = r.top + Math.min(r.height, innerHeight - r.top) / 2;
  const sides = [];
  for (let x = Math.ceil(r.left) + 1; x < r.right - 1; x += 1) {
    const hit = document.elementFromPoint(x, y);
    const layer = hit && hit.closest('.layer');
    sides.push(layer ? (layer.classList.contains('expected') ? 'e' : 'a') : '?');
  }
  const over = view.querySelector('.layer.over');
  const input = view.querySelector('input[type=range]');
  return {hidden: view.hidden, box: [r.left, r.top, r.width, r.height],
    expectedWidth: sides.lastIndexOf('e') + 1, sides: [...new Set(sides)].join(''),
    opacity: getComputedStyle(over).opacity, value: Number(input.value),
    loaded: [...view.querySelectorAll('img')].every(i => i.complete && i.naturalWidth > 0),
    imgs: [...view.querySelectorAll('img')].map(i => [i.alt, i.getBoundingClientRect().width,
      i.naturalWidth])};
})"""

#: Two animation frames: what the page does on a scroll has happened.
FRAMES = "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"

STATE = """(() => {
  const current = document.querySelector('section.failure.current');
  const help = document.getElementById('help');
  return {current: current && current.id, top: current && current.getBoundingClientRect().top,
    help: !help.hidden && help.getBoundingClientRect().height > 0,
    views: [...document.querySelectorAll('.compare')].map(c => c.dataset.view),
    pager: document.querySelector('.pager .where').textContent,
    focus: document.activeElement && document.activeElement.tagName};
})()"""


def _records(project: pytest.Pytester) -> tuple[Path, list[CallOutcome]]:
    """The run's records, each given a whole-graph drawing (the first the very bytes of
    its context drawing, the second a picture of its own) and an unknown image kind."""
    root = project.path / "tlgraph-results"
    records = [entry.outcome for entry in pending_calls(root)]
    assert [r.nodeid.split("::")[1] for r in records] == ["test_branches", "test_resnet"]
    out = []
    for number, record in enumerate(records):
        images = dict(record.images)
        diff = root / images["graphdiff"]
        full = diff.with_name(diff.name.replace("-graphdiff", "-graphdiff-full"))
        if number == 0:
            shutil.copyfile(diff, full)
            images["heatmap_v2"] = images["diff"]
        else:
            Image.new("RGB", (1900, 700), (250, 240, 200)).save(full)
        images["graphdiff_full"] = full.relative_to(root).as_posix()
        out.append(replace(record, images=images))
    return root, out


def _under(at: tuple[float, float], shown: dict[str, Any]) -> list[float]:
    """The point of the drawing (its own pixels) under viewport point ``at``."""
    return [(at[i] - shown["port"][i] - shown["offset"][i]) / shown["scale"] for i in (0, 1)]


def _centre(box: list[float]) -> tuple[float, float]:
    return box[0] + box[2] / 2, box[1] + min(box[3], 300) / 2


def test_review_in_headless_chromium(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.makepyfile(test_graph=TESTS)
    project.runpytest("--snapshot-update").assert_outcomes(passed=2)
    monkeypatch.setenv("TL_INSERT", "1")
    monkeypatch.setenv("TL_BRANCHES", "3")
    project.runpytest().assert_outcomes(failed=2)
    root, records = _records(project)
    report = write_html(records, root, root / "report.html")
    page = report.read_text(encoding="utf-8")
    uris = re.findall(r"data:image/png;base64,[A-Za-z0-9+/=]+", page)
    assert len(uris) == len(set(uris)) == 2 * 4 + 1  # the copied full drawing reuses one
    shots = project.path / "screenshots"
    shots.mkdir()
    with Browser() as browser:

        def shot(name: str) -> None:
            (shots / f"{name}.png").write_bytes(browser.screenshot())

        def viewer(n: int) -> dict[str, Any]:
            found: dict[str, Any] = browser.evaluate(f"{VIEWER}({n})")
            return found

        def stage(n: int, kind: str) -> dict[str, Any]:
            found: dict[str, Any] = browser.evaluate(f"{STAGE}({n}, {json.dumps(kind)})")
            return found

        def state() -> dict[str, Any]:
            found: dict[str, Any] = browser.evaluate(STATE)
            return found

        def into_view(selector: str) -> None:
            browser.evaluate(
                f"document.querySelector({json.dumps(selector)}).scrollIntoView({{block: 'start'}})"
            )

        browser.open(report)
        loaded = browser.evaluate(LOADED)
        assert loaded["broken"] == [] and loaded["waiting"] == 0
        assert loaded["failures"] == ["f1", "f2"]
        assert loaded["others"] == ["heatmap v2"]  # an unknown kind, shown by its name
        shot("top")

        # The diff viewer starts at 100 %: the natural width is the displayed width.
        for n in (1, 2):
            start = viewer(n)
            assert start["scale"] == 1 and start["readout"] == "100%"
            assert start["shown"] == pytest.approx(start["natural"], abs=0.5)
            assert start["whole"] == (n == 2)  # the first one's is the same drawing
        into_view("#f2 .viewer")
        start = viewer(2)
        assert start["natural"][1] > start["port"][3]  # taller than its port: never shrunk
        shot("viewer")
        at = (start["port"][0] + start["port"][2] / 2, start["port"][1] + 40)  # the key
        browser.wheel(at, -300)  # zoom in around the pointer
        zoomed = viewer(2)
        assert zoomed["scale"] > 1.3
        # The point of the drawing under the pointer stays under it.
        assert _under(at, zoomed) == pytest.approx(_under(at, start), abs=1.0)
        browser.drag(at, (at[0] - 120, at[1] + 80))
        dragged = viewer(2)
        assert dragged["scale"] == zoomed["scale"]
        moved = [dragged["offset"][i] - zoomed["offset"][i] for i in (0, 1)]
        assert moved == pytest.approx([-120, 80], abs=1.0)
        shot("viewer-zoomed")
        browser.evaluate("document.querySelector('#f2 .viewer [data-act=fit]').click()")
        fitted = viewer(2)
        assert fitted["scale"] < 1
        assert fitted["shown"][0] <= fitted["port"][2] + 0.5
        assert fitted["shown"][1] <= fitted["port"][3] + 0.5
        shot("viewer-fit")
        browser.evaluate("document.querySelector('#f2 .viewer [data-act=one]').click()")
        assert viewer(2)["scale"] == 1
        browser.evaluate("document.querySelector('#f2 .viewer [data-act=whole]').click()")
        whole = viewer(2)
        assert whole["alt"] == "graphdiff_full" and whole["natural"] == [1900, 700]
        assert whole["scale"] == 1 and whole["shown"] == pytest.approx([1900, 700])
        browser.evaluate("document.querySelector('#f2 .viewer [data-act=whole]').click()")
        assert viewer(2)["alt"] == "graphdiff"

        # Keys: the current failure moves, scrolled to the top of the window.
        assert state()["current"] == "f2"  # the failure last pointed at
        browser.evaluate(f"document.activeElement.blur(); scrollTo(0, 0); {FRAMES}")
        assert state()["current"] == "f1"  # scrolled away: the one at the top
        moves = {"j": "f2", "k": "f1", "n": "f2", "p": "f1", "ArrowDown": "f2", "ArrowUp": "f1"}
        for key, expected in moves.items():
            browser.press(key)
            now = state()
            assert now["current"] == expected, key
            assert abs(now["top"]) < 20, key  # scrolled into view
        assert state()["pager"] == "1 / 2"
        browser.press("?")
        assert state()["help"]
        shot("help")
        browser.press("Escape")
        assert not state()["help"]

        # The slider: expected left of the split, actual right of it, on the union canvas.
        browser.press("2")
        assert state()["views"] == ["slider", "side"]
        into_view("#f1 .compare")
        first = stage(1, "slider")
        assert not first["hidden"] and first["loaded"]
        assert first["sides"] == "ea"
        assert first["expectedWidth"] == pytest.approx(first["box"][2] / 2, abs=3)
        union = max(img[2] for img in first["imgs"])
        assert first["box"][2] == pytest.approx(union)  # at its natural width
        widths = {alt: shown for alt, shown, _ in first["imgs"]}
        naturals = {alt: natural for alt, _, natural in first["imgs"]}
        assert naturals["expected"] < naturals["actual"]  # the branch made it wider
        assert widths == pytest.approx(naturals)  # both at one scale, top-left aligned
        shot("slider")
        box = first["box"]
        browser.drag(_centre(box), (box[0] + box[2] * 0.8, _centre(box)[1]))
        swiped = stage(1, "slider")
        assert swiped["expectedWidth"] == pytest.approx(box[2] * 0.8, abs=3)
        assert swiped["value"] == 80
        browser.evaluate("document.querySelector('#f1 .view.slider input').focus()")
        browser.press("j")  # keys never fire while an input has the focus
        browser.press("ArrowDown")  # the range's own key: one step down
        assert state()["current"] == "f1" and state()["focus"] == "INPUT"
        assert stage(1, "slider")["value"] == 79
        browser.press("Home")
        assert stage(1, "slider")["sides"] == "a"  # the split at 0: actual everywhere
        browser.press("End")
        assert stage(1, "slider")["sides"] == "e"

        # The onion skin: actual over expected, as opaque as its range says.
        browser.evaluate("document.activeElement.blur()")
        browser.press("3")
        assert state()["views"] == ["onion", "side"]
        into_view("#f1 .view.onion")
        onion = stage(1, "onion")
        assert onion["loaded"] and onion["opacity"] == "0.5"
        shot("onion")
        browser.evaluate("document.querySelector('#f1 .view.onion input').focus()")
        browser.press("Home")
        assert stage(1, "onion")["opacity"] == "0"
        browser.press("End")
        assert stage(1, "onion")["opacity"] == "1"
        browser.evaluate("document.activeElement.blur()")
        browser.press("j")
        browser.press("2")  # the second failure's view, the first keeps its own
        assert state()["views"] == ["onion", "slider"]
        into_view("#f2 .view.slider")
        tall = stage(2, "slider")
        assert tall["loaded"] and tall["sides"] == "ea"
        assert tall["box"][2] == pytest.approx(max(img[2] for img in tall["imgs"]))
        shot("slider-tall")
        browser.press("1")
        assert state()["views"] == ["onion", "side"]
        into_view("#f2 .compare")
        shot("side")
        assert browser.errors == []
    views = ("top", "viewer", "viewer-zoomed", "viewer-fit", "help", "slider", "onion")
    for name in (*views, "slider-tall", "side"):
        assert Image.open(shots / f"{name}.png").size[0] > 0
