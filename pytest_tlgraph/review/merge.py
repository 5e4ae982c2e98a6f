"""Several results folders read as one run: the shards of a CI matrix.

Each shard is a results folder a CI job uploaded (``tlgraph-results/``). A call is
known by its test's node id and its snapshot's name; a call two shards recorded alike
(the same received drawing against the same stored files, the same verdict) is one
call, named with every shard that has it; one they recorded differently is kept from
each shard and flagged, so no difference is hidden and none is accepted blindly.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_tlgraph.results.artifacts import inside
from pytest_tlgraph.review.outcome import CallOutcome, call_order, read_outcomes, sorted_calls
from pytest_tlgraph.review.pending import Pending

__all__ = [
    "MergedCall",
    "Shard",
    "conflict_line",
    "merge_calls",
    "merge_pending",
    "page_record",
]


@dataclass(frozen=True, slots=True)
class Shard:
    """One results folder: its name as the user gave it, and the folder read."""

    name: str
    root: Path


@dataclass(frozen=True, slots=True)
class MergedCall:
    """One call of the merged run: its outcome from its first shard, the other shards
    that recorded it alike, and those that recorded it differently."""

    entry: Pending
    shard: str
    alike: tuple[str, ...] = ()
    conflict: tuple[str, ...] = ()

    @property
    def key(self) -> tuple[str, str]:
        """``(node id, snapshot name)``: the call across shards."""
        return self.entry.nodeid, self.entry.name

    def shards(self) -> str:
        """``shard-1`` or ``shard-1, shard-2`` (every shard that recorded it alike)."""
        return ", ".join((self.shard, *self.alike))


def conflict_line(shard: str | None, others: Sequence[str]) -> str | None:
    """The flag of a call ``shard`` recorded otherwise than the shards ``others``, or
    ``None`` when none did."""
    if not others:
        return None
    return (
        f"recorded differently by {shard} and {', '.join(others)}: the shards drew this "
        "call otherwise (another environment?); compare both before accepting either"
    )


def _merged(shards: Sequence[Shard], damaged: list[str] | None, failed: bool) -> list[MergedCall]:
    """Every call the shards recorded (``failed``: only those pending review), each once
    (see the module docstring), in the order of the first shard that has it."""
    seen: dict[tuple[str, str], list[tuple[Shard, Pending]]] = {}
    for shard in shards:
        recorded = read_outcomes(shard.root, damaged)
        for path, outcome in sorted(recorded, key=lambda item: call_order(item[1])):
            if outcome.failed or not failed:
                entry = Pending(path, outcome)
                seen.setdefault((entry.nodeid, entry.name), []).append((shard, entry))
    out: list[MergedCall] = []
    for found in seen.values():
        groups: dict[tuple[object, ...], list[tuple[Shard, Pending]]] = {}
        for shard, entry in found:
            groups.setdefault(entry.outcome.fingerprint(), []).append((shard, entry))
        names = [[s.name for s, _ in group] for group in groups.values()]
        for i, group in enumerate(groups.values()):
            first_shard, entry = group[0]
            others = tuple(n for j, g in enumerate(names) if j != i for n in g)
            alike = tuple(s.name for s, _ in group[1:])
            out.append(MergedCall(entry, first_shard.name, alike, others))
    return out


def merge_pending(shards: Sequence[Shard], damaged: list[str] | None = None) -> list[MergedCall]:
    """Every failing call of the shards, each once, in the order of the first shard
    that has it, shard by shard; a damaged record is left out, with its line in
    ``damaged`` (``outcome.read_outcomes``)."""
    return _merged(shards, damaged, failed=True)


def merge_calls(shards: Sequence[Shard], out: Path) -> list[CallOutcome]:
    """Every call outcome of the shards (the summaries'), each call once with its
    ``shard`` (every shard that recorded it alike), a call recorded otherwise once per
    outcome with ``conflict`` naming the other shards; image paths relative to ``out``."""
    found = []
    for call in _merged(shards, None, failed=False):
        outcome = _rebased(call, out)
        found.append(dataclasses.replace(outcome, shard=call.shards(), conflict=call.conflict))
    return sorted_calls(found)


def _rebased(call: MergedCall, out: Path) -> CallOutcome:
    """The call's outcome with its images relative to ``out`` (only an image inside its
    shard's folder: never ``../`` or ``/x``)."""
    root = call.entry.root
    images = {
        kind: _relative(found, out)
        for kind, rel in call.entry.outcome.images.items()
        if (found := inside(root, rel)) is not None
    }
    return dataclasses.replace(call.entry.outcome, images=images)


def page_record(call: MergedCall, out: Path, project: Path) -> CallOutcome:
    """The call's outcome for a merged ``report.html`` written in ``out``: its shard,
    its flag, its images relative to ``out``, and its results folder relative to the
    ``project`` (the accept command's ``--results``)."""
    outcome = _rebased(call, out)
    where = dataclasses.replace(
        outcome.where, results_from_rootdir=_relative(call.entry.root, project)
    )
    return dataclasses.replace(
        outcome, shard=call.shards(), conflict=call.conflict, where=where
    )


def _relative(path: Path, base: Path) -> str:
    try:
        return Path(os.path.relpath(path.resolve(), base.resolve())).as_posix()
    except ValueError:  # another drive
        return str(path.resolve())
