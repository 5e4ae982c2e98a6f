"""Turn the recorder's raw records into the frozen ``Trace``: layers, passes, labels."""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

from pytest_tlgraph.capture.callargs import call_args
from pytest_tlgraph.capture.canonical import canonical_order
from pytest_tlgraph.capture.hoist import hoist_constants, settle_constants
from pytest_tlgraph.capture.raw import ModuleFrame, RawOp
from pytest_tlgraph.lazy import LazyMapping
from pytest_tlgraph.trace import (
    MEASUREMENT_FIELDS,
    PER_PASS_FIELDS,
    SUMMED_FIELDS,
    Layer,
    ModuleCall,
    Op,
    Trace,
    freeze,
    frozen_builder,
    shape_summary,
)

if TYPE_CHECKING:
    import torch

__all__ = ["assemble"]


# A rolled view builds one record per layer: the fast frozen constructor.
_new_layer: Final = frozen_builder(Layer)


def _layer_labels(
    layer_keys: Sequence[tuple[Any, ...]], funcs: Sequence[str]
) -> tuple[list[str], dict[str, list[int]]]:
    """Layer label of each op (given its layer key and function name), and each
    layer's op indices in pass order."""
    by_key: dict[tuple[Any, ...], str] = {}
    counts: dict[str, int] = {}
    members: dict[str, list[int]] = {}
    labels: list[str] = []
    for index, (key, func) in enumerate(zip(layer_keys, funcs, strict=True)):
        layer = by_key.get(key)
        if layer is None:
            counts[func] = number = counts.get(func, 0) + 1
            layer = by_key[key] = f"{func}_{number}"
            members[layer] = []
        members[layer].append(index)
        labels.append(layer)
    return labels, members


def _common(values: Sequence[Any]) -> tuple[Any, bool]:
    """(the shared value, False) or (None, True) when the passes disagree."""
    first = values[0]
    if all(v == first for v in values[1:]):
        return first, False
    return None, True


_LAYER_FIELDS: Final = (
    "shape", "dtype", "params", "module_args", *MEASUREMENT_FIELDS, "call", "grad_mode",
)  # fmt: skip
_NO_VARYING: Final[Mapping[str, tuple[Any, ...]]] = MappingProxyType({})
#: An op's measurements, in the order ``Layer`` holds them (one run of its fields,
#: checked by :func:`pytest_tlgraph.fields.check_record`).
_measured: Final = operator.attrgetter(*MEASUREMENT_FIELDS)


def _layer(
    label: str, ops: Sequence[Op], parents: tuple[str, ...], children: tuple[str, ...]
) -> Layer:
    """The rolled record of ``ops``: shared values, varying fields, summed totals."""
    first = ops[0]
    if len(ops) == 1:
        # One pass: every field is that pass's value (a sum of one is the value).
        return _new_layer(
            label, first.func, (first.label,), 1, parents, children, first.shape,
            first.dtype, first.module, first.module_calls, first.params, first.module_args,
            first.module_type, first.module_family, None, _NO_VARYING, *_measured(first),
            first.call, first.grad_mode,
        )  # fmt: skip
    varying: dict[str, tuple[Any, ...]] = {}
    values: dict[str, Any] = {}
    for name in _LAYER_FIELDS:
        per_pass = tuple(getattr(op, name) for op in ops)
        if name in SUMMED_FIELDS:
            values[name] = None if any(v is None for v in per_pass) else sum(per_pass)
            continue
        value, varies = _common(per_pass)
        if name in PER_PASS_FIELDS and first.has_function:
            # Run-to-run noise: two equal readings are a coincidence, not one value.
            value, varies = None, True
        values[name] = value
        if varies:
            varying[name] = per_pass
    return _new_layer(
        label=label,
        func=first.func,
        ops=tuple(op.label for op in ops),
        num_passes=len(ops),
        parents=parents,
        children=children,
        module=first.module,
        module_calls=first.module_calls,
        module_type=first.module_type,
        module_family=first.module_family,
        shape_summary=shape_summary([op.shape for op in ops]),
        varying=MappingProxyType(varying) if varying else _NO_VARYING,
        **values,
    )


def _layers(ops: Sequence[Op]) -> dict[str, Layer]:
    """The rolled view: one record per layer, its edges from its ops' edges.

    Built from the frozen ops alone, so a trace keeps nothing of the assembly alive
    until (or unless) its layers are read.
    """
    layer_of = {op.label: op.layer for op in ops}
    members: dict[str, list[Op]] = {}
    for op in ops:
        found = members.get(op.layer)
        if found is None:
            members[op.layer] = [op]
        else:
            found.append(op)
    layers = {}
    for layer, passes in members.items():
        parents = dict.fromkeys(layer_of[p] for op in passes for p in op.parents)
        kids = dict.fromkeys(layer_of[c] for op in passes for c in op.children)
        layers[layer] = _layer(layer, passes, (*parents,), (*kids,))
    return layers


def _pass_labels(
    raw_ops: Sequence[RawOp], layer_of: Sequence[str], members: Mapping[str, list[int]]
) -> list[str]:
    """Each op's label: its layer's, with ``:<pass>`` when the layer ran more than once
    (and the op's pass number and pass count set)."""
    labels = list(layer_of)
    for layer, indices in members.items():
        if len(indices) > 1:
            count = len(indices)
            for number, index in enumerate(indices, start=1):
                raw = raw_ops[index]
                raw.pass_number, raw.num_passes = number, count
                labels[index] = f"{layer}:{number}"
    return labels


def _children(op_parents: Sequence[Sequence[int]]) -> list[list[int]]:
    """Each op's children (op indices, in op order), from each op's parents."""
    children: list[list[int]] = [[] for _ in op_parents]
    for index, parents in enumerate(op_parents):
        for parent in parents:
            children[parent].append(index)
    return children


def assemble(
    raw_ops: Sequence[RawOp],
    layer_keys: Sequence[tuple[Any, ...]],
    frames: Sequence[ModuleFrame],
    *,
    model_name: str,
    param_count: int,
    grad_norms: Mapping[int, float] | None = None,
    device_time: Mapping[int, int | None] | None = None,
    device_join: str | None = None,
    device_join_reason: str | None = None,
    io_names: Mapping[int, str] | None = None,
    magnitudes: bool = True,
    values: bool = True,
    device: torch.device | None = None,
    default_dtype: str = "float32",
) -> Trace:
    """Assign layer labels, pass numbers and edges; freeze the records into a ``Trace``.

    Calls the model orders by hashing are first put in their canonical order
    (:mod:`.canonical`), so a trace is the same in every process.

    The records are frozen in place: ``raw_ops`` and ``frames`` become the trace's ops
    and module calls, and must not be used as mutable records afterwards.
    """
    raw_ops, layer_keys, frames = list(raw_ops), list(layer_keys), list(frames)
    maps = hoist_constants(raw_ops, layer_keys, (grad_norms, device_time, io_names))
    maps = canonical_order(raw_ops, layer_keys, frames, maps)
    grad_norms, device_time, io_names = settle_constants(raw_ops, layer_keys, maps)
    layer_of, members = _layer_labels(layer_keys, [raw.func for raw in raw_ops])
    labels = _pass_labels(raw_ops, layer_of, members)
    op_parents = [raw.parents for raw in raw_ops]
    children = _children(op_parents)
    norms = grad_norms or {}
    times = device_time or {}
    label_of = labels.__getitem__
    ops_list: list[Op] = []
    ops_of_call: dict[tuple[str, int], list[str]] = {}
    for i, raw in enumerate(raw_ops):
        label = raw.label = labels[i]
        raw.layer = layer_of[i]
        if raw.call:
            raw.call = call_args(raw.call, op_parents[i], raw.module, device)
        raw.parents = tuple(map(label_of, op_parents[i]))
        raw.children = tuple(map(label_of, children[i]))
        if norms:
            raw.grad_norm = norms.get(i)
        if times:
            raw.device_time = times.get(i)
        for key in raw.module_calls:
            members_of = ops_of_call.get(key)
            if members_of is None:
                ops_of_call[key] = [label]
            else:
                members_of.append(label)
        ops_list.append(freeze(raw, Op))
    ops = tuple(ops_list)

    for frame in frames:
        frame.ops = tuple(ops_of_call.get((frame.address, frame.call_number), ()))
    return Trace(
        ops=ops,
        layers=LazyMapping(lambda: _layers(ops)),
        modules=tuple([freeze(frame, ModuleCall) for frame in frames]),
        model_name=model_name,
        param_count=param_count,
        device_join=device_join,
        device_join_reason=device_join_reason,
        io_names=MappingProxyType({labels[i]: name for i, name in (io_names or {}).items()}),
        magnitudes=magnitudes,
        values=values,
        default_dtype=default_dtype,
    )
