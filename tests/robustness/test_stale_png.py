"""Item 7 of issue 22: a stored PNG whose metadata names another DOT than the stored
one is reported as stale, in one line with the remedy; an update with
``--tlgraph-no-png`` that changes the DOT removes the PNG it leaves stale."""

from __future__ import annotations

import pytest

from pytest_tlgraph.pixels.pngmeta import read_text_chunks
from pytest_tlgraph.snapshots.provenance import dot_sha256
from tests.integration.project import snapshot_dir, snapshot_names
from tests.robustness.tree import before_short_summary

pytest_plugins = ["pytester"]

STALE = (
    "  stale PNG: its metadata says it was drawn from another DOT than "
    "__snapshots__/test_graph/test_mlp.gv; run pytest --snapshot-update to redraw it"
)


def test_a_no_png_update_removes_the_png_it_leaves_stale(
    stored: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = snapshot_dir(stored)
    old_png = (folder / "test_mlp.png").read_bytes()
    monkeypatch.setenv("TL_HIDDEN", "32")
    stored.runpytest("--snapshot-update", "--tlgraph-no-png").assert_outcomes(passed=1)
    assert snapshot_names(stored) == ["test_mlp.gv"], "the stale PNG was kept"
    # Drawn again (a PNG run) and compared: a missing PNG, said as such, not pixels.
    missing = stored.runpytest()
    missing.assert_outcomes(failed=1)
    missing.stdout.fnmatch_lines(["*__snapshots__/test_graph/test_mlp.png does not exist*"])
    stored.runpytest("--snapshot-update").assert_outcomes(passed=1)
    assert (folder / "test_mlp.png").read_bytes() != old_png
    stored.runpytest().assert_outcomes(passed=1)


def test_a_no_png_update_keeps_a_png_drawn_from_the_stored_dot(
    stored: pytest.Pytester,
) -> None:
    png = (snapshot_dir(stored) / "test_mlp.png").read_bytes()
    stored.runpytest("--snapshot-update", "--tlgraph-no-png").assert_outcomes(passed=1)
    assert (snapshot_dir(stored) / "test_mlp.png").read_bytes() == png


def test_a_stale_png_is_reported_in_one_line_with_the_remedy(
    stored: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = snapshot_dir(stored)
    old_png = (folder / "test_mlp.png").read_bytes()
    monkeypatch.setenv("TL_HIDDEN", "32")
    stored.runpytest("--snapshot-update").assert_outcomes(passed=1)
    # Half a pair: the new DOT next to the old PNG (a 0.2 --tlgraph-no-png update, or a
    # kill between the two renames).
    (folder / "test_mlp.png").write_bytes(old_png)
    recorded = read_text_chunks(old_png)["tlgraph-dot-sha256"]
    assert recorded != dot_sha256((folder / "test_mlp.gv").read_text())
    result = stored.runpytest()
    result.assert_outcomes(failed=1)
    shown = before_short_summary(result.outlines)
    assert [line for line in shown if "stale PNG" in line] == [STALE]
    result.stdout.fnmatch_lines(
        ["  DOT matches the snapshot", "PNG:", STALE, "  * mismatched pixels *"]
    )
    html = (stored.path / "tlgraph-results" / "report.html").read_text()
    assert "stale PNG: its metadata says it was drawn from another DOT" in html
    stored.runpytest("--snapshot-update").assert_outcomes(passed=1)
    stored.runpytest().assert_outcomes(passed=1)


def test_a_png_drawn_from_the_stored_dot_is_not_called_stale(
    stored: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TL_HIDDEN", "32")  # the DOT and the PNG both differ: not stale
    result = stored.runpytest()
    result.assert_outcomes(failed=1)
    assert "stale PNG" not in result.stdout.str()
