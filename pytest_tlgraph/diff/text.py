"""Typed edits told in lines, at the view's addresses: the one writer of edit text.

Each edit is named where the view draws it (:func:`holder`): the fold, box or frame
that holds its address (``x4 @blocks.0-3 (GPTBlock)``, ``@blocks.2.mlp (MLP)``), or its
own module when the view draws its op (``@blocks.2.ln1``). What the view did because of
the edit is a note on the same line, never a line of its own: a fold that repeats
another number of times reads in the holder (``x4 -> x3 @blocks.0-2 (GPTBlock): block
@blocks.3 removed``), a box the view draws open on one side and shut on the other after
the edit (``; drawn open, was one box``). The edits of one op share a line; the same
edit on many modules is one line with their count and address pattern. Nothing reads
these lines back: every consumer takes the typed edits.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from pytest_tlgraph.diff.alignment import Alignment, frame_fold_count, repetitions
from pytest_tlgraph.diff.edits import (
    ArgChanged,
    BlockInserted,
    BlockMoved,
    BlockRemoved,
    BlocksReordered,
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
from pytest_tlgraph.diff.graph import GraphModel
from pytest_tlgraph.diff.inside import fold_name

__all__ = [
    "Holder",
    "ViewPair",
    "back",
    "counts",
    "edit_lines",
    "every_line",
    "holder",
    "view_pair",
    "what",
]

_NUMERIC: Final = re.compile(r"\d+")
#: Modules a grouped line lists by address (more read as a count and a pattern).
_LISTED: Final = 3
_UNUSED: Final = " (reaches no output)"


@dataclass(frozen=True, slots=True)
class Holder:
    """What a view draws an address in: a ``fold`` (a fold node or frame), a ``box``
    (or segment), an ``op`` drawn at the address itself, or ``module`` (a frame)."""

    kind: str
    address: str
    type: str = ""
    last: str = ""
    count: int = 1
    #: The drawn node's id (a fold frame's: its cluster's id).
    id: str = ""


@dataclass(frozen=True, slots=True)
class ViewPair:
    """The two drawings of one view and how the stored side's addresses read on the
    received side (and back)."""

    old: GraphModel
    new: GraphModel
    translate: Callable[[str], str]
    back: Callable[[str], str]


def back(alignment: Alignment, address: str) -> str:
    """A received address as the stored side writes the same module (the inverse of
    :meth:`.alignment.Alignment.translate`)."""
    reverse = {new: old for old, new in alignment.paired.items()}
    parts = address.split(".") if address else []
    for cut in range(len(parts), -1, -1):
        head = reverse.get(".".join(parts[:cut]))
        if head is not None:
            rest = ".".join(parts[cut:])
            return f"{head}.{rest}" if head and rest else head or rest
    return address


def view_pair(old: GraphModel, new: GraphModel, alignment: Alignment) -> ViewPair:
    """The two drawings of one view with their modules' alignment."""
    return ViewPair(old, new, alignment.translate, lambda address: back(alignment, address))


def _prefixes(address: str) -> list[str]:
    """``a.b.c`` -> ``a``, ``a.b``, ``a.b.c``."""
    parts = address.split(".") if address else []
    return [".".join(parts[: n + 1]) for n in range(len(parts))]


def _index(graph: GraphModel) -> tuple[dict[str, Holder], dict[str, Holder]]:
    """Address -> the fold standing for it, and -> the box or segment holding it."""
    folds: dict[str, Holder] = {}
    boxes: dict[str, Holder] = {}
    for cid, cluster in graph.clusters.items():
        count = frame_fold_count(cluster)
        if count > 1:
            first = cluster.fold_first or cluster.address
            held = Holder("fold", first, cluster.type or "", cluster.fold_last or first, count, cid)
            for rep in repetitions(first, count):
                folds.setdefault(rep, held)
    for node in graph.nodes.values():
        if node.kind == "fold" and (node.fold_count or 1) > 1:
            first = node.fold_first or node.address
            count = node.fold_count or 1
            held = Holder("fold", first, node.func, node.fold_last or first, count, node.id)
            for rep in repetitions(first, count):
                folds.setdefault(rep, held)
        elif node.kind in ("box", "segment", "fold"):
            boxes.setdefault(node.address, Holder("box", node.address, node.type or "", id=node.id))
    return folds, boxes


_INDEXES: dict[int, tuple[GraphModel, tuple[dict[str, Holder], dict[str, Holder]]]] = {}


def _indexed(graph: GraphModel) -> tuple[dict[str, Holder], dict[str, Holder]]:
    hit = _INDEXES.get(id(graph))
    if hit is None or hit[0] is not graph:
        if len(_INDEXES) > 8:
            _INDEXES.clear()
        hit = (graph, _index(graph))
        _INDEXES[id(graph)] = hit
    return hit[1]


def holder(graph: GraphModel, address: str) -> Holder:
    """Where ``graph`` draws ``address`` (see :class:`Holder`): the outermost fold
    standing for it, else the box holding it, else its own module."""
    folds, boxes = _indexed(graph)
    for prefix in _prefixes(address):
        if prefix in folds:
            return folds[prefix]
    for prefix in reversed(_prefixes(address)):
        if prefix in boxes:
            return boxes[prefix]
    drawn = (graph.nodes[n] for n in graph.nodes_under(address))
    kind = "op" if any(n.address == address for n in drawn) else "module"
    cluster = next((c for c in graph.clusters.values() if c.address == address), None)
    return Holder(kind, address, (cluster.type or "") if cluster is not None else "")


def _fold_span(held: Holder) -> str:
    return fold_name(held.address, held.last or held.address, held.count, held.type or "fold")


def _holder_name(view: ViewPair, held: Holder, stored: bool) -> str:
    """The holder as a reviewer finds it; a fold whose count the edit changed reads
    ``x4 -> x3 @blocks.0-2 (GPTBlock)`` (the received fold)."""
    if held.kind != "fold":
        typed = f" ({held.type})" if held.type and held.kind != "op" else ""
        return f"@{held.address}{typed}"
    first = view.translate(held.address) if stored else view.back(held.address)
    other = holder(view.new if stored else view.old, first)
    if other.kind != "fold" or other.count == held.count:
        if stored and other.kind == "fold":
            return _fold_span(other)
        return _fold_span(held)
    before, after = (held, other) if stored else (other, held)
    return f"x{before.count} -> {_fold_span(after)}"


def _relative(address: str, held: Holder) -> str:
    """``address`` below a box's (``mlp.fc1`` in ``@blocks.2``); in full under a fold
    (which stands for several modules) or where it is the holder's own."""
    if held.kind == "box" and address.startswith(held.address + "."):
        return address[len(held.address) + 1 :]
    return "" if held.kind in ("op", "box") and address == held.address else f"@{address}"


def _value(value: str | None) -> str:
    return "(default)" if value is None else value


def _op_what(edit: Edit) -> str:
    """What one op-level edit says, the op and its address left out."""
    if isinstance(edit, ArgChanged):
        return f"{edit.name} {_value(edit.old)} -> {_value(edit.new)}"
    if isinstance(edit, ShapeChanged):
        return f"shape {edit.old} -> {edit.new}"
    if isinstance(edit, DtypeChanged):
        return f"dtype {edit.old} -> {edit.new}"
    if isinstance(edit, ParamsChanged):
        return f"params {edit.old} -> {edit.new}"
    if isinstance(edit, GradModeChanged):
        if edit.old == "grad":
            return f"now runs under {edit.new}"
        if edit.new == "grad":
            return f"no longer runs under {edit.old}"
        return f"runs under {edit.new} (was {edit.old})"
    if isinstance(edit, Rewired):
        return f"reads {', '.join(edit.after) or 'nothing'} (was {', '.join(edit.before)})"
    return ""


def what(edit: Edit) -> str:
    """The edit said without where the view draws it (``added mean(dim=1) (reaches no
    output)``; ``eps 1e-05 -> 1e-06``)."""
    if isinstance(edit, BlockInserted | BlockRemoved):
        verb = "added" if isinstance(edit, BlockInserted) else "removed"
        ops = f"{edit.ops} op{'s' * (edit.ops != 1)}"
        return f"block @{edit.at} {verb} ({ops})" + (_UNUSED if edit.unused else "")
    if isinstance(edit, OpAdded | OpRemoved):
        verb = "added" if isinstance(edit, OpAdded) else "removed"
        args = f"({edit.args})" if edit.args else ""
        return f"{verb} {edit.op}{args}" + (_UNUSED if edit.unused else "")
    if isinstance(edit, OpReplaced):
        return f"{edit.old} -> {edit.new}"
    if isinstance(edit, SkipAdded | SkipRemoved):
        verb = "added" if isinstance(edit, SkipAdded) else "removed"
        return f"skip {verb}: @{edit.source or '(top level)'} -> {edit.op} @{edit.at}"
    if isinstance(edit, OpsReordered):
        return f"order changed: {', '.join(edit.before)} -> {', '.join(edit.after)}"
    if isinstance(edit, InsideChanged):
        return (
            "same ops, shapes and args; what changed is kept only in its digest (the "
            "names, wiring or parameters inside: a parameter's name or whether it trains)"
        )
    text = _op_what(edit)
    op = getattr(edit, "op", "")
    return f"{op} {text}" if op and text else text


def _block_line(view: ViewPair, edit: Edit) -> str | None:
    """The line of an edit of whole modules, or ``None`` for an op's."""
    if isinstance(edit, BlockMoved):
        return f"moved @{edit.old} -> @{edit.at} ({edit.type}), same content"
    if isinstance(edit, Renamed):
        parent = edit.at.rpartition(".")[0]
        inside = holder(view.new, parent) if parent else None
        where = f" in {_holder_name(view, inside, False)}" if inside is not None else ""
        old, new = edit.old.rpartition(".")[2], edit.at.rpartition(".")[2]
        return f"renamed {old} -> {new}{where}, same content"
    if isinstance(edit, BlocksReordered):
        parent = edit.at
        cut = len(parent) + 1 if parent else 0
        before = ", ".join(a[cut:] for a in edit.before)
        after = ", ".join(a[cut:] for a in edit.after)
        return f"order changed in @{parent or '(top level)'}: {before} -> {after}"
    if isinstance(edit, RepeatCountChanged):
        return f"@{edit.at} ({edit.type}) runs {edit.old} -> {edit.new} times"
    if isinstance(edit, OpsRenumbered):
        return f"only node ids renumbered ({edit.count}), the same computation"
    return None


def _note(view: ViewPair, edit: Edit) -> str:
    """What the view drew otherwise at the edit's place: a box shut on one side and
    open on the other."""
    address = edit.address
    on_new = address if not edit.removed_side else view.translate(address)
    on_old = address if edit.removed_side else view.back(address)
    old_box = holder(view.old, on_old)
    new_box = holder(view.new, on_new)
    if old_box.kind == "box" and new_box.kind != "box" and new_box.kind != "fold":
        return f"; drawn open, was one box @{old_box.address}"
    if new_box.kind == "box" and old_box.kind not in ("box", "fold"):
        return f"; drawn as one box, was open @{old_box.address}"
    return ""


def _subject(view: ViewPair, edit: Edit) -> tuple[str, str]:
    """The holder's name and the edit's address below it."""
    graph = view.old if edit.removed_side else view.new
    held = holder(graph, edit.address)
    name = _holder_name(view, held, edit.removed_side)
    if isinstance(edit, BlockInserted | BlockRemoved) and held.kind != "fold":
        return "", ""
    if isinstance(edit, InsideChanged | OpsReordered) and held.address == edit.address:
        return name, ""
    drawn = str(getattr(edit, "id", ""))
    if drawn and held.kind == "op" and held.address == edit.address:
        return f"{drawn} @{edit.address}" if edit.address else drawn, ""
    return name, _relative(edit.address, held)


def _line(view: ViewPair, edits: Sequence[Edit]) -> str:
    """One op's (or one block's) edits on one line."""
    first = edits[0]
    if isinstance(first, OpReplaced) and first.id and first.old_id:
        where = f" (@{first.address})" if first.address else ""
        return f"replaced {first.old_id} -> {first.id}{where}" + _note(view, first)
    block = _block_line(view, first)
    if block is not None:
        return block
    name, below = _subject(view, first)
    ops = {getattr(e, "op", None) for e in edits}
    op = ops.pop() if len(ops) == 1 else None
    if op and getattr(first, "id", "") and not below and all(_op_what(e) for e in edits):
        said = "; ".join(dict.fromkeys(_op_what(e) for e in edits))  # the id names the op
    elif op and all(_op_what(e) for e in edits):  # the op named once
        said = f"{op} " + "; ".join(dict.fromkeys(_op_what(e) for e in edits))
    else:
        said = "; ".join(dict.fromkeys(what(e) for e in edits))
    if isinstance(first, BlockInserted | BlockRemoved) and not name:
        verb = "added" if isinstance(first, BlockInserted) else "removed"
        typed = f" ({first.type})" if first.type else ""
        count = f"{first.ops} op{'s' * (first.ops != 1)}"
        unused = _UNUSED if first.unused else ""
        return f"{verb} @{first.address}{typed}: {count}{unused}" + _note(view, first)
    if isinstance(first, BlockInserted | BlockRemoved | SkipAdded | SkipRemoved):
        below = ""
    text = f"{below} {said}" if below else said
    graph = view.old if first.removed_side else view.new
    boxed = holder(graph, first.address).kind in ("box", "fold")
    if boxed and not isinstance(first, BlockInserted | BlockRemoved):
        text = f"inside: {text}"  # an edit of what the box or fold hides
    return (f"{name}: {text}" if name else text) + _note(view, first)


def _pattern(addresses: Sequence[str]) -> str:
    """``@layer*.*.conv1`` for ``layer1.0.conv1`` and ``layer2.1.conv1``."""
    rows = [a.split(".") for a in dict.fromkeys(addresses)]
    if len({len(r) for r in rows}) != 1:
        return ", ".join(f"@{a}" for a in dict.fromkeys(addresses))
    out = []
    for column in zip(*rows, strict=True):
        shapes = {_NUMERIC.sub("*", part) for part in column}
        out.append(
            column[0] if len(set(column)) == 1 else shapes.pop() if len(shapes) == 1 else "*"
        )
    return "@" + ".".join(out)


def _key(edit: Edit) -> tuple[object, ...]:
    """An edit with its address left out: the same edit on other modules."""
    names = [f.name for f in dataclasses.fields(edit) if f.name != "at"]
    return (type(edit), *(getattr(edit, name) for name in names))


def edit_lines(edits: Sequence[Edit], view: ViewPair) -> list[str]:
    """``edits`` as lines, most telling first (see the module docstring)."""
    by_op: dict[tuple[str, str, bool], list[Edit]] = {}
    for edit in edits:
        op = getattr(edit, "op", None)
        single = op is None or isinstance(edit, OpAdded | OpRemoved | SkipAdded | SkipRemoved)
        key = (edit.address, str(id(edit)) if single else str(op), edit.removed_side)
        by_op.setdefault(key, []).append(edit)
    groups: dict[tuple[object, ...], list[list[Edit]]] = {}
    for group in by_op.values():
        groups.setdefault(tuple(_key(e) for e in group), []).append(group)
    out = []
    for alike in groups.values():
        line = _line(view, alike[0])
        if len(alike) > 1:
            addresses = [g[0].address for g in alike]
            where = _pattern(addresses)
            if len(alike) <= _LISTED and "*" not in where:
                where = ", ".join(f"@{a}" for a in addresses)
            line = f"{len(alike)} modules {where}: {'; '.join(what(e) for e in alike[0])}"
        out.append(line)
    return out


def every_line(edits: Sequence[Edit], view: ViewPair) -> list[str]:
    """Each edit on its own line, none grouped (``report.html``'s full list)."""
    return [_line(view, [edit]) for edit in edits]


def counts(edits: Sequence[Edit]) -> Mapping[str, int]:
    """How many edits of each kind (``summary.json``)."""
    out: dict[str, int] = {}
    for edit in edits:
        out[edit.kind] = out.get(edit.kind, 0) + 1
    return out
