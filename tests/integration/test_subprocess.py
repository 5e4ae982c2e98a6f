"""Runs that need their own process: pytest-xdist, and the cost of an unused plugin."""

from __future__ import annotations

import textwrap

import pytest

from tests.integration.project import snapshot_names

pytest_plugins = ["pytester"]

SUITE = textwrap.dedent(
    """
    import pytest
    import torch
    from tinymodels import MLP, NoExample

    @pytest.mark.parametrize("view", ["unrolled", "rolled"])
    def test_views(tlgraph_snapshot, view):
        tlgraph_snapshot(MLP(), view=view)

    def test_two_calls(tlgraph_snapshot):
        tlgraph_snapshot(MLP())
        tlgraph_snapshot(MLP(), name="top", direction="topdown")

    def test_stable(tlgraph_snapshot):
        tlgraph_snapshot(NoExample(), torch.zeros(1, 3))

    def test_dropped(tlgraph_snapshot):
        tlgraph_snapshot(MLP(), png=False)
    """
)


def test_lifecycle_under_xdist(project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    project.makepyfile(test_graph=SUITE)
    project.runpytest_subprocess("-n", "2", "--snapshot-update").assert_outcomes(passed=5)
    names = snapshot_names(project)
    assert names == [
        "test_dropped.gv",
        "test_stable.gv",
        "test_stable.png",
        "test_two_calls.gv",
        "test_two_calls.png",
        "test_two_calls[top].gv",
        "test_two_calls[top].png",
        "test_views[rolled].gv",
        "test_views[rolled].png",
        "test_views[unrolled].gv",
        "test_views[unrolled].png",
    ]

    # One run, on two workers: a test passes, three fail with reports (both calls of
    # test_two_calls are compared, so four), one snapshot is left unused by a removed test.
    project.makepyfile(test_graph=SUITE.split("def test_dropped")[0])
    monkeypatch.setenv("TL_HIDDEN", "12")
    second = project.runpytest_subprocess("-n", "2")
    second.assert_outcomes(passed=1, failed=3)
    second.stdout.fnmatch_lines(["*1 snapshot unused*"])
    results = project.path / "tlgraph-results"
    html = (results / "report.html").read_text()
    assert html.count('<section class="failure"') == 4
    for nodeid in ("test_views[unrolled]", "test_views[rolled]", "test_two_calls"):
        assert f"test_graph.py::{nodeid}" in html
    assert len(list((results / ".records").glob("*.outcome"))) == 4
    assert (results / "test_graph" / "test_views[rolled]-diff.png").is_file()


def test_a_session_that_never_uses_the_fixture_never_imports_torch(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.makeconftest(
        """
        import sys

        def pytest_sessionfinish(session):
            loaded = sorted(m for m in ("torch", "numpy", "PIL") if m in sys.modules)
            (session.config.rootpath / "loaded.txt").write_text(",".join(loaded))
        """
    )
    project.makepyfile(test_plain="def test_plain():\n    assert 1 + 1 == 2\n")
    # The plugin on its own: nothing heavy at all.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    alone = project.runpytest_subprocess("-p", "pytest_tlgraph.plugin")
    alone.assert_outcomes(passed=1)
    alone.stdout.fnmatch_lines(["tlgraph: torch *, renderer pure (graphviz-pure *)"])
    assert (project.path / "loaded.txt").read_text() == ""
    # Installed beside the other plugins (as users have it): still no torch.
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    project.runpytest_subprocess().assert_outcomes(passed=1)
    assert "torch" not in (project.path / "loaded.txt").read_text()
