"""The comparison settings of a run: what the command line, the ini file, a test's
marker and a fixture call may set, and how each value is checked."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pytest_tlgraph.errors import UsageError

if TYPE_CHECKING:
    from pytest_tlgraph.snapshots.results.artifacts import ResultsDir

__all__ = ["SETTING_NAMES", "Settings", "check_setting"]

#: Per-call (and marker) arguments that override the command line and the ini file.
SETTING_NAMES: Final = ("png", "renderer", "threshold", "max_diff_pixels")


@dataclass(frozen=True, slots=True)
class Settings:
    """The resolved comparison settings of one run (command line over ini over default)."""

    rootdir: Path
    results: ResultsDir
    renderer: str = "pure"
    png: bool = True
    threshold: float = 0.1
    max_diff_pixels: int = 0
    force_render: bool = False
    color: bool = False
    #: CI summaries to write at the end of the session: ``json``, ``markdown``.
    summary: tuple[str, ...] = ()
    #: pytest's rootdir, which node ids are relative to (``None``: not known).
    project: Path | None = None


def check_setting(name: str, value: Any, where: str) -> Any:
    """Validate one comparison setting, naming ``where`` it came from and the remedy."""
    if name == "png":
        if not isinstance(value, bool):
            raise TypeError(f"{where}: png must be True or False, got {value!r}")
    elif name == "renderer":
        if value not in ("pure", "system"):
            raise UsageError(f"{where}: renderer must be 'pure' or 'system', got {value!r}")
    elif name == "threshold":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
            raise UsageError(f"{where}: threshold must be a number from 0 to 1, got {value!r}")
        value = float(value)
    elif name == "max_diff_pixels" and (
        isinstance(value, bool) or not isinstance(value, int) or value < 0
    ):
        raise UsageError(f"{where}: max_diff_pixels must be an int >= 0, got {value!r}")
    return value
