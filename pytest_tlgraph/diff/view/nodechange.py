"""How one paired node changed: the comparison's rules at one node.

A node paired across the two drawings (:mod:`pytest_tlgraph.diff.pairing`) changed in
one of three ways: it repeats another number of times (a box on one side, a fold on
the other, or two folds), it is drawn as another kind (a box on one side, its op on
the other), or its rows, title and hidden content differ. :func:`node_change` applies
those rules and returns one :class:`NodeChange`; each rule is a function of its own
here, and every value it weighs is typed (:class:`.rows.RowEdit`,
:class:`.calls.HiddenEdit`, :class:`pytest_tlgraph.diff.inside.InsideChange`): no
line is read back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from pytest_tlgraph.diff.alignment import fold_count, frame_fold_count
from pytest_tlgraph.diff.graph import GraphModel, GraphNode
from pytest_tlgraph.diff.inside import InsideChange, inside_diff
from pytest_tlgraph.diff.view.calls import (
    call_edits,
    inside_edits,
    member_edits,
    ordered_inputs,
    reorder_edit,
)
from pytest_tlgraph.diff.view.rows import RowEdit, row_edits
from pytest_tlgraph.draw.collapse.signature import read_signature

__all__ = ["NodeChange", "node_change", "signature_change", "title_what"]

_KIND_NAMES: Final = MappingProxyType(
    {"op": "its op", "box": "a box", "fold": "a fold", "segment": "a segment",
     "input": "an input", "output": "an output"}
)  # fmt: skip


def title_what(old: str, new: str) -> str:
    """``title <old> -> <new>``."""
    return f"title {old} -> {new}"


@dataclass(frozen=True, slots=True)
class NodeChange:
    """How one paired node changed: its row edits, its title (when that is not just a
    renumbered id or a moved address) and what changed inside it (a box, fold or
    segment whose content signature moved)."""

    old_id: str
    new_id: str
    edits: tuple[RowEdit, ...] = ()
    title: tuple[str, str] | None = None
    inside: str | None = None
    #: ``(stored kind, received kind)`` of a module drawn otherwise (a box, now its op).
    redrawn: tuple[str, str] | None = None
    #: ``(stored count, received count)`` of a box that became a fold, or the other way.
    repeats: tuple[int, int] | None = None

    def whats(self) -> list[str]:
        """Every change as its text, the node left out."""
        if self.repeats is not None:
            return [f"repeats x{self.repeats[0]} -> x{self.repeats[1]}"] + [
                edit.what for edit in self.edits
            ]
        if self.redrawn is not None:
            return [f"drawn as {_KIND_NAMES[self.redrawn[1]]} (was {_KIND_NAMES[self.redrawn[0]]})"]
        out = [] if self.title is None else [title_what(*self.title)]
        out += [edit.what for edit in self.edits]
        if self.inside is not None:
            out.append(f"inside: {self.inside}")
        return out

    @property
    def count_or_content_only(self) -> bool:
        """True when all it says is a new repetition count or what changed inside: a
        fold drawn in parts says both on its split's line."""
        if self.redrawn is not None or self.edits:
            return False
        return self.repeats is not None or (self.title is None and self.inside is not None)


def node_change(
    was: GraphNode, node: GraphNode, old: GraphModel, new: GraphModel,
    union: Mapping[str, str], *, replaced: bool,
) -> NodeChange:  # fmt: skip
    """How the stored node ``was`` changed into its received partner ``node``
    (``union``: stored id -> union id; ``replaced``: the pairing paired them as one
    function replacing another). Its :meth:`NodeChange.whats` is empty when nothing
    the view shows changed."""
    if {was.kind, node.kind} <= {"box", "fold"} and was.func == node.func:
        # One call of a module on one side, a fold of its repetitions on the other.
        counts = fold_count(was), fold_count(node)
        if counts[0] != counts[1]:
            # What a fold hides grows with its count: its rows say the rest.
            edits = _node_edits(was, node, old, new, union)
            return NodeChange(was.id, node.id, edits, repeats=counts)
    if was.kind != node.kind:  # a module drawn as a box on one side, as ops on the other
        return NodeChange(was.id, node.id, redrawn=(was.kind, node.kind))
    edits = _node_edits(was, node, old, new, union)
    inside = _inside_said(was, node, old, new, edits)
    title = _title_change(was, node)
    if replaced or ((edits or title) and inside is not None and inside.generic):
        inside = None  # the replacement or the rows say it; the digest adds nothing
    return NodeChange(was.id, node.id, edits, title, None if inside is None else inside.text)


def signature_change(old: str | None, new: str | None) -> InsideChange | None:
    """What changed in the hidden ops of two content signatures (``comment``
    attributes), ``None`` when nothing did or a side has none."""
    if old is None or new is None:
        return None
    return inside_diff(read_signature(old), read_signature(new))


def _inside_said(
    was: GraphNode, node: GraphNode, old: GraphModel, new: GraphModel,
    edits: Sequence[RowEdit],
) -> InsideChange | None:  # fmt: skip
    """What changed inside a paired node, named as exactly as the drawings allow: the
    functions its signature lists, else its hidden ops' edits and calls' arguments
    (the generic words when none of those says more)."""
    inside = signature_change(was.signature, node.signature)
    if inside is None or not inside.generic:
        return inside
    if _fold_frames(old, was.id) != _fold_frames(new, node.id):
        # A box in a fold's frame hashes every repetition: with another count its
        # digest moves though its functions and rows did not (the fold says it).
        return None
    named = _hidden_named(was, node, edits)
    return InsideChange(", ".join(named)) if named else inside


def _hidden_named(was: GraphNode, node: GraphNode, edits: Sequence[RowEdit]) -> list[str]:
    """What changed in the hidden ops, in the full view's words (their shapes, args
    and params), then their calls' arguments not said by those; each left out when a
    row edit of the node says it already."""
    said = {e.what for e in edits}
    # An argument the args row names with its values (``eps 1e-05 (default) ->
    # 1e-06``) is said there.
    valued = _valued_args(edits)
    members = [w for w in member_edits(was.ops, node.ops) if w.said_as not in said]
    told = {w.topic for w in members if w.topic is not None}
    calls = [
        w
        for w in inside_edits(was.inside_calls, node.inside_calls)
        if w.said_as not in said and w.arg not in valued and w.topic not in told
    ]
    return [w.text for w in (*members, *calls)]


def _valued_args(edits: Sequence[RowEdit]) -> set[str]:
    """The args an args row edit names with their values (``eps 1e-05 (default) ->
    1e-06``), not the ones it only says are now shown or no longer shown."""
    return {e.arg for e in edits if e.kind == "args" and not e.shown_only and e.arg is not None}


def _node_edits(
    was: GraphNode, node: GraphNode, old: GraphModel, new: GraphModel, union: Mapping[str, str]
) -> tuple[RowEdit, ...]:
    """The row edits of one paired node, with its call's argument changes (an
    argument the label shows reads once) and its inputs reordered, if they were."""
    edits = row_edits(was.body, node.body, was.defaults, node.defaults)
    calls = call_edits(was.call, node.call)
    if calls:
        edits = _with_calls(edits, calls)
    reorder = _reorder(was, node, old, new, union)
    if reorder is not None:
        edits.append(reorder)
    return tuple(edits)


def _with_calls(edits: list[RowEdit], calls: Sequence[RowEdit]) -> list[RowEdit]:
    """Row edits and call edits, each argument change once: a row with both values
    (``eps 1e-05 (default) -> 1e-06``) over the call's, the call's over a row that
    only says the argument is now shown."""
    names = {c.arg for c in calls if c.arg is not None}
    valued = _valued_args(edits)
    kept = [
        e
        for e in edits
        if e.kind != "operand" and not (e.kind == "args" and e.shown_only and e.arg in names)
    ]
    written = {e.what for e in kept}
    return kept + [c for c in calls if c.what not in written and c.arg not in valued]


def _reorder(
    was: GraphNode, node: GraphNode, old: GraphModel, new: GraphModel, union: Mapping[str, str]
) -> RowEdit | None:
    """``inputs reordered (...) -> (...)`` when the node's inputs come in another
    order, each named as the received side names it."""
    before = ordered_inputs(old.preds(was.id), dict(old.positions.get(was.id, {})))
    after = ordered_inputs(new.preds(node.id), dict(new.positions.get(node.id, {})))
    if before is not None:
        before = [union.get(p, p) for p in before]
    return reorder_edit(
        None if before is None else [_called(new, p) for p in before],
        None if after is None else [_called(new, p) for p in after],
    )


def _fold_frames(graph: GraphModel, node_id: str) -> tuple[int, ...]:
    """The counts of the fold frames holding ``node_id``, outermost first."""
    counts = (frame_fold_count(graph.clusters[c]) for c in graph.cluster_path(node_id))
    return tuple(n for n in counts if n > 1)


def _called(graph: GraphModel, node_id: str) -> str:
    """An input as a reorder line names it: an op by its id, a box or fold by its
    address and type (``@down1.conv (DoubleConv)``)."""
    node = graph.nodes.get(node_id)
    return node_id if node is None or node.kind in ("op", "input", "output") else node.name


def _title_change(old: GraphNode, new: GraphNode) -> tuple[str, str] | None:
    """The title change a reviewer should read: not an op's renumbered id, nor a box's
    address written relative to another cluster."""
    if old.title == new.title:
        return None
    if old.kind == "op" and old.title == old.id and new.title == new.id:
        return None
    if old.kind == new.kind == "box":
        return None  # its address and type are what pairing and replacing compare
    if old.kind == new.kind == "fold":
        before, after = old.name, new.name
        return None if before == after else (before, after)
    return old.title, new.title
