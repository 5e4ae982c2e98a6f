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
import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from pytest_tlgraph.diff.alignment import Alignment, frame_fold_count, repetitions
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
from pytest_tlgraph.diff.graph import GraphModel
from pytest_tlgraph.diff.inside import fold_name

__all__ = [
    "Holder",
    "ViewPair",
    "address_pattern",
    "back",
    "counts",
    "edit_groups",
    "edit_lines",
    "holder",
    "starred",
    "view_pair",
    "what",
]

_NUMERIC: Final = re.compile(r"\d+")
_NUMERIC_SPLIT: Final = re.compile(r"(\d+)")
#: Modules a grouped line lists by address (more read as a count and a pattern).
_LISTED: Final = 3
_UNUSED: Final = " (reaches no output)"
#: The edits of one op: the same edit on other ops shares a line.
_OP_EDITS: Final = (
    OpAdded, OpRemoved, OpReplaced, ArgChanged, ShapeChanged, DtypeChanged, ParamsChanged,
    GradModeChanged, Rewired, SkipAdded, SkipRemoved,
)  # fmt: skip
#: The fields that say where an edit is, not what it is.
_PLACE: Final = frozenset({"at", "id", "old_id"})


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
    return _back({new: old for old, new in alignment.paired.items()}, address)


def _back(reverse: Mapping[str, str], address: str) -> str:
    """``address`` with its longest aligned head replaced by the stored side's."""
    parts = address.split(".") if address else []
    for cut in range(len(parts), -1, -1):
        head = reverse.get(".".join(parts[:cut]))
        if head is not None:
            rest = ".".join(parts[cut:])
            return f"{head}.{rest}" if head and rest else head or rest
    return address


def view_pair(old: GraphModel, new: GraphModel, alignment: Alignment) -> ViewPair:
    """The two drawings of one view with their modules' alignment."""
    reverse = {b: a for a, b in alignment.paired.items()}
    return ViewPair(old, new, alignment.translate, functools.partial(_back, reverse))


def _prefixes(address: str) -> list[str]:
    """``a.b.c`` -> ``a``, ``a.b``, ``a.b.c``."""
    parts = address.split(".") if address else []
    return [".".join(parts[: n + 1]) for n in range(len(parts))]


def _index(graph: GraphModel) -> tuple[dict[str, Holder], dict[str, Holder]]:
    """Address -> the fold standing for it, and -> the box holding it (and, under
    ``module:<address>``, the type of the frame drawn for it)."""
    folds: dict[str, Holder] = {}
    boxes: dict[str, Holder] = {}
    for cluster in graph.clusters.values():
        boxes.setdefault(f"module:{cluster.address}", Holder("module", "", cluster.type or ""))
    for node in graph.nodes.values():  # the addresses an op is drawn at
        boxes.setdefault(f"op:{node.address}", Holder("op", node.address))
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
        elif node.kind in ("box", "fold"):  # a segment's ops lie at several addresses
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
    kind = "op" if f"op:{address}" in boxes else "module"
    frame = boxes.get(f"module:{address}")
    return Holder(kind, address, frame.type if frame is not None else "")


def _fold_span(held: Holder) -> str:
    return fold_name(held.address, held.last or held.address, held.count, held.type or "fold")


def _holder_name(view: ViewPair, held: Holder, stored: bool) -> str:
    """The holder as a reviewer finds it; a fold whose count the edit changed reads
    ``x4 -> x3 @blocks.0-2 (GPTBlock)`` (the received fold)."""
    if held.kind != "fold":
        typed = f" ({held.type})" if held.type and held.kind != "op" else ""
        return f"@{held.address}{typed}"
    first = view.translate(held.address) if stored else view.back(held.address)
    other_graph = view.new if stored else view.old
    other = holder(other_graph, first)
    if other.kind != "fold" and other.address == first and _drawn(other_graph, first):
        # The other side draws the module on its own: one repetition, not a fold.
        one = f"x1 @{first}" + (f" ({held.type})" if held.type else "")
        return f"x{held.count} -> {one}" if stored else f"x1 -> {_fold_span(held)}"
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


def constant_title(edit: ConstantChanged) -> str:
    """``inv_freq @model.rotary_emb (buffer, 4, f32)``, ``const_2 @blocks.0.attn
    (constant, 8x8, bool)``: a constant's name (its id when computed in forward), where
    the model keeps or reads it, its kind, shape and dtype."""
    name = edit.name or edit.id or "a constant"
    if edit.source == "buffer" and edit.at and name.startswith(edit.at + "."):
        name = name[len(edit.at) + 1 :]
    where = f" @{edit.at}" if edit.at else ""
    return f"{name}{where} ({', '.join(p for p in (edit.source, edit.shape, edit.dtype) if p)})"


def _value(value: str | None) -> str:
    return "(default)" if value is None else value


def _params(old: str, new: str) -> str:
    """``weight 8x3x7x7 -> 8x3x5x5``: the params whose shape changed, by name, when
    both sides name the same params; else both rows whole."""
    before = dict(p.partition(" ")[::2] for p in old.split(", "))
    after = dict(p.partition(" ")[::2] for p in new.split(", "))
    if list(before) != list(after):
        return f"{old} -> {new}"
    changed = [
        f"{name} {before[name]} -> {after[name]}" for name in after if before[name] != after[name]
    ]
    return ", ".join(changed) or f"{old} -> {new}"


def _op_what(edit: Edit) -> str:
    """What one op-level edit says, the op and its address left out."""
    if isinstance(edit, ArgChanged):
        return f"{edit.name} {_value(edit.old)} -> {_value(edit.new)}"
    if isinstance(edit, ShapeChanged):
        return f"shape {edit.old} -> {edit.new}"
    if isinstance(edit, DtypeChanged):
        return f"dtype {edit.old} -> {edit.new}"
    if isinstance(edit, ParamsChanged):
        return f"params {_params(edit.old, edit.new)}"
    if isinstance(edit, GradModeChanged):
        if edit.old == "grad":
            return f"now runs under {edit.new}"
        if edit.new == "grad":
            return f"no longer runs under {edit.old}"
        return f"runs under {edit.new} (was {edit.old})"
    if isinstance(edit, Rewired) and sorted(edit.before) == sorted(edit.after):
        return f"inputs reordered ({', '.join(edit.before)}) -> ({', '.join(edit.after)})"
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
    if isinstance(edit, ConstantChanged):
        if edit.old.startswith("#") and edit.new.startswith("#"):  # digests
            return f"values changed ({edit.old} -> {edit.new})"
        return f"values {edit.old} -> {edit.new}"
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
        same = "; the same dataflow, only the order they run in" if edit.same_flow else ""
        return f"order changed in @{parent or '(top level)'}: {before} -> {after}{same}"
    if isinstance(edit, RepeatCountChanged):
        return f"@{edit.at} ({edit.type}) runs {edit.old} -> {edit.new} times"
    if isinstance(edit, OpsRenumbered):
        return f"only node ids renumbered ({edit.count}), the same computation"
    return None


def _note(view: ViewPair, edit: Edit) -> str:
    """What the view drew otherwise at the edit's place: a box shut on one side and
    open on the other."""
    address = edit.address
    if isinstance(edit, BlockInserted | BlockRemoved):
        return ""  # the block is on one side only: nothing of it to draw otherwise
    on_new = address if not edit.removed_side else view.translate(address)
    on_old = address if edit.removed_side else view.back(address)
    old_box = holder(view.old, on_old)
    new_box = holder(view.new, on_new)
    if old_box.kind == "box" and new_box.kind != "box" and new_box.kind != "fold":
        return f"; drawn open, was one box @{old_box.address}"
    if new_box.kind == "box" and old_box.kind not in ("box", "fold"):
        return f"; drawn as one box, was open @{old_box.address}"
    return ""


def _drawn(graph: GraphModel, address: str) -> bool:
    """Whether ``graph`` draws ``address``: an op at it, or a frame, box or fold of it."""
    folds, boxes = _indexed(graph)
    return any(key in boxes for key in (f"op:{address}", f"module:{address}", address)) or (
        address in folds
    )


def _side(view: ViewPair, edit: Edit) -> tuple[Holder, bool]:
    """What holds the edit's address, and whether on the stored side: the received
    side wherever it draws the address (a skip removed in a block both sides run is
    named where the block is now, not in the fold the stored side drew it in)."""
    if not edit.removed_side:
        return holder(view.new, edit.address), False
    now = view.translate(edit.address) if edit.address else ""
    if now and _drawn(view.new, now):
        return holder(view.new, now), False
    return holder(view.old, edit.address), True


def _subject(view: ViewPair, edit: Edit) -> tuple[str, str]:
    """The holder's name and the edit's address below it (see :func:`_side`)."""
    held, stored = _side(view, edit)
    name = _holder_name(view, held, stored)
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
    if isinstance(first, ConstantChanged):
        return f"{constant_title(first)}: {what(first)}" + _note(view, first)
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
        if first.id:  # a module of one op drawn on its own: the op
            return f"{verb} {first.id} @{first.address}" + (_UNUSED if first.unused else "")
        typed = f" ({first.type or ', '.join(first.funcs)})" if first.type or first.funcs else ""
        count = f"{first.ops} op{'s' * (first.ops != 1)}"
        unused = _UNUSED if first.unused else ""
        return f"{verb} @{first.address}{typed}: {count}{unused}" + _note(view, first)
    if isinstance(first, BlockInserted | BlockRemoved | SkipAdded | SkipRemoved):
        below = ""
    text = f"{below} {said}" if below else said
    boxed = _side(view, first)[0].kind in ("box", "fold")
    if boxed and not isinstance(first, BlockInserted | BlockRemoved):
        text = f"inside: {text}"  # an edit of what the box or fold hides
    return (f"{name}: {text}" if name else text) + _note(view, first)


def address_pattern(addresses: Sequence[str]) -> str:
    """``@layer*.*.conv1`` for ``layer1.0.conv1`` and ``layer2.1.conv1``: the common
    pattern of each depth's addresses (``*`` where they differ, a numeric run inside
    a segment alone when the rest agrees)."""
    by_depth: dict[int, list[list[str]]] = {}
    for address in dict.fromkeys(addresses):
        parts = address.split(".") if address else []
        by_depth.setdefault(len(parts), []).append(parts)
    patterns = []
    for rows in by_depth.values():
        out = []
        for column in zip(*rows, strict=True):
            shapes = {_NUMERIC.sub("*", part) for part in column}
            same = len(set(column)) == 1
            out.append(column[0] if same else shapes.pop() if len(shapes) == 1 else "*")
        patterns.append(".".join(out))
    return ", ".join(f"@{p}" if p else "(top level)" for p in patterns)


def _key(edit: Edit) -> tuple[object, ...]:
    """An edit with its address left out: the same edit on other modules."""
    place = _PLACE | {"op"} if isinstance(edit, ShapeChanged) else _PLACE
    names = [f.name for f in dataclasses.fields(edit) if f.name not in place]
    return (type(edit), *(getattr(edit, name) for name in names))


def edit_lines(edits: Sequence[Edit], view: ViewPair) -> list[str]:
    """``edits`` as lines, most telling first (see the module docstring): each edit
    grouped with the same edit on other ops (its values alike but in the sizes they
    share, written ``*``), and the edits that fall on the same ops on one line."""
    return [line for line, _ in edit_groups(edits, view)]


def edit_groups(edits: Sequence[Edit], view: ViewPair) -> list[tuple[str, tuple[Edit, ...]]]:
    """:func:`edit_lines`, each line with the edits it tells (the first names the
    place a reader is sent to: a report links a line to the node holding that edit)."""
    by_edit: dict[tuple[object, ...], list[Edit]] = {}
    for edit in edits:
        alone = not isinstance(edit, _OP_EDITS)  # an edit of modules: a line of its own
        by_edit.setdefault((id(edit),) if alone else _general(edit), []).append(edit)
    by_place: dict[tuple[tuple[str, str, bool], ...], list[list[Edit]]] = {}
    for alike in by_edit.values():
        place = tuple((e.address, str(getattr(e, "id", "")), e.removed_side) for e in alike)
        by_place.setdefault(place, []).append(alike)
    out: list[tuple[str, tuple[Edit, ...]]] = []
    for place, kinds in by_place.items():
        told = tuple(e for alike in kinds for e in alike)
        if len(place) == 1:
            out.append((_line(view, [alike[0] for alike in kinds]), told))
            continue
        said = []
        for alike in kinds:
            exact = len({_key(e) for e in alike}) == 1
            said.append(_said([alike[0] if exact else _starred(alike[0])]))
        line = _group_line([alike_[0] for alike_ in zip(*kinds, strict=True)], said)
        out.append((line, told))
    return out


def _said(edits: Sequence[Edit]) -> str:
    """What one op's edits say, the op's place left out."""
    return "; ".join(dict.fromkeys(_op_what(e) or what(e) for e in edits))


def _group_line(alike: Sequence[Edit], whats: Sequence[str]) -> str:
    """The same edits on several ops (one edit of each): ``replaced relu -> silu on 16
    nodes @layer*.*.relu``, ``16 nodes @layer*.*.conv*: kernel_size (3, 3) -> (5, 5)``."""
    addresses = list(dict.fromkeys(e.address for e in alike))
    where = address_pattern(addresses)
    if len(addresses) <= _LISTED and ("*" not in where or not where.strip("@*.")):
        # A few places are named each; ``@*`` (anywhere) would name none.
        where = ", ".join(f"@{a}" for a in addresses)
    drawn = all(getattr(e, "id", "") for e in alike)
    noun = f"{len(alike)} {'nodes' if drawn else 'ops'}"
    first = alike[0]
    if isinstance(first, OpReplaced) and len(whats) == 1:
        return f"replaced {first.old} -> {first.new} on {noun} {where}"
    op = {getattr(e, "op", "") for e in alike}
    prefix = f"{op.pop()} " if len(op) == 1 and not drawn and _op_what(first) else ""
    return f"{noun} {where}: {prefix}{'; '.join(whats)}"


def starred(old: str, new: str) -> tuple[str, str] | None:
    """Public name of :func:`_stars`: two values alike but in some numbers, the numbers
    they share written ``*`` (the same edit at other sizes reads as one)."""
    return _stars(old, new)


def _stars(old: str, new: str) -> tuple[str, str] | None:
    """``8x8x3x3``, ``8x8x5x5`` -> ``*x*x3x3``, ``*x*x5x5``: two values alike but in
    some numbers, the numbers they share written ``*`` (``None``: not so alike)."""
    a, b = _NUMERIC_SPLIT.split(old), _NUMERIC_SPLIT.split(new)
    if len(a) != len(b) or a[0::2] != b[0::2]:
        return None
    kept = [x == y for x, y in zip(a[1::2], b[1::2], strict=True)]
    if all(kept) or not any(kept):
        return old, new

    def star(parts: list[str]) -> str:
        return "".join(p if i % 2 == 0 or not kept[i // 2] else "*" for i, p in enumerate(parts))

    return star(a), star(b)


def _starred(edit: Edit) -> Edit:
    """``edit`` with its two values written as :func:`_stars` does, where they read so."""
    old, new = getattr(edit, "old", None), getattr(edit, "new", None)
    if not isinstance(old, str) or not isinstance(new, str):
        return edit
    if isinstance(edit, ParamsChanged):
        pairs = [_stars(x, y) for x, y in zip(old.split(", "), new.split(", "), strict=False)]
        if old.count(", ") != new.count(", ") or not all(pairs):
            return edit
        stars = [p for p in pairs if p is not None]
        starred: Edit = dataclasses.replace(
            edit, old=", ".join(x for x, _ in stars), new=", ".join(y for _, y in stars)
        )
        return starred
    found = _stars(old, new)
    plain: Any = edit
    if found is None:
        return edit
    out: Edit = dataclasses.replace(plain, old=found[0], new=found[1])
    return out


def _general(edit: Edit) -> tuple[object, ...]:
    """The edit's key with its values starred: the same edit at other sizes."""
    return _key(_starred(edit))


def counts(edits: Sequence[Edit]) -> Mapping[str, int]:
    """How many edits of each kind (``summary.json``)."""
    out: dict[str, int] = {}
    for edit in edits:
        out[edit.kind] = out.get(edit.kind, 0) + 1
    return out
