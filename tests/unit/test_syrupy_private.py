"""The private syrupy names ``snapshots/syrupy_private.py`` reads, pinned to the syrupy
versions they were checked against (docs/decisions.md, "One snapshot value (0.4)")."""

from __future__ import annotations

import dataclasses
import inspect
from importlib.metadata import version
from pathlib import Path

import syrupy
from syrupy.session import SnapshotSession

from pytest_tlgraph.snapshots.syrupy_private import CHECKED_VERSIONS


def test_the_installed_syrupy_is_a_checked_version() -> None:
    installed = version("syrupy")
    assert installed in CHECKED_VERSIONS, (
        f"syrupy {installed} is not among the versions whose private state the plugin "
        f"reads ({', '.join(CHECKED_VERSIONS)}): check snapshots/syrupy_private.py against "
        "it, then add it to CHECKED_VERSIONS"
    )


def test_the_constraints_pin_a_checked_version() -> None:
    constraints = Path(__file__).parents[2] / "constraints" / "test.txt"
    pins = [line for line in constraints.read_text().splitlines() if line.startswith("syrupy==")]
    assert [pin.removeprefix("syrupy==") for pin in pins] == [CHECKED_VERSIONS[-1]]


def test_the_session_fields_read_exist_with_their_types() -> None:
    fields = {f.name: f for f in dataclasses.fields(SnapshotSession)}
    for name in ("_collected_items", "_collected_modules", "_assertions"):
        assert name in fields, name
    assert callable(SnapshotSession.collect_items)
    assert "def pytest_sessionstart" in inspect.getsource(syrupy)
    assert "config._syrupy = SnapshotSession(" in inspect.getsource(syrupy)
