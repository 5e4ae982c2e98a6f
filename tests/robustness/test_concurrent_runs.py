"""Item 3 of "never misreport a run": runs sharing a results folder never delete each
other's live files. Run B starts while run A is live (from inside A's test, in its own
process): A's records, artifacts and report survive, every path A and B print exists,
and ``tlgraph report`` reads the run that ended last."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_tlgraph.results.artifacts import RECORDS, REPORT_NAME
from pytest_tlgraph.results.runs import LAST, LOCK, end_run, last_run, start_run

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]

#: Runs after test_graph.py (file order): A's failure is recorded when B starts.
NESTED = """
import os
import subprocess
import sys
from pathlib import Path


def test_start_run_b():
    env = {**os.environ, "TL_HIDDEN": "12"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "test_graph.py"],
        capture_output=True, text=True, env=env, timeout=300,
    )
    Path("run-b.txt").write_text(done.stdout)
    assert done.returncode == 1, done.stdout + done.stderr
"""

#: A path a run prints: under the results folder, ending in a file suffix.
PRINTED = re.compile(r"(tlgraph-results/[^\s)]+\.(?:png|html|diff))")


def _printed_paths(out: str) -> list[str]:
    return sorted(set(PRINTED.findall(out)))


def test_a_run_started_while_another_is_live_keeps_its_files(
    stored: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    stored.makepyfile(test_nested=NESTED)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("TL_HIDDEN", "32")
    result = stored.runpytest("-p", "no:randomly")
    result.assert_outcomes(failed=1, passed=1)  # A: test_mlp fails, the nested run ran
    a_out = result.stdout.str()
    b_out = (stored.path / "run-b.txt").read_text()
    results = stored.path / "tlgraph-results"

    # A: its record, report and every path it printed are there, and they are A's.
    a_paths = _printed_paths(a_out)
    assert "tlgraph-results/report.html" in a_paths, a_out
    assert "tlgraph-results/test_graph/test_mlp-diff.png" in a_paths
    for rel in a_paths:
        assert (stored.path / rel).is_file(), rel
    (record,) = [json.loads(p.read_text()) for p in (results / RECORDS).glob("*.outcome")]
    assert any("2x32" in line for _, lines in record["report"]["sections"] for line in lines)
    assert "test_graph.py::test_mlp" in (results / REPORT_NAME).read_text()

    # B: in a folder of its own, and every path it printed exists too.
    b_paths = _printed_paths(b_out)
    (b_report,) = [p for p in b_paths if p.endswith(REPORT_NAME)]
    assert re.fullmatch(r"tlgraph-results/run-[0-9T]+-\d+/report\.html", b_report), b_paths
    for rel in b_paths:
        assert (stored.path / rel).is_file(), rel
    b_folder = (stored.path / b_report).parent
    (b_record,) = [json.loads(p.read_text()) for p in (b_folder / RECORDS).glob("*.outcome")]
    assert any("2x12" in line for _, lines in b_record["report"]["sections"] for line in lines)

    # Both ended (B first): A's is the last run, and no lock is left behind.
    assert last_run(results) == results
    assert not (results / LOCK).exists() and not (b_folder / LOCK).exists()
    assert not (results / LAST).exists()

    # The next run clears both, A's and B's, once they are finished.
    monkeypatch.delenv("TL_HIDDEN")
    (stored.path / "test_nested.py").unlink()
    stored.runpytest().assert_outcomes(passed=1)
    assert not results.exists()


def test_tlgraph_report_reads_the_run_that_ended_last(
    stored: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TL_HIDDEN", "32")
    results = stored.path / "tlgraph-results"
    # A live run holds the shared folder; this run goes to a folder of its own, and
    # ends first: it is the last run until the live one ends.
    live = start_run(results)
    try:
        result = stored.runpytest()
        result.assert_outcomes(failed=1)
        mine = last_run(results)
        assert mine.parent == results and mine.name.startswith("run-")
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        }
        done = subprocess.run(
            [sys.executable, "-m", "pytest_tlgraph", "report"],
            cwd=stored.path, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
    finally:
        end_run(live)
    assert last_run(results) == results
    assert done.returncode == 0, done.stderr
    assert f"report: tlgraph-results/{mine.name}/report.html" in done.stdout
    for line in done.stdout.splitlines():
        for rel in PRINTED.findall(line):
            assert (stored.path / rel).is_file(), rel


def test_a_finished_run_folder_is_cleared_a_live_one_is_not(tmp_path: Path) -> None:
    shared = tmp_path / "tlgraph-results"
    first = start_run(shared)
    assert first.results.root == shared and (shared / LOCK).exists()
    second = start_run(shared)  # first is live: second gets its own folder
    assert second.own_folder and second.results.root.parent == shared
    second.results.write(second.results.root / "t" / "x.png", b"png")
    third = start_run(shared)
    assert third.results.root not in (shared, second.results.root)
    end_run(first)
    end_run(third)
    assert not third.results.root.exists(), "an empty run folder is removed as it ends"
    # A new owner: second is still live, its files stay.
    fourth = start_run(shared)
    assert fourth.results.root == shared
    assert (second.results.root / "t" / "x.png").read_bytes() == b"png"
    end_run(fourth)
    end_run(second)
    assert last_run(shared) == second.results.root
    # Second has ended: the next owner clears its folder and the pointer.
    fifth = start_run(shared)
    assert not second.results.root.exists() and last_run(shared) == shared
    end_run(fifth)
    assert not shared.exists(), "a folder the plugin made, left empty, is removed"


def test_a_killed_runs_lock_file_is_not_a_live_run(tmp_path: Path) -> None:
    shared = tmp_path / "tlgraph-results"
    shared.mkdir()
    (shared / LOCK).write_text("")  # left by a run that was killed: nobody holds it
    run = start_run(shared)
    assert run.results.root == shared and not run.own_folder
    end_run(run)
    assert not shared.exists(), "only the dead run's lock file was there"
