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

__all__ = ["MIN_RUN", "anchor", "plumbing_ops", "plumbing_runs"]

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
        counted = op.flops_forward != 0 and (dtype is None or dtype.startswith(("float", "bfloat")))
        if counted or op.params or any(p in data for p in op.parents):
            data.add(op.label)
        else:
            plumbing.add(op.label)
    return plumbing


def plumbing_runs(trace: Trace, drawn_alone: Callable[[str], bool]) -> list[list[str]]:
    """Runs of connected plumbing ops, each in one module call and drawn alone
    (``drawn_alone(label)``: the op is a plain node of its own, not in a box nor drawn
    by a repeat fold's representative), in execution order; only runs of at least
    :data:`MIN_RUN` ops.

    A dead end, a group of connected plumbing ops that reads nothing and feeds nothing
    (the batch and head ``arange`` a causal mask function ignores), would be a node
    with no edge: it joins the next run of its module call that has an edge (else the
    one before it; else a run of the nearest call around it), so it is not drawn on its
    own and its ops stay in a signature; with no run to join, its ops are drawn one by
    one (joined by their own edges)."""
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
    groups: dict[str, list[str]] = {}
    for op in trace.ops:
        if op.label in candidates:
            groups.setdefault(find(op.label), []).append(op.label)
    runs = _attach_dead_ends(trace, list(groups.values()))
    return [run for run in runs if len(run) >= MIN_RUN]


def _dead(trace: Trace, group: list[str]) -> bool:
    """Whether no edge enters or leaves ``group``: it reads and feeds nothing else."""
    inside = set(group)
    for label in group:
        op = trace.op(label)
        if any(p not in inside for p in op.parents):
            return False
        if any(c not in inside for c in op.children):
            return False
    return True


def _attach_dead_ends(trace: Trace, groups: list[list[str]]) -> list[list[str]]:
    """``groups`` (execution order) with each dead one merged into the next live group
    of its module call, else the last live one before it, else the same in the nearest
    call around it that has one (a segment of its own would be a node with no edge);
    with none there either it is left out, its ops drawn one by one with the edges
    between them. Never into a call beside or inside its own: a segment stays in the
    module that computes it (a model's position check is not drawn in a repeated
    layer). The merged groups list their ops in execution order."""
    by_call: dict[tuple[tuple[str, int], ...], list[int]] = {}
    for i, group in enumerate(groups):
        by_call.setdefault(trace.op(group[0]).module_calls, []).append(i)
    dead = {i for i, group in enumerate(groups) if _dead(trace, group)}
    live = {call: [i for i in indices if i not in dead] for call, indices in by_call.items()}
    into: dict[int, int] = {}
    for i in sorted(dead):
        chain = trace.op(groups[i][0]).module_calls
        for cut in range(len(chain), -1, -1):  # its own call, then each one around it
            found = live.get(chain[:cut])
            if found:
                into[i] = next((j for j in found if j > i), found[-1])
                break
    if not dead:
        return groups
    merged = {i: list(g) for i, g in enumerate(groups) if i not in dead}
    for i, j in into.items():
        merged[j].extend(groups[i])
    out = [sorted(run, key=lambda label: trace.op(label).index) for run in merged.values()]
    out.sort(key=lambda run: trace.op(run[0]).index)
    return out


def anchor(trace: Trace, run: list[str]) -> str:
    """The op of ``run`` whose module call places its segment: the first one with an
    input or a consumer outside the run (a dead end merged in from another call does
    not move the segment there), else the first one."""
    inside = set(run)
    for label in run:
        op = trace.op(label)
        if any(p not in inside for p in op.parents) or any(c not in inside for c in op.children):
            return label
    return run[0]
