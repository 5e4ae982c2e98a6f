"""The HTML report and the results directory it is built from."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
import torch

from pytest_tlgraph import capture
from pytest_tlgraph.snapshots.artifacts import RECORDS, REPORT_NAME, Artifacts, ResultsDir
from pytest_tlgraph.snapshots.extensions import render_snapshot_png
from pytest_tlgraph.snapshots.html import render_html, write_html
from pytest_tlgraph.snapshots.report import Report
from tests.models import MLP

REPORT = Report(
    "tlgraph snapshot test_x does not match (t.py::test_x)",
    (
        ("structure (snapshot -> received):", ("fc1: args row now shows in_features=8",)),
        ("DOT diff (- snapshot / + received):", ("--- snapshot", "+++ received", "-a", "+b")),
    ),
)


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
    results.write_record(stem, nodeid="t.py::test_x", report=REPORT, artifacts=written)
    (tmp_path / RECORDS / "zz.json").write_text("{not json")
    (record,) = results.read_records()
    assert record["nodeid"] == "t.py::test_x"
    assert record["images"] == {"actual": "t/test_x.png"}
    assert record["files"] == ["t/test_x.png", "t/test_x.dot.diff"]
    assert record["sections"][0] == [
        "structure (snapshot -> received):",
        ["fc1: args row now shows in_features=8"],
    ]


def test_clearing_removes_only_what_the_last_session_wrote(tmp_path: Path) -> None:
    results = ResultsDir(tmp_path)
    stem = results.stem(Path("t.py"), "test_x")
    written = results.write_failure(stem, actual=_png(), expected=None, diff=None, dot_diff="d")
    results.write_record(stem, nodeid="t.py::test_x", report=REPORT, artifacts=written)
    results.note_written(tmp_path / REPORT_NAME)
    write_html(results.read_records(), tmp_path, tmp_path / REPORT_NAME)
    mine = tmp_path / "t" / "notes.txt"
    mine.write_text("kept")
    outside = tmp_path.parent / "outside.png"
    outside.write_bytes(b"kept")
    (tmp_path / RECORDS / "evil.json").write_text(json.dumps({"files": ["../outside.png"]}))
    measured = results.write_measured(results.stem(Path("a/b.py"), "test_t"), b"png")
    assert measured == tmp_path / "a" / "b" / "test_t-measured.png"
    results.clear_previous()
    assert mine.read_text() == "kept" and outside.read_bytes() == b"kept"
    assert not (tmp_path / "t" / "test_x.png").exists()
    assert not (tmp_path / "a").exists(), "folders left empty are removed"
    assert not (tmp_path / REPORT_NAME).exists()
    # Only the plugin's own record went: a file it did not write stays, so its folder does.
    assert [p.name for p in (tmp_path / RECORDS).iterdir()] == ["evil.json"]


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
        results.write_record(stem, nodeid="t.py::test_x", report=REPORT, artifacts=written)

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
    results.write_record(stem, nodeid="t.py::test_x", report=REPORT, artifacts=written)
    results.clear_previous()
    assert root.is_dir() and list(root.iterdir()) == []


def test_html_inlines_images_and_escapes_text(tmp_path: Path) -> None:
    png = _png()
    (tmp_path / "e.png").write_bytes(png)
    record = {
        "nodeid": "t.py::test_x[<script>]",
        "title": REPORT.title,
        "sections": [[h, list(lines)] for h, lines in REPORT.sections],
        "images": {"expected": "e.png", "actual": "missing.png"},
    }
    page = render_html([record], tmp_path)
    assert "test_x[<script>]" not in page and "t.py::test_x[&lt;script&gt;]" in page
    assert "data:image/png;base64," + base64.b64encode(png).decode() in page
    assert "(image missing)" in page
    assert '<span class="del">-a</span>' in page and '<span class="add">+b</span>' in page
    assert "fc1: args row now shows in_features=8" in page
    assert page.index("<figcaption>expected") < page.index("<figcaption>actual")
