"""The outcome of one PNG comparison as the failure report keeps it.

Kept apart from :mod:`.pixeldiff` (which imports numpy and Pillow): the snapshot pair
names it on every call, and a session that never compares a PNG imports neither.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_tlgraph.pixels.pixeldiff import PngComparison

__all__ = ["PngMatch"]


@dataclass(frozen=True, slots=True)
class PngMatch:
    """The outcome of one PNG comparison, kept for the failure report."""

    comparison: PngComparison | None
    mismatch_line: str | None
    error: str | None
    stale_provenance: bool = False
