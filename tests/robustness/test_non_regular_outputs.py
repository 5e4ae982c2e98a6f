"""Item 10 of issue 31: a FIFO, device or socket where the plugin writes (the file
``GITHUB_STEP_SUMMARY`` names, a summary or the lock in the results folder, ``tlgraph
-o``) is refused with one warning line and never opened blocking: a FIFO with no reader
hung the run forever."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.project import snapshot_dir

ROOT = Path(__file__).resolve().parents[2]

pytest_plugins = ["pytester"]

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")


@pytest.fixture
def subprocess_env(monkeypatch: pytest.MonkeyPatch, stored: pytest.Pytester) -> None:
    """The runs are subprocesses (a hang is a timeout, not a hung suite) importing this
    checkout."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), str(stored.path)]))


def test_a_fifo_as_the_step_summary_is_one_warning_not_a_hang(
    stored: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, subprocess_env: None
) -> None:
    fifo = stored.path / "step-fifo"
    os.mkfifo(fifo)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(fifo))
    result = stored.runpytest_subprocess("--tlgraph-summary=markdown", timeout=120)
    assert result.ret == pytest.ExitCode.OK
    warned = [line for line in result.outlines if "GITHUB_STEP_SUMMARY" in line]
    assert len(warned) == 1, result.outlines
    assert "it is a FIFO (named pipe), not a regular file" in warned[0]
    assert "summary.md has it" in warned[0]


def test_a_fifo_named_like_a_summary_is_another_tools_and_left_alone(
    stored: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, subprocess_env: None
) -> None:
    # Issue 37: a file of the summary's name already there is not the run's (its own
    # was cleared at the start): the summary goes to tlgraph-summary.md beside it.
    results = stored.path / "tlgraph-results"
    results.mkdir()
    os.mkfifo(results / "summary.md")
    monkeypatch.setenv("TL_HIDDEN", "32")
    result = stored.runpytest_subprocess("--tlgraph-summary=markdown", timeout=120)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert not [line for line in result.outlines if "FIFO" in line]
    assert (results / "summary.md").is_fifo()
    assert "test_mlp" in (results / "tlgraph-summary.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", [".tlgraph-lock"])
def test_a_fifo_in_the_results_folder_is_refused_in_one_line(
    stored: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, subprocess_env: None, name: str
) -> None:
    results = stored.path / "tlgraph-results"
    results.mkdir()
    os.mkfifo(results / name)
    monkeypatch.setenv("TL_HIDDEN", "32")
    result = stored.runpytest_subprocess("--tlgraph-summary=markdown", timeout=120)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    warned = [line for line in result.outlines if "FIFO (named pipe)" in line]
    assert len(warned) == 1, result.outlines
    assert warned[0].startswith("tlgraph: ") and name in warned[0]
    assert (results / name).exists(), "the FIFO is the user's: it stays"


def test_tlgraph_output_into_a_fifo_is_refused(stored: pytest.Pytester) -> None:
    stored_gv = snapshot_dir(stored) / "test_mlp.gv"
    fifo = stored.path / "out.gv"
    os.mkfifo(fifo)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest_tlgraph", "diff", str(stored_gv), str(stored_gv), "-o",
         str(fifo)],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert "out.gv: it is a FIFO (named pipe), not a regular file" in line
