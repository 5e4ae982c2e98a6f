"""Item 11 of issue 31: run from a subfolder, the accept command a failure prints works
from there, and so does the id pytest itself prints there; an id relative to the
rootdir or an absolute path is taken too. Ids were rebased against where pytest ran,
not its rootdir."""

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

    def test_a(tlgraph_snapshot):
        width = int(os.environ.get("WIDTH", "8"))
        tlgraph_snapshot(torch.nn.Sequential(torch.nn.Linear(4, width)), torch.zeros(1, 4))
    """
)


def _run(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": path, **env},
    )  # fmt: skip


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project whose test lies at its root, and a ``tests/`` folder pytest runs from
    (``pytest ..``): pytest names the test ``test_m.py::test_a`` (rootdir) and prints
    ``../test_m.py`` there."""
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n")
    (tmp_path / "test_m.py").write_text(TEST)
    (tmp_path / "tests").mkdir()
    return tmp_path


def _fail_from_tests(project: Path) -> str:
    tests = project / "tests"
    assert _run("-m", "pytest", "..", "--snapshot-update", cwd=tests).returncode == 0
    failed = _run("-m", "pytest", "..", cwd=tests, WIDTH="5")
    assert failed.returncode == 1, failed.stdout
    said = " ".join(failed.stdout.split())
    match = re.search(r"to accept the received drawing: tlgraph accept (\S+) ", said)
    assert match is not None, said
    return match.group(1)


def test_the_printed_accept_command_works_where_pytest_ran(project: Path) -> None:
    printed = _fail_from_tests(project)
    assert printed == "../test_m.py::test_a"
    accepted = _run("-m", "pytest_tlgraph", "accept", printed, cwd=project / "tests")
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert _run("-m", "pytest", "..", cwd=project / "tests", WIDTH="5").returncode == 0


@pytest.mark.parametrize("form", ["rootdir", "absolute"])
def test_an_id_relative_to_the_rootdir_or_absolute_is_taken(project: Path, form: str) -> None:
    _fail_from_tests(project)
    given = "test_m.py::test_a" if form == "rootdir" else f"{project / 'test_m.py'}::test_a"
    accepted = _run("-m", "pytest_tlgraph", "accept", given, cwd=project / "tests")
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
