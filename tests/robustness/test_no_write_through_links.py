"""Items 2, 4, 5 and 6 of issue 31: no write follows a link, anywhere under
``__snapshots__/``, ``tlgraph-results/`` or the lock, and ``tlgraph accept`` writes only
inside the project it runs in. Each link is refused in one line that names it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_tlgraph.cli import main
from tests.integration.project import BASIC_TEST, INI, snapshot_dir
from tests.outcomes import outcome_files
from tests.robustness.tree import tree_hashes

pytest_plugins = ["pytester"]


def _said(result: pytest.RunResult) -> str:
    """The output as one line per line, however the terminal wrapped it."""
    return "\n".join(result.outlines)


def _outside(pytester: pytest.Pytester) -> Path:
    folder = pytester.path.parent / f"{pytester.path.name}-outside"
    folder.mkdir(exist_ok=True)
    return folder


def test_a_folder_link_in_the_results_never_overwrites_a_baseline(
    stored: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    baselines = snapshot_dir(stored)
    before = tree_hashes(baselines)
    results = stored.path / "tlgraph-results"
    results.mkdir()
    (results / "test_graph").symlink_to(Path("..", "__snapshots__", "test_graph"))
    monkeypatch.setenv("TL_HIDDEN", "32")
    failing = stored.runpytest()
    failing.assert_outcomes(failed=1)
    assert tree_hashes(baselines) == before
    said = _said(failing)
    assert "test_graph on its path is a symbolic link (to ../__snapshots__/test_graph)" in said
    # The changed model still fails: the baseline is the old drawing.
    stored.runpytest().assert_outcomes(failed=1)
    assert tree_hashes(baselines) == before


def test_a_linked_snapshot_folder_is_refused_at_every_level(
    stored: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # __snapshots__ itself moved elsewhere and linked back: its module folder resolves
    # inside the link's target, which the 0.3 check allowed.
    elsewhere = _outside(stored) / "snapshots"
    (stored.path / "__snapshots__").rename(elsewhere)
    (stored.path / "__snapshots__").symlink_to(elsewhere, target_is_directory=True)
    before = tree_hashes(elsewhere)
    monkeypatch.setenv("TL_HIDDEN", "32")
    result = stored.runpytest("--snapshot-update")
    result.assert_outcomes(failed=1)
    assert tree_hashes(elsewhere) == before
    assert "__snapshots__ on its path is a symbolic link" in " ".join(result.outlines)


def test_a_linked_report_never_writes_its_target(
    stored: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    precious = _outside(stored) / "precious.txt"
    precious.write_text("precious")
    results = stored.path / "tlgraph-results"
    results.mkdir()
    (results / "report.html").write_text("the user's own report")
    (results / "tlgraph-report.html").symlink_to(precious)
    monkeypatch.setenv("TL_HIDDEN", "32")
    failing = stored.runpytest()
    failing.assert_outcomes(failed=1)
    assert precious.read_text() == "precious"
    assert (results / "report.html").read_text() == "the user's own report"
    (line,) = [line for line in failing.outlines if "report.html not written" in line]
    assert line.startswith("tlgraph: report.html not written: refusing to write ")
    assert f"tlgraph-report.html: it is a symbolic link (to {precious})" in line


@pytest.mark.parametrize("name", [".tlgraph-lock", ".tlgraph-manifest", ".records"])
def test_a_linked_lock_manifest_or_records_folder_writes_nothing_outside(
    stored: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    outside = _outside(stored)
    results = stored.path / "tlgraph-results"
    results.mkdir()
    target = outside / "target"
    if name != ".tlgraph-lock":
        target.mkdir()
    (results / name).symlink_to(target)
    monkeypatch.setenv("TL_HIDDEN", "32")
    failing = stored.runpytest()
    assert failing.ret == 1
    assert sorted(p.name for p in outside.rglob("*")) == (
        [] if name == ".tlgraph-lock" else ["target"]
    )
    assert (results / name).is_symlink(), "the user's link stays"
    said = _said(failing)
    assert (
        f"{name}: it is a symbolic link" in said or f"{name} on its path is a symbolic link" in said
    )


def test_accept_writes_only_inside_the_project_it_runs_in(
    stored: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # p2 (the pytester project) failed; p1, another project, holds p2's results folder.
    monkeypatch.setenv("TL_HIDDEN", "32")
    stored.runpytest().assert_outcomes(failed=1)
    theirs = tree_hashes(stored.path / "__snapshots__")
    p1 = stored.path.parent / f"{stored.path.name}-p1"
    p1.mkdir()
    (p1 / "tox.ini").write_text(INI)
    (p1 / "test_graph.py").write_text(BASIC_TEST)
    monkeypatch.chdir(p1)
    code = main(["accept", "--results", str(stored.path / "tlgraph-results"), "--all"])
    err = capsys.readouterr().err
    assert code == 1
    assert tree_hashes(stored.path / "__snapshots__") == theirs
    assert not (p1 / "__snapshots__").exists()
    (line,) = err.splitlines()
    # p2's run wrote the record into this very folder: a call of another project
    # (issue 37), refused before any path is worked out.
    assert "it was recorded by the project" in line
    # A record that names only the rootdir relative path of its results folder (no
    # absolute one) is still known as p2's own and refused.
    (record,) = outcome_files(stored.path / "tlgraph-results")
    data = json.loads(record.read_text())
    saved = record.read_text()
    data["where"]["results"] = None
    record.write_text(json.dumps(data))
    code = main(["accept", "--results", str(stored.path / "tlgraph-results"), "--all"])
    (line,) = capsys.readouterr().err.splitlines()
    assert code == 1
    assert "it was recorded by the project" in line
    assert tree_hashes(stored.path / "__snapshots__") == theirs
    assert not (p1 / "__snapshots__").exists()
    record.write_text(saved)
    # In p2 the same record is accepted.
    monkeypatch.chdir(stored.path)
    assert main(["accept", "--all"]) == 0
    assert tree_hashes(stored.path / "__snapshots__") != theirs
    (record,) = outcome_files(stored.path / "tlgraph-results")
    assert json.loads(record.read_text())["nodeid"] == "test_graph.py::test_mlp"
