"""The cause of drift, named: the versions that drew a baseline against the running
ones, and whether a difference is of a kind an upgrade causes.

A failing call whose stored PNG records other versions (``snapshots.versions``) opens
its story with :func:`drift_line`. A run whose every failing call changed only in
ways an upgrade of torch or a model library causes (:func:`upgrade_kinds`: an op
renamed, a decomposition changed) is told so once, in its summaries
(:func:`run_upgrade_line`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from pytest_tlgraph.snapshots.compare.comparison import Comparison

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
#: ``relu -> gelu (2 ops)`` and ``mul now runs (1 op)``: a function edit inside a box
#: (``compare.inside``), not an argument's (``conv2d padding (1, 1) -> (2, 2)``).
_SWAPPED: Final = re.compile(r"\S+ -> \S+ \(\d+ ops?\)")
_ADDED_OR_GONE: Final = re.compile(r"\S+ (now runs|no longer runs) \(\d+ ops?\)")
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


def _inside_kinds(inside: str | None) -> list[str] | None:
    """The upgrade kinds a hidden-content change reads as (``relu -> gelu (2 ops)``
    renamed, ``mul now runs (1 op)`` a decomposition), or ``None`` when its functions
    are the same (args, shapes or wiring changed) or it cannot be read."""
    from pytest_tlgraph.diff.inside import GENERIC_INSIDE

    if inside is None or inside.startswith((GENERIC_INSIDE, "content changed")):
        return None
    if inside.startswith("order changed"):
        return [DECOMPOSITION]
    kinds: list[str] = []
    for part in inside.split(", "):
        if _ADDED_OR_GONE.fullmatch(part):
            kind = DECOMPOSITION
        elif _SWAPPED.fullmatch(part):
            kind = RENAMED
        elif part.startswith("and ") and part.endswith(" more"):
            continue
        else:
            return None
        if kind not in kinds:
            kinds.append(kind)
    return kinds or None


def _addresses(graph: Any) -> set[str]:
    found = {node.address for node in graph.nodes.values()}
    return found | {cluster.address for cluster in graph.clusters.values()}


def _same_modules(c: Comparison) -> bool:
    """Every frame added or removed is a module the other side has too (a module whose
    one op became several is drawn as a frame now): no module came or went."""
    if not (c.clusters_added or c.clusters_removed):
        return True
    old, new = _addresses(c.old), _addresses(c.new)
    return all(c.new.clusters[k].address in old for k in c.clusters_added) and all(
        c.old.clusters[k].address in new for k in c.clusters_removed
    )


def upgrade_kinds(comparison: Comparison) -> list[str] | None:
    """The kinds of upgrade difference ``comparison`` holds (``[RENAMED]``,
    ``[DECOMPOSITION]`` or both), or ``None`` when it holds any other difference: a
    module added, removed (a module drawn as a frame now that its one op became
    several is neither), moved or retitled, a shape or argument row changed (shown or
    hidden in a box), an input or output changed, or no difference at all."""
    c = comparison
    if c.unchanged or c.moved or c.regrouped or not _same_modules(c):
        return None
    if c.unsigned or c.colour_domain is not None:
        return None
    kinds: list[str] = [RENAMED] if c.replaced else []
    insides: list[str | None] = [ch.inside for ch in c.clusters_changed]
    if any(ch.old_title != ch.new_title for ch in c.clusters_changed):
        return None
    for change in c.changed.values():
        if change.edits or change.title is not None or change.redrawn is not None:
            return None
        insides.append(change.inside)
    for inside in insides:
        found = _inside_kinds(inside)
        if found is None:
            return None
        kinds += [k for k in found if k not in kinds]
    ops_only = all(c.new.nodes[n].kind == "op" for n in c.added) and all(
        c.old.nodes[n].kind == "op" for n in c.removed
    )
    replaced_ops = all(
        c.old.nodes[a].kind == "op" and c.new.nodes[b].kind == "op" for a, b in c.replaced
    )
    if not (ops_only and replaced_ops):
        return None
    if (c.added or c.removed or c.clusters_added or c.clusters_removed) and (
        DECOMPOSITION not in kinds
    ):
        kinds.append(DECOMPOSITION)
    return sorted(kinds, key=(RENAMED, DECOMPOSITION).index) or None


def _versions_of(call: Mapping[str, Any]) -> Iterable[tuple[str, str, str]]:
    drift = call.get("drift")
    if not isinstance(drift, Mapping):
        return ()
    stored, running = drift.get("stored"), drift.get("running")
    if not isinstance(stored, Mapping) or not isinstance(running, Mapping):
        return ()
    return drifted(
        {str(k): str(v) for k, v in stored.items()}, {str(k): str(v) for k, v in running.items()}
    )


def run_upgrade_line(calls: Sequence[Mapping[str, Any]]) -> str | None:
    """One line for a whole run whose every failing call's difference is of a kind an
    upgrade causes (each call record's ``structure.upgrade``), naming the versions that
    moved when the baselines recorded them; ``None`` otherwise (or nothing failed)."""
    failed = [c for c in calls if c.get("verdict") == "failed"]
    if not failed:
        return None
    kinds: list[str] = []
    for call in failed:
        structure = call.get("structure")
        found = structure.get("upgrade") if isinstance(structure, Mapping) else None
        if not isinstance(found, list) or not found:
            return None
        kinds += [str(k) for k in found if str(k) not in kinds]
    moved: dict[str, str] = {}
    for call in failed:
        for name, old, new in _versions_of(call):
            moved.setdefault(name, f"{name} {old} -> {new}")
    n = len(failed)
    every = "the failing call" if n == 1 else f"all {n} failing calls"
    cause = (
        f"; the baselines were drawn with other versions ({', '.join(moved.values())})"
        if moved
        else ""
    )
    return (
        f"{every} changed only in ways an upgrade of torch or the model library changes "
        f"a drawing ({', '.join(kinds)}){cause}: if one was upgraded, review that before "
        "the models"
    )
