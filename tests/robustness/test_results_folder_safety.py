"""Items 1-2 of "nothing lost": the results folder deletes only what the plugin wrote,
and never overlaps a snapshot folder."""

from __future__ import annotations

import pytest

from tests.integration.project import snapshot_dir

pytest_plugins = ["pytester"]


def test_a_shared_results_folder_keeps_the_users_files(
    stored: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    artifacts = stored.path / "artifacts"
    mine = {
        artifacts / "report.html": "my report",
        artifacts / "docs" / "report.html": "another report",
        artifacts / "plots" / "loss-measured.png": "my plot",
        artifacts / "test_graph" / "notes.txt": "notes",
    }
    for path, text in mine.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (artifacts / "empty").mkdir()
    # A failing run writes its artifacts and report into the shared folder...
    monkeypatch.setenv("TL_HIDDEN", "32")
    failing = stored.runpytest("--tlgraph-results=artifacts")
    failing.assert_outcomes(failed=1)
    assert (artifacts / "test_graph" / "test_mlp-diff.png").is_file()
    assert (artifacts / "report.html").read_text() == "my report"
    assert "test_mlp" in (artifacts / "tlgraph-report.html").read_text()
    # ...and the next (passing) run removes exactly those, nothing of the user's.
    monkeypatch.delenv("TL_HIDDEN")
    stored.runpytest("--tlgraph-results=artifacts").assert_outcomes(passed=1)
    for path, text in mine.items():
        assert path.read_text() == text, path
    assert (artifacts / "tlgraph-report.html").exists() is False
    assert (artifacts / "empty").is_dir(), "a folder the plugin did not make is kept"
    assert not (artifacts / "test_graph" / "test_mlp-diff.png").exists()
    assert not (artifacts / "test_graph" / "test_mlp.png").exists()


def test_results_in_the_project_root_delete_nothing_of_the_users(
    project: pytest.Pytester,
) -> None:
    # No snapshot folder in the root yet: '.' is allowed, and must still be harmless.
    keep = project.path / "site" / "report.html"
    keep.parent.mkdir()
    keep.write_text("<html>mine</html>")
    (project.path / "sample-measured.png").write_bytes(b"mine")
    project.makepyfile(test_other="def test_nothing():\n    assert True\n")
    project.runpytest("--tlgraph-results=.").assert_outcomes(passed=1)
    project.runpytest("--tlgraph-results=.").assert_outcomes(passed=1)
    assert keep.read_text() == "<html>mine</html>"
    assert (project.path / "sample-measured.png").read_bytes() == b"mine"


@pytest.mark.parametrize("results", ["__snapshots__", "__snapshots__/test_graph/out"])
def test_a_results_folder_inside_a_snapshot_folder_is_refused(
    stored: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, results: str
) -> None:
    png = snapshot_dir(stored) / "test_mlp.png"
    baseline = png.read_bytes()
    monkeypatch.setenv("TL_HIDDEN", "32")
    refused = stored.runpytest(f"--tlgraph-results={results}")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stderr.fnmatch_lines(["*is a snapshot folder or inside one*"])
    assert png.read_bytes() == baseline
    monkeypatch.delenv("TL_HIDDEN")
    stored.runpytest().assert_outcomes(passed=1)


def test_a_results_folder_that_contains_the_snapshot_folder_is_refused(
    stored: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = sorted(p.name for p in snapshot_dir(stored).iterdir())
    monkeypatch.setenv("TL_HIDDEN", "32")
    refused = stored.runpytest("--tlgraph-results=.")
    refused.assert_outcomes(failed=1)
    refused.stdout.fnmatch_lines(["*results folder * contains the snapshot folder*"])
    assert sorted(p.name for p in snapshot_dir(stored).iterdir()) == before
    assert not (stored.path / "test_graph" / "test_mlp-expected.png").exists()
