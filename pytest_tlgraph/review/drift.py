"""The cause of drift, named: the versions that drew a baseline against the running
ones, and whether a difference is of a kind an upgrade causes.

A failing call whose stored PNG records other versions (``snapshots.versions``) opens
its story with :func:`drift_line`. A run whose every failing call changed only in
ways an upgrade of torch or a model library causes (:func:`upgrade_kinds`: an op
renamed, a decomposition changed) is told so once, in its summaries
(:func:`run_upgrade_line`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from pytest_tlgraph.diff.view.comparison import Comparison
    from pytest_tlgraph.review.outcome import CallOutcome

__all__ = [
    "DECOMPOSITION",
    "RENAMED",
    "drift_line",
    "drifted",
    "run_upgrade_line",
    "upgrade_kinds",
]

#: The kinds of difference an upgrade of torch or a model library causes.
RENAMED: Final = "op renamed"
DECOMPOSITION: Final = "decomposition changed"
#: The order the causes are named in: torch first, the model library, then the plugin.
_ORDER: Final = ("torch", "transformers", "timm", "diffusers", "pytest-tlgraph")


def drifted(recorded: Mapping[str, str], running: Mapping[str, str]) -> list[tuple[str, str, str]]:
    """``(name, recorded, running)`` of each version recorded on both sides that differs,
    torch first. A library recorded on one side only says nothing (a test that no longer
    imports it, or a baseline written before 0.4)."""
    names = [n for n in _ORDER if n in recorded] + sorted(set(recorded) - set(_ORDER))
    return [
        (name, recorded[name], running[name])
        for name in names
        if name in running and recorded[name] != running[name]
    ]


def drift_line(recorded: Mapping[str, str], running: Mapping[str, str]) -> str | None:
    """``drawn with torch 2.12.0, now 2.13.0: the change may come from torch, not the
    model`` (each differing version named), or ``None`` when none differs."""
    found = drifted(recorded, running)
    if not found:
        return None
    versions = "; ".join(f"{name} {old}, now {new}" for name, old, new in found)
    names = [name for name, _, _ in found]
    causes = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
    return f"drawn with {versions}: the change may come from {causes}, not the model"


def upgrade_kinds(comparison: Comparison) -> list[str] | None:
    """The kinds of upgrade difference ``comparison``'s typed edits hold
    (``[RENAMED]``: an op replaced by another function, ``[DECOMPOSITION]``: ops added
    or removed inside modules both sides have, or both), or ``None`` when it holds any
    other edit (a block, an argument, a shape, a dtype, the wiring) or none at all."""
    from pytest_tlgraph.diff.edits import OpAdded, OpRemoved, OpReplaced, SkipAdded, SkipRemoved

    if not comparison.edits:
        return None
    kinds: list[str] = []
    for edit in comparison.edits:
        if isinstance(edit, OpReplaced):
            kind = RENAMED
        elif isinstance(edit, OpAdded | OpRemoved | SkipAdded | SkipRemoved):
            kind = DECOMPOSITION
        else:
            return None
        if kind not in kinds:
            kinds.append(kind)
    return sorted(kinds, key=(RENAMED, DECOMPOSITION).index)


def run_upgrade_line(calls: Sequence[CallOutcome]) -> str | None:
    """One line for a whole run whose every failing call's difference is of a kind an
    upgrade causes (each outcome's ``structure.upgrade``), naming the versions that
    moved when the baselines recorded them; ``None`` otherwise (or nothing failed)."""
    failed = [c for c in calls if c.failed]
    if not failed:
        return None
    kinds: list[str] = []
    for call in failed:
        found = call.upgrade
        if not found:
            return None
        kinds += [k for k in found if k not in kinds]
    moved: dict[str, str] = {}
    for call in failed:
        drift = call.drift
        versions = () if drift is None else drifted(dict(drift.stored), dict(drift.running))
        for name, old, new in versions:
            moved.setdefault(name, f"{name} {old} -> {new}")
    if not moved:
        return None  # no recorded version moved: the model's own code changed
    n = len(failed)
    every = "the failing call" if n == 1 else f"all {n} failing calls"
    cause = f"; the baselines were drawn with other versions ({', '.join(moved.values())})"
    return (
        f"{every} changed only in ways an upgrade of torch or the model library changes "
        f"a drawing ({', '.join(kinds)}){cause}: if one was upgraded, review that before "
        "the models"
    )
