"""The comparison of a stored drawing with a received one, as one value.

:func:`compare` reads both sides once (:func:`.graph.read_graph`), pairs their nodes
once (:func:`.pairing.pair_graphs`) and works out everything a view shows: nodes
added, removed and replaced, the row edits and hidden-content changes of each paired
node, nodes that only moved (another module address, same content), edges added and
removed, clusters added, removed and changed, nodes recoloured by a moved colour
domain, and signatures present on one side only. The terminal story, the diff drawing,
``report.html``, ``summary.json`` and ``tlgraph diff`` all read the
:class:`Comparison`, so their stories agree.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

from pytest_tlgraph.diff.alignment import fold_count, frame_fold_count
from pytest_tlgraph.diff.edits import Edit
from pytest_tlgraph.diff.engine import model_edits
from pytest_tlgraph.diff.graph import GraphModel, GraphNode, read_graph
from pytest_tlgraph.diff.inside import GENERIC_INSIDE, inside_change
from pytest_tlgraph.diff.pairing import Pairing, pair_graphs
from pytest_tlgraph.diff.text import holder
from pytest_tlgraph.draw.collapse.signature import read_signature
from pytest_tlgraph.snapshots.compare.calls import (
    call_edits,
    inside_edits,
    member_edits,
    ordered_inputs,
    reorder_edit,
)
from pytest_tlgraph.snapshots.compare.foldsplit import FoldSplit, fold_splits
from pytest_tlgraph.snapshots.compare.rows import RowEdit, row_edits

__all__ = [
    "ClusterChange",
    "Comparison",
    "NodeChange",
    "Regrouped",
    "compare",
    "compare_graphs",
    "pair_clusters",
    "union_order",
]

_BAR: Final = " [bar] "
_OLD_MARK: Final = " (old)"
_KIND_NAMES: Final = MappingProxyType(
    {"op": "its op", "box": "a box", "fold": "a fold", "segment": "a segment",
     "input": "an input", "output": "an output"}
)  # fmt: skip


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
        out = [] if self.title is None else [_title_what(*self.title)]
        out += [edit.what for edit in self.edits]
        repeats = bool(out) and out[0].startswith("repeats")
        if self.inside is not None and not repeats:  # a fold's hidden ops grow with its count
            out.append(f"inside: {self.inside}")
        return out


def _title_what(old: str, new: str) -> str:
    """``title <old> -> <new>``."""
    return f"title {old} -> {new}"


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
        out = [_title_what(self.old_title, self.new_title)] if self.retitled else []
        if self.inside is not None:
            out.append(f"inside: {self.inside}")
        return out


@dataclass(frozen=True, slots=True)
class Regrouped:
    """A module drawn as one box (or fold) on one side and opened into its frame of
    nodes on the other (``collapse="auto"`` spent its budget elsewhere)."""

    #: The box's or fold's name (:attr:`.graph.GraphNode.name`: its full address).
    title: str
    #: True: one box in the received drawing (the stored one drew its frame).
    boxed: bool
    #: The box's id, and the ids of the frame's nodes (each on its own side).
    box: str
    frame: tuple[str, ...]


def _regrouped(
    boxes_from: GraphModel, box_ids: Sequence[str], frames_from: GraphModel,
    frame_ids: set[str], *, boxed: bool,
) -> list[Regrouped]:  # fmt: skip
    """Boxes only one side has whose module the other side draws as a frame of nodes
    only that side has."""
    by_address: dict[str, list[str]] = {}
    for cid, cluster in frames_from.clusters.items():
        by_address.setdefault(cluster.address, []).append(cid)
    out = []
    for box_id in box_ids:
        node = boxes_from.nodes[box_id]
        if node.kind not in ("box", "fold"):
            continue
        for cid in by_address.get(node.address, ()):
            members = frames_from.members(cid)
            if members and all(m in frame_ids for m in members):
                out.append(Regrouped(node.name, boxed, box_id, tuple(members)))
                break
    return out


@dataclass(frozen=True, slots=True)
class Comparison:
    """Everything that differs between two drawings (see the module docstring). Node
    ids are the received side's, except those of removed nodes, which keep the stored
    id (:meth:`union_id` names them apart when a received node has that id)."""

    old: GraphModel
    new: GraphModel
    pairing: Pairing
    added: tuple[str, ...]
    removed: tuple[str, ...]
    #: ``(stored id, received id)`` of each node that computes another function in the
    #: same place (``relu_1 -> silu_1``).
    replaced: tuple[tuple[str, str], ...]
    #: Received id -> its change, for each paired node that changed.
    changed: Mapping[str, NodeChange]
    #: ``(received id, stored address, received address)`` of each node that moved to
    #: another module address and is otherwise the same (a layer inserted before it).
    moved: tuple[tuple[str, str, str], ...]
    #: ``(stored id, received id)`` of each paired node whose id changed.
    renumbered: tuple[tuple[str, str], ...]
    #: Edges in union ids (:meth:`union_id`), each once, in drawing order.
    edges_added: tuple[tuple[str, str], ...]
    edges_removed: tuple[tuple[str, str], ...]
    clusters_added: tuple[str, ...]
    clusters_removed: tuple[str, ...]
    clusters_changed: tuple[ClusterChange, ...]
    #: Received ids of nodes whose fill alone changed (the colour domain moved).
    recoloured: tuple[str, ...]
    #: ``(channel, stored range, received range)`` when a colour bar's domain moved.
    colour_domain: tuple[str, str, str] | None
    #: Paired nodes and clusters with a content signature on one side only.
    unsigned: tuple[str, ...]
    #: Modules boxed on one side and drawn open on the other (their nodes are also in
    #: ``added`` and ``removed``: the drawing shows both sides).
    regrouped: tuple[Regrouped, ...] = ()
    #: Stored folds the received drawing breaks into parts (:mod:`.foldsplit`).
    splits: tuple[FoldSplit, ...] = ()
    #: Received id of each node of a part that now stands apart -> what changed in the
    #: part, on the node that stands for it (``None``: nothing, or told elsewhere).
    split_of: Mapping[str, str | None] = field(default_factory=dict)
    #: What changed in the model, as typed edits (:mod:`pytest_tlgraph.diff.engine`):
    #: both drawings compared at op level, whatever their view.
    edits: tuple[Edit, ...] = ()
    _union: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)
    _cluster_union: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)

    def union_id(self, old_id: str) -> str:
        """A stored node's id in the union of both sides: its received partner's id,
        its own, or ``"<id> (old)"`` when a received node has its id."""
        return self._union.get(old_id, old_id)

    def cluster_union_id(self, old_id: str) -> str:
        """A stored cluster's id in the union of both sides, as :meth:`union_id` names
        nodes: its received partner's (the same module, at whatever address), its own,
        or ``"<id> (old)"``."""
        return self._cluster_union.get(old_id, old_id)

    @property
    def unchanged(self) -> bool:
        """True when nodes, edges, label rows and clusters are all the same."""
        return not (
            self.added or self.removed or self.replaced or self.changed or self.moved
            or self.renumbered or self.edges_added or self.edges_removed
            or self.clusters_added or self.clusters_removed or self.clusters_changed
            or self.unsigned or self.splits
        )  # fmt: skip

    @property
    def node_statuses(self) -> dict[str, str]:
        """Union id -> ``added``, ``removed``, ``replaced``, ``changed`` or
        ``unchanged``, received order first, each removed node after its nearest
        stored predecessor."""
        replaced = {new for _, new in self.replaced}
        statuses = {}
        for node_id in self.new.nodes:
            if node_id in self.split_of:
                statuses[node_id] = "unchanged" if self.split_of[node_id] is None else "changed"
            elif node_id in replaced:
                statuses[node_id] = "replaced"
            elif node_id in self.changed:
                statuses[node_id] = "changed"
            else:
                statuses[node_id] = "unchanged"
        added = set(self.added)
        for node_id in added:
            statuses[node_id] = "added"
        for node_id in self._edit_marks():  # what an edit falls on, though drawn the same
            if statuses.get(node_id) == "unchanged":
                statuses[node_id] = "changed"
        order = union_order(list(self.new.nodes), [self.union_id(n) for n in self.old.nodes])
        removed = {self.union_id(n) for n in self.removed}
        return {n: ("removed" if n in removed else statuses[n]) for n in order}


    @staticmethod
    def _marked(
        graph: GraphModel, ids: set[str], at: set[str], open_at: set[str]
    ) -> list[str]:
        """``ids``, the nodes drawn exactly at an address of ``at`` and those drawn at
        or below one of ``open_at``: one pass over the nodes, each address's prefixes
        looked up once."""
        if not (at or open_at):
            return [n for n in ids if n in graph.nodes]
        out: list[str] = []
        for node_id, node in graph.nodes.items():
            if node_id in ids or node.address in at or node.address in open_at:
                out.append(node_id)
                continue
            cut = node.address.find(".")
            while cut != -1 and node.address[:cut] not in open_at:
                cut = node.address.find(".", cut + 1)
            if cut != -1:
                out.append(node_id)
        return out

    def _edit_marks(self) -> set[str]:
        """Union ids of the nodes that hold a typed edit in this view (the fold, box
        or op it falls on): a view that draws them the same still marks them.

        Linear in the edits and the nodes: each (side, address) is placed once, the
        clusters' members are read from the graph's index, and the nodes of modules
        drawn open are found in one pass over each side's nodes."""
        ids: dict[bool, set[str]] = {False: set(), True: set()}
        at: dict[bool, set[str]] = {False: set(), True: set()}
        open_at: dict[bool, set[str]] = {False: set(), True: set()}
        seen: set[tuple[bool, str, str]] = set()
        for edit in self.edits:
            drawn = str(getattr(edit, "id", ""))
            key = (edit.removed_side, edit.address, drawn)
            if key in seen:
                continue
            seen.add(key)
            graph = self.old if edit.removed_side else self.new
            held = holder(graph, edit.address)
            if held.id in graph.clusters:
                ids[edit.removed_side].update(graph.members(held.id))
            elif held.id in graph.nodes:
                ids[edit.removed_side].add(held.id)
            elif drawn in graph.nodes:  # an op drawn on its own: that node, not its module
                ids[edit.removed_side].add(drawn)
            else:  # a module drawn open (all of it), or the ops drawn at the address
                (open_at if held.kind == "module" else at)[edit.removed_side].add(
                    edit.address
                )
        marks = set(self._marked(self.new, ids[False], at[False], open_at[False]))
        old = self._marked(self.old, ids[True], at[True], open_at[True])
        marks.update(self.union_id(n) for n in old)
        return marks


def union_order(new: Sequence[str], old: Sequence[str]) -> list[str]:
    """``new`` in order, each item only in ``old`` placed after its nearest old
    predecessor (at the front when it has none).

    Linear: each item only in ``old`` is filed under its predecessor, and the result is
    walked once, depth first, with a stack (no search of the list built so far, and no
    recursion however long a chain of old items is). Of two items filed under one
    predecessor the later one comes first, as inserting each right after it would do.
    """
    present = set(new)
    root = object()  # the predecessor of the first old item
    after: dict[object, list[str]] = {}
    previous: object = root
    for item in old:
        if item not in present:
            after.setdefault(previous, []).append(item)
            present.add(item)
        previous = item
    if not after:
        return list(new)
    out: list[str] = []
    stack: list[str] = [*reversed(new), *after.get(root, ())]
    while stack:
        item = stack.pop()
        out.append(item)
        stack.extend(after.get(item, ()))
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


_SHOWS: Final = re.compile(r"(?:now|no longer) shows (\w+)=")


def _valued_args(edits: Sequence[RowEdit]) -> set[str]:
    """The args an args row edit names with their values (``eps 1e-05 (default) ->
    1e-06``), not the ones it only says are now shown or no longer shown."""
    return {e.what.split(" ", 1)[0] for e in edits if e.kind == "args" and not _SHOWS.match(e.what)}


def _node_edits(
    was: GraphNode, node: GraphNode, old: GraphModel, new: GraphModel, union: Mapping[str, str]
) -> tuple[RowEdit, ...]:
    """The row edits of one paired node, with its call's argument changes (an
    argument the label shows reads once) and its inputs reordered, if they were."""
    edits = row_edits(was.body, node.body, was.defaults, node.defaults)
    calls = call_edits(was.call, node.call)
    if calls:
        names = {c.what.split(" ", 1)[0] for c in calls}
        # Each argument change reads once: a row with both values (``eps 1e-05
        # (default) -> 1e-06``) over the call's, the call's over a row that only says
        # the argument is now shown.
        valued = _valued_args(edits)
        edits = [
            e
            for e in edits
            if e.kind != "operand"
            and not (e.kind == "args" and (m := _SHOWS.match(e.what)) and m[1] in names)
        ]
        written = {e.what for e in edits}
        edits += [
            c for c in calls if c.what not in written and c.what.split(" ", 1)[0] not in valued
        ]
    before = ordered_inputs(old.preds(was.id), dict(old.positions.get(was.id, {})))
    after = ordered_inputs(new.preds(node.id), dict(new.positions.get(node.id, {})))
    if before is not None:
        before = [union.get(p, p) for p in before]
    reorder = reorder_edit(
        None if before is None else [_called(new, p) for p in before],
        None if after is None else [_called(new, p) for p in after],
    )
    if reorder is not None:
        edits.append(reorder)
    return tuple(edits)


def _fold_frames(graph: GraphModel, node_id: str) -> tuple[int, ...]:
    """The counts of the fold frames holding ``node_id``, outermost first."""
    counts = (frame_fold_count(graph.clusters[c]) for c in graph.cluster_path(node_id))
    return tuple(n for n in counts if n > 1)


def _called(graph: GraphModel, node_id: str) -> str:
    """An input as a reorder line names it: an op by its id, a box or fold by its
    address and type (``@down1.conv (DoubleConv)``)."""
    node = graph.nodes.get(node_id)
    return node_id if node is None or node.kind in ("op", "input", "output") else node.name


def _inside(old: str | None, new: str | None) -> str | None:
    if old is None or new is None:
        return None
    return inside_change(read_signature(old), read_signature(new))


def _key_bars(rows: Sequence[str]) -> dict[str, tuple[str, str]]:
    bars: dict[str, tuple[str, str]] = {}
    for row in rows:
        if _BAR in row:
            left, _, high = row.partition(_BAR)
            name, _, low = left.rpartition(": ")
            bars[name] = (low, high)
    return bars


def _colour_domain(old: GraphModel, new: GraphModel) -> tuple[str, str, str] | None:
    before, after = _key_bars(old.key_rows), _key_bars(new.key_rows)
    for name, (lo1, hi1) in after.items():
        if name in before and before[name] != (lo1, hi1):
            lo0, hi0 = before[name]
            return name, f"{lo0} .. {hi0}", f"{lo1} .. {hi1}"
    return None


def compare(old_dot: str, new_dot: str) -> Comparison:
    """Compare a stored drawing (``old_dot``) with a received one. Raises
    :class:`.dotparse.DotParseError` naming the side and line of a text that is not a
    tlgraph drawing."""
    return compare_graphs(read_graph(old_dot, "old"), read_graph(new_dot, "new"))


def compare_graphs(old: GraphModel, new: GraphModel) -> Comparison:
    """:func:`compare` of two drawings already read."""
    pairing = pair_graphs(old, new)
    pairs = pairing.pairs
    taken = set(pairs.values())
    union = dict(pairs)
    for node_id in old.nodes:
        if node_id not in pairs:
            union[node_id] = node_id + _OLD_MARK if node_id in new.nodes else node_id
    changed: dict[str, NodeChange] = {}
    moved: list[tuple[str, str, str]] = []
    recoloured: list[str] = []
    unsigned: list[str] = []
    replaced = []
    reverse = pairing.reverse
    for new_id, node in new.nodes.items():
        old_id = reverse.get(new_id)
        if old_id is None:
            continue
        was = old.nodes[old_id]
        if old_id in pairing.replaced:
            replaced.append((old_id, new_id))
        if {was.kind, node.kind} <= {"box", "fold"} and was.func == node.func:
            # One call of a module on one side, a fold of its repetitions on the other.
            counts = fold_count(was), fold_count(node)
            if counts[0] != counts[1]:
                # What a fold hides grows with its count: its rows say the rest.
                edits = _node_edits(was, node, old, new, union)
                changed[new_id] = NodeChange(old_id, new_id, edits, repeats=counts)
                continue
        if was.kind != node.kind:  # a module drawn as a box on one side, as ops on the other
            changed[new_id] = NodeChange(old_id, new_id, redrawn=(was.kind, node.kind))
            continue
        edits = _node_edits(was, node, old, new, union)
        inside = _inside(was.signature, node.signature)
        if (
            inside is not None
            and inside.startswith(GENERIC_INSIDE)
            and _fold_frames(old, old_id) != _fold_frames(new, new_id)
        ):
            # A box in a fold's frame hashes every repetition: with another count its
            # digest moves though its functions and rows did not (the fold says it).
            inside = None
        if inside is not None and inside.startswith(GENERIC_INSIDE):
            # Name the argument that changed inside, unless a row says it already.
            said = {e.what for e in edits}
            # An argument the args row names with its values (``eps 1e-05 (default) ->
            # 1e-06``) is said there.
            valued = _valued_args(edits)
            # What changed in the hidden ops, in the full view's words (their shapes,
            # args and params), then their calls' arguments not said by those.
            members = [
                w for w in member_edits(was.ops, node.ops) if w.partition(" ")[2] not in said
            ]
            told = {" ".join(w.split(" ", 2)[:2]) for w in members}
            named = members + [
                what
                for what in inside_edits(was.inside_calls, node.inside_calls)
                if what.partition(" ")[2] not in said
                and what.partition(" ")[2].split(" ", 1)[0] not in valued
                and " ".join(what.split(" ", 2)[:2]) not in told
            ]
            if named:
                inside = ", ".join(named)
        title = _title_change(was, node)
        if old_id in pairing.replaced or (
            (edits or title) and inside is not None and inside.startswith(GENERIC_INSIDE)
        ):
            inside = None  # the replacement or the rows say it; the digest adds nothing
        change = NodeChange(old_id, new_id, edits, title, inside)
        if change.whats():
            changed[new_id] = change
        elif was.address != node.address:
            moved.append((new_id, was.address, node.address))
        elif was.label == node.label and was.signature == node.signature and was.fill != node.fill:
            recoloured.append(new_id)
        if (was.signature is None) != (node.signature is None):
            unsigned.append(new_id)
    old_edges = list(dict.fromkeys((union[a], union[b]) for a, b in old.edges))
    old_set, new_set = set(old_edges), set(new.edges)
    cluster_pairs = pair_clusters(old, new, pairing.alignment.translate)
    cluster_reverse = {b: a for a, b in cluster_pairs.items()}
    cluster_union = dict(cluster_pairs)
    for cid in old.clusters:
        if cid not in cluster_pairs:
            cluster_union[cid] = cid + _OLD_MARK if cid in new.clusters else cid
    clusters_changed = []
    for cid, cluster in new.clusters.items():
        old_cid = cluster_reverse.get(cid)
        if old_cid is None:
            continue
        before = old.clusters[old_cid]
        inside = _inside(before.signature, cluster.signature)
        counts = frame_fold_count(before), frame_fold_count(cluster)
        repeats = counts if counts[0] != counts[1] and before.type == cluster.type else None
        retitled = (before.kind, before.type) != (cluster.kind, cluster.type)
        if repeats or retitled or inside is not None:
            clusters_changed.append(
                ClusterChange(cid, before.title, cluster.title, inside, repeats, retitled)
            )
        folds = frame_fold_count(before) > 1, frame_fold_count(cluster) > 1
        if all(folds) and (before.signature is None) != (cluster.signature is None):
            unsigned.append(cid)  # only a fold's frame is signed
    added = tuple(n for n in new.nodes if n not in taken)
    removed = tuple(n for n in old.nodes if n not in pairs)
    splits = fold_splits(old, new, pairs, cluster_pairs, pairing.alignment, added)
    split_of: dict[str, str | None] = {}
    split_frames: set[str] = set()
    for split in splits:
        changes = dict(split.changes)
        for node_id in split.members:
            name = new.nodes[node_id].name
            split_of[node_id] = split.marks.get(node_id, changes.get(name))
        split_frames |= split.frames
        shrunk = changed.get(split.new_id)
        if shrunk is not None and all(w.startswith(("repeats", "inside")) for w in shrunk.whats()):
            del changed[split.new_id]  # the split's line says it
    # A fold's frame drawn in parts: the split's line tells its title and content.
    clusters_changed = [c for c in clusters_changed if all(c.id != s.new_id for s in splits)]
    for split in splits:  # a fold node's partner: drawn with its new count
        if split.new_id in new.nodes:
            split_of[split.new_id] = split.count_line
    added = tuple(n for n in added if n not in split_of)
    received_modules = set(pairing.alignment.paired.values())
    regrouped = _regrouped(new, added, old, set(removed), boxed=True)
    regrouped += _regrouped(old, removed, new, set(added), boxed=False)
    return Comparison(
        old=old,
        new=new,
        pairing=pairing,
        added=added,
        removed=removed,
        replaced=tuple(replaced),
        changed=MappingProxyType(changed),
        moved=tuple(moved),
        renumbered=tuple((a, b) for a, b in pairs.items() if a != b),
        edges_added=tuple(e for e in new.edges if e not in old_set),
        edges_removed=tuple(e for e in old_edges if e not in new_set),
        # A frame around a module both sides have is how the drawing laid it out (a
        # fold broken in parts needs one), not a frame added or removed.
        clusters_added=tuple(
            c
            for c in new.clusters
            if c not in cluster_reverse
            and c not in split_frames
            and new.clusters[c].address not in received_modules
        ),
        clusters_removed=tuple(
            c
            for c in old.clusters
            if c not in cluster_pairs and old.clusters[c].address not in pairing.alignment.paired
        ),
        clusters_changed=tuple(clusters_changed),
        recoloured=tuple(recoloured),
        colour_domain=_colour_domain(old, new),
        unsigned=tuple(unsigned),
        regrouped=tuple(regrouped),
        splits=tuple(splits),
        split_of=MappingProxyType(split_of),
        edits=model_edits(old, new) if old.schema == new.schema else (),
        _union=MappingProxyType(union),
        _cluster_union=MappingProxyType(cluster_union),
    )
