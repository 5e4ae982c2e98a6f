"""Items 3 and 6 of issue 37: a run deletes only files it wrote and can prove it wrote.

0.4 followed a ``.tlgraph-manifest`` that is a symbolic link, and deleted the ``*.txt``
files of the folder it led to, on every run, a passing one too (item 3). In a results
folder shared with other tools (the guide's ``--tlgraph-results=artifacts``), it wrote
over another tool's ``summary.md``/``summary.json``, listed them as its own, and the
next run deleted them (item 6). Now the manifest is never followed (one line says so,
nothing is cleared through it), a fixed-name file already there is kept and the run
writes ``tlgraph-<name>`` beside it, and a listed file another tool wrote over since
is kept (its stamp no longer matches)."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

FOREIGN_MD = "# the coverage tool's summary\n"
FOREIGN_JSON = '{"coverage": 91}\n'


def test_a_manifest_that_is_a_link_is_refused_never_followed(
    stored: pytest.Pytester,
) -> None:
    elsewhere = stored.path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "notes.txt").write_text("keep me\n")
    results = stored.path / "tlgraph-results"
    results.mkdir()
    (results / ".tlgraph-manifest").symlink_to(elsewhere, target_is_directory=True)
    result = stored.runpytest()
    result.assert_outcomes(passed=1)
    assert (elsewhere / "notes.txt").read_text() == "keep me\n"
    warned = [line for line in result.outlines if ".tlgraph-manifest" in line]
    assert len(warned) == 1, result.outlines
    assert "symbolic link" in warned[0] and "nothing was cleared" in warned[0]


def test_a_list_in_the_manifest_that_is_a_link_is_never_read(stored: pytest.Pytester) -> None:
    # The link leads to a file that reads as a list naming the user's own file in the
    # results folder: followed, it would be deleted.
    victim = stored.path / "victim.txt"
    victim.write_text("f keep.txt\n")
    results = stored.path / "tlgraph-results"
    (results / ".tlgraph-manifest").mkdir(parents=True)
    (results / "keep.txt").write_text("the user's\n")
    (results / ".tlgraph-manifest" / "main-1.txt").symlink_to(victim)
    stored.runpytest().assert_outcomes(passed=1)
    assert victim.read_text() == "f keep.txt\n"
    assert (results / "keep.txt").read_text() == "the user's\n"


def test_another_tools_summaries_are_never_written_over_nor_deleted(
    stored: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = stored.path / "artifacts"
    shared.mkdir()
    (shared / "summary.md").write_text(FOREIGN_MD)
    (shared / "summary.json").write_text(FOREIGN_JSON)
    monkeypatch.setenv("TL_HIDDEN", "32")
    args = ("--tlgraph-results=artifacts", "--tlgraph-summary=json,markdown")
    stored.runpytest(*args).assert_outcomes(failed=1)
    assert (shared / "summary.md").read_text() == FOREIGN_MD
    assert (shared / "summary.json").read_text() == FOREIGN_JSON
    assert "test_mlp" in (shared / "tlgraph-summary.md").read_text()
    assert '"failed": 1' in (shared / "tlgraph-summary.json").read_text()
    monkeypatch.delenv("TL_HIDDEN")
    stored.runpytest(*args).assert_outcomes(passed=1)
    assert (shared / "summary.md").read_text() == FOREIGN_MD
    assert (shared / "summary.json").read_text() == FOREIGN_JSON
    assert "1 passed" in (shared / "tlgraph-summary.md").read_text()


def test_a_listed_file_another_tool_wrote_over_is_kept(
    stored: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The run wrote summary.md and listed it; another tool then wrote its own file
    # there (a rename, as editors and atomic writers do): it is that tool's now.
    args = ("--tlgraph-results=artifacts", "--tlgraph-summary=markdown")
    stored.runpytest(*args).assert_outcomes(passed=1)
    shared = stored.path / "artifacts"
    theirs = shared / "theirs.tmp"
    theirs.write_text(FOREIGN_MD)
    theirs.replace(shared / "summary.md")
    stored.runpytest(*args).assert_outcomes(passed=1)
    assert (shared / "summary.md").read_text() == FOREIGN_MD
