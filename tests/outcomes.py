"""The call outcomes a run keeps in its results folder, as the tests read them raw
(``.records/*.outcome``, JSON): a test that edits a record on disk edits this form."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_tlgraph.results.artifacts import RECORDS
from pytest_tlgraph.review.outcome import FAILED, SUFFIX


def outcome_files(results: Path, *, failed: bool = True) -> list[Path]:
    """The outcome files of the results folder ``results``, in name order (``failed``:
    only those of calls pending review)."""
    paths = sorted((results / RECORDS).glob(f"*{SUFFIX}"))
    return [p for p in paths if not failed or read(p)["verdict"] in FAILED]


def read(path: Path) -> dict[str, Any]:
    """One outcome file's JSON object."""
    data = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def outcomes(results: Path, *, failed: bool = True) -> list[dict[str, Any]]:
    """The JSON of every outcome file (:func:`outcome_files`)."""
    return [read(p) for p in outcome_files(results, failed=failed)]


def write(path: Path, data: dict[str, Any]) -> None:
    """Write an edited outcome back."""
    path.write_text(json.dumps(data), encoding="utf-8")
