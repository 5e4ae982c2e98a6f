"""Which module calls a collapsed drawing boxes: its detail.

A detail is the set of boxed call keys; a call is drawn as a box when it is in the set
and no call above it is (the boxes above hide it). ``depth=N`` boxes every call nested
deeper than ``N``; then one rule holds in every collapsed drawing:

**Same class, same detail.** Within one drawing every drawn call of a module class is
drawn at the same detail: when one is a box, every other drawn call of that class is a
box too (the final ``model.norm`` of a Llama is boxed like the decoder layers'
``LlamaRMSNorm`` boxes, not drawn op by op). Boxing never adds a node, so a drawing
that fits a budget still fits it. Two kinds of class are exempt, since their calls play
different roles: the generic containers (``Sequential``, ``ModuleList``, ``ModuleDict``)
and a class one of whose calls runs inside another of its calls (a recursive U-Net
block): boxing its inner call would otherwise box the whole model.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from pytest_tlgraph.trace import ModuleCall, Trace, outermost_first

__all__ = [
    "CONTAINERS",
    "Key",
    "boxed_deeper_than",
    "drawn_calls",
    "exempt_classes",
    "same_class_detail",
]

Key = tuple[str, int]

#: Generic containers: their calls have no role in common, so they are never made alike.
CONTAINERS: Final = frozenset({"Sequential", "ModuleList", "ModuleDict"})


def boxed_deeper_than(trace: Trace, depth: int) -> frozenset[Key]:
    """The detail of ``depth=N``: every call nested deeper than ``depth``, with the
    same-class rule applied."""
    deeper = frozenset(call.key for call in trace.modules if call.depth > depth)
    return same_class_detail(trace, deeper)


def drawn_calls(
    modules: Iterable[ModuleCall], boxed: frozenset[Key]
) -> tuple[list[ModuleCall], list[ModuleCall]]:
    """``(boxes, expanded)``: the calls drawn as boxes and the non-root calls drawn op by
    op (their ops visible), in trace order. Calls inside a box and calls with no op are
    in neither."""
    hidden: set[Key] = set()
    boxes: list[ModuleCall] = []
    expanded: list[ModuleCall] = []
    for call in modules:  # a parent comes before its children
        if call.parent is not None and (call.parent in hidden or call.parent in boxed):
            hidden.add(call.key)
            continue
        if not call.ops:
            continue
        if call.key in boxed:
            boxes.append(call)
        elif call.parent is not None:
            expanded.append(call)
    return boxes, expanded


def exempt_classes(modules: Iterable[ModuleCall]) -> frozenset[str]:
    """The classes the rule leaves alone: containers and classes whose calls nest."""
    calls = {call.key: call for call in modules}
    nested = set(CONTAINERS)
    # The types of the calls around each call, built from its parent's.
    around: dict[tuple[str, int], frozenset[str]] = {}
    for c in outermost_first(calls):
        up = c.parent
        above = (
            around[up] | {calls[up].type_name} if up is not None and up in calls else frozenset()
        )
        around[c.key] = above
        if c.type_name in above:
            nested.add(c.type_name)
    return frozenset(nested)


def same_class_detail(trace: Trace, boxed: frozenset[Key]) -> frozenset[Key]:
    """``boxed`` with every drawn call of a boxed class boxed too (see the module doc).

    Boxing a call hides the calls inside it, so the rule is applied until nothing
    changes; boxes are only ever added, so it ends.
    """
    modules = trace.modules
    exempt: frozenset[str] | None = None
    while True:
        boxes, expanded = drawn_calls(modules, boxed)
        classes = {call.type_name for call in boxes}
        if exempt is None:
            if not classes.intersection(call.type_name for call in expanded):
                return boxed
            exempt = exempt_classes(modules)
        classes -= exempt
        more = [call.key for call in expanded if call.type_name in classes]
        if not more:
            return boxed
        boxed = boxed.union(more)
