"""Issue 31, item 3: names that differ only in Unicode normalisation (``café`` NFC and
NFD) are one file on macOS's file systems: they collide, and nothing is written."""

from __future__ import annotations

import unicodedata

import pytest

from pytest_tlgraph.snapshots.collisions import folded
from tests.integration.project import snapshot_dir

pytest_plugins = ["pytester"]

NFC = unicodedata.normalize("NFC", "café")
NFD = unicodedata.normalize("NFD", "café")

VARIANTS = f"""
import pytest
from tinymodels import MLP

def test_one(tlgraph_snapshot):
    tlgraph_snapshot(MLP(), name={NFC!r})
    tlgraph_snapshot(MLP(), name={NFD!r})
"""


def test_names_equal_after_normalisation_and_case_folding_fold_alike() -> None:
    assert NFC != NFD
    assert folded(NFC) == folded(NFD) == folded("CAFÉ")
    assert folded("straße") == folded("STRASSE")
    assert folded("cafe") != folded(NFC)


def test_two_names_that_differ_only_in_normalisation_collide_and_keep_one_file(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(test_graph=VARIANTS)
    result = project.runpytest("--snapshot-update", "-p", "no:randomly")
    # The second call is refused, naming the first: its file would be the first's on a
    # file system that normalises names.
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*are stored as the same file*Unicode normalisation*"])
    stored = sorted(p.name for p in snapshot_dir(project).iterdir())
    assert [unicodedata.normalize("NFC", n) for n in stored] == [
        f"test_one[{NFC}].gv",
        f"test_one[{NFC}].png",
    ]
