"""``collapse="auto"`` spends its node budget where the compute is.

Instead of one depth for the whole model, auto starts from the top-level boxes and
opens the heaviest drawn box first (the most FLOPs, or the most ops when a FLOP count
is missing), keeping each opening that stays within the budget: the decoder layers of
a transformer open before its rotary embedding or its final norm. Opening a box opens
every drawn box of its module class (same class, same detail: :mod:`.detail`); generic
containers and self-nesting classes open one call at a time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from pytest_tlgraph.draw.collapse.detail import Key, drawn_calls, exempt_classes, same_class_detail
from pytest_tlgraph.trace import ModuleCall, Trace

__all__ = ["MAX_OPENINGS", "spend_budget"]

#: At most this many openings are tried (each costs one node count of the drawing).
MAX_OPENINGS: Final = 400


def _weights(trace: Trace) -> dict[Key, int]:
    """Each call's weight: its FLOPs when every op has a count, else its op count."""
    known = all(op.flops_forward is not None for op in trace.ops if op.has_function)
    if not known:
        return {call.key: len(call.ops) for call in trace.modules}
    flops = {op.label: op.flops_forward or 0 for op in trace.ops}
    return {call.key: sum(flops[label] for label in call.ops) for call in trace.modules}


def spend_budget(
    trace: Trace,
    boxed: frozenset[Key],
    count: Callable[[frozenset[Key]], int],
    budget: int,
    max_depth: int | None = None,
) -> frozenset[Key]:
    """The detail auto draws: ``boxed`` (within ``budget`` by ``count``) with the
    heaviest drawn boxes opened, one module class at a time, while the drawing stays
    within ``budget``. A call deeper than ``max_depth`` is never opened (``depth=`` caps
    auto)."""
    weights = _weights(trace)
    exempt = exempt_classes(trace.modules)
    refused: set[str | Key] = set()

    def tag(call: ModuleCall) -> str | Key:
        return call.key if call.type_name in exempt else call.type_name

    for _ in range(MAX_OPENINGS):
        boxes, _expanded = drawn_calls(trace.modules, boxed)
        open_to = [
            call
            for call in boxes
            if tag(call) not in refused and (max_depth is None or call.depth <= max_depth)
        ]
        if not open_to:
            break
        heaviest = max(open_to, key=lambda call: (weights[call.key], -call.depth))
        chosen = tag(heaviest)
        opened = {call.key for call in open_to if tag(call) == chosen}
        trial = same_class_detail(trace, boxed - opened)
        if trial != boxed and count(trial) <= budget:
            boxed = trial
        else:
            refused.add(chosen)
    return boxed
