"""Several results folders read as one run: the shards of a CI matrix.

Each shard is a results folder a CI job uploaded (``tlgraph-results/``). A call is
known by its test's node id and its snapshot's name; a call two shards recorded alike
(the same received drawing against the same stored files, the same verdict) is one
call, named with every shard that has it; one they recorded differently is kept from
each shard and flagged, so no difference is hidden and none is accepted blindly.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_tlgraph.snapshots.results.artifacts import inside
from pytest_tlgraph.snapshots.review.pending import ACCEPT_KEY, Pending, pending_calls

__all__ = [
    "MergedCall",
    "Shard",
    "conflict_line",
    "failed_calls",
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
    """One failing call of the merged run: its record from its first shard, the other
    shards that recorded it alike, and those that recorded it differently."""

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


def _failure_print(record: Mapping[str, Any]) -> tuple[object, ...]:
    """What makes two failure records of one call the same failure."""
    info = record.get(ACCEPT_KEY)
    info = info if isinstance(info, Mapping) else {}
    keys = ("received_dot_sha256", "dot_sha256", "png_sha256", "png_compared")
    return (*(info.get(k) for k in keys), record.get("story"), record.get("title"))


def _call_print(record: Mapping[str, Any]) -> tuple[object, ...]:
    """What makes two call records (the summaries') of one call the same outcome."""
    structure = record.get("structure")
    story = structure.get("story") if isinstance(structure, Mapping) else None
    return record.get("verdict"), str(story)


def conflict_line(call: MergedCall) -> str | None:
    """The flag of a call recorded differently by two shards, or ``None``."""
    if not call.conflict:
        return None
    others = ", ".join(call.conflict)
    return (
        f"recorded differently by {call.shard} and {others}: the shards drew this call "
        "otherwise (another environment?); compare both before accepting either"
    )


def merge_pending(shards: Sequence[Shard], damaged: list[str] | None = None) -> list[MergedCall]:
    """Every failing call of the shards, each once (see the module docstring), in the
    order of the first shard that has it, shard by shard; a damaged record is left out,
    with its line in ``damaged`` (``pending.pending_calls``)."""
    seen: dict[tuple[str, str], list[tuple[Shard, Pending]]] = {}
    for shard in shards:
        for entry in pending_calls(shard.root, damaged):
            seen.setdefault((entry.nodeid, entry.name), []).append((shard, entry))
    out: list[MergedCall] = []
    for found in seen.values():
        groups: dict[tuple[object, ...], list[tuple[Shard, Pending]]] = {}
        for shard, entry in found:
            groups.setdefault(_failure_print(entry.record), []).append((shard, entry))
        names = [[s.name for s, _ in group] for group in groups.values()]
        for i, group in enumerate(groups.values()):
            first_shard, entry = group[0]
            others = tuple(n for j, g in enumerate(names) if j != i for n in g)
            alike = tuple(s.name for s, _ in group[1:])
            out.append(MergedCall(entry, first_shard.name, alike, others))
    return out


def merge_calls(shards: Sequence[Shard], out: Path) -> list[dict[str, Any]]:
    """The summaries' call records of every shard, each call once with its ``shard``
    (every shard that recorded it alike), a call recorded otherwise once per outcome
    with ``conflict`` naming the other shards; artifact paths relative to ``out``."""
    from pytest_tlgraph.snapshots.review.summary import read_calls

    seen: dict[tuple[str, str], list[tuple[str, dict[str, Any]]]] = {}
    for shard in shards:
        for call in read_calls(shard.root):
            key = (str(call.get("nodeid")), str(call.get("name")))
            artifacts = call.get("artifacts")
            if isinstance(artifacts, Mapping):
                call["artifacts"] = {
                    str(k): _relative(shard.root / str(v), out) for k, v in artifacts.items()
                }
            seen.setdefault(key, []).append((shard.name, call))
    merged: list[dict[str, Any]] = []
    for found in seen.values():
        groups: dict[tuple[object, ...], list[tuple[str, dict[str, Any]]]] = {}
        for name, call in found:
            groups.setdefault(_call_print(call), []).append((name, call))
        every = [[n for n, _ in group] for group in groups.values()]
        for i, group in enumerate(groups.values()):
            call = dict(group[0][1])
            call["shard"] = ", ".join(n for n, _ in group)
            others = [n for j, names in enumerate(every) if j != i for n in names]
            if others:
                call["conflict"] = ", ".join(others)
            merged.append(call)
    return sorted(merged, key=lambda r: (str(r.get("nodeid")), str(r.get("name"))))


def page_record(call: MergedCall, out: Path, project: Path) -> dict[str, Any]:
    """The call's record for a merged ``report.html`` written in ``out``: its shard,
    its flag, its images relative to ``out``, and its results folder relative to the
    ``project`` (the accept command's ``--results``)."""
    record = dict(call.entry.record)
    record["shard"] = call.shards()
    flag = conflict_line(call)
    if flag is not None:
        record["conflict"] = flag
    images = record.get("images")
    if isinstance(images, Mapping):
        record["images"] = {  # only an image inside its shard's folder: never ../ or /x
            str(kind): _relative(found, out)
            for kind, rel in images.items()
            if (found := inside(call.entry.root, rel)) is not None
        }
    record["results_from_rootdir"] = _relative(call.entry.root, project)
    return record


def _relative(path: Path, base: Path) -> str:
    try:
        return Path(os.path.relpath(path.resolve(), base.resolve())).as_posix()
    except ValueError:  # another drive
        return str(path.resolve())


def failed_calls(calls: Sequence[MergedCall], out: Path) -> list[dict[str, Any]]:
    """Call records for the summaries made from the failure records alone (shards run
    without ``--tlgraph-summary``): every failing call, its story as the headline."""
    from pytest_tlgraph.snapshots.review.pending import story

    found = []
    for call in calls:
        record = call.entry.record
        images = record.get("images")
        artifacts = (
            {
                str(k): _relative(place, out)
                for k, v in images.items()
                if (place := inside(call.entry.root, v)) is not None
            }
            if isinstance(images, Mapping)
            else {}
        )
        row: dict[str, Any] = {
            "nodeid": call.entry.nodeid,
            "name": call.entry.name,
            "verdict": "failed",
            "structure": {"headline": story(record), "upgrade": record.get("upgrade")},
            "drift": record.get("drift"),
            "artifacts": artifacts,
            "shard": call.shards(),
        }
        if call.conflict:
            row["conflict"] = ", ".join(call.conflict)
        found.append(row)
    return found
