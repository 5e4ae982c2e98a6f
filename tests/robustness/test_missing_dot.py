"""Issue 31, item 14: ``--tlgraph-renderer=system`` without Graphviz's ``dot`` on PATH
fails each call with the one line that names the cause and the remedy, not a chain of
tracebacks through the graphviz package."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

TEST = """
from tinymodels import MLP

def test_a(tlgraph_snapshot):
    tlgraph_snapshot(MLP())
"""


def test_the_system_renderer_without_dot_fails_in_one_line(
    project: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    project.makepyfile(test_graph=TEST)
    monkeypatch.setenv("PATH", str(tmp_path_factory.mktemp("empty-path")))
    result = project.runpytest_subprocess("--tlgraph-renderer=system", "-p", "no:randomly")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    result.stdout.fnmatch_lines(
        ["E   *RenderError: renderer 'system' needs Graphviz's dot program, which was not "
         "found on PATH. Remedy: install Graphviz*--tlgraph-renderer=pure."]
    )  # fmt: skip
    assert "ExecutableNotFound" not in out and "CalledProcessError" not in out
    assert "The above exception was the direct cause" not in out
    assert len(out.splitlines()) < 40, out
