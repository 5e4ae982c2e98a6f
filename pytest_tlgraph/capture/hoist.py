"""The ``const`` records put before every op, in the order their first readers run.

The recorder makes a constant's record when an op first reads it, in the middle of
whatever call that op belongs to. Before layers are numbered, :func:`hoist_constants`
moves every ``const`` record right after the input records, so the calls' own ops stay
back to back (what :mod:`.canonical` looks for); once the calls are in their canonical
order, :func:`settle_constants` orders the constants by where their first reader now
runs, so their labels (``const_1``, ``const_2``) follow the canonical order too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_tlgraph.capture.raw import RawOp

__all__ = ["ByIndex", "const_name", "hoist_constants", "permute", "settle_constants"]

#: A map keyed by op index (grad norms, device times, input and output names).
ByIndex = Mapping[int, Any] | None


def const_name(raw: RawOp) -> str | None:
    """The buffer or attribute name a ``const`` record (still a skeleton) carries."""
    if raw.func != "const" or not raw.call:
        return None
    for key, value in raw.call[2] or ():
        if key in ("buffer", "attribute"):
            return str(value)
    return None


def _moved(source: Any, new_index: Mapping[int, int]) -> Any:
    """A call skeleton's tensor source with the op index it names moved."""
    if type(source) is int:
        return new_index.get(source, source)
    if type(source) is tuple and source and source[0] == "slot":
        return ("slot", new_index.get(source[1], source[1]), *source[2:])
    return source  # a parameter's name, a constant's shape


def permute(
    raw_ops: list[RawOp],
    layer_keys: list[tuple[Any, ...]],
    order: Sequence[int],
    maps: tuple[ByIndex, ...],
) -> tuple[ByIndex, ...]:
    """Put the records in ``order`` (new position -> old index), in place: indices,
    parents and call sources follow; return ``maps`` keyed by the new indices."""
    new_index = {old: new for new, old in enumerate(order)}
    permuted = [raw_ops[old] for old in order]
    keys = [layer_keys[old] for old in order]
    for new, raw in enumerate(permuted):
        raw.index = new
        raw.parents = [new_index[p] for p in raw.parents]
        if raw.call:
            func, positional, keywords, sources = raw.call
            raw.call = (func, positional, keywords, tuple(_moved(s, new_index) for s in sources))
    raw_ops[:] = permuted
    layer_keys[:] = keys
    return tuple(
        None if found is None else {new_index[i]: value for i, value in found.items()}
        for found in maps
    )


def hoist_constants(
    raw_ops: list[RawOp], layer_keys: list[tuple[Any, ...]], maps: tuple[ByIndex, ...]
) -> tuple[ByIndex, ...]:
    """Move the ``const`` records right after the input records (see the module doc)."""
    consts = [raw.index for raw in raw_ops if raw.func == "const"]
    if not consts:
        return maps
    inputs = [raw.index for raw in raw_ops if raw.func == "input"]
    front = set(consts) | set(inputs)
    order = inputs + consts + [raw.index for raw in raw_ops if raw.index not in front]
    if order == list(range(len(raw_ops))):
        return maps
    return permute(raw_ops, layer_keys, order, maps)


def settle_constants(
    raw_ops: list[RawOp], layer_keys: list[tuple[Any, ...]], maps: tuple[ByIndex, ...]
) -> tuple[ByIndex, ...]:
    """Order the hoisted ``const`` records by their first reader's place."""
    consts = [raw.index for raw in raw_ops if raw.func == "const"]
    if len(consts) < 2:
        return maps
    first_reader = dict.fromkeys(consts, len(raw_ops))
    for raw in raw_ops:
        for parent in raw.parents:
            if parent in first_reader and raw.index < first_reader[parent]:
                first_reader[parent] = raw.index
    ranked = sorted(consts, key=first_reader.__getitem__)
    if ranked == consts:
        return maps
    start = consts[0]
    order = list(range(len(raw_ops)))
    order[start : start + len(ranked)] = ranked
    return permute(raw_ops, layer_keys, order, maps)
