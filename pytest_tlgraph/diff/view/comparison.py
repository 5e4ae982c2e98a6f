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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

from pytest_tlgraph.diff.edits import Edit
from pytest_tlgraph.diff.engine import model_edits
from pytest_tlgraph.diff.graph import GraphModel, read_graph
from pytest_tlgraph.diff.pairing import Pairing, pair_graphs
from pytest_tlgraph.diff.text import holder
from pytest_tlgraph.diff.view.clusterchange import (
    ClusterChange,
    cluster_changes,
    pair_clusters,
)
from pytest_tlgraph.diff.view.foldsplit import FoldSplit, fold_splits
from pytest_tlgraph.diff.view.nodechange import NodeChange, node_change

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
    def _marked(graph: GraphModel, ids: set[str], at: set[str], open_at: set[str]) -> list[str]:
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
                (open_at if held.kind == "module" else at)[edit.removed_side].add(edit.address)
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
    """:func:`compare` of two drawings already read: the nodes paired once, then each
    paired node's change (:mod:`.nodechange`), the frames' (:mod:`.clusterchange`),
    the folds drawn in parts (:mod:`.foldsplit`) and the typed model edits."""
    pairing = pair_graphs(old, new)
    pairs = pairing.pairs
    union = _union_ids(old.nodes, new.nodes, pairs)
    nodes = _paired_nodes(old, new, pairing, union)
    cluster_pairs = pair_clusters(old, new, pairing.alignment.translate)
    cluster_reverse = {b: a for a, b in cluster_pairs.items()}
    clusters_changed, frames_unsigned = cluster_changes(old, new, cluster_reverse)
    taken = set(pairs.values())
    added = tuple(n for n in new.nodes if n not in taken)
    removed = tuple(n for n in old.nodes if n not in pairs)
    splits = fold_splits(old, new, pairs, cluster_pairs, pairing.alignment, added)
    split_of, split_frames = _split_marks(new, splits)
    told_by_split = {s.new_id for s in splits}
    changed = {
        k: c
        for k, c in nodes.changed.items()
        if k not in told_by_split or not c.count_or_content_only  # the split's line says it
    }
    # A fold's frame drawn in parts: the split's line tells its title and content.
    clusters_changed = [c for c in clusters_changed if c.id not in told_by_split]
    added = tuple(n for n in added if n not in split_of)
    old_edges = list(dict.fromkeys((union[a], union[b]) for a, b in old.edges))
    old_set, new_set = set(old_edges), set(new.edges)
    return Comparison(
        old=old,
        new=new,
        pairing=pairing,
        added=added,
        removed=removed,
        replaced=tuple(nodes.replaced),
        changed=MappingProxyType(changed),
        moved=tuple(nodes.moved),
        renumbered=tuple((a, b) for a, b in pairs.items() if a != b),
        edges_added=tuple(e for e in new.edges if e not in old_set),
        edges_removed=tuple(e for e in old_edges if e not in new_set),
        clusters_added=_frames_added(new, cluster_reverse, split_frames, pairing),
        clusters_removed=_frames_removed(old, cluster_pairs, pairing),
        clusters_changed=tuple(clusters_changed),
        recoloured=tuple(nodes.recoloured),
        colour_domain=_colour_domain(old, new),
        unsigned=(*nodes.unsigned, *frames_unsigned),
        regrouped=(
            *_regrouped(new, added, old, set(removed), boxed=True),
            *_regrouped(old, removed, new, set(added), boxed=False),
        ),
        splits=tuple(splits),
        split_of=MappingProxyType(split_of),
        edits=model_edits(old, new) if old.schema == new.schema else (),
        _union=MappingProxyType(union),
        _cluster_union=MappingProxyType(_union_ids(old.clusters, new.clusters, cluster_pairs)),
    )


def _union_ids(
    old: Mapping[str, object], new: Mapping[str, object], pairs: Mapping[str, str]
) -> dict[str, str]:
    """Stored id -> union id of each stored node (or cluster): its received partner's
    id, its own, or ``"<id> (old)"`` when a received one has its id."""
    union = dict(pairs)
    for old_id in old:
        if old_id not in pairs:
            union[old_id] = old_id + _OLD_MARK if old_id in new else old_id
    return union


@dataclass(frozen=True, slots=True)
class _PairedNodes:
    """What the paired nodes show, each list in received drawing order (the fields of
    :class:`Comparison` of the same names)."""

    replaced: list[tuple[str, str]] = field(default_factory=list)
    changed: dict[str, NodeChange] = field(default_factory=dict)
    moved: list[tuple[str, str, str]] = field(default_factory=list)
    recoloured: list[str] = field(default_factory=list)
    unsigned: list[str] = field(default_factory=list)


def _paired_nodes(
    old: GraphModel, new: GraphModel, pairing: Pairing, union: Mapping[str, str]
) -> _PairedNodes:
    """Each paired node as changed, moved (another module address, the same content)
    or recoloured (its fill alone), with the replaced ones and those signed on one
    side only."""
    found = _PairedNodes()
    for new_id, node in new.nodes.items():
        old_id = pairing.reverse.get(new_id)
        if old_id is None:
            continue
        was = old.nodes[old_id]
        replaced = old_id in pairing.replaced
        if replaced:
            found.replaced.append((old_id, new_id))
        change = node_change(was, node, old, new, union, replaced=replaced)
        if change.whats():
            found.changed[new_id] = change
        elif was.address != node.address:
            found.moved.append((new_id, was.address, node.address))
        elif was.label == node.label and was.signature == node.signature and was.fill != node.fill:
            found.recoloured.append(new_id)
        drawn_alike = change.repeats is None and change.redrawn is None
        if drawn_alike and (was.signature is None) != (node.signature is None):
            found.unsigned.append(new_id)
    return found


def _split_marks(
    new: GraphModel, splits: Sequence[FoldSplit]
) -> tuple[dict[str, str | None], set[str]]:
    """Received id of each node of a fold's part that now stands apart -> what changed
    in the part (``None``: nothing), each fold's own partner -> its count line; and the
    received frames the parts are drawn in."""
    split_of: dict[str, str | None] = {}
    frames: set[str] = set()
    for split in splits:
        changes = dict(split.changes)
        for node_id in split.members:
            name = new.nodes[node_id].name
            split_of[node_id] = split.marks.get(node_id, changes.get(name))
        frames |= split.frames
    for split in splits:  # a fold node's partner: drawn with its new count
        if split.new_id in new.nodes:
            split_of[split.new_id] = split.count_line
    return split_of, frames


def _frames_added(
    new: GraphModel, reverse: Mapping[str, str], split_frames: set[str], pairing: Pairing
) -> tuple[str, ...]:
    """Received frames with no stored partner. A frame around a module both sides
    have is how the drawing laid it out (a fold broken in parts needs one), not a
    frame added."""
    modules = set(pairing.alignment.paired.values())
    return tuple(
        c
        for c, cluster in new.clusters.items()
        if c not in reverse and c not in split_frames and cluster.address not in modules
    )


def _frames_removed(old: GraphModel, pairs: Mapping[str, str], pairing: Pairing) -> tuple[str, ...]:
    """Stored frames with no received partner, around a module the received side
    does not have."""
    paired = pairing.alignment.paired
    return tuple(
        c for c, cluster in old.clusters.items() if c not in pairs and cluster.address not in paired
    )
