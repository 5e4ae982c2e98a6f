"""Any snapshot name and any damage to a real stored file: the run passes or fails with
a message naming the file, and nothing outside ``__snapshots__/`` and the results
folder is created, changed or deleted (the whole project tree is hashed)."""

from __future__ import annotations

import shutil
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.integration.project import snapshot_dir
from tests.robustness.strategies import corrupt, corruptions, snapshot_names
from tests.robustness.tree import changes_outside, tree_hashes

pytest_plugins = ["pytester"]

ALLOWED = ("__snapshots__", "tlgraph-results")
FUZZ = settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture(autouse=True)
def _no_bytecode(monkeypatch: pytest.MonkeyPatch) -> None:
    # pytest's own .pyc files would count as files the run created.
    monkeypatch.setattr(sys, "dont_write_bytecode", True)


def _run(project: pytest.Pytester, *args: str) -> pytest.RunResult:
    before = tree_hashes(project.path)
    result = project.runpytest(*args)
    assert changes_outside(before, tree_hashes(project.path), ALLOWED) == []
    assert "INTERNALERROR" not in result.stdout.str()
    return result


@FUZZ
@given(st.lists(snapshot_names(), min_size=1, max_size=3))
def test_any_snapshot_names(project: pytest.Pytester, names: list[str]) -> None:
    for folder in ALLOWED:
        shutil.rmtree(project.path / folder, ignore_errors=True)
    calls = "".join(f"    tlgraph_snapshot(MLP(), name={name!r}, png=False)\n" for name in names)
    project.makepyfile(
        test_graph=f"from tinymodels import MLP\n\ndef test_mlp(tlgraph_snapshot):\n{calls}"
    )
    update = _run(project, "--snapshot-update")
    outcomes = update.parseoutcomes()
    if outcomes.get("failed"):
        # Refused: a repeated name, or two names stored as one file, said so.
        update.stdout.fnmatch_lines(["*tlgraph_snapshot: the snapshot name*"])
        return
    assert outcomes.get("passed") == 1
    stored = sorted(snapshot_dir(project).iterdir())
    assert len(stored) == len(names)
    assert all(len(p.name.encode("utf-8")) <= 255 - len("-expected.png") for p in stored)
    _run(project).assert_outcomes(passed=1)


@pytest.fixture
def baseline(stored: pytest.Pytester) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in snapshot_dir(stored).iterdir()}


def _corrupt_run(
    stored: pytest.Pytester, baseline: dict[str, bytes], name: str, damage: tuple[str, int, int]
) -> None:
    shutil.rmtree(stored.path / "tlgraph-results", ignore_errors=True)
    for file, data in baseline.items():
        (snapshot_dir(stored) / file).write_bytes(data)
    target = snapshot_dir(stored) / name
    damaged = corrupt(baseline[name], *damage)
    target.write_bytes(damaged)
    result = _run(stored)
    assert target.read_bytes() == damaged, "a plain run never writes a snapshot"
    if result.parseoutcomes().get("failed"):
        assert f"__snapshots__/test_graph/{name}" in result.stdout.str()
    else:
        result.assert_outcomes(passed=1)


@FUZZ
@given(st.data())
def test_a_damaged_gv(
    stored: pytest.Pytester, baseline: dict[str, bytes], data: st.DataObject
) -> None:
    damage = data.draw(corruptions(len(baseline["test_mlp.gv"])))
    _corrupt_run(stored, baseline, "test_mlp.gv", damage)


@FUZZ
@given(st.data())
def test_a_damaged_png(
    stored: pytest.Pytester, baseline: dict[str, bytes], data: st.DataObject
) -> None:
    damage = data.draw(corruptions(len(baseline["test_mlp.png"])))
    _corrupt_run(stored, baseline, "test_mlp.png", damage)
