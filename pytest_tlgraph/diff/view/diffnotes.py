"""The story beside what it names: each typed edit's line on the node or frame of the
diff drawing that holds it.

:func:`edit_notes` places every edit of a comparison where the view draws its address
(the fold, box or op that holds it, or the frame of a module drawn open; the stored
side's holder for what only the stored side has, unless the received side draws that
very module) and writes the edits of each place as
lines with :func:`pytest_tlgraph.diff.text.edit_lines`, the one module that turns
typed edits into text: the drawing shows them under the node's rows or the frame's
caption, so an amber node whose rows look the same still says what changed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from pytest_tlgraph.diff.edits import Edit
from pytest_tlgraph.diff.graph import GraphModel
from pytest_tlgraph.diff.text import edit_lines, holder, view_pair
from pytest_tlgraph.diff.view.comparison import Comparison
from pytest_tlgraph.diff.view.diffgraph import DiffGraph

__all__ = ["MAX_NOTES", "edit_notes"]

#: The most story lines one node or frame shows (then ``(and 3 more)``).
MAX_NOTES: Final = 2


def edit_notes(comparison: Comparison, graph: DiffGraph) -> tuple[dict[str, list[str]], bool]:
    """Drawn node or frame id -> the story lines of the edits it holds (at most
    :data:`MAX_NOTES`, then how many more), and whether every edit found its place."""
    frames = (_frames_by_address(comparison.new), _frames_by_address(comparison.old))
    places: dict[str, list[Edit]] = {}
    for edit in comparison.edits:
        place = _received_place(comparison, graph, edit, frames[False])
        if place is None:
            place = _place(comparison, graph, edit, frames[edit.removed_side])
        if place is not None:
            places.setdefault(place, []).append(edit)
    view = view_pair(comparison.old, comparison.new, comparison.pairing.alignment)
    notes = {place: _capped(edit_lines(edits, view)) for place, edits in places.items()}
    return notes, sum(map(len, places.values())) == len(comparison.edits)


def _capped(lines: Sequence[str]) -> list[str]:
    """``lines``, the first :data:`MAX_NOTES` of them and how many more."""
    if len(lines) <= MAX_NOTES:
        return list(lines)
    return [*lines[:MAX_NOTES], f"(and {len(lines) - MAX_NOTES} more)"]


def _received_place(
    comparison: Comparison, graph: DiffGraph, edit: Edit, frames: Mapping[str, str]
) -> str | None:
    """For an edit of what only the stored side has (a skip removed, an op removed):
    the received side's box or frame of the very module it sits in, when the diff draws
    it, so the line stands where the received drawing has the module (not on a stored
    fold that stood for it); ``None`` otherwise."""
    if not edit.removed_side:
        return None
    held = holder(comparison.new, edit.address)
    if held.kind == "box" and held.address == edit.address and held.id in graph.status:
        return held.id
    frame = frames.get(edit.address)
    return frame if frame is not None and frame in graph.clusters else None


def _place(
    comparison: Comparison, graph: DiffGraph, edit: Edit, frames: Mapping[str, str]
) -> str | None:
    """The drawn node or frame holding ``edit`` (its union id), or ``None`` when the
    diff draws no such place; ``frames``: its side's module frames by address."""
    side = comparison.old if edit.removed_side else comparison.new
    held = holder(side, edit.address)
    drawn = str(getattr(edit, "id", "") or "")
    if held.id in side.clusters:
        return _drawn_frame(comparison, graph, edit.removed_side, held.id)
    for node_id in (held.id, drawn):
        if node_id and node_id in side.nodes:
            union = comparison.union_id(node_id) if edit.removed_side else node_id
            return union if union in graph.status else None
    frame = frames.get(edit.address)
    return None if frame is None else _drawn_frame(comparison, graph, edit.removed_side, frame)


def _frames_by_address(side: GraphModel) -> dict[str, str]:
    """The frame ``side`` draws around each module, by the module's address (the
    first, for a module called more than once)."""
    out: dict[str, str] = {}
    for cid, cluster in side.clusters.items():
        if cluster.kind == "module":
            out.setdefault(cluster.address, cid)
    return out


def _drawn_frame(comparison: Comparison, graph: DiffGraph, stored: bool, cid: str) -> str | None:
    """A side's frame by its union id, when the diff draws it."""
    union = comparison.cluster_union_id(cid) if stored else cid
    return union if union in graph.clusters else None
