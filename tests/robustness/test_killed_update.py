"""Item 5 of "nothing lost", under a real kill: an update killed (SIGKILL, by its own
pid) in the middle of writing a snapshot never leaves a truncated one behind."""

from __future__ import annotations

import random
import signal
import textwrap

import pytest

from pytest_tlgraph.diff.graph import read_graph
from pytest_tlgraph.pixels.pngmeta import add_text_chunks
from tests.integration.project import BASIC_TEST, snapshot_dir

pytest_plugins = ["pytester"]

#: Loaded into the killed run (-p killer): the K-th write event below __snapshots__ kills
#: the process. A write event is one write() call on a file opened for writing there
#: (which then writes only a random part of its data first), or an os.replace into it
#: (killed before it happens).
KILLER = textwrap.dedent(
    """
    import builtins
    import io
    import os
    import random
    import signal

    _TARGET = int(os.environ["TL_KILL_AT"])
    _rng = random.Random(_TARGET)
    _events = 0
    _fds = set()
    _open, _os_open, _fdopen, _replace = builtins.open, os.open, os.fdopen, os.replace


    def _ours(path):
        return "__snapshots__" in os.fspath(path) if isinstance(path, (str, os.PathLike)) else False


    def _event():
        global _events
        _events += 1
        return _events == _TARGET


    def _die():
        os.kill(os.getpid(), signal.SIGKILL)


    class _Writer:
        def __init__(self, inner):
            self._inner = inner

        def write(self, data):
            if _event():
                self._inner.write(data[: int(len(data) * _rng.random())])
                self._inner.flush()
                _die()
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
        return _Writer(handle) if _ours(file) and _writing(mode) else handle


    def os_open(path, flags, *args, **kwargs):
        fd = _os_open(path, flags, *args, **kwargs)
        if _ours(path) and flags & (os.O_WRONLY | os.O_RDWR):
            _fds.add(fd)
        return fd


    def fdopen(fd, mode="r", *args, **kwargs):
        handle = _fdopen(fd, mode, *args, **kwargs)
        return _Writer(handle) if fd in _fds and _writing(mode) else handle


    def replace(src, dst, *args, **kwargs):
        if _ours(dst) and _event():
            _die()
        return _replace(src, dst, *args, **kwargs)


    builtins.open = io.open = open_
    os.open, os.fdopen, os.replace = os_open, fdopen, replace
    """
)


def _intact(folder_files: dict[str, bytes]) -> None:
    for name, data in folder_files.items():
        if name.endswith(".gv"):
            text = data.decode("utf-8")
            read_graph(text)  # raises on a truncated drawing
            assert text.endswith("}\n"), name
        elif name.endswith(".png"):
            add_text_chunks(data, {})  # walks every chunk to IEND; raises when cut short


def test_an_update_killed_at_any_write_leaves_no_truncated_snapshot(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.makepyfile(test_graph=BASIC_TEST, killer=KILLER)
    project.runpytest("--snapshot-update").assert_outcomes(passed=1)
    folder = snapshot_dir(project)
    old = {p.name: p.read_bytes() for p in folder.iterdir()}
    monkeypatch.setenv("TL_HIDDEN", "32")  # the update rewrites both files
    # Every write event of the update (two files: a write and a replace each, or one
    # write each for a truncating open), with a random cut inside each write.
    points = list(range(1, 5))
    random.Random(15).shuffle(points)
    kills = 0
    for point in points:
        monkeypatch.setenv("TL_KILL_AT", str(point))
        killed = project.runpytest_subprocess("-p", "killer", "--snapshot-update")
        files = {p.name: p.read_bytes() for p in folder.iterdir() if p.suffix in (".gv", ".png")}
        assert sorted(files) == sorted(old), point
        _intact(files)
        if killed.ret == -signal.SIGKILL:
            kills += 1
        else:
            killed.assert_outcomes(passed=1)
        for name, data in old.items():  # put the baseline back for the next kill point
            (folder / name).write_bytes(data)
    assert kills >= 2, "the kill points never fired: the test would prove nothing"
    project.runpytest("--snapshot-update").assert_outcomes(passed=1)
    project.runpytest().assert_outcomes(passed=1)
