"""Every ``tlgraph_snapshot`` call of a test is compared (REVIEW.md §2.1), in pytester."""

from __future__ import annotations

import re
import textwrap

import pytest

from tests.integration.project import snapshot_names

pytest_plugins = ["pytester"]

THREE_CALLS = textwrap.dedent(
    """
    import torch
    from tinymodels import MLP, NoExample

    def test_many(tlgraph_snapshot):
        drawn = tlgraph_snapshot(MLP(), name="plain")
        assert "linear_1" in drawn.nodes  # the test goes on after a mismatch
        tlgraph_snapshot(NoExample(), torch.zeros(1, 3), name="steady")
        tlgraph_snapshot(MLP(), name="flops", color_by="flops")
        tlgraph_snapshot(MLP(), name="rolled", view="rolled")
        (__import__("pathlib").Path("reached.txt")).write_text("yes")
    """
)


def _syrupy_counts(out: str) -> dict[str, int]:
    failed = re.search(r"(\d+) snapshots? failed\.", out)
    passed = re.search(r"(\d+) snapshots? passed\.", out)
    assert failed is not None, out[-2000:]
    return {"failed": int(failed[1]), "passed": int(passed[1]) if passed else 0}


def test_three_mismatching_calls_fail_once_with_three_reports(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.makepyfile(test_graph=THREE_CALLS)
    project.runpytest("--snapshot-update").assert_outcomes(passed=1)
    assert len(snapshot_names(project)) == 8  # every call written: 4 x (.gv, .png)
    monkeypatch.setenv("TL_HIDDEN", "12")
    (project.path / "reached.txt").unlink()
    result = project.runpytest("-rN")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    # The test ran to its end: the calls after the first mismatch were compared.
    assert (project.path / "reached.txt").read_text() == "yes"
    assert "3 of 4 tlgraph_snapshot calls in this test do not match:" in out
    for name in ("plain", "flops", "rolled"):
        assert out.count(f"tlgraph snapshot test_many[{name}] does not match") == 1
    assert "test_many[steady] does not match" not in out
    # Each report names the line of its call.
    assert re.findall(r"test_graph\.py:(\d+): tlgraph snapshot", out) == ["5", "8", "9"]
    # True counts: 3 calls' pairs failed, the steady call's pair passed.
    assert _syrupy_counts(out) == {"failed": 3, "passed": 1}
    records = list((project.path / "tlgraph-results" / ".records").glob("*.outcome"))
    assert len(records) == 3


def test_two_mismatching_calls_and_update_writes_both(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.makepyfile(
        test_graph="""
        from tinymodels import MLP

        def test_two(tlgraph_snapshot):
            tlgraph_snapshot(MLP())
            tlgraph_snapshot(MLP(), depth=1)
        """
    )
    project.runpytest("--snapshot-update").assert_outcomes(passed=1)
    first = {p: (project.path / "__snapshots__/test_graph" / p).read_bytes()
             for p in snapshot_names(project)}  # fmt: skip
    monkeypatch.setenv("TL_HIDDEN", "12")
    result = project.runpytest("-rN")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "2 of 2 tlgraph_snapshot calls in this test do not match:" in out
    assert "tlgraph snapshot test_two does not match" in out
    assert "tlgraph snapshot test_two.1 does not match" in out
    assert _syrupy_counts(out) == {"failed": 2, "passed": 0}
    # --snapshot-update writes every call, not only the first.
    project.runpytest("--snapshot-update").assert_outcomes(passed=1)
    changed = [p for p, data in first.items()
               if (project.path / "__snapshots__/test_graph" / p).read_bytes() != data]  # fmt: skip
    assert sorted(changed) == ["test_two.1.gv", "test_two.1.png", "test_two.gv", "test_two.png"]
    project.runpytest().assert_outcomes(passed=1)


def test_an_error_after_a_mismatch_keeps_both(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.makepyfile(
        test_graph="""
        from tinymodels import MLP

        def test_then_error(tlgraph_snapshot):
            tlgraph_snapshot(MLP())
            raise KeyError("the test's own bug")
        """
    )
    project.runpytest("--snapshot-update").assert_outcomes(failed=1)
    monkeypatch.setenv("TL_HIDDEN", "12")
    result = project.runpytest()
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert 'KeyError: "the test\'s own bug"' in out
    assert "and 1 tlgraph snapshot mismatch(es) before:" in out
    assert "tlgraph snapshot test_then_error does not match" in out
