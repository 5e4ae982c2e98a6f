"""Item 1 of issue 31: ``--snapshot-update`` deletes a snapshot only when its test was
collected, still selected after every ``pytest_collection_modifyitems`` hook (stepwise,
a conftest's, a plugin's), and ran to its end. syrupy records the collection in its own
hook, which runs after stepwise's and a conftest's: the tests they drop looked obsolete
to it, and their baselines were deleted."""

from __future__ import annotations

import textwrap

import pytest

from tests.integration.project import INI, snapshot_names

pytest_plugins = ["pytester"]

#: Three tests; the second fails while TL_FAIL is set.
SUITE = textwrap.dedent(
    """
    import os
    import pytest
    from tinymodels import MLP

    def test_1(tlgraph_snapshot):
        tlgraph_snapshot(MLP())

    def test_2(tlgraph_snapshot):
        tlgraph_snapshot(MLP())
        assert not os.environ.get("TL_FAIL"), "the test itself fails"

    @pytest.mark.slow
    def test_3(tlgraph_snapshot):
        tlgraph_snapshot(MLP())
    """
)

#: The common ``--run-slow`` recipe: slow tests are deselected unless asked for.
RUN_SLOW = textwrap.dedent(
    """
    def pytest_addoption(parser):
        parser.addoption("--run-slow", action="store_true")

    def pytest_collection_modifyitems(config, items):
        if config.getoption("--run-slow"):
            return
        slow = [item for item in items if "slow" in item.keywords]
        items[:] = [item for item in items if "slow" not in item.keywords]
        config.hook.pytest_deselected(items=slow)
    """
)

ALL = [f"test_{n}.{ext}" for n in (1, 2, 3) for ext in ("gv", "png")]


def _kept(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if line.startswith("tlgraph: kept ")]


@pytest.fixture
def suite(project: pytest.Pytester) -> pytest.Pytester:
    """The three tests, every baseline stored (stepwise needs the cache plugin)."""
    project.makeini(INI.replace("-p no:cacheprovider ", "") + "markers = slow: a slow test\n")
    project.makepyfile(test_m=SUITE)
    project.runpytest("--snapshot-update", "-p", "no:randomly").assert_outcomes(passed=3)
    assert snapshot_names(project, "test_m") == ALL
    return project


def test_stepwise_resuming_keeps_the_baselines_of_the_tests_it_skips(
    suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TL_FAIL", "1")
    first = suite.runpytest("--sw", "-p", "no:randomly")
    first.assert_outcomes(passed=1, failed=1)
    monkeypatch.delenv("TL_FAIL")
    # Resuming at test_2: stepwise deselects test_1 before syrupy records the collection.
    resumed = suite.runpytest("--sw", "--snapshot-update", "-p", "no:randomly")
    resumed.assert_outcomes(passed=2, deselected=1)
    assert snapshot_names(suite, "test_m") == ALL
    assert "deleted" not in resumed.stdout.str()
    (line,) = _kept(resumed)
    assert line.startswith("tlgraph: kept 1 unused snapshot (1 test deselected by --stepwise")


def test_a_conftest_that_deselects_keeps_the_baselines_it_deselects(
    suite: pytest.Pytester,
) -> None:
    suite.makeconftest(RUN_SLOW)
    result = suite.runpytest("--snapshot-update", "-p", "no:randomly")
    result.assert_outcomes(passed=2, deselected=1)
    assert snapshot_names(suite, "test_m") == ALL
    assert "deleted" not in result.stdout.str()
    (line,) = _kept(result)
    assert line.startswith(
        "tlgraph: kept 1 unused snapshot "
        "(1 test deselected by a pytest_collection_modifyitems hook, not run)"
    )
    # With every test selected an obsolete snapshot is still deleted, and nothing kept.
    suite.makepyfile(test_m=SUITE.replace("def test_3", "def test_4"))
    complete = suite.runpytest("--snapshot-update", "--run-slow", "-p", "no:randomly")
    complete.assert_outcomes(passed=3)
    assert snapshot_names(suite, "test_m") == [*ALL[:4], "test_4.gv", "test_4.png"]
    assert _kept(complete) == []


def test_an_obsolete_snapshot_beside_a_deselected_test_is_still_deleted(
    suite: pytest.Pytester,
) -> None:
    # test_1 renamed its call: its old files are obsolete (test_1 ran), test_3's are not.
    suite.makeconftest(RUN_SLOW)
    suite.makepyfile(
        test_m=SUITE.replace("tlgraph_snapshot(MLP())", "tlgraph_snapshot(MLP(), name='x')", 1)
    )
    result = suite.runpytest("--snapshot-update", "-p", "no:randomly")
    result.assert_outcomes(passed=2, deselected=1)
    names = snapshot_names(suite, "test_m")
    assert "test_1.gv" not in names and "test_1[x].gv" in names
    assert {"test_3.gv", "test_3.png"} <= set(names)
