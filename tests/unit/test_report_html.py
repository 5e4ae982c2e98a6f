"""The HTML report and the results directory it is built from."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest
import torch

from pytest_tlgraph import capture
from pytest_tlgraph.results.artifacts import RECORDS, REPORT_NAME, Artifacts, ResultsDir
from pytest_tlgraph.review.html import render_html, write_html
from pytest_tlgraph.review.outcome import CallOutcome, read_outcomes, write_outcome
from pytest_tlgraph.review.report import Report
from pytest_tlgraph.snapshots.extensions import render_snapshot_png
from tests.models import MLP

REPORT = Report(
    "tlgraph snapshot test_x does not match (t.py::test_x)",
    (
        ("structure (snapshot -> received):", ("fc1: args row now shows in_features=8",)),
        ("DOT diff (- snapshot / + received):", ("--- snapshot", "+++ received", "-a", "+b")),
    ),
)


def _outcome(images: dict[str, str], nodeid: str = "t.py::test_x", **more: object) -> CallOutcome:
    return CallOutcome(nodeid, "test_x", "failed", report=REPORT, images=images, **more)  # type: ignore[arg-type]


def _keep(results: ResultsDir, stem: Path, written: Artifacts) -> None:
    """Keep a failure's outcome as the fixture does."""
    images = {kind: results.relative(p) for kind, p in written.images().items()}
    files = tuple(results.relative(p) for p in written.files())
    write_outcome(results, stem, _outcome(images, files=files))


def _kept(root: Path) -> list[CallOutcome]:
    return [outcome for _, outcome in read_outcomes(root)]


def _png() -> bytes:
    return render_snapshot_png(capture(MLP(), torch.zeros(1, 8)).draw().dot, "pure")


def test_failure_files_are_written_and_stale_ones_removed(tmp_path: Path) -> None:
    results = ResultsDir(tmp_path / "out")
    stem = results.stem(Path("tests/test_m.py"), "test_x[a]")
    assert stem == tmp_path / "out" / "tests" / "test_m" / "test_x[a]"
    png = _png()
    first = results.write_failure(stem, actual=png, expected=png, diff=png, dot_diff="-a\n+b\n")
    assert first.images() == {
        "expected": stem.with_name("test_x[a]-expected.png"),
        "actual": stem.with_name("test_x[a].png"),
        "diff": stem.with_name("test_x[a]-diff.png"),
    }
    assert first.dot_diff is not None and first.dot_diff.read_text() == "-a\n+b\n"
    second = results.write_failure(stem, actual=png, expected=None, diff=None, dot_diff=None)
    assert second == Artifacts(actual=stem.with_name("test_x[a].png"))
    assert sorted(p.name for p in stem.parent.iterdir()) == ["test_x[a].png"]


def test_records_round_trip_and_a_broken_record_is_skipped(tmp_path: Path) -> None:
    results = ResultsDir(tmp_path)
    stem = results.stem(Path("t.py"), "test_x")
    written = results.write_failure(stem, actual=_png(), expected=None, diff=None, dot_diff="d")
    _keep(results, stem, written)
    (tmp_path / RECORDS / "zz.outcome").write_text("{not json")
    (record,) = _kept(tmp_path)
    assert record.nodeid == "t.py::test_x"
    assert record.images == {"actual": "t/test_x.png"}
    assert record.files == ("t/test_x.png", "t/test_x.dot.diff")
    assert record.report == REPORT


def test_clearing_removes_only_what_the_last_session_wrote(tmp_path: Path) -> None:
    results = ResultsDir(tmp_path)
    stem = results.stem(Path("t.py"), "test_x")
    written = results.write_failure(stem, actual=_png(), expected=None, diff=None, dot_diff="d")
    _keep(results, stem, written)
    results.note_written(tmp_path / REPORT_NAME)
    write_html(_kept(tmp_path), tmp_path, tmp_path / REPORT_NAME)
    mine = tmp_path / "t" / "notes.txt"
    mine.write_text("kept")
    outside = tmp_path.parent / "outside.png"
    outside.write_bytes(b"kept")
    (tmp_path / RECORDS / "evil.outcome").write_text(json.dumps({"files": ["../outside.png"]}))
    measured = results.write_measured(results.stem(Path("a/b.py"), "test_t"), b"png")
    assert measured == tmp_path / "a" / "b" / "test_t-measured.png"
    results.clear_previous()
    assert mine.read_text() == "kept" and outside.read_bytes() == b"kept"
    assert not (tmp_path / "t" / "test_x.png").exists()
    assert not (tmp_path / "a").exists(), "folders left empty are removed"
    assert not (tmp_path / REPORT_NAME).exists()
    # A record no manifest lists is an orphan (a run killed between the two writes): it
    # goes, and the file it names outside the folder stays.
    assert not (tmp_path / RECORDS / "evil.outcome").exists()


def test_clearing_removes_the_results_folder_it_leaves_empty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "out" / "tlgraph-results"
    results = ResultsDir(root)

    def fail_once() -> None:
        stem = results.stem(Path("t.py"), "test_x")
        written = results.write_failure(
            stem, actual=_png(), expected=None, diff=None, dot_diff=None
        )
        _keep(results, stem, written)

    fail_once()
    monkeypatch.chdir(root)  # the folder we run in is never removed
    results.clear_previous()
    assert root.is_dir() and list(root.iterdir()) == []
    fail_once()  # the folder exists now: it is the user's from here on, and is kept
    monkeypatch.chdir(tmp_path)
    results.clear_previous()
    assert root.is_dir() and list(root.iterdir()) == []
    root.rmdir()
    fail_once()  # made by the plugin again: removed once empty
    results.clear_previous()
    assert not root.exists() and (tmp_path / "out").is_dir()


def test_clearing_keeps_a_results_folder_it_did_not_make(tmp_path: Path) -> None:
    root = tmp_path / "artifacts"
    root.mkdir()
    results = ResultsDir(root)
    stem = results.stem(Path("t.py"), "test_x")
    written = results.write_failure(stem, actual=_png(), expected=None, diff=None, dot_diff=None)
    _keep(results, stem, written)
    results.clear_previous()
    assert root.is_dir() and list(root.iterdir()) == []


def test_html_inlines_images_and_escapes_text(tmp_path: Path) -> None:
    png = _png()
    (tmp_path / "e.png").write_bytes(png)
    record = _outcome({"expected": "e.png", "actual": "missing.png"}, "t.py::test_x[<script>]")
    page = render_html([record], tmp_path)
    assert "test_x[<script>]" not in page and "t.py::test_x[&lt;script&gt;]" in page
    assert "data:image/png;base64," + base64.b64encode(png).decode() in page
    assert "(image missing)" in page
    assert '<span class="del">-a</span>' in page and '<span class="add">+b</span>' in page
    assert "fc1: args row now shows in_features=8" in page
    assert page.index("<figcaption>expected") < page.index("<figcaption>actual")


def _picture(path: Path, size: tuple[int, int], colour: tuple[int, int, int]) -> str:
    from PIL import Image

    Image.new("RGB", size, colour).save(path)
    return path.name


def _uris(page: str) -> list[str]:
    return re.findall(r"data:image/png;base64,[A-Za-z0-9+/=]+", page)


def test_html_inlines_each_image_once_and_builds_the_review_views(tmp_path: Path) -> None:
    images = {
        "graphdiff": _picture(tmp_path / "g.png", (300, 200), (250, 250, 250)),
        "expected": _picture(tmp_path / "e.png", (120, 90), (200, 0, 0)),
        "actual": _picture(tmp_path / "a.png", (160, 80), (0, 0, 200)),
        "diff": _picture(tmp_path / "d.png", (160, 90), (255, 255, 255)),
    }
    (tmp_path / "full.png").write_bytes((tmp_path / "g.png").read_bytes())  # same bytes
    images["graphdiff_full"] = "full.png"
    _picture(tmp_path / "whole.png", (900, 300), (240, 240, 240))
    other = {"graphdiff": "g.png", "graphdiff_full": "whole.png", "expected": "a.png"}
    other["actual"] = "e.png"  # the pictures of the first failure, the other way round
    page = render_html([_outcome(images), _outcome(other)], tmp_path)
    uris = _uris(page)
    assert len(uris) == len(set(uris)) == 5  # six files, one pair of equal bytes
    # Every further use names the first by id.
    assert page.count('data-same="img1"') == 1  # in the second failure
    assert "(this is the whole graph)" in page  # no button that shows the same again
    assert page.count('data-same="img2"') == 2 + 3  # expected: slider, onion; then 3 again
    # The union canvas of 120 x 90 and 160 x 80, each picture at its own width on it.
    assert 'data-w="160" data-h="90"' in page
    assert "width:calc(160px * var(--k, 1));aspect-ratio:160/90" in page
    assert "width:calc(120px * var(--k, 1))" in page
    assert page.count('class="view slider"') == page.count('class="view onion"') == 2
    assert page.count('<button data-act="whole"') == 1  # the second failure's
    assert "expected 120 x 90 px, actual 160 x 80 px" in page
    assert '<div class="help" id="help" hidden' in page and "<kbd>?</kbd>" in page
    # One file that works offline: nothing is fetched, whatever the page shows.
    assert re.findall(r'(?:src|href)="(?!data:image/png;base64,|#f\d)', page) == []
    assert "url(" not in page and "http" not in page.replace("http-equiv", "")


def test_html_takes_unknown_and_broken_image_entries_in_its_stride(tmp_path: Path) -> None:
    (tmp_path / "not.png").write_bytes(b"GIF89a not a png")
    png = _picture(tmp_path / "x.png", (40, 30), (0, 120, 0))
    records = [  # a field of the wrong type never reads (``outcome_from_json``)
        _outcome({"heat_map": png, "expected": png}),
        _outcome({}),
        _outcome({"graphdiff": png, "graphdiff_full": "gone.png", "actual": "not.png"}),
        _outcome({"graphdiff_full": png}),
    ]
    page = render_html(records, tmp_path)
    assert "<figcaption>heat map</figcaption>" in page  # an unknown kind, by its name
    assert "(not a PNG: not.png)" in page
    assert "whole graph: (image missing)" in page and '<button data-act="whole"' not in page
    assert "structural diff, whole graph" in page  # alone, as a plain figure
    assert '<div class="compare"' not in page  # no record has both sides: no slider, no onion
    assert len(_uris(page)) == 1
