"""What changed inside a collapsed node, read from the two sides' content signatures.

A box, fold or segment carries in its ``comment`` attribute a digest of the ops it hides
and their functions (:mod:`pytest_tlgraph.draw.collapse.signature`). When the digests
differ the node changed although its rows may not have: :func:`inside_change` names how
(``relu -> gelu (2 ops)``), and :func:`fold_name` names a fold by its full module
addresses (``x2 @layer1.0-1 (BasicBlock)``), since its drawn title is written relative
to its cluster. The comparison reads these once for every view.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from pytest_tlgraph.draw.collapse.signature import Signature

__all__ = [
    "GENERIC_INSIDE",
    "MAX_PARTS",
    "InsideChange",
    "fold_name",
    "fold_span",
    "inside_change",
    "inside_diff",
]

#: How a changed signature reads when the functions it hides are the same (the rows
#: of the node may say more).
GENERIC_INSIDE: Final = "args, shapes, params or wiring changed"

#: At most this many function changes are named; the rest are counted.
MAX_PARTS: Final = 4


def _ops(count: int) -> str:
    return f"{count} op{'' if count == 1 else 's'}"


def _func_changes(old: Sequence[str], new: Sequence[str]) -> list[str]:
    """``relu -> gelu (2 ops)``, ``add now runs (1 op)``, ``mul no longer runs (1 op)``:
    the function edits that turn ``old`` into ``new``, in the order first met."""
    swapped: Counter[tuple[str, str]] = Counter()
    added: Counter[str] = Counter()
    removed: Counter[str] = Counter()
    matcher = difflib.SequenceMatcher(a=list(old), b=list(new), autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            continue
        width = min(a1 - a0, b1 - b0)
        for was, now in zip(old[a0 : a0 + width], new[b0 : b0 + width], strict=True):
            swapped[(was, now)] += 1
        removed.update(old[a0 + width : a1])
        added.update(new[b0 + width : b1])
    parts = [f"{was} -> {now} ({_ops(n)})" for (was, now), n in swapped.items()]
    parts += [f"{func} now runs ({_ops(n)})" for func, n in added.items()]
    parts += [f"{func} no longer runs ({_ops(n)})" for func, n in removed.items()]
    return parts


@dataclass(frozen=True, slots=True)
class InsideChange:
    """How a collapsed node's hidden ops changed: the words (``relu -> gelu (2 ops)``)
    and whether they are only :data:`GENERIC_INSIDE` (the same functions in the same
    order: the node's rows or its hidden calls may say what changed)."""

    text: str
    generic: bool = False


def inside_diff(old: Signature | None, new: Signature | None) -> InsideChange | None:
    """:func:`inside_change` as a value: whether its words are only the generic ones is
    a field, never read back from them."""
    text = inside_change(old, new)
    if text is None or old is None or new is None:
        return None
    return InsideChange(text, generic=old.funcs is not None and old.funcs == new.funcs)


def inside_change(old: Signature | None, new: Signature | None) -> str | None:
    """How a collapsed node's hidden ops changed, or ``None`` when its signature did not
    (or a side has none: a node that is a box on one side only shows as added/removed)."""
    if old is None or new is None or old.digest == new.digest:
        return None
    if old.funcs is not None and new.funcs is not None and old.funcs != new.funcs:
        if Counter(old.funcs) == Counter(new.funcs):
            # The same ops in another order: one line, the ops that moved in order.
            moved = [i for i, (a, b) in enumerate(zip(old.funcs, new.funcs, strict=True)) if a != b]
            span = slice(moved[0], moved[-1] + 1)
            return f"order changed: {', '.join(old.funcs[span])} -> {', '.join(new.funcs[span])}"
        parts = _func_changes(old.funcs, new.funcs)
        if len(parts) > MAX_PARTS:
            parts = [*parts[:MAX_PARTS], f"and {len(parts) - MAX_PARTS} more"]
        return ", ".join(parts)
    if old.funcs is not None and new.funcs is not None:
        return f"{GENERIC_INSIDE} ({_ops(new.count)})"
    return f"content changed ({_ops(new.count)})"


def fold_span(first: str, last: str, count: int) -> str:
    """``blocks.0-3`` for ``count`` consecutively numbered siblings from ``first`` to
    ``last``, ``first`` for one module called ``count`` times, else ``first..last``,
    both addresses whole."""
    if first == last:
        return first
    head, _, start = first.rpartition(".")
    tail_head, _, end = last.rpartition(".")
    numbered = start.isascii() and start.isdigit() and end.isascii() and end.isdigit()
    if head == tail_head and numbered and int(end) - int(start) + 1 == count:
        return f"{head}.{start}-{end}" if head else f"{start}-{end}"
    return f"{first}..{last}"


def fold_name(first: str, last: str, count: int, type_name: str) -> str:
    """A fold as a reviewer finds it, by its full addresses (``x2 @layer1.0-1
    (BasicBlock)``), never by a range written relative to its cluster."""
    return f"x{count} @{fold_span(first, last, count)} ({type_name})"
