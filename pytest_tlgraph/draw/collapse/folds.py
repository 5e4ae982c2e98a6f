"""Repeat folds: consecutive sibling module boxes of one structure drawn as one node.

Structure is the module type plus the op sequence (each op's function and the types of
the modules nested between the box's module and the op), so the 40 blocks of a deep
transformer fold into ``@blocks.0-39 (Block) x40`` while a block that differs by one op
stays its own box.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping, Sequence

from pytest_tlgraph.trace import ModuleCall, Trace

__all__ = ["address_range", "call_signature", "fold_runs", "fold_title"]


def call_signature(
    trace: Trace, call: ModuleCall, types: Mapping[tuple[str, int], str]
) -> tuple[str, tuple[tuple[str, tuple[str, ...]], ...]]:
    """``(module type, ((func, nested module types), ...))`` of one call, op by op.

    Addresses and measurements are left out: ``blocks.3`` and ``blocks.4`` are the same
    structure when they run the same functions through the same module types.
    """
    ops = []
    for label in call.ops:
        op = trace.op(label)
        chain = op.module_calls
        below = chain[chain.index(call.key) + 1 :]
        ops.append((op.func, tuple(types.get(key, "?") for key in below)))
    return (call.type_name, tuple(ops))


def fold_runs(
    sequence: Sequence[str], candidates: Mapping[str, tuple[Hashable, Hashable]]
) -> list[tuple[str, ...]]:
    """Maximal runs of two or more consecutive units to fold.

    ``sequence`` is the execution-order sequence of visible units with consecutive
    repeats merged; ``candidates`` maps each box unit to ``(parent, signature)``. A run
    is consecutive candidates sharing parent and signature. A unit that appears more
    than once in ``sequence`` (a rolled box whose calls are interleaved with other
    nodes) is never folded: there is no single place to put it.
    """
    seen = Counter(sequence)
    runs: list[tuple[str, ...]] = []
    current: list[str] = []
    current_key: tuple[Hashable, Hashable] | None = None
    for unit in sequence:
        key = candidates.get(unit) if seen[unit] == 1 else None
        if key is not None and key == current_key:
            current.append(unit)
            continue
        if len(current) >= 2:
            runs.append(tuple(current))
        current = [unit] if key is not None else []
        current_key = key
    if len(current) >= 2:
        runs.append(tuple(current))
    return runs


def address_range(addresses: Sequence[str]) -> str:
    """``blocks.0-39`` for numbered siblings, ``enc..dec`` for other names, the address
    itself when every entry is one module called repeatedly."""
    distinct = list(dict.fromkeys(addresses))
    if len(distinct) == 1:
        return distinct[0]
    heads = {a.rpartition(".")[0] for a in distinct}
    tails = [a.rpartition(".")[2] for a in distinct]
    if len(heads) == 1 and all(t.isdigit() for t in tails):
        numbers = [int(t) for t in tails]
        if numbers == list(range(numbers[0], numbers[0] + len(numbers))):
            head = heads.pop()
            prefix = f"{head}." if head else ""
            return f"{prefix}{numbers[0]}-{numbers[-1]}"
    return f"{distinct[0]}..{distinct[-1]}"


def fold_title(addresses: Sequence[str], type_name: str) -> str:
    """``@blocks.0-39 (Block) x40``: the fold's bold title row."""
    return f"@{address_range(addresses)} ({type_name}) x{len(addresses)}"
