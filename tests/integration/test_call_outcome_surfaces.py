"""Every surface reads the one outcome of a call (issue 40): the terminal, summary.json,
summary.md, report.html, ``tlgraph report``, ``tlgraph review`` and the shard merge say
what the call's record says, and nothing else. On a corpus ResNet (collapsed) and a
toy MLP, each with a real change."""

from __future__ import annotations

import html
import io
import json
import shutil
import sys

import pytest

from pytest_tlgraph.cli import main
from pytest_tlgraph.review.outcome import (
    CallOutcome,
    outcome_to_json,
    read_outcomes,
    sorted_calls,
)
from pytest_tlgraph.review.terminal import terminal_report
from tests.integration.test_accept import TESTS

pytest_plugins = ["pytester"]


def _tlgraph(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(args))
    return code, capsys.readouterr().out


def _failing(project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.RunResult:
    for name in ("TL_KERNEL", "TL_WIDTH"):
        monkeypatch.delenv(name, raising=False)
    project.makepyfile(test_models=TESTS)
    project.runpytest("--snapshot-update").assert_outcomes(passed=3)
    monkeypatch.setenv("TL_KERNEL", "5")  # the ResNet's stem: 7x7 -> 5x5
    monkeypatch.setenv("TL_WIDTH", "12")
    run = project.runpytest("--tlgraph-summary=json,markdown")
    run.assert_outcomes(passed=1, failed=2)
    return run


def _story(outcome: CallOutcome) -> tuple[str, ...]:
    assert outcome.report is not None
    return outcome.report.story


def test_every_surface_says_what_the_record_says(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _failing(project, monkeypatch)
    results = project.path / "tlgraph-results"
    calls = sorted_calls([outcome for _, outcome in read_outcomes(results)])
    assert [(c.nodeid.split("::")[1], c.name, c.verdict) for c in calls] == [
        ("test_mlp", "test_mlp", "failed"),
        ("test_resnet", "test_resnet", "failed"),
        ("test_same", "test_same[six]", "passed"),
        ("test_same", "test_same[three]", "passed"),
    ]
    failing = [c for c in calls if c.failed]
    for call in failing:
        assert call.structure is not None and call.structure.edits, "typed edits kept"
        assert call.accept is not None and call.images.keys() >= {"graphdiff", "actual"}
    resnet = failing[1]
    assert "kernel_size" in resnet.headline and "(5, 5)" in resnet.headline

    # The terminal: the outcome's report, cut for a terminal, line by line.
    out = run.stdout.str()
    for call in failing:
        assert call.report is not None
        for line in terminal_report(call.report).text().splitlines():
            assert line in out, line

    # summary.json is the records themselves; summary.md their headlines.
    summary = json.loads((results / "summary.json").read_text())
    assert summary["calls"] == [outcome_to_json(c) for c in calls]
    assert summary["counts"] == {"failed": 2, "passed": 2}
    markdown = (results / "summary.md").read_text()
    for call in calls:
        headline = f" `{call.headline}` |" if call.structure is not None else " |"
        assert f"| `{call.nodeid}` | `{call.name}` | " in markdown
        assert headline in markdown

    # report.html: every story line of every failure, and its accept command.
    page = (results / "report.html").read_text()
    for call in failing:
        for line in _story(call):
            assert html.escape(line, quote=False) in page, line
        assert f"--call {call.name}" in page

    # tlgraph report: each failure's title and story, and its one line pending review.
    monkeypatch.chdir(project.path)
    code, printed = _tlgraph(capsys, "report")
    assert code == 0
    for call in failing:
        assert call.report is not None and f"  {call.report.title}" in printed
        for line in _story(call):
            assert f"    {line}" in printed
        assert f"  {call.nodeid} [{call.name}]: {call.headline}" in printed

    # tlgraph review: the same story, call by call.
    monkeypatch.setattr(sys, "stdin", io.StringIO("s\ns\n"))
    code, printed = _tlgraph(capsys, "review")
    assert code == 0
    for number, call in enumerate(failing, start=1):
        assert f"[{number}/2] {call.nodeid} [{call.name}]" in printed
        for line in _story(call)[:24]:
            assert f"    {line}" in printed

    # The shard merge: a copy of the folder is the same run, each call once with both
    # shards, every record as it was but for its shard and its images' paths.
    shutil.copytree(results, project.path / "again")
    code, _ = _tlgraph(capsys, "report", "tlgraph-results", "again", "-o", "merged")
    assert code == 0
    merged = json.loads((project.path / "merged" / "summary.json").read_text())
    assert [c["shard"] for c in merged["calls"]] == ["tlgraph-results, again"] * 4
    for mine, theirs in zip(summary["calls"], merged["calls"], strict=True):
        assert {k: v for k, v in theirs.items() if k not in ("shard", "images")} == {
            k: v for k, v in mine.items() if k not in ("shard", "images")
        }
        for kind, rel in theirs["images"].items():
            assert (project.path / "merged" / rel).resolve() == (results / mine["images"][kind])
    page = (project.path / "merged" / "report.html").read_text()
    assert page.count('<section class="failure"') == 2
