"""Two drawings compared at op level, whatever their view, as typed edits.

:func:`model_edits` opens both drawings (:func:`.record.op_level`), pairs their
modules, then their ops by structure and dataflow (:func:`.pairing.pair_graphs`), and
says what changed as :mod:`.edits` values, most telling first: blocks inserted,
removed, moved, renamed or reordered; then what each paired op changed (function,
argument, dtype, grad mode, inputs) and the ops only one side runs (a skip connection
by its two ends); then what follows from those (shapes, params, ids renumbered). An op
whose result reaches no output is marked ``unused``.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from pytest_tlgraph.diff.alignment import align_modules, repetitions
from pytest_tlgraph.diff.edits import (
    ArgChanged,
    BlockInserted,
    BlockMoved,
    BlockRemoved,
    BlocksReordered,
    ConstantChanged,
    DtypeChanged,
    Edit,
    GradModeChanged,
    InsideChanged,
    OpAdded,
    OpRemoved,
    OpReplaced,
    OpsRenumbered,
    OpsReordered,
    ParamsChanged,
    Renamed,
    RepeatCountChanged,
    Rewired,
    ShapeChanged,
    SkipAdded,
    SkipRemoved,
)
from pytest_tlgraph.diff.facts import OpFacts, op_facts
from pytest_tlgraph.diff.graph import GraphModel, GraphNode
from pytest_tlgraph.diff.pairing import Pairing, pair_graphs
from pytest_tlgraph.diff.record import coarsened, is_hidden, is_repeated, op_level
from pytest_tlgraph.diff.text import back

__all__ = ["ModelDiff", "model_diff", "model_edits"]

#: Ops that join two values: one of them new reads as a skip connection.
_JOINS: Final = frozenset({"add", "add_", "iadd", "cat", "concat", "stack", "sub", "mul"})


@dataclass(frozen=True, slots=True)
class ModelDiff:
    """Both drawings opened, their pairing and the edits (see the module docstring)."""

    old: GraphModel
    new: GraphModel
    pairing: Pairing
    edits: tuple[Edit, ...]


def _parent(address: str) -> str:
    return address.rpartition(".")[0]


def _top(addresses: Iterable[str]) -> list[str]:
    """The addresses not below another of them, in the given order."""
    chosen = set(addresses)
    return [a for a in chosen if not any(p in chosen for p in _prefixes(a))]


def _prefixes(address: str) -> list[str]:
    parts = address.split(".") if address else []
    return [".".join(parts[:cut]) for cut in range(1, len(parts))]


def _under(address: str, modules: Iterable[str]) -> str | None:
    """The module of ``modules`` that ``address`` lies in (or is), if any."""
    found = set(modules)
    if address in found:
        return address
    return next((p for p in reversed(_prefixes(address)) if p in found), None)


def _reaching(graph: GraphModel) -> set[str]:
    """The nodes an output is reached from (outputs included); every node where the
    drawing has no output node (nothing to tell unused work by)."""
    queue = deque(n for n, node in graph.nodes.items() if node.kind == "output")
    if not queue:
        return set(graph.nodes)
    seen = set(queue)
    while queue:
        for pred in graph.preds(queue.popleft()):
            if pred not in seen:
                seen.add(pred)
                queue.append(pred)
    return seen


def _type(graph: GraphModel, address: str) -> str:
    cluster = graph.clusters.get(address)
    return (cluster.type or "") if cluster is not None else ""


class _Diff:
    """The state one diff shares: both opened sides, the pairing, the edits so far
    with the run position each sorts by."""

    def __init__(self, old: GraphModel, new: GraphModel) -> None:
        self.old, self.new = old, new
        self.pairing = pair_graphs(old, new)
        self.alignment = self.pairing.alignment
        self.reverse = self.pairing.reverse
        self.order = {n: i for i, n in enumerate(new.nodes)}
        self.old_order = {n: i for i, n in enumerate(old.nodes)}
        self.found: list[tuple[int, int, Edit]] = []
        self.added = _top(self.alignment.added)
        self.removed = _top(self.alignment.removed)
        translate = self.alignment.translate
        #: The modules that run in another order among their siblings (received).
        self.reordered = {translate(a) for before, _ in self.alignment.reordered for a in before}
        #: Whether an op's inputs changed with a reorder (not the same dataflow).
        self.reorder_rewired = False
        self._placed: dict[str, int] = {}

    def add(self, edit: Edit, position: int) -> None:
        self.found.append((edit.rank, position, edit))

    def old_position(self, old_id: str) -> int:
        """Where a stored node would run on the received side: after its nearest
        stored predecessor's partner (worked out for every stored node at once)."""
        if not self._placed:
            last = 0
            for node_id in self.old.nodes:
                partner = self.pairing.pairs.get(node_id)
                if partner is not None:
                    last = self.order[partner]
                self._placed[node_id] = last
        return self._placed[old_id]

    def name(self, graph: GraphModel, node_id: str) -> str:
        node = graph.nodes[node_id]
        if node.kind in ("input", "output"):
            return node.name
        return f"{node.func} @{node.address}" if node.address else node.func


def _swapped(diff: _Diff) -> dict[str, str]:
    """Received address -> stored address of each one-op module only one side has
    where the other side has one of another type: a layer swapped for another
    (``ReLU`` -> ``GELU``), told as its op replaced."""
    removed = {}
    for address in diff.removed:
        held = diff.old.nodes_under(address)
        if len(held) == 1:
            removed[
                diff.alignment.translate(_parent(address)) + "." + address.rpartition(".")[2]
            ] = (address, held[0])
    out: dict[str, str] = {}
    for address in diff.added:
        held = diff.new.nodes_under(address)
        key = address if _parent(address) else "." + address
        hit = removed.get(key)
        if len(held) == 1 and hit is not None:
            was, now = diff.old.nodes[hit[1]], diff.new.nodes[held[0]]
            replaced = OpReplaced(address, was.func, now.func, _drawn_id(now), _drawn_id(was))
            diff.add(replaced, diff.order[held[0]])
            out[address] = hit[0]
    return out


#: At most this many functions name a module the drawing gives no type.
_FUNCS_NAMED: Final = 4


def _untyped_funcs(graph: GraphModel, address: str, held: list[str]) -> tuple[str, ...]:
    """The functions a module runs, where ``graph`` names no type for it (a module
    inside a box): ``("layer_norm",)``; ``()`` where it has a type or runs many."""
    if _type(graph, address) or not held or len(held) > _FUNCS_NAMED:
        return ()
    return tuple(graph.nodes[n].func for n in held)


def _blocks(diff: _Diff) -> None:
    """Modules only one side has, moved, renamed and reordered."""
    new, old = diff.new, diff.old
    used_new, used_old = _reaching(new), _reaching(old)
    swapped = _swapped(diff)
    for address in diff.added:
        if address in swapped:
            continue
        held = new.nodes_under(address)
        position = min((diff.order[n] for n in held), default=0)
        unused = bool(held) and not any(n in used_new for n in held)
        drawn = _drawn_id(new.nodes[held[0]]) if len(held) == 1 else ""
        funcs = _untyped_funcs(new, address, held)
        edit = BlockInserted(address, _type(new, address), len(held), unused, drawn, funcs)
        diff.add(edit, position)
    for address in diff.removed:
        if diff.alignment.translate(address) in swapped or address in swapped.values():
            continue
        held = old.nodes_under(address)
        position = min((diff.old_position(n) for n in held), default=0)
        unused = bool(held) and not any(n in used_old for n in held)
        drawn = _drawn_id(old.nodes[held[0]]) if len(held) == 1 else ""
        funcs = _untyped_funcs(old, address, held)
        gone = BlockRemoved(address, _type(old, address), len(held), unused, drawn, funcs)
        diff.add(gone, position)
    translate = diff.alignment.translate
    for was, now in diff.alignment.moves():
        held = new.nodes_under(now)
        position = min((diff.order[n] for n in held), default=0)
        same_parent = translate(_parent(was)) == _parent(now)
        old_name, new_name = was.rpartition(".")[2], now.rpartition(".")[2]
        if same_parent and (old_name == new_name or (old_name.isdigit() and new_name.isdigit())):
            continue  # shifted by a sibling inserted, removed or reordered: that one says it
        kind = Renamed if same_parent else BlockMoved
        diff.add(kind(now, was, _type(new, now)), position)
    for before, after in diff.alignment.reordered:
        held = [n for a in before for n in new.nodes_under(translate(a))]
        position = min((diff.order[n] for n in held), default=0)
        diff.add(BlocksReordered(_parent(before[0]), before, after), position)


def _repeats(diff: _Diff) -> None:
    """Modules both sides have, called another number of times."""
    counts: dict[str, list[int]] = {}
    for graph, side in ((diff.old, 0), (diff.new, 1)):
        for node in graph.nodes.values():
            if is_hidden(node):
                continue  # a fold's repetitions are its count, not calls
            address = diff.alignment.translate(node.address) if side == 0 else node.address
            calls = counts.setdefault(address, [0, 0])
            calls[side] = max(calls[side], node.call_number or 1)
    for address, (before, after) in counts.items():
        if before and after and before != after and address in diff.new.clusters:
            held = diff.new.nodes_under(address)
            position = min((diff.order[n] for n in held), default=0)
            diff.add(RepeatCountChanged(address, _type(diff.new, address), before, after), position)


def _constant(graph: GraphModel, node_id: str, facts: OpFacts, values: tuple[str, str]) -> Edit:
    """A ``const`` node's values changed: named by its buffer or attribute, and placed
    at the module that owns the buffer or else at the modules that read it (the
    innermost address all its readers share): a constant sits at the drawing's root,
    but the edit belongs where the model keeps or uses it."""
    source = next((k for k in ("buffer", "attribute") if k in facts.args), "constant")
    name = facts.args.get(source, "")
    if source == "buffer" and "." in name:
        at = name.rpartition(".")[0]
    else:
        at = _shared_address([graph.nodes[n].address for n in graph.succs(node_id)])
    old, new = values
    drawn = _drawn_id(graph.nodes[node_id])
    return ConstantChanged(at, name, source, facts.shape, facts.dtype, old, new, drawn)


def _shared_address(addresses: list[str]) -> str:
    """The innermost module address every one of ``addresses`` lies in (``""``: none)."""
    if not addresses:
        return ""
    parts = addresses[0].split(".") if addresses[0] else []
    for address in addresses[1:]:
        other = address.split(".") if address else []
        keep = 0
        while keep < min(len(parts), len(other)) and parts[keep] == other[keep]:
            keep += 1
        parts = parts[:keep]
    return ".".join(parts)


def _changes(diff: _Diff, old_id: str, new_id: str) -> list[Edit]:
    """What one paired op changed."""
    was, now = diff.old.nodes[old_id], diff.new.nodes[new_id]
    at, drawn = now.address, _drawn_id(now)
    if old_id in diff.pairing.replaced or was.func != now.func:
        return [OpReplaced(at, was.func, now.func, drawn, _drawn_id(was))]
    a, b = op_facts(was), op_facts(now)
    out: list[Edit] = []
    names = dict.fromkeys([*b.args, *a.args])
    # An argument one side records and the other does not is a change only where
    # the call's own arguments leave it out (at its default); a constructor argument
    # the drawing shows on one side only is how it was drawn.
    both = {n for n in names if n in a.args and n in b.args}
    if is_hidden(was) == is_hidden(now):
        both |= a.called ^ b.called
    for name in (n for n in names if n in both):
        old, new = a.args.get(name), b.args.get(name)
        if name in a.called ^ b.called:  # the call's own value, or its default
            old = a.calls.get(name, a.args.get(name) if name in a.defaults else None)
            new = b.calls.get(name, b.args.get(name) if name in b.defaults else None)
        if old == new:
            continue
        if now.func == "const" and name == "values" and old is not None and new is not None:
            out.append(_constant(diff.new, new_id, b, (old, new)))
            continue
        if old is not None and name in a.defaults:
            old = f"{old} (default)"
        if new is not None and name in b.defaults:
            new = f"{new} (default)"
        out.append(ArgChanged(at, now.func, name, old, new, drawn))
    if len(diff.old.preds(old_id)) <= 1 and len(diff.new.preds(new_id)) <= 1:
        # One input read in another order (``(in1[1], in1[0])``): no edge tells it.
        for name, old_ref in a.operands.items():
            new_ref = b.operands.get(name)
            if new_ref is not None and new_ref != old_ref:
                out.append(ArgChanged(at, now.func, name, old_ref, new_ref, drawn))
    if a.dtype != b.dtype and not any(isinstance(e, ArgChanged) and e.name == "dtype" for e in out):
        out.append(DtypeChanged(at, now.func, a.dtype or "default", b.dtype or "default", drawn))
    if a.grad != b.grad:
        out.append(GradModeChanged(at, now.func, a.grad or "grad", b.grad or "grad", drawn))
    if a.shape != b.shape:
        out.append(ShapeChanged(at, now.func, a.shape, b.shape, drawn))
    if a.params != b.params:
        out.append(ParamsChanged(at, now.func, a.params, b.params, drawn))
    return out


def _drawn_id(node: GraphNode) -> str:
    """An op's id where the drawing draws it as a node of its own, else ``""``."""
    return "" if is_hidden(node) or is_repeated(node) or node.kind != "op" else node.id


def _ordered(graph: GraphModel, node_id: str) -> list[str] | None:
    """An op's inputs in argument order, where its in-edges are numbered."""
    positions = graph.positions.get(node_id)
    preds = graph.preds(node_id)
    if not positions or any(p not in positions for p in preds):
        return None
    return sorted(preds, key=positions.__getitem__)


def _reordered_inputs(diff: _Diff, old_id: str, new_id: str) -> Edit | None:
    """The same inputs in another argument order (``cat``, ``sub``, ``matmul``)."""
    before, after = _ordered(diff.old, old_id), _ordered(diff.new, new_id)
    if before is None or after is None:
        return None
    mapped = [diff.pairing.pairs.get(p, p) for p in before]
    if mapped == after:
        return None
    now = diff.new.nodes[new_id]

    def named(node_id: str) -> str:
        return _drawn_id(diff.new.nodes[node_id]) or diff.name(diff.new, node_id)

    names = tuple(named(p) for p in mapped if p in diff.new.nodes)
    return Rewired(now.address, now.func, names, tuple(named(p) for p in after), _drawn_id(now))


def _rewired(diff: _Diff, old_id: str, new_id: str) -> Edit | None:
    """The inputs of a paired op, when all are paired on both sides and differ."""
    before = [diff.pairing.pairs.get(p) for p in diff.old.preds(old_id)]
    after = diff.new.preds(new_id)
    ends = [diff.new.nodes[new_id].address, *(diff.new.nodes[p].address for p in after)]
    ends += [diff.new.nodes[p].address for p in before if p is not None]
    in_reorder = bool(diff.reordered) and any(_under(a, diff.reordered) for a in ends)
    if is_hidden(diff.old.nodes[old_id]) or is_hidden(diff.new.nodes[new_id]):
        diff.reorder_rewired |= in_reorder  # not drawn: the same dataflow is not known
        return None  # a collapsed node's inner wiring is not drawn: only its order is
    if None in before or any(p not in diff.reverse for p in after):
        return None
    if sorted(b for b in before if b is not None) == sorted(after):
        return _reordered_inputs(diff, old_id, new_id)
    if in_reorder:
        diff.reorder_rewired = True
        return None  # siblings that run in another order: their reorder says it
    names = tuple(diff.name(diff.new, p) for p in before if p is not None)
    now = diff.new.nodes[new_id]
    lost = [p for p in before if p is not None and p not in after]
    gained = [p for p in after if p not in before]
    if now.func in _JOINS and bool(lost) != bool(gained):
        ends = lost or gained
        source = min(ends, key=diff.order.__getitem__)
        kind = SkipRemoved if lost else SkipAdded
        return kind(now.address, now.func, diff.new.nodes[source].address, _drawn_id(now))
    after_names = tuple(diff.name(diff.new, p) for p in after)
    return Rewired(now.address, now.func, names, after_names, _drawn_id(now))


def _paired(diff: _Diff) -> None:
    """What each paired op changed, its inputs included."""
    for old_id, new_id in diff.pairing.pairs.items():
        if diff.new.nodes[new_id].kind in ("input", "output"):
            continue
        position = diff.order[new_id]
        rewired = _rewired(diff, old_id, new_id)
        skip = isinstance(rewired, SkipAdded | SkipRemoved)
        for edit in _changes(diff, old_id, new_id):
            if not (skip and isinstance(edit, ArgChanged) and None in (edit.old, edit.new)):
                diff.add(edit, position)  # an operand that became a tensor says the skip
        if rewired is not None:
            diff.add(rewired, position)


def _loose(
    diff: _Diff, graph: GraphModel, ids: Sequence[str], blocks: Iterable[str], stored: bool
) -> None:
    """The ops only one side runs, outside the blocks only it has: a new join of two
    values that both sides have is a skip connection."""
    used = _reaching(graph)
    blocks = set(blocks)
    partner = diff.pairing.pairs if stored else diff.reverse
    for node_id in ids:
        node = graph.nodes[node_id]
        if node.kind in ("input", "output") or _under(node.address, blocks) is not None:
            continue
        position = diff.old_position(node_id) if stored else diff.order[node_id]
        preds = graph.preds(node_id)
        if node.func in _JOINS and len(preds) >= 2 and all(p in partner for p in preds):
            source = min(preds, key=(diff.old_order if stored else diff.order).__getitem__)
            where = graph.nodes[source].address
            kind = SkipRemoved if stored else SkipAdded
            diff.add(kind(node.address, node.func, where, _drawn_id(node)), position)
            continue
        unused = node_id not in used
        edit = OpRemoved if stored else OpAdded
        args = ", ".join(f"{k}={v}" for k, v in op_facts(node).args.items())
        at = node.address
        if node.func == "const" and not at:  # a constant: where it is read
            at = _shared_address([graph.nodes[n].address for n in graph.succs(node.id)])
        diff.add(edit(at, node.func, unused, args, _drawn_id(node)), position)


def _hidden_runs(graph: GraphModel) -> dict[str, list[str]]:
    """Each collapsed address -> the functions of the ops it hides, in run order."""
    out: dict[str, list[str]] = {}
    for node in graph.nodes.values():
        if is_hidden(node):
            out.setdefault(node.address, []).append(node.func)
    return out


def _reordered(diff: _Diff) -> None:
    """A collapsed node whose hidden ops run in another order (same functions)."""
    stored = {diff.alignment.translate(a): f for a, f in _hidden_runs(diff.old).items()}
    for address, funcs in _hidden_runs(diff.new).items():
        before = stored.get(address)
        if before is not None and before != funcs and sorted(before) == sorted(funcs):
            start = 0
            while before[start] == funcs[start]:
                start += 1
            end = len(funcs)
            while before[end - 1] == funcs[end - 1]:
                end -= 1
            held = diff.new.nodes_under(address)
            position = min((diff.order[n] for n in held), default=0)
            diff.add(
                OpsReordered(address, tuple(before[start:end]), tuple(funcs[start:end])), position
            )


def _digest(signature: str | None) -> str | None:
    return None if signature is None else signature.partition(" ")[0]


def _collapsed(graph: GraphModel) -> dict[tuple[str, str], tuple[str, str, tuple[str, ...]]]:
    """Each collapsed node's and fold frame's ``(kind, address)`` -> its type, digest
    and the module addresses its digest covers (a node in a fold frame: its own at
    every repetition of the frame)."""
    out: dict[tuple[str, str], tuple[str, str, tuple[str, ...]]] = {}
    for node in graph.nodes.values():
        digest = _digest(node.signature)
        if node.kind in ("box", "fold", "segment") and digest:
            reps = repetitions(node.address, node.fold_count or 1)
            for cid in graph.cluster_path(node.id):
                frame = graph.clusters[cid]
                if frame.kind == "fold" and (frame.fold_count or 1) > 1:
                    first = frame.fold_first or frame.address
                    rest = node.address[len(first) :]
                    reps = [rep + rest for rep in repetitions(first, frame.fold_count or 1)]
            out[(node.kind, node.address)] = (node.type or node.kind, digest, tuple(reps))
    for cluster in graph.clusters.values():
        digest = _digest(cluster.signature)
        if cluster.kind == "fold" and digest:
            first = cluster.fold_first or cluster.address
            covered = tuple(repetitions(first, cluster.fold_count or 1))
            out.setdefault(("frame", first), (cluster.type or "", digest, covered))
    return out


def _inside(diff: _Diff, old: GraphModel, new: GraphModel) -> None:
    """A collapsed node whose digest moved with no edit found below it."""
    translate = diff.alignment.translate
    stored = {
        (kind, translate(a)): (typ, digest, tuple(translate(r) for r in reps))
        for (kind, a), (typ, digest, reps) in _collapsed(old).items()
    }
    told = {p for _, _, edit in diff.found for p in [*_prefixes(edit.address), edit.address]}
    for key, (kind, digest, reps) in _collapsed(new).items():
        address = key[1]
        before = stored.get(key)
        if before is None or before[1] == digest or before[2] != reps:
            continue  # a fold of another count: the block added or removed says it
        if any(rep in told for rep in reps):
            continue
        held = [n for rep in reps for n in diff.new.nodes_under(rep)]
        position = min((diff.order[n] for n in held), default=0)
        diff.add(InsideChanged(address, kind), position)


def _renumbered(diff: _Diff, originals: Mapping[str, str]) -> None:
    """Drawn ops paired under another id, when nothing else changed."""
    count = sum(1 for a, b in originals.items() if a != b)
    if count and not diff.found:
        diff.add(OpsRenumbered(count), 0)


def _opened(old: GraphModel, new: GraphModel) -> tuple[GraphModel, GraphModel]:
    """Both drawings opened, each op at an address both sides record: below a box
    either side draws, neither side's address is kept (modules paired once first)."""
    old_side, new_side = op_level(old), op_level(new)
    old_open, new_open = old_side.graph, new_side.graph
    old_cuts, new_cuts = old_side.collapsed, new_side.collapsed
    if not old_cuts and not new_cuts:
        return old_open, new_open
    first = align_modules(old_open, new_open)
    to_new = set(new_cuts) | {first.translate(a) for a in old_cuts}
    to_old = set(old_cuts) | {back(first, a) for a in new_cuts}
    return coarsened(old_open, to_old), coarsened(new_open, to_new)


def model_diff(old: GraphModel, new: GraphModel) -> ModelDiff:
    """Both drawings opened and compared (see the module docstring)."""
    diff = _Diff(*_opened(old, new))
    _blocks(diff)
    _repeats(diff)
    _paired(diff)
    taken = set(diff.pairing.pairs.values())
    _loose(diff, diff.new, [n for n in diff.new.nodes if n not in taken], diff.added, False)
    free = [n for n in diff.old.nodes if n not in diff.pairing.pairs]
    _loose(diff, diff.old, free, [a for a in diff.removed], True)
    _reordered(diff)
    _inside(diff, old, new)
    if not diff.reorder_rewired:  # siblings reordered with the same dataflow
        diff.found = [
            (
                rank,
                at,
                dataclasses.replace(e, same_flow=True) if isinstance(e, BlocksReordered) else e,
            )
            for rank, at, e in diff.found
        ]
    drawn = {a: b for a, b in diff.pairing.pairs.items() if a in old.nodes and b in new.nodes}
    _renumbered(diff, drawn)
    edits = tuple(edit for _, _, edit in sorted(diff.found, key=lambda item: item[:2]))
    return ModelDiff(diff.old, diff.new, diff.pairing, edits)


def model_edits(old: GraphModel, new: GraphModel) -> tuple[Edit, ...]:
    """The typed edits between two drawings of one view (see the module docstring)."""
    return model_diff(old, new).edits
