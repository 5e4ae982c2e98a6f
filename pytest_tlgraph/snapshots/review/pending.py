"""What a failing ``tlgraph_snapshot`` call leaves for ``tlgraph accept``, and which
calls of the last run are still pending review.

A failing call writes its received DOT beside the received picture
(``<stem>.gv`` next to ``<stem>.png``) and adds to its failure record, under
:data:`ACCEPT_KEY`, where its two snapshot files are and the sha256 of their bytes as
the comparison saw them (``None`` when missing). Accepting a call writes
``.records/<record>.accepted`` next to its record; the failure's files stay.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pytest_tlgraph.snapshots.results.artifacts import read_record_files

if TYPE_CHECKING:
    from pytest_tlgraph.snapshots.results.artifacts import ResultsDir

__all__ = [
    "ACCEPTED_SUFFIX",
    "ACCEPT_KEY",
    "RECEIVED_DOT",
    "Pending",
    "acceptance",
    "file_sha256",
    "mark_accepted",
    "pending_calls",
    "story",
]

#: The key of a failure record that holds what accepting the call needs.
ACCEPT_KEY: Final = "accept"
#: The received DOT of a failing call, beside its received picture ``<stem>.png``.
RECEIVED_DOT: Final = ".gv"
#: Next to a record in ``.records``: the call was accepted after the run.
ACCEPTED_SUFFIX: Final = ".accepted"


def file_sha256(path: Path) -> str | None:
    """The sha256 of the bytes of ``path``, ``None`` when it is missing or unreadable
    (a folder, a dangling link, a FIFO, a file over the size limit)."""
    from pytest_tlgraph.snapshots.disk.bounded import read_regular

    try:
        return hashlib.sha256(read_regular(path)).hexdigest()
    except OSError:
        return None


def acceptance(
    results: ResultsDir,
    stem: Path,
    *,
    nodeid: str,
    name: str,
    dot: str,
    png: bytes | None,
    dot_location: str,
    png_location: str,
    stored_sha256: tuple[str | None, str | None] | None = None,
    rootdir: Path | None = None,
) -> dict[str, Any]:
    """Write the received DOT of one failing call as ``<stem>.gv`` and return the part
    of its failure record ``tlgraph accept`` reads: ``{ACCEPT_KEY: {...}}``.

    ``png`` is the received picture (``None``: no PNG was compared); ``stored_sha256``
    the hashes of the stored ``.gv`` and ``.png`` as the comparison read them (``None``:
    they are read now, as the comparison left them). The snapshot paths are kept
    absolute and, under ``*_rel``, relative to pytest's ``rootdir``: a results folder
    downloaded from CI is accepted into another checkout. Raises
    ``SnapshotWriteError`` when the results folder refuses the file."""
    data = dot.encode("utf-8")
    received = stem.with_name(stem.name + RECEIVED_DOT)
    results.write(received, data, nodeid=nodeid)
    dot_path, png_path = Path(dot_location).absolute(), Path(png_location).absolute()
    info = {
        "name": name,
        "dot_snapshot": str(dot_path),
        "png_snapshot": str(png_path),
        "dot_sha256": file_sha256(dot_path) if stored_sha256 is None else stored_sha256[0],
        "png_sha256": file_sha256(png_path) if stored_sha256 is None else stored_sha256[1],
        "png_compared": png is not None,
        "received_dot": results.relative(received),
        "received_dot_sha256": hashlib.sha256(data).hexdigest(),
        "received_png": results.relative(stem.with_name(stem.name + ".png"))
        if png is not None
        else None,
    }
    for key, path in (("dot_snapshot_rel", dot_path), ("png_snapshot_rel", png_path)):
        info[key] = _relative(path, rootdir)
    return {ACCEPT_KEY: info}


def _relative(path: Path, rootdir: Path | None) -> str | None:
    """``path`` relative to ``rootdir`` with forward slashes, ``None`` outside it."""
    if rootdir is None:
        return None
    try:
        return path.resolve().relative_to(rootdir.resolve()).as_posix()
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class Pending:
    """One failure record of a run, and whether it was accepted since."""

    path: Path
    record: dict[str, Any]

    @property
    def nodeid(self) -> str:
        """The test's node id, as pytest names it (``""`` when the record lacks one)."""
        value = self.record.get("nodeid")
        return value if isinstance(value, str) else ""

    @property
    def name(self) -> str:
        """The snapshot's name (``?`` when the record does not say)."""
        info = self.record.get(ACCEPT_KEY)
        value = info.get("name") if isinstance(info, dict) else None
        return value if isinstance(value, str) else "?"

    @property
    def root(self) -> Path:
        """The results folder the record lies in (``<root>/.records/<record>.json``)."""
        return self.path.parent.parent

    @property
    def call(self) -> int | str | None:
        """The call's index as the fixture numbers it: its ``name=``, else the number
        of earlier calls in the test (``None`` for a record before 0.4)."""
        value = self.record.get("call")
        return value if isinstance(value, (int, str)) and not isinstance(value, bool) else None

    @property
    def marker(self) -> Path:
        """The file that says the call was accepted."""
        return self.path.with_suffix(ACCEPTED_SUFFIX)

    @property
    def accepted(self) -> bool:
        """True when ``tlgraph accept`` wrote this call's snapshots after the run."""
        return self.marker.is_file()


def pending_calls(root: Path, damaged: list[str] | None = None) -> list[Pending]:
    """Every failure record in the results folder ``root`` with its file, in the order
    ``report.html`` lists them. An unreadable record is left out; so is one with a field
    of the wrong type (``validate``), with one line in ``damaged`` naming it."""
    from pytest_tlgraph.snapshots.review.validate import record_problem

    out = []
    for path, record in read_record_files(root, ".json"):
        problem = record_problem(record)
        if problem is None:
            out.append(Pending(path, record))
        elif damaged is not None:
            damaged.append(
                f"left out the record {path}: {problem}; rerun pytest to record it again"
            )
    return out


def story(record: dict[str, Any]) -> str:
    """The one-line story of a failure: its ``story`` when the record has one, else the
    first line of its first (the structure) section, with the line after it when it is
    a heading (``label rows changed (2 nodes): conv2d_1: ...``)."""
    given = record.get("story")
    if isinstance(given, str) and given.strip():
        return given.strip().splitlines()[0]
    sections = record.get("sections")
    if isinstance(sections, list):
        for section in sections:
            if isinstance(section, list) and len(section) == 2 and isinstance(section[1], list):
                lines = [line for line in section[1] if isinstance(line, str) and line.strip()]
                if len(lines) > 1 and lines[0].rstrip().endswith(":"):
                    return f"{lines[0].strip()} {lines[1].strip()}"
                if lines:
                    return lines[0].strip()
    return "(no summary recorded)"


def mark_accepted(results: ResultsDir, entry: Pending, written: list[Path]) -> None:
    """Say in the results folder that ``entry`` was accepted (its failure's files stay),
    listed in the folder's manifest so the next run clears it with the rest."""
    text = json.dumps(
        {"nodeid": entry.nodeid, "name": entry.name, "written": [os.fspath(p) for p in written]},
        indent=1,
        sort_keys=True,
    )
    results.write(entry.marker, text.encode("utf-8"))
