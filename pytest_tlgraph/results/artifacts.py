"""The results directory: failure artifacts per test, and the records the HTML report reads.

Layout (``tlgraph-results/`` by default)::

    <module path>/<snapshot name>.png            the received picture
    <module path>/<snapshot name>-expected.png   the baseline
    <module path>/<snapshot name>-diff.png       the pixel diff
    <module path>/<snapshot name>-graphdiff.png  the structural diff drawing (the changes
                                                 and their context)
    <module path>/<snapshot name>-graphdiff-full.png  the whole union of both graphs
    <module path>/<snapshot name>.dot.diff       the full unified DOT diff
    <module path>/<snapshot name>-measured.png   the unmasked picture of a time channel
    .records/<stem, flattened>.outcome           one call's outcome (``review.outcome``)
    report.html                                  written once, at the end of the session
    .tlgraph-manifest/<process>.txt              every file and folder the plugin made
    .tlgraph-lock                                held by the live run that owns the folder
    run-<UTC time>-<pid>/                        a run started while another held it
    .tlgraph-last                                names that folder when it ended last

(``runs.py``: runs sharing the folder never delete each other's live files.)

Every file is named after one snapshot, and a snapshot belongs to one test, which runs
on one pytest-xdist worker: two workers never write the same file. The HTML report is
written by the controller (or the only process) after every worker has finished.

The folder may be shared with other files (``--tlgraph-results=artifacts``): the next
session deletes only what the manifest lists, and folders the plugin created once
they are empty. Each process appends to a manifest file of its own (xdist safe).

A file is listed with its stamp (inode, size, modification time) once written, and the
next session deletes it only while the stamp still matches: a file another tool wrote
over it since is that tool's, and is kept. A file of a fixed name (``report.html``,
``summary.md``, ``summary.json``) already in the folder when the session writes is
another tool's (the plugin's own were cleared at the start): it is never overwritten,
the plugin writes ``tlgraph-<name>`` instead (:meth:`ResultsDir.own_path`). The
manifest folder and its lists are read without following a link: a manifest that is a
link (or a list in it) is refused, and nothing is cleared through it.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from pytest_tlgraph.disk.bounded import read_regular
from pytest_tlgraph.disk.files import SnapshotWriteError, atomic_write, fitted_name
from pytest_tlgraph.disk.nofollow import (
    FileInTheWay,
    LinkRefused,
    NotRegular,
    open_folder,
)

__all__ = [
    "MANIFEST",
    "RECORDS",
    "REPORT_NAME",
    "Artifacts",
    "ResultsDir",
    "inside",
    "read_record_files",
]

RECORDS: Final = ".records"
REPORT_NAME: Final = "report.html"
MEASURED: Final = "-measured.png"
MANIFEST: Final = ".tlgraph-manifest"


@dataclass(frozen=True, slots=True)
class Artifacts:
    """Paths of the files written for one failure (``None`` when not written)."""

    actual: Path | None = None
    expected: Path | None = None
    diff: Path | None = None
    dot_diff: Path | None = None
    graphdiff: Path | None = None
    graphdiff_full: Path | None = None

    def images(self) -> dict[str, Path]:
        """The images written, by kind, in report order: graphdiff, graphdiff_full,
        expected, actual, diff."""
        found = {"graphdiff": self.graphdiff, "graphdiff_full": self.graphdiff_full}
        found |= {"expected": self.expected}
        found |= {"actual": self.actual, "diff": self.diff}
        return {kind: path for kind, path in found.items() if path is not None}

    def files(self) -> list[Path]:
        """Every file written."""
        return [*self.images().values(), *([self.dot_diff] if self.dot_diff else [])]


class ResultsDir:
    """Writes and reads the files of one results directory."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._written: set[Path] = set()
        self._of_test: dict[str, set[Path]] = {}  # node id -> the files of its failures
        #: The folder was made by the plugin before anything was written in it (to hold
        #: a run's lock): the first write lists it, so it is removed again once empty.
        self.made_root = False
        #: One line each for what clearing the folder refused (a manifest that is a
        #: link): the run prints them at its end.
        self.warnings: list[str] = []

    def stem(self, module_path: Path, snapshot_name: str) -> Path:
        """``<root>/<module path without suffix>/<snapshot name>``."""
        relative = module_path.with_suffix("")
        if relative.is_absolute():
            relative = Path(*relative.parts[1:])
        return self.root / relative / snapshot_name

    def write_failure(
        self,
        stem: Path,
        *,
        actual: bytes | None,
        expected: bytes | None,
        diff: bytes | None,
        dot_diff: str | None,
        graphdiff: bytes | None = None,
        graphdiff_full: bytes | None = None,
        nodeid: str | None = None,
    ) -> Artifacts:
        """Write what exists of the six artifacts; stale ones of the stem are removed."""
        paths = {
            "actual": _sibling(stem, ".png"),
            "expected": _sibling(stem, "-expected.png"),
            "diff": _sibling(stem, "-diff.png"),
            "dot_diff": _sibling(stem, ".dot.diff"),
            "graphdiff": _sibling(stem, "-graphdiff.png"),
            "graphdiff_full": _sibling(stem, "-graphdiff-full.png"),
        }
        contents: dict[str, bytes | None] = {
            "actual": actual,
            "expected": expected,
            "diff": diff,
            "dot_diff": None if dot_diff is None else dot_diff.encode("utf-8"),
            "graphdiff": graphdiff,
            "graphdiff_full": graphdiff_full,
        }
        written: dict[str, Path | None] = {}
        for key, path in paths.items():
            data = contents[key]
            if data is None:
                if self._listed(path):  # a stale artifact of this stem, never a user's file
                    path.unlink(missing_ok=True)
                written[key] = None
            else:
                self.write(path, data, nodeid=nodeid)
                written[key] = path
        return Artifacts(**written)

    def write_measured(self, stem: Path, png: bytes) -> Path:
        """The unmasked picture of a draw whose snapshot masks time channels."""
        path = _sibling(stem, MEASURED)
        self.write(path, png)
        return path

    def write(self, path: Path, data: bytes, *, nodeid: str | None = None) -> None:
        """Write ``path`` (inside the folder) atomically and list it in this process's
        manifest: the folders made for it before they are made, the file once written
        (a refused write never lists a file that is not the plugin's). A file written
        for test ``nodeid`` goes again when the test is run again (:meth:`forget`)."""
        missing = [p for p in (path.parent, *path.parent.parents) if not p.exists()]
        if self.root in missing or self.made_root:  # the plugin's: removed once empty
            try:
                self.root.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise _unwritable(self.root, error) from error
            self.made_root = False
            self._note("d", self.root)
        for folder in reversed(missing):
            if folder != self.root and folder.is_relative_to(self.root):
                self._note("d", folder)
        atomic_write(path, data, anchor=self.root)
        self._note(_STAMPED, path)
        self._written.add(path)
        if nodeid is not None:
            self._of_test.setdefault(nodeid, set()).add(path)

    def forget(self, nodeid: str) -> None:
        """Remove what an earlier attempt of test ``nodeid`` wrote this session (its
        failure records, artifacts and summary records): a test run again (a rerun
        plugin) is reported by its final attempt only."""
        for path in sorted(self._of_test.pop(nodeid, ())):
            path.unlink(missing_ok=True)
            self._written.discard(path)

    def report_path(self) -> Path:
        """Where this session's HTML report goes (:meth:`own_path` of ``report.html``;
        the folder's own report when both names are another tool's)."""
        return self.own_path(REPORT_NAME) or self.root / ("tlgraph-" + REPORT_NAME)

    def own_path(self, name: str) -> Path | None:
        """Where this session writes the file of fixed name ``name`` (``report.html``,
        ``summary.md``): ``name``, unless a file of that name is already there. The
        previous session's was cleared at the start, so that file is another tool's and
        is kept: ``tlgraph-<name>`` instead, or ``None`` when that one is taken too
        (the session wrote neither before)."""
        for candidate in (name, "tlgraph-" + name):
            path = self.root / candidate
            if path in self._written or not (path.exists() or path.is_symlink()):
                return path
        return None

    def note_root(self) -> None:
        """List the folder itself in the manifest when the plugin made it and nothing
        listed it yet: a later session removes it once it is empty."""
        if self.made_root:
            self.made_root = False
            self._note("d", self.root)

    def note_written(self, path: Path) -> None:
        """List a file written by other code (the HTML report) in the manifest: before
        it is written (a killed run's file is still cleared), and with its stamp once
        it exists (from then on only that file is deleted)."""
        self._note(_STAMPED if path.is_file() and not path.is_symlink() else "f", path)
        self._written.add(path)

    def _note(self, kind: str, path: Path) -> None:
        manifest = self.root / MANIFEST
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        if kind == _STAMPED:
            line = f"{kind} {_stamp(path)} {self.relative(path)}\n"
        else:
            line = f"{kind} {self.relative(path)}\n"
        listing = manifest / f"{worker}-{os.getpid()}.txt"
        try:  # never through a link: the manifest folder and its file are the plugin's
            folder = open_folder(manifest, self.root)
        except (LinkRefused, FileInTheWay) as error:
            raise SnapshotWriteError(str(error), listing) from None
        except OSError as error:
            raise _unwritable(manifest, error) from error
        try:
            fd = folder.append(listing.name)
            with os.fdopen(fd, "a", encoding="utf-8") as f:
                f.write(line)
        except (LinkRefused, NotRegular) as error:
            raise SnapshotWriteError(str(error), listing) from None
        except OSError as error:
            raise _unwritable(listing, error) from error
        finally:
            folder.close()

    def _listed(self, path: Path) -> bool:
        return path in self._written

    def record_path(self, stem: Path, suffix: str) -> Path:
        """Where one snapshot's record of kind ``suffix`` goes: a file per snapshot in
        ``.records`` (xdist safe), its name fitted to the file-name limit.

        The path is flattened by percent-escaping ``%`` and ``/``, which no two paths
        share: ``tests/a__b/x`` and ``tests/a/b/x`` never share a record."""
        relative = stem.relative_to(self.root).as_posix()
        name = fitted_name(relative.replace("%", "%25").replace("/", "%2F"))
        return self.root / RECORDS / (name + suffix)

    def clear_previous(self) -> bool:
        """Remove what earlier sessions wrote, as their manifests list it: the files,
        then the folders they made (deepest first) that are now empty, then the
        manifests. Nothing else in the directory is touched. Returns whether the folder
        itself was made by the plugin (it is removed here when empty).

        A folder without a manifest (written by 0.1) loses only its ``.records``."""
        manifest = self.root / MANIFEST
        if manifest.is_symlink() or (manifest.exists() and not manifest.is_dir()):
            self.warnings.append(_refused_manifest(manifest))
            return False
        if not manifest.is_dir():
            _clear_legacy_records(self.root / RECORDS)
            return False
        lists, refused = _listings(manifest)
        if refused:
            self.warnings.append(_refused_manifest(refused))
        files: dict[str, set[str] | None] = {}  # rel -> its stamps (None: a 0.4 listing)
        folders: set[str] = set()
        for listing in lists:
            with contextlib.suppress(OSError, UnicodeDecodeError):
                text = read_regular(listing, follow=False).decode("utf-8")
                for line in text.splitlines():
                    _read_line(line, files, folders)
        for rel, stamps in sorted(files.items()):
            target = self._inside(rel)
            if target is not None and _still_ours(target, stamps):
                target.unlink(missing_ok=True)
        for rel in sorted(folders, key=lambda r: r.count("/"), reverse=True):
            target = self._inside(rel)
            if target is not None and not target.is_symlink():
                with contextlib.suppress(OSError):  # not empty: a user's file is in it
                    target.rmdir()
        for listing in lists:
            listing.unlink(missing_ok=True)
        if not refused:
            with contextlib.suppress(OSError):
                manifest.rmdir()
        _clear_orphan_records(self.root / RECORDS)
        # A results folder the plugin made goes too once empty (a passing run leaves no
        # empty folder behind), but never the folder pytest runs in.
        if "." in folders and not Path.cwd().resolve().is_relative_to(self.root.resolve()):
            with contextlib.suppress(OSError):
                self.root.rmdir()
        return "." in folders

    def _inside(self, rel: str) -> Path | None:
        """``root / rel`` when it stays inside the folder (no ``..``, no link out)."""
        return inside(self.root, rel)

    def relative(self, path: Path) -> str:
        """``path`` relative to the results directory, with forward slashes."""
        return path.relative_to(self.root).as_posix()


#: The manifest's kind of line for a file listed with its stamp: ``s <stamp> <rel>``
#: (``f <rel>``: listed before it was written, or by 0.4).
_STAMPED: Final = "s"


def _stamp(path: Path) -> str:
    """``<inode>:<size>:<mtime ns>`` of ``path`` (not followed): another file written
    over it since, in place or by a rename, has another."""
    found = os.lstat(path)
    return f"{found.st_ino}:{found.st_size}:{found.st_mtime_ns}"


def _read_line(line: str, files: dict[str, set[str] | None], folders: set[str]) -> None:
    """One manifest line into ``files`` (rel -> stamps) or ``folders``."""
    kind, _, rest = line.partition(" ")
    if kind == "d":
        folders.add(rest)
    elif kind == "f":
        files.setdefault(rest, None)
    elif kind == _STAMPED:
        stamp, _, rel = rest.partition(" ")
        known = files.get(rel)
        files[rel] = (known or set()) | {stamp}


def _still_ours(target: Path, stamps: set[str] | None) -> bool:
    """``target`` is a file (or a link) the manifest proves the plugin's: one of its
    stamps matches it now (any file, for a 0.4 listing that kept no stamp)."""
    if not (target.is_file() or target.is_symlink()):
        return False
    if stamps is None:
        return True
    try:
        return _stamp(target) in stamps
    except OSError:
        return False


def _listings(manifest: Path) -> tuple[list[Path], Path | None]:
    """The manifest's lists that are regular files, and the first entry refused (a
    link or anything else: never read, never removed)."""
    lists, refused = [], None
    with os.scandir(manifest) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            if not entry.name.endswith(".txt"):
                continue
            if entry.is_file(follow_symlinks=False):
                lists.append(Path(entry.path))
            elif refused is None:
                refused = Path(entry.path)
    return lists, refused


def _refused_manifest(path: Path) -> str:
    """The one line for a manifest (or a list in it) that is not the plugin's own."""
    what = "a symbolic link" if path.is_symlink() else "not a regular file or folder"
    with contextlib.suppress(OSError):
        what += f" (to {os.readlink(path)})" if path.is_symlink() else ""
    return (
        f"tlgraph: {path} is {what}: the run's bookkeeping is never followed, so nothing "
        "was cleared through it; delete it and run again"
    )


#: The kinds of file a run keeps in ``.records``: call outcomes, the marks ``tlgraph
#: accept`` leaves, and the records of earlier versions (a failure's ``.json``, a call's
#: ``.call``).
_RECORD_SUFFIXES: Final = (".outcome", ".accepted", ".json", ".call")


def inside(root: Path, rel: object) -> Path | None:
    """``root / rel`` for a path a record or a manifest gives relative to the results
    folder ``root``, when it stays inside it: a relative ``/`` path with no ``..``, no
    drive, no backslash, and no folder on the way a link out; ``None`` otherwise. The
    one check of every path read from the results folder's own files."""
    if not isinstance(rel, str) or not rel or rel.startswith("/") or "\\" in rel:
        return None
    parts = rel.split("/")
    if ".." in parts or "\x00" in rel or Path(rel).is_absolute() or Path(rel).drive:
        return None
    target = root / rel
    try:
        if not target.parent.resolve().is_relative_to(root.resolve()):
            return None
    except (OSError, RuntimeError):  # a link loop
        return None
    return target


def _clear_orphan_records(records: Path) -> None:
    """The records a killed run wrote but never listed in its manifest (it died between
    the two): every later run would report that failure again. ``.records`` is the
    plugin's own folder, so what is left in it after the manifests were cleared is an
    orphan; a link is never followed into."""
    if not records.is_dir() or records.is_symlink():
        return
    for path in records.iterdir():
        if path.suffix in _RECORD_SUFFIXES and (path.is_file() or path.is_symlink()):
            with contextlib.suppress(OSError):
                path.unlink()
    with contextlib.suppress(OSError):
        records.rmdir()


def _clear_legacy_records(records: Path) -> None:
    """The failure records of a 0.1 session: they would reappear in this report."""
    if records.is_dir() and not records.is_symlink():
        for path in records.glob("*.json"):
            path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            records.rmdir()


def _unwritable(path: Path, error: OSError) -> SnapshotWriteError:
    reason = error.strerror or str(error)
    return SnapshotWriteError(
        f"could not write {path}: {reason}; make the results folder writable (or free "
        "space) and run again",
        path,
        reason,
    )


def _sibling(stem: Path, suffix: str) -> Path:
    return stem.with_name(stem.name + suffix)


def read_record_files(root: Path, suffix: str) -> list[tuple[Path, dict[str, Any]]]:
    """The one reader of ``.records``: every ``*<suffix>`` record of the results folder
    ``root`` (``.outcome``: a call's outcome) with its file, in name order; a record
    that cannot be read, or is not a JSON object, is left out, never fatal."""
    folder = root / RECORDS
    if not folder.is_dir():
        return []
    out = []
    for path in sorted(folder.glob(f"*{suffix}")):
        try:  # never through a link, never a FIFO, never past the size limit
            record = json.loads(read_regular(path, follow=False).decode("utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(record, dict):
            out.append((path, record))
    return out
