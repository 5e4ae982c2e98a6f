"""Item 2 of issue 22: an update writes each ``.gv`` / ``.png`` pair all or nothing,
and a failed write (a full disk) is one line naming the file and the OS error."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.integration.project import BASIC_TEST, snapshot_dir
from tests.robustness.tree import before_short_summary

pytest_plugins = ["pytester"]

#: Loaded into the run (-p fulldisk): the project's disk has TL_DISK_FREE bytes left.
#: Every write to a file below the project (opened with open(), or a file made with
#: os.open, inside an open folder too) takes from it; a write that does not fit raises
#: ENOSPC, as a full disk does. TL_RENAME_FAILS=.png makes a rename onto a snapshot .png
#: fail instead.
FULL_DISK = textwrap.dedent(
    """
    import builtins
    import errno
    import io
    import os
    import tempfile

    _ROOT = os.getcwd()
    _free = [int(os.environ.get("TL_DISK_FREE", "-1"))]
    _open, _fdopen, _mkstemp, _replace = builtins.open, os.fdopen, tempfile.mkstemp, os.replace
    _os_open = os.open
    _fds = set()


    def _ours(path):
        return os.path.abspath(os.fspath(path)).startswith(_ROOT)


    class _Disk:
        def __init__(self, inner):
            self._inner = inner

        def write(self, data):
            if _free[0] >= 0:
                if len(data) > _free[0]:
                    _free[0] = 0
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                _free[0] -= len(data)
            return self._inner.write(data)

        def __enter__(self):
            self._inner.__enter__()
            return self

        def __exit__(self, *exc):
            return self._inner.__exit__(*exc)

        def __getattr__(self, name):
            return getattr(self._inner, name)


    def _writing(mode):
        return any(c in mode for c in "wax+")


    def open_(file, mode="r", *args, **kwargs):
        handle = _open(file, mode, *args, **kwargs)
        ours = isinstance(file, (str, os.PathLike)) and _ours(file)
        return _Disk(handle) if ours and _writing(mode) else handle


    def mkstemp(*args, **kwargs):
        fd, path = _mkstemp(*args, **kwargs)
        if _ours(path):
            _fds.add(fd)
        return fd, path


    def _where(path, dir_fd):
        # A name inside an open folder (dir_fd): the folder's path from /proc.
        if dir_fd is None:
            return os.fspath(path)
        return os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), os.fspath(path))


    def os_open(path, flags, *args, **kwargs):
        fd = _os_open(path, flags, *args, **kwargs)
        if flags & os.O_CREAT and _ours(_where(path, kwargs.get("dir_fd"))):
            _fds.add(fd)
        return fd


    def fdopen(fd, mode="r", *args, **kwargs):
        handle = _fdopen(fd, mode, *args, **kwargs)
        return _Disk(handle) if fd in _fds and _writing(mode) else handle


    def replace(src, dst, *args, **kwargs):
        suffix = os.environ.get("TL_RENAME_FAILS")
        target = _where(dst, kwargs.get("dst_dir_fd"))
        if suffix and "__snapshots__" in target and target.endswith(suffix):
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        return _replace(src, dst, *args, **kwargs)


    builtins.open = io.open = open_
    tempfile.mkstemp, os.fdopen, os.replace, os.open = mkstemp, fdopen, replace, os_open
    """
)


def _stored(project: pytest.Pytester) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in snapshot_dir(project).iterdir()}


def _one_line_failure(result: pytest.RunResult, name: str, reason: str) -> None:
    """The failure names the file and the OS error in one line: no traceback, no bytes."""
    out = result.stdout.str()
    lines = [line for line in before_short_summary(result.outlines) if "could not write" in line]
    assert len(lines) == 1, lines
    assert f"__snapshots__/test_graph/{name}: {reason}; " in lines[0]
    assert "Traceback" not in out and "files.py" not in out
    assert "\\x89PNG" not in out and "b'" not in out


@pytest.fixture
def full_disk(project: pytest.Pytester) -> pytest.Pytester:
    """The basic project with its snapshots stored, and the full-disk plugin."""
    project.makepyfile(test_graph=BASIC_TEST, fulldisk=FULL_DISK)
    project.runpytest("--snapshot-update").assert_outcomes(passed=1)
    return project


def test_a_full_disk_replaces_neither_file_of_the_pair(
    full_disk: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _stored(full_disk)
    monkeypatch.setenv("TL_HIDDEN", "32")  # both files change
    # Room for the new .gv (about 1 KB), not for the new .png (about 20 KB).
    monkeypatch.setenv("TL_DISK_FREE", "4000")
    result = full_disk.runpytest_subprocess("-p", "fulldisk", "--snapshot-update")
    result.assert_outcomes(failed=1)
    assert _stored(full_disk) == before, "half a pair was written"
    _one_line_failure(result, "test_mlp.png", "No space left on device")
    # The results folder is on the same full disk: said in one line, never a crash.
    result.stdout.fnmatch_lines(
        ["the failure's report files were not saved in tlgraph-results: No space left on device"]
    )
    monkeypatch.delenv("TL_DISK_FREE")
    full_disk.runpytest("--snapshot-update").assert_outcomes(passed=1)
    after = _stored(full_disk)
    assert sorted(after) == sorted(before)
    assert all(after[name] != before[name] for name in before)
    full_disk.runpytest().assert_outcomes(passed=1)


def test_a_failed_rename_of_the_png_puts_the_old_dot_back(
    full_disk: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _stored(full_disk)
    monkeypatch.setenv("TL_HIDDEN", "32")
    monkeypatch.setenv("TL_RENAME_FAILS", ".png")
    result = full_disk.runpytest_subprocess("-p", "fulldisk", "--snapshot-update")
    result.assert_outcomes(failed=1)
    assert _stored(full_disk) == before, "the .gv was replaced without its .png"
    _one_line_failure(result, "test_mlp.png", "Input/output error")
    assert "1 snapshot updated" not in result.stdout.str()


def test_a_first_write_to_a_full_disk_creates_neither_file(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.makepyfile(test_graph=BASIC_TEST, fulldisk=FULL_DISK)
    monkeypatch.setenv("TL_DISK_FREE", "4000")
    result = project.runpytest_subprocess("-p", "fulldisk", "--snapshot-update")
    result.assert_outcomes(failed=1)
    folder = snapshot_dir(project)
    assert not folder.exists() or not [p for p in folder.iterdir()], "a lone file was left"
    _one_line_failure(result, "test_mlp.png", "No space left on device")


@pytest.mark.parametrize("links", [True, False], ids=["hard-link", "copy"])
def test_atomic_write_all_puts_back_what_it_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, links: bool
) -> None:
    import errno
    import os

    from pytest_tlgraph.disk import files

    dot, png = tmp_path / "s.gv", tmp_path / "s.png"
    dot.write_bytes(b"old dot")
    png.write_bytes(b"old png")
    real_replace = os.replace

    def replace(src: str, dst: str | Path, **kwargs: int | None) -> None:
        if str(dst).endswith(".png"):
            raise OSError(errno.EXDEV, os.strerror(errno.EXDEV))
        real_replace(src, dst, **kwargs)

    def no_link(src: str | Path, dst: str | Path, **kwargs: object) -> None:
        raise OSError(errno.EPERM, os.strerror(errno.EPERM))

    monkeypatch.setattr(files.os, "replace", replace)
    if not links:
        monkeypatch.setattr(files.os, "link", no_link)
    with pytest.raises(files.SnapshotWriteError, match=r"could not write .*s\.png: "):
        files.atomic_write_all([(dot, b"new dot"), (png, b"new png")])
    assert (dot.read_bytes(), png.read_bytes()) == (b"old dot", b"old png")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.gv", "s.png"], "a temporary left"
