"""Plumbing runs: the mask, index and shape arithmetic ``collapse="auto"`` draws as one
segment each, so the budget goes to the compute.

An op is plumbing when it carries no FLOPs (a count of zero, not a missing one; the
counts of integer and boolean arithmetic are index work, not compute), reads no
parameter or buffer, and nothing it is computed from does otherwise: it works only on
the inputs' values and shapes (``arange``, ``cumsum``, ``gt``, ``and``, ``expand`` of
an attention mask), never on the activations. Connected plumbing ops drawn one by one
in the same module call form a run; a run of two or more ops is one segment.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from pytest_tlgraph.trace import Trace

__all__ = ["MIN_RUN", "plumbing_ops", "plumbing_runs"]

#: A run this long or longer becomes a segment (a dead-end ``arange -> getitem`` pair).
MIN_RUN: Final = 2


def plumbing_ops(trace: Trace) -> set[str]:
    """The labels of the plumbing ops of ``trace`` (see the module doc)."""
    data: set[str] = set()  # ops computed from an activation, a weight or a FLOP
    plumbing: set[str] = set()
    for op in trace.ops:  # execution order: parents first
        if not op.has_function:
            continue  # inputs are plumbing's sources; outputs are never merged
        dtype = op.dtype
        counted = op.flops_forward != 0 and (dtype is None or dtype.is_floating_point)
        if counted or op.params or any(p in data for p in op.parents):
            data.add(op.label)
        else:
            plumbing.add(op.label)
    return plumbing


def plumbing_runs(trace: Trace, drawn_alone: Callable[[str], bool]) -> list[list[str]]:
    """Runs of connected plumbing ops, each in one module call and drawn alone
    (``drawn_alone(label)``: the op is a plain node of its own, not in a box nor drawn
    by a repeat fold's representative), in execution order; only runs of at least
    :data:`MIN_RUN` ops."""
    candidates = {label for label in plumbing_ops(trace) if drawn_alone(label)}
    root: dict[str, str] = {}

    def find(label: str) -> str:
        while root[label] != label:
            root[label] = root[root[label]]
            label = root[label]
        return label

    for op in trace.ops:
        if op.label not in candidates:
            continue
        root.setdefault(op.label, op.label)
        for parent in op.parents:
            if parent in candidates and trace.op(parent).module_calls == op.module_calls:
                root[find(parent)] = find(op.label)
    runs: dict[str, list[str]] = {}
    for op in trace.ops:
        if op.label in candidates:
            runs.setdefault(find(op.label), []).append(op.label)
    return [run for run in runs.values() if len(run) >= MIN_RUN]
