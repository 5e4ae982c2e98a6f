"""Items 1 and 2 of issue 37: ``--snapshot-update`` deletes a test's baselines only when
the test's body ran. A fixture requested before ``tlgraph_snapshot`` that fails at set-up
(a flaky download, a missing GPU) left the test "ran, failed" in syrupy's bookkeeping,
and its baselines were deleted as unused; ``--setup-only`` and ``--setup-plan`` ran no
test body at all and deleted every baseline. 0.4 loses the files in each case."""

from __future__ import annotations

import textwrap

import pytest

from tests.integration.project import snapshot_names

pytest_plugins = ["pytester"]

#: A fixture requested before ``tlgraph_snapshot``; it fails at set-up under TL_FLAKY.
TESTS = textwrap.dedent(
    """
    import os
    import pytest
    from tinymodels import MLP

    @pytest.fixture(autouse=True)
    def gpu():
        if os.environ.get("TL_NO_GPU"):
            pytest.fail("no GPU on this machine")

    @pytest.fixture
    def weights():
        if os.environ.get("TL_FLAKY"):
            raise ConnectionError("the download failed")
        return 1

    def test_downloaded(weights, tlgraph_snapshot):
        tlgraph_snapshot(MLP())
        tlgraph_snapshot(MLP(), name="wide")

    def test_plain(tlgraph_snapshot):
        tlgraph_snapshot(MLP())
    """
)

STORED = ["test_downloaded.gv", "test_downloaded.png", "test_downloaded[wide].gv"]
STORED += ["test_downloaded[wide].png", "test_plain.gv", "test_plain.png"]


@pytest.fixture
def suite(project: pytest.Pytester) -> pytest.Pytester:
    project.makepyfile(test_graph=TESTS)
    project.runpytest("--snapshot-update").assert_outcomes(passed=2)
    assert snapshot_names(project) == STORED
    return project


def test_a_failed_set_up_keeps_the_tests_baselines(
    suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TL_FLAKY", "1")
    result = suite.runpytest("--snapshot-update")
    result.assert_outcomes(passed=1, errors=1)
    assert snapshot_names(suite) == STORED


def test_every_set_up_failing_deletes_nothing(
    suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No body runs: an obsolete snapshot of the module is kept too.
    monkeypatch.setenv("TL_NO_GPU", "1")
    (suite.path / "__snapshots__" / "test_graph" / "test_gone.gv").write_bytes(
        (suite.path / "__snapshots__" / "test_graph" / "test_plain.gv").read_bytes()
    )
    result = suite.runpytest("--snapshot-update")
    result.assert_outcomes(errors=2)
    assert snapshot_names(suite) == sorted([*STORED, "test_gone.gv"])
    result.stdout.fnmatch_lines(["tlgraph: kept * (no test body ran*"])


@pytest.mark.parametrize("option", ["--setup-only", "--setup-plan"])
def test_a_run_of_no_test_body_deletes_nothing(suite: pytest.Pytester, option: str) -> None:
    result = suite.runpytest("--snapshot-update", option)
    assert result.ret == 0
    assert snapshot_names(suite) == STORED


def test_a_body_that_ran_still_deletes_what_it_no_longer_uses(suite: pytest.Pytester) -> None:
    # The rule keeps syrupy's cleanup where a body ran: a call dropped from the test
    # is deleted as before.
    suite.makepyfile(test_graph=TESTS.replace('    tlgraph_snapshot(MLP(), name="wide")\n', ""))
    suite.runpytest("--snapshot-update").assert_outcomes(passed=2)
    assert snapshot_names(suite) == [n for n in STORED if "wide" not in n]
