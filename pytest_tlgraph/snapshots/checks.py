"""Checks a ``tlgraph_snapshot`` call makes before it captures anything: the names it
was given (draw options or snapshot settings) and the results folder. The draw options'
values are checked by :meth:`pytest_tlgraph.draw.request.DrawRequest.parse`."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_tlgraph.errors import UsageError
from pytest_tlgraph.snapshots.settings import SETTING_NAMES

__all__ = ["check_draw_names", "check_results_folder"]


def check_draw_names(options: Mapping[str, Any], where: str) -> None:
    """Refuse names that are neither draw options nor snapshot settings."""
    from pytest_tlgraph.options import DrawOptions
    from pytest_tlgraph.suggest import did_you_mean

    known = {f.name for f in dataclasses.fields(DrawOptions)}
    unknown = sorted(set(options) - known)
    if unknown:
        raise TypeError(
            f"{where} got unexpected keyword argument(s) {', '.join(map(repr, unknown))}"
            f"{did_you_mean(unknown[0], [*known, *SETTING_NAMES])}; "
            f"draw options are: {', '.join(sorted(known))}; snapshot settings are: "
            f"{', '.join(SETTING_NAMES)}"
        )


def check_results_folder(results: Path, snapshots: Path) -> None:
    """Refuse a results folder that is, contains or is inside the snapshot folder:
    results are cleared between runs, baselines must never be."""
    found, stored = results.resolve(), snapshots.resolve()
    if found == stored or found.is_relative_to(stored) or stored.is_relative_to(found):
        relation = (
            "is" if found == stored else "is inside" if found.is_relative_to(stored) else "contains"
        )
        raise UsageError(
            f"the tlgraph results folder {results} {relation} the snapshot folder "
            f"{snapshots}; its files would overwrite or delete baselines. Choose a folder "
            "of its own: --tlgraph-results=tlgraph-results (or ini tlgraph_results)"
        )
