"""CI summaries: --tlgraph-summary=json,markdown (REVIEW.md §2.6), in pytester."""

from __future__ import annotations

import json

import pytest

from tests.integration.project import INI

pytest_plugins = ["pytester"]

TWO_CALLS = """
import torch
from tinymodels import MLP, NoExample

def test_pair(tlgraph_snapshot):
    tlgraph_snapshot(MLP())
    tlgraph_snapshot(NoExample(), torch.zeros(1, 3), name="steady")
"""


def test_json_and_markdown_summaries(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.makepyfile(test_graph=TWO_CALLS)
    step = project.path / "step-summary.md"
    step.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    project.runpytest("--snapshot-update", "--tlgraph-summary=json").assert_outcomes(passed=1)
    results = project.path / "tlgraph-results"
    first = json.loads((results / "summary.json").read_text())
    assert first["counts"] == {"written": 2}
    assert not (results / "summary.md").exists()
    assert step.read_text() == "earlier step\n"  # no markdown asked for

    monkeypatch.setenv("TL_HIDDEN", "12")
    result = project.runpytest("--tlgraph-summary=json,markdown")
    result.assert_outcomes(failed=1)
    data = json.loads((results / "summary.json").read_text())
    assert data["counts"] == {"failed": 1, "passed": 1}
    failed, passed = data["calls"]
    assert (failed["name"], failed["verdict"]) == ("test_pair", "failed")
    assert (passed["name"], passed["verdict"]) == ("test_pair[steady]", "passed")
    assert failed["nodeid"] == "test_graph.py::test_pair"
    structure = failed["structure"]
    assert structure["changed_nodes"] == ["linear_1", "relu_1", "linear_2"]
    assert structure["story"] == [
        "linear_1 @fc1: params weight 16x8 -> 12x8, bias 16 -> 12",
        "linear_2 @fc2: params weight 4x16 -> 4x12",
        "2 nodes @fc1, @act: shape 2x16 -> 2x12",
    ]
    headline = "linear_1 @fc1: params weight 16x8 -> 12x8, bias 16 -> 12 (and 2 more changes)"
    assert structure["headline"] == headline
    assert "relu_1 @act: shape 2x16 -> 2x12" in structure["changes"]  # node by node
    assert any("16x8" in c and "12x8" in c for c in structure["changes"])
    assert structure["nodes_added"] == [] and structure["recolour"] is None
    assert structure["replaced"] == [] and structure["moved"] == []
    for kind in ("graphdiff", "graphdiff_full", "expected", "actual", "diff"):
        assert (results / failed["images"][kind]).is_file()
    markdown = (results / "summary.md").read_text()
    assert markdown.startswith("### tlgraph snapshots: 1 failed, 1 passed")
    assert f"| `test_graph.py::test_pair` | `test_pair` | **FAIL** | `{headline}` |" in markdown
    assert "test_pair-graphdiff.png" in markdown
    assert step.read_text() == "earlier step\n" + markdown  # appended, not replaced


def test_ini_key_and_a_mistyped_kind(project: pytest.Pytester) -> None:
    project.makepyfile(test_graph=TWO_CALLS)
    project.makeini(INI + "tlgraph_summary = markdown\n")
    project.runpytest("--snapshot-update").assert_outcomes(passed=1)
    assert (project.path / "tlgraph-results" / "summary.md").is_file()
    result = project.runpytest("--tlgraph-summary=jsn")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--tlgraph-summary: summary kind 'jsn'*(did you mean 'json'?)*"])
