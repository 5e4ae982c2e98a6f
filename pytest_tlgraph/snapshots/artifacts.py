"""The results directory: failure artifacts per test, and the records the HTML report reads.

Layout (``tlgraph-results/`` by default)::

    <module path>/<snapshot name>.png            the received picture
    <module path>/<snapshot name>-expected.png   the baseline
    <module path>/<snapshot name>-diff.png       the pixel diff
    <module path>/<snapshot name>-graphdiff.png  the structural diff drawing
    <module path>/<snapshot name>.dot.diff       the full unified DOT diff
    <module path>/<snapshot name>-measured.png   the unmasked picture of a time channel
    .records/<stem>.json                         one failure, for report.html
    report.html                                  written once, at the end of the session

Every file is named after one snapshot, and a snapshot belongs to one test, which runs
on one pytest-xdist worker: two workers never write the same file. The HTML report is
written by the controller (or the only process) after every worker has finished.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from pytest_tlgraph.snapshots.report import Report

__all__ = ["RECORDS", "REPORT_NAME", "Artifacts", "ResultsDir"]

RECORDS: Final = ".records"
REPORT_NAME: Final = "report.html"
MEASURED: Final = "-measured.png"


@dataclass(frozen=True, slots=True)
class Artifacts:
    """Paths of the files written for one failure (``None`` when not written)."""

    actual: Path | None = None
    expected: Path | None = None
    diff: Path | None = None
    dot_diff: Path | None = None
    graphdiff: Path | None = None

    def images(self) -> dict[str, Path]:
        """The images written, by kind, in report order: graphdiff, expected, actual,
        diff."""
        found = {"graphdiff": self.graphdiff, "expected": self.expected}
        found |= {"actual": self.actual, "diff": self.diff}
        return {kind: path for kind, path in found.items() if path is not None}

    def files(self) -> list[Path]:
        """Every file written."""
        return [*self.images().values(), *([self.dot_diff] if self.dot_diff else [])]


class ResultsDir:
    """Writes and reads the files of one results directory."""

    def __init__(self, root: Path) -> None:
        self.root = root

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
    ) -> Artifacts:
        """Write what exists of the five artifacts; stale ones of the stem are removed."""
        paths = {
            "actual": _sibling(stem, ".png"),
            "expected": _sibling(stem, "-expected.png"),
            "diff": _sibling(stem, "-diff.png"),
            "dot_diff": _sibling(stem, ".dot.diff"),
            "graphdiff": _sibling(stem, "-graphdiff.png"),
        }
        contents: dict[str, bytes | None] = {
            "actual": actual,
            "expected": expected,
            "diff": diff,
            "dot_diff": None if dot_diff is None else dot_diff.encode("utf-8"),
            "graphdiff": graphdiff,
        }
        stem.parent.mkdir(parents=True, exist_ok=True)
        written: dict[str, Path | None] = {}
        for key, path in paths.items():
            data = contents[key]
            if data is None:
                path.unlink(missing_ok=True)
                written[key] = None
            else:
                path.write_bytes(data)
                written[key] = path
        return Artifacts(**written)

    def write_measured(self, stem: Path, png: bytes) -> Path:
        """The unmasked picture of a draw whose snapshot masks time channels."""
        path = _sibling(stem, MEASURED)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(png)
        return path

    def write_record(
        self, stem: Path, *, nodeid: str, report: Report, artifacts: Artifacts
    ) -> None:
        """Keep one failure for the HTML report (a file per snapshot: xdist safe)."""
        record = {
            "nodeid": nodeid,
            "title": report.title,
            "sections": [[heading, list(lines)] for heading, lines in report.sections],
            "images": {kind: self.relative(p) for kind, p in artifacts.images().items()},
            "files": [self.relative(p) for p in artifacts.files()],
        }
        records = self.root / RECORDS
        records.mkdir(parents=True, exist_ok=True)
        name = stem.relative_to(self.root).as_posix().replace("/", "__") + ".json"
        tmp = records / (name + f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(record, indent=1, sort_keys=True), encoding="utf-8")
        # Atomic, so the controller never reads a half-written record.
        os.replace(tmp, records / name)

    def read_records(self) -> list[dict[str, Any]]:
        """Every failure recorded in this session, in a stable order."""
        records = self.root / RECORDS
        if not records.is_dir():
            return []
        out = []
        for path in sorted(records.glob("*.json")):
            try:
                record = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue  # a record that cannot be read is left out, never fatal
            if isinstance(record, dict):
                out.append(record)
        return out

    def clear_previous(self) -> None:
        """Remove what an earlier session wrote: the artifacts its records list, the
        measured pictures, the records and the report, then the folders that left
        empty, the results folder itself included. Nothing else is touched."""
        if not self.root.is_dir():
            return
        root = self.root.resolve()
        records = self.read_records()
        targets = [self.root / str(rel) for r in records for rel in r.get("files", ())]
        targets += self.root.rglob(f"*{MEASURED}")
        for target in targets:
            if target.resolve().is_relative_to(root):
                target.unlink(missing_ok=True)
                _prune_empty(target.parent, root)
        shutil.rmtree(self.root / RECORDS, ignore_errors=True)
        (self.root / REPORT_NAME).unlink(missing_ok=True)
        if not Path.cwd().resolve().is_relative_to(root):  # never the folder we run in
            _prune_empty(self.root, root.parent)  # a passing run leaves no empty folder

    def relative(self, path: Path) -> str:
        """``path`` relative to the results directory, with forward slashes."""
        return path.relative_to(self.root).as_posix()


def _prune_empty(folder: Path, root: Path) -> None:
    """Remove ``folder`` and its parents up to ``root`` while they are empty."""
    while folder.resolve() != root and folder.resolve().is_relative_to(root):
        try:
            folder.rmdir()
        except OSError:
            return  # not empty (or already gone)
        folder = folder.parent


def _sibling(stem: Path, suffix: str) -> Path:
    return stem.with_name(stem.name + suffix)
