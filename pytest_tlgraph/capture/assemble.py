"""Turn the recorder's raw records into the frozen ``Trace``: layers, passes, labels."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from pytest_tlgraph.capture.recorder import ModuleFrame, RawOp
from pytest_tlgraph.trace import (
    MEASUREMENT_FIELDS,
    PER_PASS_FIELDS,
    SUMMED_FIELDS,
    Layer,
    ModuleCall,
    Op,
    Trace,
)

__all__ = ["assemble", "shape_summary"]


def _fmt_shape(shape: Sequence[int]) -> str:
    # A 0-d pass reads "scalar" (as in the shape row), never an empty string.
    return "x".join(str(d) for d in shape) if shape else "scalar"


def shape_summary(shapes: Sequence[tuple[int, ...] | None]) -> str | None:
    """``Layer.shape_summary`` for the per-pass output shapes (ENCODING.md §1.2)."""
    if len(shapes) < 2 or any(s is None for s in shapes):
        return None
    concrete = [s for s in shapes if s is not None]
    if all(s == concrete[0] for s in concrete):
        return None
    first, last = concrete[0], concrete[-1]
    ranks = {len(s) for s in concrete}
    if len(ranks) == 1:
        varying = [axis for axis in range(len(first)) if len({s[axis] for s in concrete}) > 1]
        if len(varying) == 1:
            values = [s[varying[0]] for s in concrete]
            pairs = list(zip(values, values[1:], strict=False))
            if all(a >= b for a, b in pairs) or all(a <= b for a, b in pairs):
                return f"{values[0]}->{values[-1]}"
            return f"{min(values)}-{max(values)}"
    return f"{_fmt_shape(first)}->{_fmt_shape(last)}"


def _layer_labels(raw_ops: Sequence[RawOp]) -> tuple[list[str], dict[str, list[int]]]:
    """Layer label of each raw op, and each layer's op indices in pass order."""
    by_key: dict[tuple[Any, ...], str] = {}
    counts: dict[str, int] = {}
    members: dict[str, list[int]] = {}
    labels: list[str] = []
    for raw in raw_ops:
        layer = by_key.get(raw.layer_key)
        if layer is None:
            counts[raw.func] = counts.get(raw.func, 0) + 1
            layer = f"{raw.func}_{counts[raw.func]}"
            by_key[raw.layer_key] = layer
            members[layer] = []
        members[layer].append(raw.index)
        labels.append(layer)
    return labels, members


def _common(values: Sequence[Any]) -> tuple[Any, bool]:
    """(the shared value, False) or (None, True) when the passes disagree."""
    first = values[0]
    if all(v == first for v in values[1:]):
        return first, False
    return None, True


def _build_layer(label: str, ops: Sequence[Op]) -> Layer:
    varying: dict[str, tuple[Any, ...]] = {}
    values: dict[str, Any] = {}
    for name in ("shape", "dtype", "params", "module_args", *MEASUREMENT_FIELDS):
        per_pass = tuple(getattr(op, name) for op in ops)
        if name in SUMMED_FIELDS:
            values[name] = None if any(v is None for v in per_pass) else sum(per_pass)
            continue
        value, varies = _common(per_pass)
        if len(ops) > 1 and name in PER_PASS_FIELDS and ops[0].has_function:
            value, varies = None, True
        values[name] = value
        if varies:
            varying[name] = per_pass
    parents = tuple(dict.fromkeys(p.rsplit(":", 1)[0] for op in ops for p in op.parents))
    children = tuple(dict.fromkeys(c.rsplit(":", 1)[0] for op in ops for c in op.children))
    first = ops[0]
    return Layer(
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
        varying=MappingProxyType(varying),
        **values,
    )


def assemble(
    raw_ops: Sequence[RawOp],
    frames: Sequence[ModuleFrame],
    *,
    model_name: str,
    param_count: int,
    device_time: Mapping[int, int | None] | None = None,
    device_join: str | None = None,
    device_join_reason: str | None = None,
) -> Trace:
    """Assign layer labels, pass numbers and children; freeze into a ``Trace``."""
    layer_of, members = _layer_labels(raw_ops)
    pass_of: dict[int, tuple[int, int]] = {}
    for indices in members.values():
        for number, index in enumerate(indices, start=1):
            pass_of[index] = (number, len(indices))
    labels = [
        layer if pass_of[i][1] == 1 else f"{layer}:{pass_of[i][0]}"
        for i, layer in enumerate(layer_of)
    ]
    children: list[list[str]] = [[] for _ in raw_ops]
    for raw in raw_ops:
        for parent in raw.parents:
            children[parent].append(labels[raw.index])
    ops = tuple(
        Op(
            label=labels[raw.index],
            layer=layer_of[raw.index],
            func=raw.func,
            pass_number=pass_of[raw.index][0],
            num_passes=pass_of[raw.index][1],
            index=raw.index,
            parents=tuple(labels[p] for p in raw.parents),
            children=tuple(children[raw.index]),
            shape=raw.shape,
            dtype=raw.dtype,
            module=raw.module,
            module_calls=raw.module_calls,
            params=raw.params,
            module_args=raw.module_args,
            module_type=raw.module_type,
            module_family=raw.module_family,
            func_duration=raw.func_duration,
            activation_memory=raw.activation_memory,
            flops_forward=raw.flops[0],
            flops_backward=raw.flops[1],
            flops_total=raw.flops[2],
            macs_forward=raw.flops[3],
            autograd_memory=raw.autograd_memory,
            num_autograd_tensors=raw.num_autograd_tensors,
            magnitude=raw.magnitude,
            grad_norm=raw.grad_norm,
            device_time=(device_time or {}).get(raw.index),
        )
        for raw in raw_ops
    )
    layers = {
        layer: _build_layer(layer, [ops[i] for i in indices]) for layer, indices in members.items()
    }
    ops_of_call: dict[tuple[str, int], list[str]] = {}
    for op in ops:
        for key in op.module_calls:
            ops_of_call.setdefault(key, []).append(op.label)
    calls = tuple(
        ModuleCall(
            address=f.address,
            call_number=f.call_number,
            type_name=f.type_name,
            depth=f.depth,
            parent=f.parent,
            ops=tuple(ops_of_call.get((f.address, f.call_number), ())),
            module_args=f.module_args,
            module_family=f.module_family,
        )
        for f in frames
    )
    return Trace(
        ops=ops,
        layers=MappingProxyType(layers),
        modules=calls,
        model_name=model_name,
        param_count=param_count,
        device_join=device_join,
        device_join_reason=device_join_reason,
    )
