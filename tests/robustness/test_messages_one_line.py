"""Item 15 of issue 31: ``tlgraph diff`` exits as diff(1) does: 1 when the two files
differ, 0 when they are the same, 2 on trouble (it exited 0 either way)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_tlgraph.cli import main
from tests.integration.project import snapshot_dir

pytest_plugins = ["pytester"]


def test_diff_exits_1_when_the_files_differ_0_when_equal_2_on_trouble(
    stored: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    gv = snapshot_dir(stored) / "test_mlp.gv"
    monkeypatch.setenv("TL_HIDDEN", "32")
    stored.runpytest().assert_outcomes(failed=1)
    received = next((stored.path / "tlgraph-results").rglob("test_mlp.gv"))
    assert main(["diff", str(gv), str(received), "-o", str(tmp_path / "d.gv")]) == 1
    assert main(["diff", str(gv), str(gv), "-o", str(tmp_path / "same.gv")]) == 0
    assert main(["diff", str(gv), str(tmp_path / "missing.gv")]) == 2
