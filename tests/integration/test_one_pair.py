"""A call's ``.gv`` and ``.png`` are one snapshot value (issue 32, item 1): read once,
compared, written, counted and deleted as one pair."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.project import BASIC_TEST, snapshot_dir, snapshot_names

pytest_plugins = ["pytester"]


def _count_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Patch the one read of a stored snapshot file; the names it read, in order."""
    import pytest_tlgraph.snapshots.storage as storage

    reads: list[str] = []
    real = storage.read_snapshot_file

    def counted(path: Path) -> bytes | None:
        reads.append(Path(path).name)
        return real(path)

    monkeypatch.setattr(storage, "read_snapshot_file", counted)
    return reads


def test_each_stored_file_is_read_once_per_call(
    stored: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = _count_reads(monkeypatch)
    result = stored.runpytest()
    result.assert_outcomes(passed=1)
    assert sorted(reads) == ["test_mlp.gv", "test_mlp.png"]
    result.stdout.fnmatch_lines(["*1 snapshot passed.*"])


def test_a_failing_call_reads_each_file_once_too(
    stored: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pytest_tlgraph.review.pending as pending

    monkeypatch.setenv("TL_HIDDEN", "5")
    reads = _count_reads(monkeypatch)
    hashed: list[str] = []
    real_sha = pending.file_sha256
    monkeypatch.setattr(
        pending, "file_sha256", lambda path: hashed.append(path.name) or real_sha(path)
    )
    result = stored.runpytest()
    result.assert_outcomes(failed=1)
    assert sorted(reads) == ["test_mlp.gv", "test_mlp.png"]
    assert hashed == []  # tlgraph accept's record hashes the bytes of that one read
    result.stdout.fnmatch_lines(["*tlgraph accept test_graph.py::test_mlp*"])


def test_a_png_without_its_gv_is_half_a_pair(stored: pytest.Pytester) -> None:
    folder = snapshot_dir(stored)
    (folder / "test_mlp.gv").unlink()
    missing = stored.runpytest()
    missing.assert_outcomes(failed=1)
    assert "unused" not in missing.stdout.str()
    stored.runpytest("--snapshot-update").assert_outcomes(passed=1)
    assert snapshot_names(stored) == ["test_mlp.gv", "test_mlp.png"]
    stored.runpytest().assert_outcomes(passed=1)


def test_an_unused_pair_is_deleted_as_one_even_when_half(stored: pytest.Pytester) -> None:
    folder = snapshot_dir(stored)
    (folder / "test_old.png").write_bytes((folder / "test_mlp.png").read_bytes())
    unused = stored.runpytest()
    assert unused.ret != 0
    unused.stdout.fnmatch_lines(["*1 snapshot passed. 1 snapshot unused.*"])
    stored.runpytest("--snapshot-update").assert_outcomes(passed=1)
    assert snapshot_names(stored) == ["test_mlp.gv", "test_mlp.png"]


def test_a_call_with_png_false_passes_and_an_update_drops_its_png(
    stored: pytest.Pytester,
) -> None:
    stored.makepyfile(test_graph=BASIC_TEST.replace("MLP())", "MLP(), png=False)"))
    plain = stored.runpytest()
    plain.assert_outcomes(passed=1)
    assert snapshot_names(stored) == ["test_mlp.gv", "test_mlp.png"]
    stored.runpytest("--snapshot-update").assert_outcomes(passed=1)
    assert snapshot_names(stored) == ["test_mlp.gv"]
