"""Item 9 of issue 31: a run killed between writing a failure record and listing it in
its manifest left a record that no later run cleared: every passing run after it said
"1 snapshot failure; report: ...", and ``tlgraph report`` listed a call pending review.
A record the manifests do not list is removed when the next run starts."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytest_plugins = ["pytester"]

#: Loaded with -p killer: the process dies (as with kill -9) right after a failure
#: record is written, before the manifest lists it.
KILLER = textwrap.dedent(
    """
    import os

    from pytest_tlgraph.results import artifacts

    _note = artifacts.ResultsDir._note

    def _dies_after_the_record(self, kind, path):
        if kind != "d" and path.suffix == ".outcome" and path.parent.name == ".records":
            os._exit(9)
        return _note(self, kind, path)

    artifacts.ResultsDir._note = _dies_after_the_record
    """
)


def test_a_record_never_listed_is_cleared_by_the_next_run(
    stored: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    stored.makepyfile(killer=KILLER)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), str(stored.path)]))
    monkeypatch.setenv("TL_HIDDEN", "32")
    killed = stored.runpytest_subprocess("-p", "killer")
    assert killed.ret == 9
    records = stored.path / "tlgraph-results" / ".records"
    assert [p.suffix for p in records.iterdir()] == [".outcome"], "the orphan record is there"
    monkeypatch.delenv("TL_HIDDEN")
    passing = stored.runpytest()
    passing.assert_outcomes(passed=1)
    assert "snapshot failure" not in passing.stdout.str()
    assert not records.exists()
    report = subprocess.run(
        [sys.executable, "-m", "pytest_tlgraph", "report"],
        cwd=stored.path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "pending review" not in report.stdout
    assert "1 snapshot failure" not in report.stdout
