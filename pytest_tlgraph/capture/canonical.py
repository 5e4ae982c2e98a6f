"""A canonical order for calls whose order the model leaves to hashing.

A model may call one module several times in an order no computation fixes: Gemma3
computes its rotary embeddings with ``for layer_type in set(config.layer_types)``, so
one process runs the sliding-window call first and the next the full-attention one,
and every label after them (``mul_2:1``, ``to_2:1``) names another op. Such calls are
put in one order before labels are given, so the trace, and the drawing, is the same
in every process whatever ``PYTHONHASHSEED``:

* a run of consecutive calls of one module (one address, consecutive call numbers,
  one parent call), each running at least one op, their ops back to back (no op of the
  caller between), no call inside any of them, and none reading another's output: the
  calls are independent, so no order of them is more true than another;
* ordered by the names of the parameters, buffers and named constants their ops read
  (the key they were dispatched by: ``full_attention_inv_freq`` before
  ``sliding_attention_inv_freq``), calls with equal names keeping the order they ran
  in. Calls that read the same weights (one encoder applied to two inputs) are never
  moved.

The records are permuted within the lists given: op indices, parents, the tensor
sources of each call's skeleton, call numbers and the maps keyed by op index follow.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_tlgraph.capture.hoist import ByIndex, const_name, permute
from pytest_tlgraph.capture.raw import ModuleFrame, RawOp

__all__ = ["canonical_order"]

Key = tuple[str, int]


def _runs(
    raw_ops: Sequence[RawOp], frames: Sequence[ModuleFrame], span: Mapping[Key, list[int]]
) -> list[list[int]]:
    """Runs (frame positions) of consecutive leaf calls of one module, back to back
    and independent, two or more each (``span``: each call's op indices)."""
    has_child = {frame.parent for frame in frames if frame.parent is not None}
    runs: list[list[int]] = []
    current: list[int] = []
    for position, frame in enumerate(frames):
        key = (frame.address, frame.call_number)
        ops = span.get(key)
        leaf = ops is not None and key not in has_child and ops == list(range(ops[0], ops[-1] + 1))
        if (
            leaf
            and current
            and _continues(frames[current[-1]], frame, span, raw_ops, current, frames)
        ):
            current.append(position)
            continue
        if len(current) >= 2:
            runs.append(current)
        current = [position] if leaf else []
    if len(current) >= 2:
        runs.append(current)
    return runs


def _continues(
    previous: ModuleFrame,
    frame: ModuleFrame,
    span: Mapping[Key, list[int]],
    raw_ops: Sequence[RawOp],
    run: Sequence[int],
    frames: Sequence[ModuleFrame],
) -> bool:
    """Whether ``frame`` extends the run ending in ``previous``: the same module called
    next, from the same caller, its ops right after, reading nothing of the run's."""
    if (frame.address, frame.parent) != (previous.address, previous.parent):
        return False
    if frame.call_number != previous.call_number + 1:
        return False
    before = span[(previous.address, previous.call_number)]
    mine = span[(frame.address, frame.call_number)]
    if mine[0] != before[-1] + 1:
        return False
    earlier = {i for p in run for i in span[(frames[p].address, frames[p].call_number)]}
    return not any(parent in earlier for i in mine for parent in raw_ops[i].parents)


def _weights(raw_ops: Sequence[RawOp], ops: Sequence[int]) -> tuple[str, ...]:
    """The names of the parameters, buffers and named constants the ``ops`` read."""
    names = {name for i in ops for name, _, _ in raw_ops[i].params}
    for i in ops:
        for parent in raw_ops[i].parents:
            found = const_name(raw_ops[parent])
            if found is not None:
                names.add(found)
    return tuple(sorted(names))


def canonical_order(
    raw_ops: list[RawOp],
    layer_keys: list[tuple[Any, ...]],
    frames: list[ModuleFrame],
    maps: tuple[ByIndex, ...],
) -> tuple[ByIndex, ...]:
    """Put every run of independent calls of one module (see the module doc) in its
    canonical order, permuting ``raw_ops``, ``layer_keys`` and ``frames`` in place
    (while ``parents`` still hold op indices); return ``maps`` (each keyed by op index,
    or ``None``) keyed by the new indices."""
    span: dict[Key, list[int]] = {}
    for raw in raw_ops:
        for key in raw.module_calls:
            span.setdefault(key, []).append(raw.index)
    order = list(range(len(raw_ops)))  # new position -> old index
    moved = False
    for run in _runs(raw_ops, frames, span):
        keys = [(frames[p].address, frames[p].call_number) for p in run]
        spans = [span[key] for key in keys]
        names = [_weights(raw_ops, ops) for ops in spans]
        ranked = sorted(range(len(run)), key=lambda i: names[i])
        if ranked == list(range(len(run))):
            continue
        moved = True
        start = spans[0][0]
        sequence = [i for r in ranked for i in spans[r]]
        order[start : start + len(sequence)] = sequence
        renumber = {keys[r]: keys[n] for n, r in enumerate(ranked)}
        old_frames = [frames[p] for p in run]
        for n, r in enumerate(ranked):
            frame = old_frames[r]
            frame.call_number = keys[n][1]
            frames[run[n]] = frame
        for ops in spans:
            for i in ops:
                raw = raw_ops[i]
                raw.module_calls = tuple(renumber.get(k, k) for k in raw.module_calls)
    if not moved:
        return maps
    return permute(raw_ops, layer_keys, order, maps)
