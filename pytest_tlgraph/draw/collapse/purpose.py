"""What a plumbing segment computes, named in its title (``mask: 12 ops``).

The name is read from the segment's results, the members whose values leave it (every
member that feeds nothing, when none does), first rule that holds:

* ``mask``: a result is boolean (a comparison, ``and``/``or``, a causal mask);
* ``positions``: a result is computed, anywhere upstream, from an ``arange`` or a
  ``cumsum`` (cache positions, position ids, what a rotary embedding reads);
* ``shape``: every member only turns sizes into tensors, reshapes them or moves their
  axes (``new_ones``, ``zeros``, ``expand``, ``view``, ``swapaxes``...);
* ``index``: anything else (a ``getitem`` of an input, integer arithmetic).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from pytest_tlgraph.trace import Trace

__all__ = ["POSITION_SOURCES", "SHAPE_FUNCS", "segment_purpose"]

#: Functions whose results count positions.
POSITION_SOURCES: Final = frozenset({"arange", "cumsum"})
#: Functions that only make a tensor from sizes, reshape one or move its axes.
SHAPE_FUNCS: Final = frozenset(
    {
        "new_ones", "new_zeros", "new_full", "new_empty", "ones", "zeros", "full",
        "empty", "ones_like", "zeros_like", "full_like", "empty_like", "tensor",
        "as_tensor", "scalar_tensor", "expand", "expand_as", "view", "view_as",
        "reshape", "reshape_as", "unsqueeze", "squeeze", "flatten", "unflatten",
        "permute", "transpose", "swapaxes", "swapdims", "moveaxis", "movedim", "t",
        "T", "mT", "contiguous",
    }
)  # fmt: skip


def _positional(trace: Trace, upto: int) -> set[str]:
    """The ops up to index ``upto`` computed from an ``arange`` or a ``cumsum``."""
    out: set[str] = set()
    for op in trace.ops[: upto + 1]:
        if op.func in POSITION_SOURCES or any(p in out for p in op.parents):
            out.add(op.label)
    return out


def segment_purpose(trace: Trace, members: Sequence[str]) -> str:
    """The name of what the plumbing segment over ``members`` computes (module doc)."""
    inside = set(members)
    results = [label for label in members if any(c not in inside for c in trace.op(label).children)]
    if not results:
        results = [label for label in members if not trace.op(label).children]
    if any(trace.op(label).dtype == "bool" for label in results):
        return "mask"
    last = max(trace.op(label).index for label in results) if results else -1
    positional = _positional(trace, last)
    if any(label in positional for label in results):
        return "positions"
    if all(trace.op(label).func in SHAPE_FUNCS for label in members):
        return "shape"
    return "index"
