"""Item 6 of issue 22: a test whose final attempt passes (pytest-rerunfailures style
reruns, an earlier attempt failed) is reported passed everywhere: the terminal,
report.html, summary.json and syrupy's summary."""

from __future__ import annotations

import json
import textwrap

import pytest

from tests.integration.project import BASIC_TEST
from tests.outcomes import outcome_files

pytest_plugins = ["pytester"]

#: Loaded into the run (-p rerun): what pytest-rerunfailures does with ``--reruns 1``.
#: A failed attempt's reports are logged with the outcome "rerun", the item's fixtures
#: are set up again, and the test runs once more; its last attempt is the result.
RERUN = textwrap.dedent(
    """
    import pytest
    from _pytest.runner import runtestprotocol


    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(item, nextitem):
        item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        for attempt in range(2):
            item._initrequest()  # fresh fixtures, as pytest-rerunfailures sets them up
            reports = runtestprotocol(item, nextitem=nextitem, log=False)
            again = attempt == 0 and any(r.failed for r in reports)
            for report in reports:
                if again and report.failed:
                    report.outcome = "rerun"
                item.ihook.pytest_runtest_logreport(report=report)
            if not again:
                break
        item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        return True


    def pytest_report_teststatus(report):
        if report.outcome == "rerun":
            return "rerun", "R", ("RERUN", {"yellow": True})
    """
)

#: The first attempt draws a wider model than the baseline; the second the stored one.
FLAKY = textwrap.dedent(
    """
    import os
    from tinymodels import MLP

    ATTEMPTS = []

    def test_mlp(tlgraph_snapshot):
        ATTEMPTS.append(1)
        os.environ["TL_HIDDEN"] = "32" if len(ATTEMPTS) == 1 else "16"
        try:
            tlgraph_snapshot(MLP())
        finally:
            del os.environ["TL_HIDDEN"]
    """
)


def test_a_rerun_that_passes_is_reported_passed_everywhere(project: pytest.Pytester) -> None:
    project.makepyfile(test_graph=BASIC_TEST, rerun=RERUN)
    project.runpytest("--snapshot-update").assert_outcomes(passed=1)
    project.makepyfile(test_graph=FLAKY)
    result = project.runpytest("-p", "rerun", "--tlgraph-summary=json")
    assert result.parseoutcomes() == {"passed": 1, "rerun": 1}
    assert result.ret == 0
    out = result.stdout.str()
    assert "snapshot failure" not in out, "the passing rerun is reported as a failure"
    assert "snapshot failed" not in out, "syrupy counts the failed attempt"
    result.stdout.fnmatch_lines(["*1 snapshot passed.*"])  # one pair
    results = project.path / "tlgraph-results"
    assert not (results / "report.html").exists()
    assert not outcome_files(results), "the failed attempt's outcome is kept"
    assert not (results / "test_graph" / "test_mlp.png").exists(), "the failed attempt's picture"
    summary = json.loads((results / "summary.json").read_text())
    assert summary["counts"] == {"passed": 1}
    assert [call["verdict"] for call in summary["calls"]] == ["passed"]


def test_a_rerun_that_fails_again_is_reported_by_its_last_attempt(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.makepyfile(test_graph=BASIC_TEST, rerun=RERUN)
    project.runpytest("--snapshot-update").assert_outcomes(passed=1)
    monkeypatch.setenv("TL_HIDDEN", "24")
    result = project.runpytest("-p", "rerun", "--tlgraph-summary=json")
    assert result.parseoutcomes() == {"failed": 1, "rerun": 1}
    result.stdout.fnmatch_lines(["*1 snapshot failure; report: tlgraph-results/report.html*"])
    result.stdout.fnmatch_lines(["1 snapshot failed."])  # the last attempt's pair, not two
    results = project.path / "tlgraph-results"
    html = (results / "report.html").read_text()
    assert html.count('<section class="failure"') == 1
    summary = json.loads((results / "summary.json").read_text())
    assert summary["counts"] == {"failed": 1}
