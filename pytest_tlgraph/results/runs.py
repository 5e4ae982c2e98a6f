"""Runs that share one results folder never delete each other's live files.

The run that finds the folder free takes its lock (``.tlgraph-lock``) for the whole
session, clears what finished runs left, and writes where it always has: artifacts
beside the folder's ``report.html``. A run that starts while another holds the lock
(two terminals, an editor's test runner, a run started from a test) touches none of
it: it writes into a folder of its own, ``run-<UTC time>-<pid>/`` inside the shared one,
under that folder's own lock, and prints those paths.

The run that ends last is "the last run" for ``tlgraph report``: a run in a folder of
its own names it in ``.tlgraph-last`` as it ends; the folder's owner removes that
pointer as it ends. Folders of finished runs are cleared (by their manifests) by the
next run that takes the shared folder's lock; a folder whose lock is held is live and
is left alone.
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

from pytest_tlgraph.disk.bounded import read_regular
from pytest_tlgraph.disk.files import atomic_write
from pytest_tlgraph.disk.nofollow import LinkRefused, NotRegular
from pytest_tlgraph.results.artifacts import MANIFEST, ResultsDir
from pytest_tlgraph.results.runlock import RunLock

__all__ = ["LAST", "LOCK", "RUN_PREFIX", "Run", "end_run", "last_run", "start_run"]

LOCK: Final = ".tlgraph-lock"
LAST: Final = ".tlgraph-last"
RUN_PREFIX: Final = "run-"


@dataclass(slots=True)
class Run:
    """One session's place in a results folder."""

    #: Where this session writes: the shared folder, or a ``run-*`` folder inside it.
    results: ResultsDir
    #: The folder given to ``--tlgraph-results`` (or the default).
    shared: Path
    lock: RunLock | None
    #: ``results.root`` was made by the plugin: removed at the end when left empty.
    made: bool
    #: One line for the end of the run each (a lock file that is a link, a FIFO).
    warnings: list[str] = field(default_factory=list)

    @property
    def own_folder(self) -> bool:
        """The session writes into a folder of its own (another run held the folder)."""
        return self.results.root != self.shared


def _lock(folder: Path, warnings: list[str] | None = None) -> RunLock | Literal[False] | None:
    """The lock of ``folder``: a :class:`RunLock`, ``None`` when a live run holds it,
    ``False`` when it cannot be taken at all (a read-only folder: no locking; a lock
    file that is a link or not a regular file: no locking, and a line in
    ``warnings``)."""
    try:
        return RunLock.acquire(folder / LOCK)
    except (LinkRefused, NotRegular) as error:
        if warnings is not None:
            warnings.append(f"tlgraph: the run took no lock on {folder}: {error}")
        return False
    except OSError:
        return False


def start_run(shared: Path) -> Run:
    """Take the shared folder, or make a folder of this run's own when another live run
    holds it (see the module docstring)."""
    made = not shared.exists()
    stale = (shared / LOCK).exists()  # a run that was killed: its lock file stays
    with contextlib.suppress(OSError):
        shared.mkdir(parents=True, exist_ok=True)
    warnings: list[str] = []
    lock = _lock(shared, warnings) if shared.is_dir() else False
    if lock is None:
        return _own_folder(shared)
    results = ResultsDir(shared)
    made = results.clear_previous() or made
    warnings.extend(results.warnings)
    if stale and lock:  # nothing but that run's lock file: that run made the folder
        with contextlib.suppress(OSError):
            made = made or all(p.name == LOCK for p in shared.iterdir())
    _clear_finished_runs(shared, warnings)
    with contextlib.suppress(OSError):
        (shared / LAST).unlink()
    results.made_root = made
    return Run(results, shared, lock or None, made, warnings)


def _own_folder(shared: Path) -> Run:
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    base = f"{RUN_PREFIX}{stamp}-{os.getpid()}"
    for n in range(1000):
        folder = shared / (base if n == 0 else f"{base}-{n}")
        try:
            folder.mkdir()
        except FileExistsError:
            continue
        lock = _lock(folder)
        results = ResultsDir(folder)
        results.made_root = True
        return Run(results, shared, lock or None, True)
    raise OSError(f"could not make a run folder in {shared}: too many named {base}*")


def _clear_finished_runs(shared: Path, warnings: list[str]) -> None:
    """Clear the ``run-*`` folders of finished runs (those whose lock is free); what
    clearing refused is a line in ``warnings``."""
    for folder in sorted(shared.glob(RUN_PREFIX + "*")):
        ours = (folder / MANIFEST).is_dir() or (folder / LOCK).exists()
        if folder.is_symlink() or not folder.is_dir() or not ours:
            continue
        lock = _lock(folder)
        if lock is None:
            continue  # live: another run is writing there
        finished = ResultsDir(folder)
        made = finished.clear_previous()
        warnings.extend(finished.warnings)
        if lock:
            lock.release()
        if made:
            with contextlib.suppress(OSError):
                folder.rmdir()


def end_run(run: Run) -> None:
    """Name this run as the last one (or drop the pointer: the shared folder is the
    last), give the lock back, and remove a folder the plugin made that stayed empty."""
    pointer = run.shared / LAST
    if run.own_folder:
        with contextlib.suppress(OSError):
            atomic_write(pointer, run.results.root.name.encode("utf-8"))
    else:
        with contextlib.suppress(OSError):
            pointer.unlink()
    if run.lock is not None:
        run.lock.release()
    inside = Path.cwd().resolve().is_relative_to(run.results.root.resolve())
    if run.made and not inside:
        try:
            run.results.root.rmdir()  # only when empty: nothing was written
        except OSError:  # another run's folder is inside: the next owner removes it
            with contextlib.suppress(OSError):
                run.results.note_root()


def last_run(shared: Path) -> Path:
    """The folder of the last finished run in ``shared``: a ``run-*`` folder its
    pointer names (when it still exists), else ``shared`` itself."""
    try:
        name = read_regular(shared / LAST, follow=False).decode("utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return shared
    folder = shared / name
    if name.startswith(RUN_PREFIX) and "/" not in name and "\\" not in name and folder.is_dir():
        return folder
    return shared
