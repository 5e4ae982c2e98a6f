"""Item 5 of "never misreport a run": a CI summary that cannot be written is one warning
line, never a failed session (the exit status is the tests' own)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]


def _targets(root: Path) -> dict[str, Path]:
    """``GITHUB_STEP_SUMMARY`` values that cannot be appended to."""
    (root / "a-file").write_text("x")
    (root / "a-folder").mkdir()
    found = {
        "missing folder": root / "no-such-folder" / "summary.md",
        "directory": root / "a-folder",
        "below a file": root / "a-file" / "summary.md",
    }
    if os.path.exists("/dev/full"):  # every write fails: a full disk
        found["full disk"] = Path("/dev/full")
    return found


@pytest.mark.parametrize("case", ["missing folder", "directory", "below a file", "full disk"])
def test_an_unwritable_step_summary_is_one_warning_line(
    stored: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    targets = _targets(stored.path)
    if case not in targets:
        case = "missing folder"  # no /dev/full on this system: the first case again
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(targets[case]))
    result = stored.runpytest("--tlgraph-summary=json,markdown")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.assert_outcomes(passed=1)
    out = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in out and "INTERNALERROR" not in out
    warned = [line for line in out.splitlines() if "GITHUB_STEP_SUMMARY" in line]
    assert len(warned) == 1, out
    assert str(targets[case]) in warned[0] and "set it to a writable file" in warned[0]
    results = stored.path / "tlgraph-results"
    assert (results / "summary.md").read_text().startswith("### tlgraph snapshots: 1 passed")


def test_a_failing_run_keeps_its_status_when_no_summary_can_be_written(
    stored: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The summaries' places in the results folder are folders (theirs and the
    # tlgraph- names another tool's file leaves them): nothing can be written.
    results = stored.path / "tlgraph-results"
    for name in ("summary.json", "summary.md", "tlgraph-summary.json", "tlgraph-summary.md"):
        (results / name).mkdir(parents=True)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(stored.path / "missing" / "step.md"))
    monkeypatch.setenv("TL_HIDDEN", "32")
    result = stored.runpytest("--tlgraph-summary=json,markdown")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "INTERNALERROR" not in out
    warned = [line for line in out.splitlines() if "summary" in line and "tlgraph: " in line]
    assert len(warned) == 3, warned  # summary.json, summary.md, the step summary
    assert all("the run's result is unchanged" in line for line in warned[:2])
    result.stdout.fnmatch_lines(["1 snapshot failure; report: tlgraph-results/report.html"])
    assert (results / "report.html").is_file()
