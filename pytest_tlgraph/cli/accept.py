"""``tlgraph accept``: write the received drawings of chosen failing calls of the last
run into their snapshot files, one call at a time, and nothing else.

Each call's ``.gv`` and ``.png`` are written together or not at all
(``files.atomic_write_all``); no other snapshot is touched and nothing is deleted. A
call is refused (one line: cause and remedy; nothing written for it) when its stored
files changed since the run, its received files are missing or do not belong together,
or a snapshot path leaves the project or is a symbolic link.
"""

from __future__ import annotations

import argparse
import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_tlgraph.cli.accept_paths import Refused, owning_checkout, snapshot_files
from pytest_tlgraph.cli.commands import project_root
from pytest_tlgraph.cli.model import CommandError
from pytest_tlgraph.cli.output import say
from pytest_tlgraph.paths import display_path
from pytest_tlgraph.review.pending import Pending

if TYPE_CHECKING:
    from pytest_tlgraph.review.merge import MergedCall, Shard

__all__ = [
    "Locks",
    "Refused",
    "accept_one",
    "choose",
    "label",
    "project_root",
    "run_accept",
    "selects",
]

#: Pending ids named in the one line of an unknown NODEID (the rest are counted).
_LISTED = 6


def selects(given: str, nodeid: str) -> bool:
    """True when ``given`` (a node id as pytest takes it on the command line) names the
    test ``nodeid``: the same id, or a folder, file, class or test above it (a test
    without its ``[...]`` parameters names every parametrized case)."""
    given = given.removeprefix("./")
    if given == nodeid:
        return True
    if "::" not in given:
        given = given.rstrip("/")
        if nodeid.startswith(given + "/"):
            return True
    return nodeid.startswith((given + "::", given + "["))


def _rootdir(entry: Pending) -> Path | None:
    """pytest's rootdir for the record (node ids are relative to it); a record of 0.3
    has only the folder pytest ran in. A rootdir this machine does not have (a results
    folder downloaded from CI) is this checkout's: :func:`project_root`."""
    where = entry.outcome.where
    for value in (where.rootdir, where.base):
        if value is not None:
            return Path(value) if Path(value).is_dir() else project_root()
    return None


def _base(entry: Pending) -> Path | None:
    base = entry.outcome.where.base
    return None if base is None else Path(base)


def _matches(given: str, entry: Pending) -> bool:
    """``given`` names the call: as a node id (relative to the rootdir), or with its
    path relative to the current folder or absolute, as pytest prints it."""
    from pytest_tlgraph.review.nodeids import to_rootdir

    if selects(given, entry.nodeid):
        return True
    rootdir = _rootdir(entry)
    if rootdir is None:
        return False
    rebased = to_rootdir(given, rootdir, Path.cwd())
    if rebased == "":
        return True  # the rootdir itself: every call
    return rebased is not None and rebased != given and selects(rebased, entry.nodeid)


def _label(entry: Pending) -> str:
    return f"{entry.nodeid} [{entry.name}]"


def _named(entry: Pending, call: str | None) -> bool:
    """The call is the one ``--call`` names (its ``name=`` or snapshot name), or no
    ``--call`` was given."""
    return call is None or call in (entry.name, str(entry.call))


def choose(
    calls: Sequence[MergedCall], nodeids: Sequence[str], every: bool, call: str | None = None
) -> list[MergedCall]:
    """The merged calls named (each once, in record order), narrowed to ``call``;
    an unknown id (or a ``--call`` none of them has) stops everything."""
    entries = [c.entry for c in calls]
    chosen = _choose(entries, nodeids, every)
    kept = [c for c in calls if any(c.entry is e for e in chosen) and _named(c.entry, call)]
    if call is not None and not kept:
        names = ", ".join(dict.fromkeys(e.name for e in chosen)) or "none"
        raise CommandError(
            f"no failing call named {call!r} among the calls chosen; give --call as tlgraph "
            f"report lists it in [...] or its name= (the calls: {names})"
        )
    return kept


def _choose(entries: list[Pending], nodeids: Sequence[str], every: bool) -> list[Pending]:
    """The calls named (each once, in record order); an unknown id stops everything."""
    if not every and not nodeids:
        raise CommandError(
            "name the calls to accept: tlgraph accept NODEID... (tlgraph report lists "
            "them), or --all"
        )
    if every:
        return list(entries)
    unknown = [given for given in nodeids if not any(_matches(given, e) for e in entries)]
    if unknown:
        from pytest_tlgraph.review.nodeids import as_printed

        here = Path.cwd()
        waiting = list(
            dict.fromkeys(
                as_printed(e.nodeid, _rootdir(e), here) for e in entries if not e.accepted
            )
        )
        shown = ", ".join(waiting[:_LISTED])
        if len(waiting) > _LISTED:
            shown += f" and {len(waiting) - _LISTED} more"
        pending = f"pending: {shown}" if waiting else "nothing is pending"
        names = ", ".join(unknown)
        raise CommandError(
            f"no failing call {names} in the last run; give a node id as tlgraph report "
            f"lists it ({pending})"
        )
    return [e for e in entries if any(_matches(given, e) for given in nodeids)]


def _inside(root: Path, rel: Any, what: str) -> Path:
    """``root / rel`` for a path a record gives relative to the results folder."""
    if not isinstance(rel, str) or not rel or rel.startswith("/") or ".." in rel.split("/"):
        raise Refused(f"its record names no {what}; rerun pytest to record the failure again")
    return root / rel


def _read_received(path: Path, root: Path, shown: str) -> bytes:
    """A received file of the results folder ``root`` (never one a link leads out to)."""
    inside = path.resolve().is_relative_to(root.resolve())
    if path.is_symlink() or not path.is_file() or not inside:
        raise Refused(
            f"the received file {shown} is missing from the results folder; rerun pytest "
            "to write it again"
        )
    try:
        return path.read_bytes()
    except OSError as error:
        raise Refused(
            f"cannot read the received file {shown} ({error.strerror or error}); rerun pytest"
        ) from None


def _snapshot_path(path: Path, base: Path) -> Path:
    """A snapshot file computed from the record's node id (``accept_paths``): inside
    the project ``base`` (the one accept runs in), no symbolic link."""
    if path.is_symlink():
        raise Refused(
            f"the snapshot {_shown(path)} is a symbolic link, and writing through it would "
            "change a file elsewhere; replace it with a regular file and rerun pytest"
        )
    if not path.resolve().is_relative_to(base.resolve()):
        raise Refused(
            f"the snapshot {_shown(path)} lies outside the project {_shown(base)} that "
            "tlgraph accept runs in; run tlgraph accept in the project that owns it"
        )
    folder, snapshots = path.parent, path.parent.parent
    if not folder.resolve().is_relative_to(snapshots.resolve()):  # as the fixture refuses
        raise Refused(
            f"the snapshot folder {_shown(folder)} is a link to {_shown(folder.resolve())}, "
            f"outside {_shown(snapshots)}; replace the link with a real folder"
        )
    return path


def _plan(entry: Pending, root: Path) -> list[tuple[Path, bytes]]:
    """The files to write for ``entry``, every check passed; raises :class:`Refused`."""
    from pytest_tlgraph.review.pending import file_sha256
    from pytest_tlgraph.snapshots.extensions import Provenance

    info = entry.outcome.accept
    base = _base(entry)
    if info is None or base is None:
        raise Refused(
            "the run recorded nothing to accept for it (its files were not saved, or a "
            "pytest-tlgraph before 0.3 ran); rerun pytest, then tlgraph accept"
        )
    project = project_root()
    home = owning_checkout(entry.outcome.where, entry.root, project).absolute()
    dot_file, png_file = snapshot_files(entry.nodeid, entry.name, home)
    dot_path, png_path = _snapshot_path(dot_file, project), _snapshot_path(png_file, project)
    for path, stored in ((dot_path, info.dot_sha256), (png_path, info.png_sha256)):
        if file_sha256(path) != stored:
            state = "was created" if stored is None else "changed or was removed"
            raise Refused(
                f"the stored {_shown(path)} {state} since the run; rerun pytest and review "
                "the new failure"
            )
    dot_file = _inside(root, info.received_dot, "received DOT")
    dot = _read_received(dot_file, root, _shown(dot_file))
    if hashlib.sha256(dot).hexdigest() != info.received_dot_sha256:
        raise Refused(
            f"the received DOT {_shown(dot_file)} changed since the run; rerun pytest to "
            "write it again"
        )
    if not info.png_compared:
        if png_path.exists() or png_path.is_symlink():
            raise Refused(
                f"the run compared no PNG (--tlgraph-no-png, or the picture was over the size "
                f"limit), and writing the .gv alone would leave {_shown(png_path)} stale; "
                "rerun pytest with PNGs, or use pytest --snapshot-update"
            )
        return [(dot_path, dot)]
    png_file = _inside(root, info.received_png, "received picture")
    png = _read_received(png_file, root, _shown(png_file))
    if Provenance.of(png).dot_sha256 != hashlib.sha256(dot).hexdigest():
        raise Refused(
            f"the received picture {_shown(png_file)} was not drawn from the received DOT "
            f"{_shown(dot_file)}; rerun pytest to draw them again"
        )
    return [(dot_path, dot), (png_path, png)]


def _shown(path: Path) -> str:
    """``path`` relative to the current folder; its last part is not resolved (a link
    is named as the link)."""
    return display_path(path.parent.resolve() / path.name, Path.cwd().resolve())


def _accept(entry: Pending, root: Path) -> list[Path]:
    """Write one call's snapshot files and mark it accepted; the files written."""
    from pytest_tlgraph.disk.files import SnapshotWriteError, atomic_write_all
    from pytest_tlgraph.results.artifacts import ResultsDir
    from pytest_tlgraph.review.pending import mark_accepted
    from pytest_tlgraph.snapshots.storage import snapshot_anchor

    plan = _plan(entry, root)
    try:  # no folder from the one above __snapshots__ down is followed if a link
        atomic_write_all(plan, anchor=snapshot_anchor(plan[0][0]))
    except SnapshotWriteError as error:
        raise Refused(str(error)) from None
    written = [path for path, _ in plan]
    try:
        mark_accepted(ResultsDir(root), entry, written)
    except SnapshotWriteError as error:
        say(f"tlgraph accept: warning: could not mark {_label(entry)} accepted: {error}")
    return written


def accept_one(call: MergedCall) -> list[Path]:
    """Accept one merged call (``tlgraph accept``, ``tlgraph review``): the files
    written; raises :class:`Refused` (nothing written) with the cause and remedy."""
    from pytest_tlgraph.review.merge import conflict_line

    flag = conflict_line(call.shard, call.conflict)
    if flag is not None:
        raise Refused(f"{flag}; accept from one of them: tlgraph accept --results DIR")
    return _accept(call.entry, call.entry.root)


def label(call: MergedCall, merged: bool) -> str:
    """``test_m.py::test_a [test_a]``, with its shard when several were read."""
    return _label(call.entry) + (f" (shard {call.shards()})" if merged else "")


class Locks:
    """The locks of the results folders read: no pytest run clears their records while
    a call is accepted from them. A read-only folder needs none (no run writes there)."""

    def __init__(self, shards: Sequence[Shard], command: str) -> None:
        from pytest_tlgraph.results.runlock import RunLock
        from pytest_tlgraph.results.runs import LOCK

        self.held: list[RunLock] = []
        for shard in shards:
            try:
                lock = RunLock.acquire(shard.root / LOCK)
            except OSError:
                continue
            if lock is None:
                self.release()
                raise CommandError(
                    f"a pytest run is writing in {_shown(shard.root)}/ now; wait for it to "
                    f"end, then run tlgraph {command} again"
                )
            self.held.append(lock)

    def release(self) -> None:
        """Give every lock back."""
        for lock in self.held:
            lock.release()
        self.held.clear()


def run_accept(args: argparse.Namespace) -> int:
    """``tlgraph accept``: 0 when every call named was accepted (or already was), 1 when
    one or more were refused; :class:`CommandError` (exit 2) before anything is written.
    Several ``--results`` folders (CI shards) are read as one run."""
    import sys

    from pytest_tlgraph.cli.commands import shards_of
    from pytest_tlgraph.review.merge import merge_pending

    if args.all and args.nodeids:
        raise CommandError("give NODEID... or --all, not both")
    shards = shards_of(args.results, "accept")
    merged = len(shards) > 1
    locks = Locks(shards, "accept")
    accepted, refused, before = 0, 0, 0
    try:  # the records are read under the locks: no run starts clearing them meanwhile
        damaged: list[str] = []
        calls = merge_pending(shards, damaged)
        for line in damaged:
            say(f"tlgraph accept: {line}", file=sys.stderr)
        chosen = choose(calls, args.nodeids, args.all, args.call)
        if not chosen:
            where = f"{_shown(shards[0].root)}/" if not merged else "the results folders"
            say(f"no snapshot failures recorded in {where}: nothing to accept")
            return 0
        for call in chosen:
            if call.entry.accepted:
                before += 1
                say(f"already accepted {label(call, merged)}")
                continue
            try:
                written = accept_one(call)
            except Refused as why:
                refused += 1
                say(f"tlgraph accept: refused {label(call, merged)}: {why}", file=sys.stderr)
                continue
            accepted += 1
            files = ", ".join(_shown(path) for path in written)
            say(f"accepted {label(call, merged)}: wrote {files}")
    finally:
        locks.release()
    counts = [f"{accepted} call{'s' if accepted != 1 else ''} accepted"]
    counts += [f"{refused} refused"] if refused else []
    counts += [f"{before} already accepted"] if before else []
    tail = "; rerun pytest to check them" if accepted else ""
    say(", ".join(counts) + tail)
    return 1 if refused else 0
