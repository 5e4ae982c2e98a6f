"""Item 4 of "never lose a baseline": snapshot file names are checked for collisions
across the whole session, and distinct test paths never share a failure record."""

from __future__ import annotations

import json

import pytest

from tests.integration.project import snapshot_dir

pytest_plugins = ["pytester"]

VARIANTS = """
import os
import pytest
from tinymodels import MLP

IDS = os.environ.get("TL_IDS", "a/b,ab").split(",")

@pytest.mark.parametrize("variant", IDS, ids=IDS)
def test_variant(tlgraph_snapshot, variant):
    tlgraph_snapshot(MLP())
"""


def test_two_tests_that_store_the_same_file_both_fail_and_write_nothing(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(test_graph=VARIANTS)
    result = project.runpytest("--snapshot-update")
    result.assert_outcomes(errors=2)
    for this, other in (("a/b", "ab"), ("ab", "a/b")):
        line = (
            "E   pytest_tlgraph.errors.UsageError: tlgraph_snapshot: the tests "
            f"test_graph.py::test_variant[{this}]"
            f" and test_graph.py::test_variant[{other}] both store their snapshots as "
            "'test_variant[ab]'*would overwrite each other's baseline*"
        )
        result.stdout.fnmatch_lines([line.replace("[", "?").replace("]", "?")])
    folder = snapshot_dir(project)
    assert not folder.exists() or not list(folder.iterdir())


def test_a_collision_with_a_stored_baseline_keeps_it_unchanged(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.makepyfile(test_graph=VARIANTS)
    monkeypatch.setenv("TL_IDS", "ab")
    project.runpytest("--snapshot-update").assert_outcomes(passed=1)
    folder = snapshot_dir(project)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert sorted(before) == ["test_variant[ab].gv", "test_variant[ab].png"]
    # A second id that maps to the same files appears, with another model size.
    monkeypatch.setenv("TL_IDS", "a/b,ab")
    monkeypatch.setenv("TL_HIDDEN", "32")
    result = project.runpytest("--snapshot-update")
    result.assert_outcomes(errors=2)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_a_named_call_that_takes_another_tests_file_fails(project: pytest.Pytester) -> None:
    # test_v[p] names a call "q": its file is test_v[p][q], the first snapshot of the test
    # with the id "p][q" (found when the call claims it, in this process).
    project.makepyfile(
        test_graph="""
        import pytest
        from tinymodels import MLP

        @pytest.mark.parametrize("variant", ["p", "p][q"], ids=["p", "p][q"])
        def test_v(tlgraph_snapshot, variant):
            tlgraph_snapshot(MLP(), name="q" if variant == "p" else None)
        """
    )
    result = project.runpytest("--snapshot-update", "-p", "no:randomly")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "E       pytest_tlgraph.errors.UsageError: tlgraph_snapshot: the tests "
            "test_graph.py::test_v?p?"
            " and test_graph.py::test_v?p??q? both store their snapshots as 'test_v?p??q?'*"
        ]
    )
    folder = snapshot_dir(project)
    assert sorted(p.name for p in folder.iterdir()) == ["test_v[p][q].gv", "test_v[p][q].png"]
    (written,) = [p for p in folder.iterdir() if p.suffix == ".gv"]
    assert "linear_1" in written.read_text()  # the first test's drawing, not overwritten


def test_distinct_test_paths_never_share_a_record(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    test = (
        "from tinymodels import MLP\n\ndef test_x(tlgraph_snapshot):\n    tlgraph_snapshot(MLP())\n"
    )
    for package in ("suite", "suite/a", "suite/a/b", "suite/a__b"):
        (project.path / package).mkdir(exist_ok=True)
        (project.path / package / "__init__.py").write_text("")
    for package in ("suite/a/b", "suite/a__b"):
        (project.path / package / "test_m.py").write_text(test)
    project.runpytest("--snapshot-update").assert_outcomes(passed=2)
    monkeypatch.setenv("TL_HIDDEN", "32")
    result = project.runpytest()
    result.assert_outcomes(failed=2)
    records = project.path / "tlgraph-results" / ".records"
    found = sorted(json.loads(p.read_text())["nodeid"] for p in records.glob("*.outcome"))
    assert found == ["suite/a/b/test_m.py::test_x", "suite/a__b/test_m.py::test_x"]
    html = (project.path / "tlgraph-results" / "report.html").read_text()
    assert "suite/a/b/test_m.py::test_x" in html and "suite/a__b/test_m.py::test_x" in html
