"""The comparison told in lines: what a reviewer reads first.

Every line names nodes the way a reviewer finds them: the node id and its full module
address (``conv2d_1 @stem.0``), a box or fold by its full title
(``@layer1.2 (BasicBlock)``), never an address relative to a cluster. Changes that are
the same edit on many nodes are one line with the count and the common pattern of
their addresses (``12 nodes @layer*.*.conv1: shape 1x16x8x8 -> 1x32x8x8``); edits that
fall on the same nodes share a line. An inserted block is one line
(``added @layer1.2 (BasicBlock): 7 nodes``), and the edges that only route through it
are its own, not listed apart. :func:`every_change` lists each node on its own line for
``report.html``.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from pytest_tlgraph.diff.edits import BlockInserted, BlockRemoved, Edit
from pytest_tlgraph.diff.graph import GraphModel, GraphNode
from pytest_tlgraph.diff.text import (
    ViewPair,
    address_pattern,
    edit_groups,
    edit_lines,
    starred,
    view_pair,
)
from pytest_tlgraph.diff.view.comparison import Comparison
from pytest_tlgraph.diff.view.rows import RowEdit
from pytest_tlgraph.draw.collapse.signature import read_signature

__all__ = [
    "MAX_EXAMPLES",
    "UNCHANGED",
    "address_pattern",
    "every_change",
    "headline",
    "moved_items",
    "node_name",
    "schema_line",
    "story_edits",
    "story_lines",
]

UNCHANGED: Final = "no structural change (same nodes, edges, label rows and clusters)"
#: How the line of nodes that only moved to another module address starts.
MOVED: Final = "moved, same content"
#: Names listed on one line before it says how many more there are.
MAX_EXAMPLES: Final = 3
#: Nodes a group line lists by id (more read as a count and an address pattern).
_IDS_SHOWN: Final = 3


def node_name(node: GraphNode) -> str:
    """A node as a reviewer finds it (:attr:`.graph.GraphNode.name`)."""
    return node.name


def _examples(items: Sequence[str], limit: int = MAX_EXAMPLES) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f", ... and {len(items) - limit} more" if len(items) > limit else "")


def _nodes_word(count: int) -> str:
    return f"{count} node{'' if count == 1 else 's'}"


def _group_subject(graph: GraphModel, ids: Sequence[str]) -> str:
    """``conv2d_1 @stem.0`` for one node; ``12 nodes @layer*.*.conv1`` (ids listed
    when there are a few) for several."""
    if len(ids) == 1:
        return node_name(graph.nodes[ids[0]])
    nodes = [graph.nodes[n] for n in ids]
    if len(ids) <= _IDS_SHOWN and all(n.kind in ("box", "fold") for n in nodes):
        return f"{_nodes_word(len(ids))}: {', '.join(node_name(n) for n in nodes)}"
    pattern = address_pattern([n.address for n in nodes])
    names = [n.id if n.kind == "op" else node_name(n) for n in nodes]
    listed = f" ({', '.join(names)})" if len(ids) <= _IDS_SHOWN else ""
    return f"{_nodes_word(len(ids))}{listed}" + (f" {pattern}" if pattern else "")


def generalised(edit: RowEdit) -> str | None:
    """``params weight *x*x3x3 -> *x*x5x5`` for ``params weight 8x8x3x3 -> 8x8x5x5``:
    an ``old -> new`` row edit whose two values differ only in some numbers, with the
    numbers it kept written ``*``, from its typed values; ``None`` for any other."""
    if not edit.subject or not edit.old or not edit.new:
        return None
    found = starred(edit.old, edit.new)
    if found is None or found == (edit.old, edit.new):
        return None
    return f"{edit.subject} {found[0]} -> {found[1]}"


def _grouped_edits(comparison: Comparison) -> list[str]:
    """One line per set of nodes sharing the same edits: ``<subject>: <what>; <what>``."""
    exact: dict[str, list[str]] = {}
    keys: dict[str, str] = {}
    for new_id, change in comparison.changed.items():
        typed = {edit.what: edit for edit in change.edits}
        for what in change.whats():
            exact.setdefault(what, []).append(new_id)
            edit = typed.get(what)
            keys.setdefault(what, (generalised(edit) if edit is not None else None) or what)
    # The same edit at other sizes (weight 8x8x3x3 -> 8x8x5x5, 16x16x3x3 -> 16x16x5x5)
    # reads as one, the numbers it kept written *.
    general: dict[str, list[str]] = {}
    for what in exact:
        general.setdefault(keys[what], []).append(what)
    by_what: dict[str, list[str]] = {}
    for key, whats in general.items():
        if len(whats) == 1:
            by_what[whats[0]] = exact[whats[0]]
        else:
            by_what[key] = list(dict.fromkeys(n for w in whats for n in exact[w]))
    by_nodes: dict[tuple[str, ...], list[str]] = {}
    for what, ids in by_what.items():
        by_nodes.setdefault(tuple(ids), []).append(what)
    return [
        f"{_group_subject(comparison.new, ids)}: {'; '.join(whats)}"
        for ids, whats in by_nodes.items()
    ]


def _inside_count(node: GraphNode) -> str:
    signature = read_signature(node.signature) if node.signature else None
    return "" if signature is None else f" ({signature.count} op{'s' * (signature.count != 1)})"


def _block_lines(
    verb: str, graph: GraphModel, ids: Sequence[str], foreign: Iterable[str]
) -> list[str]:
    """``added @layer1.2 (BasicBlock): 7 nodes`` for the nodes of each cluster only one
    side has (outermost first), then the other nodes one by one (or counted)."""
    # A cluster only this side has, holding only nodes only this side has.
    mine = set(ids)
    foreign_clusters = {
        c for c in foreign if graph.members(c) and all(n in mine for n in graph.members(c))
    }
    blocks: dict[str, list[str]] = {}
    loose: list[str] = []
    for node_id in ids:
        outer = next((c for c in graph.cluster_path(node_id) if c in foreign_clusters), None)
        if outer is None:
            loose.append(node_id)
        else:
            blocks.setdefault(outer, []).append(node_id)
    out = [
        f"{verb} {graph.clusters[cid].title}: {_nodes_word(len(members))}"
        for cid, members in blocks.items()
    ]
    if len(loose) <= MAX_EXAMPLES + 1:
        for node_id in loose:
            node = graph.nodes[node_id]
            out.append(f"{verb} {node_name(node)}{_inside_count(node)}")
    else:
        names = [node_name(graph.nodes[n]) for n in loose]
        out.append(f"{verb} {_nodes_word(len(loose))}: {_examples(names)}")
    return out


def _split_lines(comparison: Comparison) -> list[str]:
    """``@blocks.2 (EncoderBlock): relu -> gelu (2 ops); fold x4 -> x2 + 1 + 1``: a
    stored fold the received drawing breaks into parts, told by the repetition that
    changed (each on its line when several did, the count on the fold's line)."""
    out: list[str] = []
    for split in comparison.splits:
        changed = [(name, what) for name, what in split.changes if what is not None]
        if len(changed) == 1:
            name, what = changed[0]
            out.append(f"{name}: {what}; {split.count_line}")
            continue
        out += [f"{name}: {what}" for name, what in changed]
        tail = "" if changed else " (a repetition changed in what no row shows)"
        out.append(f"{split.parts[0][0]}: {split.count_line}{tail}")
    return out


def _replaced_lines(comparison: Comparison) -> list[str]:
    """``replaced relu_1 -> silu_1 (@layer1.0.relu)``; the same swap on many nodes is
    one line: ``replaced relu -> silu on 16 nodes @layer*.*.relu``."""
    by_swap: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for old_id, new_id in comparison.replaced:
        key = (comparison.old.nodes[old_id].func, comparison.new.nodes[new_id].func)
        by_swap.setdefault(key, []).append((old_id, new_id))
    out = []
    for (was, now), pairs in by_swap.items():
        if len(pairs) == 1:
            old_id, new_id = pairs[0]
            node = comparison.new.nodes[new_id]
            if node.kind != "op":  # a box or fold: by its address and types
                out.append(f"replaced @{node.address} ({was}) -> ({now})")
                continue
            address = node.address
            out.append(f"replaced {old_id} -> {new_id}" + (f" (@{address})" if address else ""))
        else:
            pattern = address_pattern([comparison.new.nodes[n].address for _, n in pairs])
            out.append(f"replaced {was} -> {now} on {_nodes_word(len(pairs))} {pattern}".rstrip())
    return out


def _through(succs: Mapping[str, Sequence[str]], start: str, goal: str, via: set[str]) -> bool:
    """Whether a path runs from ``start`` to ``goal`` through ``via`` nodes only."""
    queue, seen = deque([start]), {start}
    while queue:
        node = queue.popleft()
        for nxt in succs.get(node, ()):
            if nxt == goal:
                return True
            if nxt in via and nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    return False


def edge_end(comparison: Comparison, node_id: str) -> str:
    """An edge's end as a reviewer finds it: an op, input or output by its id, a box
    or fold by its address (``@layer2.1``, ``x2 @layer1.0-1``), never its DOT id."""
    # A union id is the received node's id, or a removed node's stored id.
    node = comparison.new.nodes.get(node_id) or comparison.old.nodes.get(node_id)
    if node is None or node.kind not in ("box", "fold"):
        return node_id
    return node.name.rsplit(" (", 1)[0]


def _prefixes(address: str) -> list[str]:
    """``a.b.c`` -> ``a``, ``a.b``, ``a.b.c``: the modules an address lies in."""
    parts = address.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))] if address else []


def moved_items(comparison: Comparison) -> list[str]:
    """What moved, outermost first: a module that moved whole reads once
    (``@layer2.0 (BasicBlock) -> @layer2.1``; a module of one op by the op:
    ``dropout_2 @classifier.2 -> @classifier.3``), any other node by itself."""
    alignment = comparison.pairing.alignment
    moves = alignment.moves()
    moved_from = {old for old, _ in moves}
    held: dict[str, list[tuple[str, str, str]]] = {}
    loose: list[str] = []
    swapped = {m for _, after in alignment.reordered for m in after}
    for node_id, was, now in comparison.moved:
        prefixes = _prefixes(was)
        if not swapped.isdisjoint(prefixes):
            continue  # an order change says it
        module = next((p for p in prefixes if p in moved_from), None)
        if module is None:
            node = comparison.new.nodes[node_id]
            name = node_id if node.kind == "op" else f"@{was} ({node.func})"
            loose.append(f"{name} -> @{now}" if node.kind != "op" else f"{name} @{was} -> @{now}")
        else:
            held.setdefault(module, []).append((node_id, was, now))
    out: list[str] = []
    for old_address, new_address in moves:
        members = held.get(old_address)
        if not members:
            continue
        node = comparison.new.nodes[members[0][0]]
        if len(members) == 1 and node.kind == "op":
            out.append(f"{members[0][0]} @{members[0][1]} -> @{members[0][2]}")
            continue
        kind = alignment.types.get(new_address)
        out.append(f"@{old_address}{f' ({kind})' if kind else ''} -> @{new_address}")
    return out + loose


def _chain(succs: Mapping[str, list[str]], start: str, limit: int) -> list[str]:
    """The path from ``start`` along edges each the only one out of its node."""
    path = [start]
    while len(path) <= limit:
        heads = succs.get(path[-1], [])
        if len(heads) != 1 or heads[0] in path:
            break
        path.append(heads[0])
    return path


def _only_op(comparison: Comparison, old_address: str) -> str | None:
    """The received id of the one op a stored module holds, if it holds one op only."""
    held = comparison.new.nodes_under(comparison.pairing.alignment.translate(old_address))
    only = held[0] if len(held) == 1 else None
    return only if only is not None and comparison.new.nodes[only].kind == "op" else None


def order_changes(
    comparison: Comparison, gained: list[tuple[str, str]], lost: list[tuple[str, str]]
) -> tuple[list[str], list[tuple[str, str]], list[tuple[str, str]]]:
    """Nodes that run in another order between the same two nodes: one line each run
    (``order changed: batch_norm_1, relu_1 -> relu_1, batch_norm_1``), and the edges
    gained and lost that they do not explain."""
    lost_succs: dict[str, list[str]] = {}
    for a, b in lost:
        lost_succs.setdefault(a, []).append(b)
    gained_succs: dict[str, list[str]] = {}
    for a, b in gained:
        gained_succs.setdefault(a, []).append(b)
    heads = {b for _, b in lost}
    out: list[str] = []
    used: set[tuple[str, str]] = set()
    alignment = comparison.pairing.alignment

    def within(node_id: str, modules: Sequence[str]) -> bool:
        node = comparison.new.nodes.get(node_id) or comparison.old.nodes.get(node_id)
        address = "" if node is None else node.address
        return any(address == m or address.startswith(f"{m}.") for m in modules)

    for before_order, after_order in alignment.reordered:
        ops = {a: _only_op(comparison, a) for a in before_order}
        if all(ops.values()):  # modules of one op each: the ops, by received id
            names = [f"{ops[a]} @{alignment.translate(a)}" for a in before_order]
            now = [f"{ops[a]} @{alignment.translate(a)}" for a in after_order]
            line = f"order changed: {_examples(names)} -> {_examples(now)}"
        else:
            types = alignment.types
            names = [
                f"@{a}" + (f" ({t})" if (t := types.get(alignment.translate(a))) else "")
                for a in before_order
            ]
            line = (
                f"order changed: {_examples(names)} -> "
                f"{_examples(['@' + a for a in after_order])} (stored addresses)"
            )
        modules = [alignment.translate(a) for a in before_order]
        touched = {e for e in (*gained, *lost) if within(e[0], modules) or within(e[1], modules)}
        if not touched:
            line += "; the same dataflow, only the order they run in"
        used |= touched
        out.append(line)
    for start in lost_succs:
        if start in heads:
            continue
        before = _chain(lost_succs, start, len(lost))
        after = _chain(gained_succs, start, len(gained))
        inner = before[1:-1]
        if (
            len(inner) < 2
            or any(e in used for e in itertools.pairwise(before))
            or before[-1] != after[-1]
            or sorted(inner) != sorted(after[1:-1])
            or inner == after[1:-1]
        ):
            continue
        used.update(itertools.pairwise(before))
        used.update(itertools.pairwise(after))
        names = [node_name(comparison.new.nodes[n]) for n in inner]
        out.append(f"order changed: {_examples(names)} -> {_examples(after[1:-1])}")
    return (
        out,
        [e for e in gained if e not in used],
        [e for e in lost if e not in used],
    )


def rewired_edges(comparison: Comparison) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The edges added and removed that no added or removed node explains: not one of
    such a node's own edges, nor an edge now (or formerly) routed through them."""
    added = set(comparison.added) | set(comparison.split_of)
    removed = {comparison.union_id(n) for n in comparison.removed}
    new_succs: dict[str, list[str]] = {}
    for a, b in comparison.new.edges:
        new_succs.setdefault(a, []).append(b)
    old_succs: dict[str, list[str]] = {}
    for a, b in comparison.old.edges:
        old_succs.setdefault(comparison.union_id(a), []).append(comparison.union_id(b))
    gained = [
        (a, b)
        for a, b in comparison.edges_added
        if a not in added and b not in added and not _through(old_succs, a, b, removed)
    ]
    lost = [
        (a, b)
        for a, b in comparison.edges_removed
        if a not in removed and b not in removed and not _through(new_succs, a, b, added)
    ]
    return gained, lost


#: The first line when the stored drawing was written before calls' own arguments were
#: drawn: every difference below may be one the drawing now shows, not the model's.
PREDATES_CALLS: Final = (
    "the stored drawing has no call arguments, as drawn before 0.4: 0.4 draws each "
    "call's non-default arguments, dtypes, grad mode and input positions; if the model "
    "did not change, what follows is that, and the received drawing can be accepted"
)


#: Said after the nodes signed on one side only, when the stored drawing has no
#: signature at all: it was written before collapsed nodes carried them.
PREDATES_SIGNATURES: Final = (
    "the stored drawing predates the signatures of collapsed nodes (0.2): if nothing "
    "else changed, run pytest --snapshot-update to rewrite it"
)
#: The version a stored drawing without ``tl_schema`` was written with.
LEGACY_SCHEMA: Final = "0.3"


def _predates_calls(graph: GraphModel) -> bool:
    """Whether ``graph`` carries no call argument at all (no ``tl_call``, ``tl_inside``
    or numbered in-edge): drawn by 0.3, or a model whose calls take tensors alone."""
    if graph.positions:
        return False
    return not any(n.call or n.inside_calls for n in graph.nodes.values())


def schema_line(old: GraphModel, new: GraphModel) -> str | None:
    """The one true line when the two drawings were written with different schemas
    (:mod:`pytest_tlgraph.schema`): what one side says of its nodes the other cannot
    be paired against, so no other line would be true. ``None`` when they agree."""
    if old.schema == new.schema:
        return None
    remedy = "accept with tlgraph accept <nodeid>, or run pytest --snapshot-update"
    if old.schema is None:
        return f"stored with the {LEGACY_SCHEMA} schema (no structured attributes): {remedy}"
    if new.schema is None:
        return f"received without a schema, stored with the {old.schema} schema: {remedy}"
    return f"stored with the {old.schema} schema, received with the {new.schema} one: {remedy}"


def _predates_signatures(comparison: Comparison) -> bool:
    """Whether the stored drawing really was written before collapsed nodes carried
    content signatures (0.2): no schema, and no signature anywhere in it, while the
    received one has some."""
    old, new = comparison.old, comparison.new
    if old.schema is not None:
        return False
    if any(n.signature for n in old.nodes.values()):
        return False
    return any(n.signature for n in new.nodes.values())


def _view(comparison: Comparison) -> ViewPair:
    return view_pair(comparison.old, comparison.new, comparison.pairing.alignment)


def _redrawn_lines(comparison: Comparison, redrawn: list[str]) -> list[str]:
    """The lines of the boxes drawn otherwise, one line each way when there are many."""
    if len(redrawn) <= MAX_EXAMPLES:
        return redrawn
    opened = [g.title for g in comparison.regrouped if not g.boxed]
    closed = [g.title for g in comparison.regrouped if g.boxed]
    out = []
    if opened:
        out.append(f"drawn open in their frames ({len(opened)}, were boxes): {_examples(opened)}")
    if closed:
        out.append(f"drawn as boxes ({len(closed)}, were open frames): {_examples(closed)}")
    return out


def _redrawn_notes(comparison: Comparison) -> str:
    """How the view drew modules otherwise after the edits (auto spent its budget
    elsewhere): ``@features.3.block (Sequential) drawn as one box (was 3 nodes in its
    frame)``, at most :data:`MAX_EXAMPLES` named."""
    # A fold broken in parts, unless an edit's line names the fold's new count already.
    counted = any(isinstance(e, BlockInserted | BlockRemoved) for e in comparison.edits)
    notes = [] if counted else [split.count_line for split in comparison.splits]
    for group in comparison.regrouped:
        count = _nodes_word(len(group.frame))
        if group.boxed:
            notes.append(f"{group.title} drawn as one box (was {count} in its frame)")
        else:
            notes.append(f"{group.title} drawn open, {count} in its frame (was one box)")
    return _examples(notes)


def _edit_story(comparison: Comparison) -> list[str]:
    """The model's typed edits, told at the view's addresses, then what only the
    drawing says (a stored drawing older than what the received one records)."""
    out = (
        [PREDATES_CALLS]
        if _predates_calls(comparison.old) and not _predates_calls(comparison.new)
        else []
    )
    lines = edit_lines(comparison.edits, _view(comparison))
    notes = _redrawn_notes(comparison)
    if lines and notes:  # what the view did because of the edits: a note on the first
        lines[0] += f" (the view: {notes})"
    out += lines
    if comparison.unsigned:
        out.append(_unsigned_line(comparison))
    return out


def _unsigned_line(comparison: Comparison) -> str:
    """The line naming the nodes with a content signature on one side only."""
    line = (
        f"content signature on one side only ({len(comparison.unsigned)}): "
        f"{_examples(list(comparison.unsigned))}"
    )
    if _predates_signatures(comparison):
        line += f"; {PREDATES_SIGNATURES}"
    return line


def story_edits(comparison: Comparison) -> list[tuple[Edit, ...]]:
    """Per line of :func:`story_lines`, the typed edits it tells (``()`` for a line
    that tells none: a schema or signature note, a drawing-only change)."""
    lines = story_lines(comparison)
    told: list[tuple[Edit, ...]] = []
    if comparison.edits and schema_line(comparison.old, comparison.new) is None:
        if _predates_calls(comparison.old) and not _predates_calls(comparison.new):
            told.append(())
        told += [edits for _, edits in edit_groups(comparison.edits, _view(comparison))]
    return told[: len(lines)] + [()] * (len(lines) - len(told))


def story_lines(comparison: Comparison) -> list[str]:
    """The comparison as the lines of a failure's structural summary (see the module
    docstring), most telling first: the model's typed edits when the op-level
    comparison found any, else what the drawings show."""
    return _story(comparison)[0]


def _story(comparison: Comparison) -> tuple[list[str], int]:
    """:func:`story_lines`, and how many of them are no change of their own (the line
    of nodes that only moved follows from the change)."""
    new, old = comparison.new, comparison.old
    schema = schema_line(old, new)
    if schema is not None:
        return [schema], 0
    if comparison.unchanged:
        return [UNCHANGED], 0
    if comparison.edits:
        return _edit_story(comparison), 0
    out: list[str] = []
    if _predates_calls(old) and not _predates_calls(new):
        out.append(PREDATES_CALLS)
    regrouped_new: set[str] = set()
    regrouped_old: set[str] = set()
    # How auto spent its budget: told after the model's own changes.
    redrawn: list[str] = []
    for group in comparison.regrouped:
        count = _nodes_word(len(group.frame))
        if group.boxed:
            redrawn.append(f"{group.title}: drawn as one box (was {count} in its frame)")
            regrouped_new.add(group.box)
            regrouped_old.update(group.frame)
        else:
            redrawn.append(f"{group.title}: drawn open, {count} in its frame (was one box)")
            regrouped_old.add(group.box)
            regrouped_new.update(group.frame)
    added = [n for n in comparison.added if n not in regrouped_new]
    removed = [n for n in comparison.removed if n not in regrouped_old]
    out += _block_lines("added", new, added, comparison.clusters_added)
    out += _block_lines("removed", old, removed, comparison.clusters_removed)
    out += _replaced_lines(comparison)
    out += _split_lines(comparison)
    out += _grouped_edits(comparison)
    for change in comparison.clusters_changed:
        whats = change.whats()
        if whats:
            out.append(f"{change.new_title}: {'; '.join(whats)}")
    held_added = {c for n in comparison.added for c in new.cluster_path(n)}
    held_removed = {c for n in comparison.removed for c in old.cluster_path(n)}
    frames = [new.clusters[c].title for c in comparison.clusters_added if c not in held_added]
    if frames:
        out.append(f"frames added ({len(frames)}): {_examples(frames)}")
    frames = [old.clusters[c].title for c in comparison.clusters_removed if c not in held_removed]
    if frames:
        out.append(f"frames removed ({len(frames)}): {_examples(frames)}")
    gained, lost = rewired_edges(comparison)
    orders, gained, lost = order_changes(comparison, gained, lost)
    out += orders
    if gained:
        edges = [f"{edge_end(comparison, a)} -> {edge_end(comparison, b)}" for a, b in gained]
        out.append(f"edges added ({len(gained)}): {_examples(edges)}")
    if lost:
        edges = [f"{edge_end(comparison, a)} -> {edge_end(comparison, b)}" for a, b in lost]
        out.append(f"edges removed ({len(lost)}): {_examples(edges)}")
    out += _redrawn_lines(comparison, redrawn)
    moves = moved_items(comparison)
    followers = 1 if moves and out else 0
    if moves:
        out.append(
            f"{MOVED} ({_nodes_word(len(comparison.moved))} at another module address): "
            f"{_examples(moves)}"
        )
    if comparison.unsigned:
        out.append(_unsigned_line(comparison))
    if not out and comparison.renumbered:
        out.append(f"only node ids renumbered ({len(comparison.renumbered)})")
    return out, followers


def recolour_line(comparison: Comparison) -> str | None:
    """``colour domain 0 .. 590 KFLOPs -> 0 .. 452 KFLOPs: 3 nodes recoloured by the
    rescale alone``, or ``None`` when no colour bar's domain moved."""
    if comparison.colour_domain is None:
        return None
    _, before, after = comparison.colour_domain
    count = len(comparison.recoloured)
    return (
        f"colour domain {before} -> {after}: {_nodes_word(count)} recoloured by the rescale alone"
    )


def headline(comparison: Comparison) -> str:
    """The comparison in one line (``tlgraph report``'s pending list, summary.md)."""
    lines, followers = _story(comparison)
    # Nodes that only moved follow from the change; they are no change of their own.
    more = len(lines) - 1 - followers
    return lines[0] + (f" (and {more} more change{'s' * (more != 1)})" if more > 0 else "")


def every_change(comparison: Comparison) -> list[str]:
    """Each change on its own line, node by node (``report.html``'s full list)."""
    new, old = comparison.new, comparison.old
    schema = schema_line(old, new)
    if schema is not None:
        return [schema]
    out = [f"added {node_name(new.nodes[n])}" for n in comparison.added]
    out += [f"removed {node_name(old.nodes[n])}" for n in comparison.removed]
    out += [f"replaced {a} -> {b} (@{new.nodes[b].address})" for a, b in comparison.replaced]
    for new_id, change in comparison.changed.items():
        out += [f"{node_name(new.nodes[new_id])}: {what}" for what in change.whats()]
    out += [f"edge added {a} -> {b}" for a, b in comparison.edges_added]
    out += [f"edge removed {a} -> {b}" for a, b in comparison.edges_removed]
    out += [f"moved {n} @{a} -> @{b}" for n, a, b in comparison.moved]
    out += [f"renumbered {a} is now {b}" for a, b in comparison.renumbered]
    return out
