"""Issue 31, item 12: a regular file where the snapshot folder belongs is named, with
the remedy, during an update too; it is never overwritten or removed."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

TEST = """
from tinymodels import MLP

def test_a(tlgraph_snapshot):
    tlgraph_snapshot(MLP())
"""


@pytest.mark.parametrize("update", [True, False], ids=["update", "compare"])
def test_a_file_where_the_module_folder_belongs_is_named_with_its_remedy(
    project: pytest.Pytester, update: bool
) -> None:
    project.makepyfile(test_graph=TEST)
    blocker = project.path / "__snapshots__" / "test_graph"
    blocker.parent.mkdir()
    blocker.write_text("my notes\n")
    result = project.runpytest(*(["--snapshot-update"] if update else []), "-p", "no:randomly")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    result.stdout.fnmatch_lines(
        ["*__snapshots__/test_graph is a file where a folder belongs: move it away*"]
    )
    assert "NotADirectoryError" not in out
    assert "run pytest --snapshot-update to create it" not in out
    assert blocker.read_text() == "my notes\n"
