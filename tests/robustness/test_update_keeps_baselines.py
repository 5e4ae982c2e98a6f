"""Item 1 of issue 22: ``--snapshot-update`` deletes baselines only after a run that ran
every collected test to its end. A collection error, an interrupt, a ``-x`` /
``--maxfail`` stop, or a module skipped at import keeps every unused snapshot, and the
run says in one line how many and why; selection keeps syrupy's behaviour."""

from __future__ import annotations

import textwrap

import pytest

from tests.integration.project import BASIC_TEST, snapshot_names

pytest_plugins = ["pytester"]

#: The first module: its test fails (TL_FAIL) or interrupts the run (TL_INTERRUPT).
FIRST = textwrap.dedent(
    """
    import os
    from tinymodels import MLP

    def test_mlp(tlgraph_snapshot):
        if os.environ.get("TL_INTERRUPT"):
            raise KeyboardInterrupt
        tlgraph_snapshot(MLP())
        assert not os.environ.get("TL_FAIL"), "the test itself fails"
    """
)

#: The second module: skipped at import when TL_SKIP names a way to skip.
SECOND = textwrap.dedent(
    """
    import os
    import pytest
    from tinymodels import MLP

    if os.environ.get("TL_SKIP") == "importorskip":
        pytest.importorskip("a_module_that_is_not_installed")
    elif os.environ.get("TL_SKIP") == "skip":
        pytest.skip("not on this machine", allow_module_level=True)

    def test_one(tlgraph_snapshot):
        tlgraph_snapshot(MLP())

    def test_two(tlgraph_snapshot):
        tlgraph_snapshot(MLP(), name="wide")
    """
)

SECOND_FILES = [
    "test_one.gv",
    "test_one.png",
    "test_two[wide].gv",
    "test_two[wide].png",
]


@pytest.fixture
def suite(project: pytest.Pytester) -> pytest.Pytester:
    """Two modules (test_first: one test, test_second: two), every baseline stored."""
    project.makepyfile(test_first=FIRST, test_second=SECOND)
    project.runpytest("--snapshot-update").assert_outcomes(passed=3)
    assert snapshot_names(project, "test_second") == SECOND_FILES
    return project


def _kept_lines(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if line.startswith("tlgraph: kept ")]


def _all_stored(project: pytest.Pytester) -> None:
    assert snapshot_names(project, "test_first") == ["test_mlp.gv", "test_mlp.png"]
    assert snapshot_names(project, "test_second") == SECOND_FILES


def test_a_collection_error_deletes_no_baseline(suite: pytest.Pytester) -> None:
    suite.makepyfile(test_broken="import a_module_that_is_not_installed\n")
    result = suite.runpytest("--snapshot-update")
    result.stdout.fnmatch_lines(["*Interrupted: 1 error during collection*"])
    _all_stored(suite)
    assert _kept_lines(result) == [
        "tlgraph: kept 3 unused snapshots (1 error during collection): --snapshot-update "
        "deletes unused snapshots only after a run that ran every collected test to its end"
    ]


def test_a_collection_error_with_continue_deletes_no_baseline(suite: pytest.Pytester) -> None:
    suite.makepyfile(test_second="import a_module_that_is_not_installed\n" + SECOND)
    result = suite.runpytest("--snapshot-update", "--continue-on-collection-errors")
    result.assert_outcomes(passed=1, errors=1)
    _all_stored(suite)
    (line,) = _kept_lines(result)
    assert line.startswith("tlgraph: kept 2 unused snapshots (1 error during collection)")


@pytest.mark.parametrize("stop", ["-x", "--maxfail=1"])
def test_a_stop_after_a_failure_deletes_no_baseline(
    suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, stop: str
) -> None:
    monkeypatch.setenv("TL_FAIL", "1")
    result = suite.runpytest("--snapshot-update", stop)
    result.assert_outcomes(failed=1)
    _all_stored(suite)
    (line,) = _kept_lines(result)
    assert line.startswith(
        "tlgraph: kept 2 unused snapshots (the run stopped early: stopping after 1 failures)"
    )


def test_an_interrupt_deletes_no_baseline(
    suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TL_INTERRUPT", "1")
    # As Ctrl-C during the first test: the KeyboardInterrupt stops the whole run.
    result = suite.runpytest("--snapshot-update", no_reraise_ctrlc=True)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    _all_stored(suite)
    (line,) = _kept_lines(result)
    assert line.startswith("tlgraph: kept 2 unused snapshots (the run was interrupted)")


@pytest.mark.parametrize("skip", ["importorskip", "skip"])
def test_a_module_skipped_at_import_keeps_its_baselines(
    suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, skip: str
) -> None:
    # An obsolete snapshot elsewhere is still deleted: the run did reach that module.
    suite.makepyfile(test_first=FIRST.replace("MLP())", "MLP(), name='renamed')"))
    monkeypatch.setenv("TL_SKIP", skip)
    result = suite.runpytest("--snapshot-update")
    result.assert_outcomes(passed=1, skipped=1)
    assert snapshot_names(suite, "test_second") == SECOND_FILES
    assert snapshot_names(suite, "test_first") == ["test_mlp[renamed].gv", "test_mlp[renamed].png"]
    assert _kept_lines(result) == [
        "tlgraph: kept 2 unused snapshots (test_second.py was skipped at import): "
        "--snapshot-update deletes unused snapshots only after a run that ran every "
        "collected test to its end"
    ]
    # A plain run does not call them unused either (as for a module left out by --ignore).
    plain = suite.runpytest()
    plain.assert_outcomes(passed=1, skipped=1)
    assert plain.ret == 0
    assert "unused" not in plain.stdout.str()


def test_selection_keeps_syrupys_behaviour(
    suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    for args in (["-k", "test_one"], ["test_second.py::test_two"], ["--deselect", "test_first.py"]):
        result = suite.runpytest("--snapshot-update", *args)
        assert result.ret == 0, args
        _all_stored(suite)
        assert _kept_lines(result) == [], args
    # A complete update still deletes what is obsolete, and says nothing.
    suite.makepyfile(test_first=BASIC_TEST.replace("test_mlp", "test_renamed"))
    result = suite.runpytest("--snapshot-update")
    result.assert_outcomes(passed=3)
    assert snapshot_names(suite, "test_first") == ["test_renamed.gv", "test_renamed.png"]
    assert _kept_lines(result) == []


def test_under_xdist_a_stop_or_a_skipped_module_deletes_no_baseline(
    suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TL_SKIP", "importorskip")
    skipped = suite.runpytest_subprocess("-n", "2", "--snapshot-update")
    skipped.assert_outcomes(passed=1, skipped=1)
    _all_stored(suite)
    (line,) = _kept_lines(skipped)
    assert line.startswith("tlgraph: kept 2 unused snapshots (test_second.py was skipped")
    monkeypatch.delenv("TL_SKIP")
    monkeypatch.setenv("TL_FAIL", "1")
    stopped = suite.runpytest_subprocess("-n", "2", "--snapshot-update", "-x")
    stopped.stdout.fnmatch_lines(["*AssertionError: the test itself fails*"])
    _all_stored(suite)
    # How many tests the other worker finished before the stop depends on timing.
    kept = _kept_lines(stopped)
    assert len(kept) <= 1
    assert all("(the run stopped early: stopping after 1 failures)" in line for line in kept)
