"""What changed in the model, as typed values: one frozen dataclass per kind of edit.

:mod:`.engine` produces them by comparing two drawings at op level, whatever the view;
:mod:`.text` is the one place they become lines. Every address is a full module address
of the model (``blocks.2.mlp.fc1``; ``""`` at the top), never a drawn node's id, so the
same edit reads the same in every view. Each edit has a JSON form (:func:`to_json`,
:func:`from_json`) that the failure records, ``summary.json`` and ``tlgraph report``
keep, so no reader ever parses a sentence back.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Final

__all__ = [
    "EDIT_KINDS",
    "ArgChanged",
    "BlockInserted",
    "BlockMoved",
    "BlockRemoved",
    "BlocksReordered",
    "ConstantChanged",
    "DtypeChanged",
    "Edit",
    "GradModeChanged",
    "InsideChanged",
    "OpAdded",
    "OpRemoved",
    "OpReplaced",
    "OpsRenumbered",
    "OpsReordered",
    "ParamsChanged",
    "Renamed",
    "RepeatCountChanged",
    "Rewired",
    "ShapeChanged",
    "SkipAdded",
    "SkipRemoved",
    "from_json",
    "to_json",
]


@dataclass(frozen=True, slots=True)
class Edit:
    """The base of every edit: :attr:`kind` names it in JSON, :attr:`address` is where
    it sits in the model (the received side's address, the stored one's for what only
    the stored side has)."""

    kind: ClassVar[str] = "edit"
    #: How telling the kind is, lowest first: what the model did (a block, an argument)
    #: before what follows from it (a shape downstream, ids renumbered).
    rank: ClassVar[int] = 2
    #: Whether the edit names what only the stored drawing has.
    removed_side: ClassVar[bool] = False

    @property
    def address(self) -> str:
        """The module address the edit sits at."""
        return str(getattr(self, "at", ""))


@dataclass(frozen=True, slots=True)
class _Block(Edit):
    """The fields of a module only one side has."""

    rank: ClassVar[int] = 0
    at: str
    type: str
    ops: int
    unused: bool = False
    #: Its one op's node id, where it holds one op drawn on its own.
    id: str = ""
    #: The functions it runs, where the drawing names no type for it (a module whose
    #: ops a box or fold hides).
    funcs: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class BlockInserted(_Block):
    """A module only the received side has (with everything in it)."""

    kind: ClassVar[str] = "block_inserted"


@dataclass(frozen=True, slots=True)
class BlockRemoved(_Block):
    """A module only the stored side has."""

    kind: ClassVar[str] = "block_removed"
    removed_side: ClassVar[bool] = True


@dataclass(frozen=True, slots=True)
class _Relocated(Edit):
    """The fields of a module found again under another address (``old``)."""

    rank: ClassVar[int] = 0
    at: str
    old: str
    type: str


@dataclass(frozen=True, slots=True)
class BlockMoved(_Relocated):
    """A module with the same content at another place in the module tree."""

    kind: ClassVar[str] = "block_moved"


@dataclass(frozen=True, slots=True)
class BlocksReordered(Edit):
    """Siblings that run in another order: their stored addresses, before and after."""

    kind: ClassVar[str] = "blocks_reordered"
    rank: ClassVar[int] = 0
    at: str
    before: tuple[str, ...]
    after: tuple[str, ...]
    #: Whether the dataflow between them is the same (only the order they run in).
    same_flow: bool = False


@dataclass(frozen=True, slots=True)
class Renamed(_Relocated):
    """A module under another name, same content."""

    kind: ClassVar[str] = "renamed"


@dataclass(frozen=True, slots=True)
class RepeatCountChanged(Edit):
    """A module called another number of times (a loop over one cell)."""

    kind: ClassVar[str] = "repeat_count_changed"
    rank: ClassVar[int] = 1
    at: str
    type: str
    old: int
    new: int


@dataclass(frozen=True, slots=True)
class _LoneOp(Edit):
    """The fields of an op only one side runs."""

    at: str
    op: str
    unused: bool = False
    #: Its own arguments (``dtype=torch.bfloat16``), as the drawing records them.
    args: str = ""
    #: The op's node id where the drawing draws it on its own.
    id: str = ""


@dataclass(frozen=True, slots=True)
class OpAdded(_LoneOp):
    """An op only the received side runs (outside any module it adds whole)."""

    kind: ClassVar[str] = "op_added"


@dataclass(frozen=True, slots=True)
class OpRemoved(_LoneOp):
    """An op only the stored side runs."""

    kind: ClassVar[str] = "op_removed"
    removed_side: ClassVar[bool] = True


@dataclass(frozen=True, slots=True)
class OpReplaced(Edit):
    """Another function in the same place (``relu`` -> ``silu``)."""

    kind: ClassVar[str] = "op_replaced"
    rank: ClassVar[int] = 1
    at: str
    old: str
    new: str
    #: The op's node id where the drawing draws it on its own.
    id: str = ""
    #: The stored op's node id, where drawn on its own.
    old_id: str = ""


@dataclass(frozen=True, slots=True)
class ArgChanged(Edit):
    """One argument of one op (a module's constructor argument, or a call's) with
    both values; ``None``: the side does not show it."""

    kind: ClassVar[str] = "arg_changed"
    rank: ClassVar[int] = 1
    at: str
    op: str
    name: str
    old: str | None
    new: str | None
    #: The op's node id where the drawing draws it on its own.
    id: str = ""


@dataclass(frozen=True, slots=True)
class ConstantChanged(Edit):
    """The values of a tensor drawn by value (a ``const`` node: a non-persistent
    buffer, a tensor made outside the forward, a table computed from constants alone).

    Ranked with what follows from other edits: a table computed from sizes changes
    with them (the sizes' edit reads first); alone (a RoPE base, a mask window) it is
    the first line."""

    kind: ClassVar[str] = "constant_changed"
    rank: ClassVar[int] = 2
    at: str
    #: The buffer's or attribute's full name; ``""`` for a table computed in forward.
    name: str
    #: ``buffer``, ``attribute`` or ``constant`` (computed from constants alone).
    source: str
    shape: str
    dtype: str
    #: The values as the node writes them: a handful in full, else a ``#`` digest.
    old: str
    new: str
    id: str = ""


@dataclass(frozen=True, slots=True)
class _OpValue(Edit):
    """The fields of one recorded value of one op, on both sides."""

    at: str
    op: str
    old: str
    new: str
    #: The op's node id where the drawing draws it on its own.
    id: str = ""


@dataclass(frozen=True, slots=True)
class ShapeChanged(_OpValue):
    """An op's output shape."""

    kind: ClassVar[str] = "shape_changed"


@dataclass(frozen=True, slots=True)
class DtypeChanged(_OpValue):
    """An op's output dtype (``float32`` -> ``bfloat16``)."""

    kind: ClassVar[str] = "dtype_changed"
    rank: ClassVar[int] = 1


@dataclass(frozen=True, slots=True)
class ParamsChanged(_OpValue):
    """An op's parameters (``weight 128x32, bias 128`` -> ``weight 64x32, bias 64``).

    Ranked with what the model did (a learned tensor's shape is a layer's own size,
    ``out_features`` in all but name), before the shapes that follow from it."""

    kind: ClassVar[str] = "params_changed"
    rank: ClassVar[int] = 1


@dataclass(frozen=True, slots=True)
class GradModeChanged(_OpValue):
    """An op run under another grad mode (``no_grad``, ``inference_mode``)."""

    kind: ClassVar[str] = "grad_mode_changed"
    rank: ClassVar[int] = 1


@dataclass(frozen=True, slots=True)
class Rewired(Edit):
    """An op reading other inputs (each input as ``op @address``), or the same ones in
    another order."""

    kind: ClassVar[str] = "rewired"
    at: str
    op: str
    before: tuple[str, ...]
    after: tuple[str, ...]
    #: The op's node id where the drawing draws it on its own.
    id: str = ""


@dataclass(frozen=True, slots=True)
class _Skip(Edit):
    """The fields of an op joining a value from further up (``source``) into the flow
    at ``at``."""

    rank: ClassVar[int] = 1
    at: str
    op: str
    source: str
    #: The op's node id where the drawing draws it on its own.
    id: str = ""


@dataclass(frozen=True, slots=True)
class SkipAdded(_Skip):
    """A new joining op: a residual connection."""

    kind: ClassVar[str] = "skip_added"


@dataclass(frozen=True, slots=True)
class SkipRemoved(_Skip):
    """A joining op the stored side had (a residual connection removed)."""

    kind: ClassVar[str] = "skip_removed"
    removed_side: ClassVar[bool] = True


@dataclass(frozen=True, slots=True)
class OpsReordered(Edit):
    """The ops a collapsed node hides run in another order (same functions)."""

    kind: ClassVar[str] = "ops_reordered"
    rank: ClassVar[int] = 1
    at: str
    before: tuple[str, ...]
    after: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class InsideChanged(Edit):
    """A collapsed node whose content signature moved while every op it hides
    records the same function, shape, args and params: what changed is what the
    drawing keeps only in the digest (the names of the modules inside, their
    wiring, a parameter's name)."""

    kind: ClassVar[str] = "inside_changed"
    at: str
    type: str


@dataclass(frozen=True, slots=True)
class OpsRenumbered(Edit):
    """Nothing changed but the numbers of op ids (``conv2d_3`` is now ``conv2d_4``)."""

    kind: ClassVar[str] = "ops_renumbered"
    rank: ClassVar[int] = 3
    count: int


#: Every edit class by its JSON kind.
EDIT_KINDS: Final[Mapping[str, type[Edit]]] = {
    cls.kind: cls
    for cls in (
        BlockInserted, BlockRemoved, BlockMoved, BlocksReordered, Renamed,
        RepeatCountChanged, OpAdded, OpRemoved, OpReplaced, ArgChanged, ConstantChanged,
        ShapeChanged,
        DtypeChanged, ParamsChanged, GradModeChanged, Rewired, SkipAdded, SkipRemoved,
        OpsReordered, InsideChanged, OpsRenumbered,
    )
}  # fmt: skip


def to_json(edit: Edit) -> dict[str, Any]:
    """``{"kind": "arg_changed", "at": ..., ...}``: the edit's fields as JSON values
    (tuples as lists)."""
    out: dict[str, Any] = {"kind": edit.kind}
    for item in dataclasses.fields(edit):
        value = getattr(edit, item.name)
        out[item.name] = list(value) if isinstance(value, tuple) else value
    return out


def from_json(data: Mapping[str, Any]) -> Edit:
    """The edit :func:`to_json` wrote. Raises :class:`ValueError` naming the kind or
    field that does not read."""
    kind = data.get("kind")
    cls = EDIT_KINDS.get(str(kind))
    if cls is None:
        raise ValueError(f"unknown edit kind {kind!r}; known: {', '.join(EDIT_KINDS)}")
    values: dict[str, Any] = {}
    for item in dataclasses.fields(cls):
        if item.name not in data:
            if item.default is not dataclasses.MISSING:
                continue
            raise ValueError(f"edit {kind!r} without its field {item.name!r}")
        value = data[item.name]
        values[item.name] = tuple(value) if isinstance(value, list) else value
    return cls(**values)
