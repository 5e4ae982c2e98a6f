"""Item 10 of "never misreport a run": ``tlgraph report`` exits 2 with one line when it
finds no results folder, and every path it prints exists relative to where it runs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

TEST = textwrap.dedent(
    """
    import os
    import torch

    def test_net(tlgraph_snapshot):
        width = int(os.environ.get("WIDTH", "8"))
        net = torch.nn.Sequential(torch.nn.Linear(4, width), torch.nn.ReLU())
        tlgraph_snapshot(net, torch.zeros(1, 4))
    """
)

#: Anything printed that looks like a path to a file of a run.
PATHS = re.compile(r"(\S+\.(?:png|html|diff|gv))\b")


def _env(**extra: str) -> dict[str, str]:
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path, **extra}


def _run(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=_env(**env), capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip


def tlgraph_report(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return _run("-m", "pytest_tlgraph", "report", *args, cwd=cwd)


@pytest.fixture
def failed_from_tests(tmp_path: Path) -> Path:
    """A project whose tests ran (and failed) from its ``tests/`` folder: pytest writes
    the results at the rootdir, and prints paths relative to ``tests/``."""
    project = tmp_path / "project"
    (project / "tests").mkdir(parents=True)
    (project / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n")
    (project / "tests" / "test_graph.py").write_text(TEST)
    tests = project / "tests"
    assert _run("-m", "pytest", "--snapshot-update", cwd=tests).returncode == 0
    failed = _run("-m", "pytest", cwd=tests, WIDTH="5")
    assert failed.returncode == 1, failed.stdout
    assert "report: ../tlgraph-results/report.html" in failed.stdout
    return project


def test_no_results_folder_is_exit_2_and_one_line(tmp_path: Path) -> None:
    missing = tlgraph_report("no-such-folder", cwd=tmp_path)
    assert missing.returncode == 2 and missing.stdout == ""
    assert missing.stderr.count("\n") == 1
    assert missing.stderr.startswith("tlgraph report: error: no results folder no-such-folder")
    nowhere = tlgraph_report(cwd=tmp_path)
    assert nowhere.returncode == 2 and nowhere.stdout == ""
    assert nowhere.stderr.count("\n") == 1
    assert "no results folder tlgraph-results/ here or in a parent folder" in nowhere.stderr


def _printed(out: str) -> list[str]:
    found = PATHS.findall(out)
    assert found, out
    return found


def test_every_printed_path_exists_where_it_runs(failed_from_tests: Path, tmp_path: Path) -> None:
    project = failed_from_tests
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for cwd, args in (
        (project, ()),  # the root, after cd tests && pytest
        (project / "tests", ()),  # the folder pytest ran in: found in the parent
        (elsewhere, ("../project/tlgraph-results",)),
        (elsewhere, (str(project / "tlgraph-results"),)),
    ):
        done = tlgraph_report(*args, cwd=cwd)
        assert done.returncode == 0, done.stderr
        assert "1 snapshot failure in the last run:" in done.stdout
        assert "graphdiff:" in done.stdout  # the structural diff drawing
        printed = _printed(done.stdout)
        for path in printed:
            assert (cwd / path).is_file(), (cwd, path, done.stdout)
        assert len(printed) == len(set(printed)), done.stdout  # each path once
    # From an unrelated folder, without the folder: exit 2, never "the last run passed".
    lost = tlgraph_report(cwd=elsewhere)
    assert lost.returncode == 2 and "passed" not in lost.stdout
