"""Items 3 and 5-9 of "nothing lost": names that collide or overflow, writes that are
atomic and never through a link, .gv and .png kept together, write failures named."""

from __future__ import annotations

import os
import re
import textwrap
from pathlib import Path

import pytest

from tests.integration.project import snapshot_dir, snapshot_names

pytest_plugins = ["pytester"]


def _calls(*names: str) -> str:
    lines = "".join(f"    tlgraph_snapshot(MLP(), name={name!r})\n" for name in names)
    return f"from tinymodels import MLP\n\ndef test_mlp(tlgraph_snapshot):\n{lines}"


@pytest.mark.parametrize(
    "names",
    [("a/b", "ab"), ("a:b", "a*b"), ("A", "a")],
)
def test_two_names_stored_as_one_file_are_refused(
    project: pytest.Pytester, names: tuple[str, str]
) -> None:
    project.makepyfile(test_graph=_calls(*names))
    result = project.runpytest("--snapshot-update")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*are stored as the same file*"])


def test_long_names_get_distinct_stable_files_that_fit(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = "x" * 300 + "1", "x" * 300 + "2"
    project.makepyfile(test_graph=_calls(first, second))
    project.runpytest("--snapshot-update").assert_outcomes(passed=1)
    names = snapshot_names(project)
    assert len(names) == 4, names  # two .gv and two .png: no collision
    assert all(len(n.encode()) + len("-expected.png") <= 255 for n in names)
    project.runpytest().assert_outcomes(passed=1)
    # A failure writes every artifact under the same shortened stem: no OSError.
    monkeypatch.setenv("TL_HIDDEN", "32")
    failed = project.runpytest()
    failed.assert_outcomes(failed=1)
    assert "File name too long" not in failed.stdout.str()
    written = list((project.path / "tlgraph-results" / "test_graph").iterdir())
    assert any(p.name.endswith("-expected.png") for p in written)
    assert all(len(p.name.encode()) <= 255 for p in written)
    assert names == snapshot_names(project)


def test_a_name_that_fits_only_without_suffixes_is_shortened(project: pytest.Pytester) -> None:
    from pytest_tlgraph.disk.files import NAME_BUDGET

    name = "é" * 120  # 240 bytes: a .gv fits, "-expected.png" would not
    project.makepyfile(test_graph=_calls(name))
    project.runpytest("--snapshot-update").assert_outcomes(passed=1)
    stems = {Path(n).stem for n in snapshot_names(project)}
    assert len(stems) == 1
    assert len(stems.pop().encode()) <= NAME_BUDGET


def test_atomic_write_replaces_and_never_truncates(tmp_path: Path) -> None:
    from pytest_tlgraph.disk.files import atomic_write

    path = tmp_path / "a.gv"
    path.write_text("old")
    atomic_write(path, b"new")
    assert path.read_bytes() == b"new"
    assert [p.name for p in tmp_path.iterdir()] == ["a.gv"], "no temporary file left"
    assert (path.stat().st_mode & 0o777) == (0o666 & ~_umask())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_update_never_writes_through_a_symlink(
    stored: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = snapshot_dir(stored)
    outside = stored.path.parent / f"{stored.path.name}-outside.gv"
    outside.write_text("precious")
    gv = folder / "test_mlp.gv"
    gv.unlink()
    gv.symlink_to(outside)
    monkeypatch.setenv("TL_HIDDEN", "32")
    result = stored.runpytest("--snapshot-update")
    assert outside.read_text() == "precious"
    result.assert_outcomes(failed=1)
    # The terminal wraps long lines at 160 characters: read the message as one line.
    said = " ".join(result.stdout.str().split())
    assert re.search(r"refusing to write \S*test_mlp\.gv: it is a symbolic link", said), said
    from pytest_tlgraph.disk.files import SnapshotWriteError, atomic_write

    with pytest.raises(SnapshotWriteError, match="symbolic link"):
        atomic_write(gv, b"x")
    assert outside.read_text() == "precious"


def test_a_test_failing_before_its_first_call_keeps_both_files(
    stored: pytest.Pytester,
) -> None:
    before = snapshot_names(stored)
    stored.makepyfile(
        test_graph=textwrap.dedent(
            """
            from tinymodels import MLP

            def test_mlp(tlgraph_snapshot):
                raise RuntimeError("broken before the snapshot")
                tlgraph_snapshot(MLP())
            """
        )
    )
    stored.runpytest("--snapshot-update").assert_outcomes(failed=1)
    assert snapshot_names(stored) == before


def test_a_removed_call_deletes_its_gv_and_png_together(stored: pytest.Pytester) -> None:
    stored.makepyfile(test_graph="def test_mlp(tlgraph_snapshot):\n    pass\n")
    stored.runpytest("--snapshot-update").assert_outcomes(passed=1)
    folder = snapshot_dir(stored)
    assert not folder.exists() or not list(folder.iterdir())


_READ_ONLY = textwrap.dedent(
    """
    import builtins
    import os

    import pytest

    _open, _os_open = builtins.open, os.open
    _WRITE = os.O_WRONLY | os.O_RDWR | os.O_CREAT


    def _denied(path):
        return PermissionError(13, "Permission denied", str(path))


    @pytest.fixture(autouse=True)
    def read_only_snapshots(monkeypatch):
        # Root ignores file modes: refuse every write below __snapshots__ instead.
        def fake_open(file, mode="r", *args, **kwargs):
            if "__snapshots__" in str(file) and set(mode) & set("wax+"):
                raise _denied(file)
            return _open(file, mode, *args, **kwargs)

        def fake_os_open(path, flags, *args, **kwargs):
            where = str(path)
            if kwargs.get("dir_fd") is not None:  # a file made inside an open folder
                where = os.path.join(os.readlink(f"/proc/self/fd/{kwargs['dir_fd']}"), where)
            if "__snapshots__" in where and flags & _WRITE:
                raise _denied(where)
            return _os_open(path, flags, *args, **kwargs)

        monkeypatch.setattr(builtins, "open", fake_open)
        monkeypatch.setattr(os, "open", fake_os_open)
    """
)


def test_a_read_only_snapshot_folder_reports_a_write_failure(
    stored: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    stored.makeconftest(_READ_ONLY)
    monkeypatch.setenv("TL_HIDDEN", "32")
    result = stored.runpytest("--snapshot-update")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "could not be written" in out and "Permission denied" in out
    assert "could not be read" not in out and "no stored DOT" not in out
    assert "run pytest --snapshot-update" not in out


def test_a_long_parametrized_id_keeps_its_shortened_files(project: pytest.Pytester) -> None:
    # Explicit ids: pytest writes an auto-generated id of a long string value its own
    # way (the value itself up to 9.1, "case0" from 9.2), an explicit id as given.
    project.makepyfile(
        test_graph=textwrap.dedent(
            """
            import pytest
            from tinymodels import MLP

            LONG = ["p" * 300, "q" * 300]

            @pytest.mark.parametrize("case", LONG, ids=LONG)
            def test_mlp(tlgraph_snapshot, case):
                tlgraph_snapshot(MLP(), name=case[:5])
            """
        )
    )
    first = project.runpytest("--snapshot-update")
    first.assert_outcomes(passed=2)
    assert "Can not relate" not in first.stdout.str()
    names = snapshot_names(project)
    assert len(names) == 4 and all("~" in n for n in names)
    second = project.runpytest("--snapshot-update")
    second.assert_outcomes(passed=2)
    assert "Can not relate" not in second.stdout.str() and "unused" not in second.stdout.str()
    assert snapshot_names(project) == names
    project.runpytest().assert_outcomes(passed=2)
