"""What a failing ``tlgraph_snapshot`` call leaves for ``tlgraph accept``, and which
calls of the last run are still pending review.

A failing call writes its received DOT beside the received picture
(``<stem>.gv`` next to ``<stem>.png``) and keeps in its outcome
(:class:`.outcome.Acceptance`) the received files and the sha256 of the stored ones as
the comparison saw them (``None`` when missing). Accepting a call writes
``.records/<record>.accepted`` next to its record; the failure's files stay.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from pytest_tlgraph.review.outcome import (
    Acceptance,
    CallOutcome,
    call_order,
    read_outcomes,
)

if TYPE_CHECKING:
    from pytest_tlgraph.results.artifacts import ResultsDir

__all__ = [
    "ACCEPTED_SUFFIX",
    "RECEIVED_DOT",
    "Pending",
    "acceptance",
    "file_sha256",
    "mark_accepted",
    "pending_calls",
]

#: The received DOT of a failing call, beside its received picture ``<stem>.png``.
RECEIVED_DOT: Final = ".gv"
#: Next to a record in ``.records``: the call was accepted after the run.
ACCEPTED_SUFFIX: Final = ".accepted"


def file_sha256(path: Path) -> str | None:
    """The sha256 of the bytes of ``path``, ``None`` when it is missing or unreadable
    (a folder, a dangling link, a FIFO, a file over the size limit)."""
    from pytest_tlgraph.disk.bounded import read_regular

    try:
        return hashlib.sha256(read_regular(path)).hexdigest()
    except OSError:
        return None


def acceptance(
    results: ResultsDir,
    stem: Path,
    *,
    nodeid: str,
    dot: str,
    png: bytes | None,
    dot_location: str,
    png_location: str,
    stored_sha256: tuple[str | None, str | None] | None = None,
) -> Acceptance:
    """Write the received DOT of one failing call as ``<stem>.gv`` and return what
    ``tlgraph accept`` needs of the call.

    ``png`` is the received picture (``None``: no PNG was compared); ``stored_sha256``
    the hashes of the stored ``.gv`` and ``.png`` as the comparison read them (``None``:
    they are read now, as the comparison left them). The snapshot files themselves are
    found again from the node id when accepting (``cli.accept_paths``). Raises
    ``SnapshotWriteError`` when the results folder refuses the file."""
    data = dot.encode("utf-8")
    received = stem.with_name(stem.name + RECEIVED_DOT)
    results.write(received, data, nodeid=nodeid)
    if stored_sha256 is None:
        stored_sha256 = (
            file_sha256(Path(dot_location).absolute()),
            file_sha256(Path(png_location).absolute()),
        )
    return Acceptance(
        received_dot=results.relative(received),
        received_dot_sha256=hashlib.sha256(data).hexdigest(),
        png_compared=png is not None,
        received_png=None if png is None else results.relative(stem.with_name(stem.name + ".png")),
        dot_sha256=stored_sha256[0],
        png_sha256=stored_sha256[1],
    )


@dataclass(frozen=True, slots=True)
class Pending:
    """One failing call of a run (its outcome and the file it was read from), and
    whether it was accepted since."""

    path: Path
    outcome: CallOutcome

    @property
    def nodeid(self) -> str:
        """The test's node id, as pytest names it."""
        return self.outcome.nodeid

    @property
    def name(self) -> str:
        """The snapshot's name."""
        return self.outcome.name

    @property
    def root(self) -> Path:
        """The results folder the record lies in (``<root>/.records/<record>.outcome``)."""
        return self.path.parent.parent

    @property
    def call(self) -> int | str | None:
        """The call's index as the fixture numbers it: its ``name=``, else the number
        of earlier calls in the test."""
        return self.outcome.call

    @property
    def marker(self) -> Path:
        """The file that says the call was accepted."""
        return self.path.with_suffix(ACCEPTED_SUFFIX)

    @property
    def accepted(self) -> bool:
        """True when ``tlgraph accept`` wrote this call's snapshots after the run."""
        return self.marker.is_file()


def pending_calls(root: Path, damaged: list[str] | None = None) -> list[Pending]:
    """Every failing call recorded in the results folder ``root`` with its file, in the
    order ``report.html`` lists them (``outcome.call_order``: test ids, then snapshot
    names, numbers by value). A record that does not read is left out, with one line
    in ``damaged`` naming it (:func:`.outcome.read_outcomes`)."""
    found = [Pending(path, o) for path, o in read_outcomes(root, damaged) if o.failed]
    return sorted(found, key=lambda entry: call_order(entry.outcome))


def mark_accepted(results: ResultsDir, entry: Pending, written: list[Path]) -> None:
    """Say in the results folder that ``entry`` was accepted (its failure's files stay),
    listed in the folder's manifest so the next run clears it with the rest."""
    text = json.dumps(
        {"nodeid": entry.nodeid, "name": entry.name, "written": [os.fspath(p) for p in written]},
        indent=1,
        sort_keys=True,
    )
    results.write(entry.marker, text.encode("utf-8"))
