"""How the module frames (clusters) of two drawings pair and what changed in each.

:func:`pair_clusters` pairs the k-th frame of a module with the k-th (a frame that
moved pairs with its module's); :func:`cluster_changes` says, for each pair, what a
reviewer reads of it: a fold frame that repeats another number of times, a frame
around a module of another type, content that changed inside, and frames whose
content signature is on one side only.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from pytest_tlgraph.diff.alignment import frame_fold_count
from pytest_tlgraph.diff.graph import GraphModel
from pytest_tlgraph.diff.view.nodechange import signature_change, title_what

__all__ = ["ClusterChange", "cluster_changes", "pair_clusters"]


@dataclass(frozen=True, slots=True)
class ClusterChange:
    """A cluster on both sides whose title or hidden content changed."""

    id: str
    old_title: str
    new_title: str
    inside: str | None
    #: ``(stored count, received count)`` of a fold frame that repeats another number
    #: of times (its title's range follows the count).
    repeats: tuple[int, int] | None = None
    #: Whether it frames a module of another type or kind (a frame that only moved to
    #: another address is not retitled).
    retitled: bool = False

    def whats(self) -> list[str]:
        """Every change as its text, the frame left out: ``repeats x2 -> x3`` (what a
        repeat fold hides grows with its count, so that is not said again), or
        ``title A -> B``, and ``inside: ...``."""
        if self.repeats is not None:
            return [f"repeats x{self.repeats[0]} -> x{self.repeats[1]}"]
        out = [title_what(self.old_title, self.new_title)] if self.retitled else []
        if self.inside is not None:
            out.append(f"inside: {self.inside}")
        return out


def pair_clusters(
    old: GraphModel, new: GraphModel, translate: Callable[[str], str]
) -> dict[str, str]:
    """Stored cluster id -> received cluster id of each module frame on both sides: the
    k-th frame of a module (its stored address translated, so a frame that moved pairs
    with its module's) with the k-th."""
    queues: dict[str, deque[str]] = {}
    for cid, cluster in new.clusters.items():
        queues.setdefault(cluster.address, deque()).append(cid)
    out: dict[str, str] = {}
    for cid, cluster in old.clusters.items():
        queue = queues.get(translate(cluster.address))
        if queue:
            out[cid] = queue.popleft()
    return out


def cluster_changes(
    old: GraphModel, new: GraphModel, reverse: Mapping[str, str]
) -> tuple[list[ClusterChange], list[str]]:
    """For each received cluster paired with a stored one (``reverse``: received id ->
    stored id), in drawing order: the changes, and the received ids of fold frames
    signed on one side only (only a fold's frame is signed)."""
    changed: list[ClusterChange] = []
    unsigned: list[str] = []
    for cid, cluster in new.clusters.items():
        old_cid = reverse.get(cid)
        if old_cid is None:
            continue
        before = old.clusters[old_cid]
        inside = signature_change(before.signature, cluster.signature)
        counts = frame_fold_count(before), frame_fold_count(cluster)
        repeats = counts if counts[0] != counts[1] and before.type == cluster.type else None
        retitled = (before.kind, before.type) != (cluster.kind, cluster.type)
        if repeats or retitled or inside is not None:
            text = None if inside is None else inside.text
            changed.append(ClusterChange(cid, before.title, cluster.title, text, repeats, retitled))
        if min(counts) > 1 and (before.signature is None) != (cluster.signature is None):
            unsigned.append(cid)
    return changed, unsigned
