"""Checks a ``tlgraph_snapshot`` call makes before it captures anything: the draw
options (names, types and values) and the results folder."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_tlgraph.errors import UsageError
from pytest_tlgraph.snapshots.settings import SETTING_NAMES

__all__ = ["check_draw_names", "check_draw_options", "check_results_folder"]


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


def check_draw_options(options: Mapping[str, Any]) -> None:
    """Validate every draw option that can be judged without a trace: names, types,
    enumerated values, size scales and builtin source tokens. Raises ``TypeError``,
    ``ValueError`` or ``EncodingRefusal`` naming the option, the value and the remedy."""
    from pytest_tlgraph.encoding.scales import check_scale
    from pytest_tlgraph.encoding.sources import resolve_source
    from pytest_tlgraph.encoding.stack import is_auto
    from pytest_tlgraph.errors import EncodingRefusal
    from pytest_tlgraph.options import DrawOptions

    opts = DrawOptions.from_kwargs(**options)
    if opts.size_scale is not None:
        if opts.size_by is None:
            raise EncodingRefusal(
                "size_scale_requires_size_by",
                cause=f"size_scale={opts.size_scale!r} was given without size_by.",
                remedy="add size_by=<source>, or drop size_scale.",
            )
        check_scale(opts.size_scale)
    for channel in ("color_by", "size_by", "stack_by"):
        value = getattr(opts, channel)
        if value is not None and not (channel == "stack_by" and is_auto(value)):
            resolve_source(value, channel=channel)


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
