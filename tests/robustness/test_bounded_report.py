"""Issue 31, item 16: report.html stays under a stated size however many calls fail:
past its image budget, images load lazily from their files in the results folder (none
left out), and the page says so."""

from __future__ import annotations

import html
import re
from urllib.parse import unquote

import pytest

from pytest_tlgraph.review import html_images

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
    assert "The page inlines at most 39 KB of images" in page
    assert "later images load from their files in the results folder" in page
    linked = re.findall(r'<img src="([^"]+)" loading="lazy"', page)
    assert linked and all(not src.startswith("data:") for src in linked)
    results = project.path / "tlgraph-results"
    # Every linked image is a file beside the page, named relative to it.
    assert all((results / unquote(html.unescape(src))).is_file() for src in linked)
    assert "not inlined" not in page  # no image is left out


MEASURED = """
from tinymodels import MLP

def test_t(tlgraph_snapshot):
    tlgraph_snapshot(MLP(), color_by="time")
"""


def test_a_full_disk_refusing_the_measured_picture_is_one_warning_line(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    from pytest_tlgraph.results.artifacts import ResultsDir

    def full(self: object, stem: object, png: bytes) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    project.makepyfile(test_graph=MEASURED)
    project.runpytest("--snapshot-update", "-p", "no:randomly").assert_outcomes(passed=1)
    monkeypatch.setattr(ResultsDir, "write_measured", full)
    result = project.runpytest("-p", "no:randomly", "-W", "always")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*test_t: measured picture not written: No space left on device*"])
    assert "Traceback" not in result.stdout.str()


def test_the_union_canvas_is_striped_band_by_band() -> None:
    """The striping of a 4000 x 3000 canvas allocates a few bands, not canvas-sized
    index grids (``np.mgrid`` of it took 16 bytes a pixel, twice)."""
    import io
    import tracemalloc

    from PIL import Image

    from pytest_tlgraph.pixels.unioncanvas import mark_missing

    big, small = Image.new("RGB", (4000, 3000), "white"), Image.new("RGB", (3000, 2000), "white")
    encoded = io.BytesIO()
    big.save(encoded, format="PNG")
    tracemalloc.start()
    try:
        out = mark_missing(None, encoded.getvalue(), small, big)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    canvas = 4000 * 3000 * 3
    assert peak < 3 * canvas, peak  # the image itself, its PNG, and a band's temporaries
    assert Image.open(io.BytesIO(out)).size == (4000, 3000)
