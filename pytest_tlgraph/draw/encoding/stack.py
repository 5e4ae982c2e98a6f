"""``stack_by``: rank columns (docs/decisions.md, "Channels").

The auto form pins multi-pass ops that share a pass number to one rank, under the
lockstep licence: taken in execution order over all multi-pass ops, pass numbers never
decrease. An explicit annotation (field or callable) bypasses the licence.

Drawn left to right (the timestep diagram), each group is a column laid out by
:func:`columns`: a group's own edges rank its ops top to bottom, so every one of them
points down whatever the renderer's crossing heuristics do; Graphviz's order inside
one rank follows no edge for certain (docs/decisions.md, "The timestep diagram (0.5)").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_tlgraph.draw.encoding.sources import ValueSource, tensor_item
from pytest_tlgraph.draw.plan import Plan
from pytest_tlgraph.errors import EncodingRefusal
from pytest_tlgraph.trace import Op, Trace

__all__ = ["Columns", "Stacking", "check_lockstep", "columns", "require_unrolled", "stack"]


@dataclass(frozen=True, slots=True)
class Stacking:
    """Rank groups (annotation value -> node ids) and the annotation's display name."""

    annotation: str
    groups: dict[Hashable, tuple[str, ...]]
    values: dict[str, float]
    eligible: int


def check_lockstep(ops: Sequence[Op]) -> None:
    """Refuse ``stack_by_auto_underivable`` unless pass numbers never decrease over the
    multi-pass ops in execution order (and at least one multi-pass op exists)."""
    multi = [op for op in ops if op.num_passes > 1]
    if not multi:
        raise EncodingRefusal(
            "stack_by_auto_underivable",
            cause="stack_by=True needs multi-pass ops, and this trace has none.",
            remedy="pass an explicit annotation (a field name or a callable) to stack_by.",
        )
    previous = 0
    for op in multi:
        if op.pass_number < previous:
            raise EncodingRefusal(
                "stack_by_auto_underivable",
                cause=f"the loops are not in lockstep: {op.label!r} (pass {op.pass_number}) "
                f"runs after a pass {previous} op, so 'same column = same timepoint' has no "
                "ground truth.",
                remedy="pass an explicit annotation (a field name or a callable) to stack_by "
                "if you assert your own semantics.",
            )
        previous = op.pass_number


def require_unrolled(plan: Plan) -> None:
    """Refuse ``stack_by_requires_unrolled`` on the rolled view."""
    if plan.view == "rolled":
        raise EncodingRefusal(
            "stack_by_requires_unrolled",
            cause="stack_by pins individual passes, and the rolled view has one node per layer.",
            remedy="draw with view='unrolled' (the default) to stack passes.",
        )


def _annotation(value: Any, node_id: str, name: str) -> Hashable | None:
    """The rank-group key of one node: ``None`` (not pinned) for missing, NaN or
    infinite values, the item of a one-element tensor, refusal for anything unhashable."""
    if value is None:
        return None
    value = tensor_item(
        value, given_by=f"stack_by={name!r}", node_id=node_id, expected="one annotation"
    )
    if isinstance(value, float) and not math.isfinite(value):
        return None  # NaN never equals itself, so it could not share a rank anyway
    if not isinstance(value, Hashable):
        raise EncodingRefusal(
            "encoding_value_invalid",
            cause=f"stack_by={name!r} gave an unhashable {type(value).__name__} for node "
            f"{node_id!r}.",
            remedy="return a number, string or other hashable value (or None) per node.",
        )
    return value


def stack(
    plan: Plan,
    trace: Trace,
    source: ValueSource | None,
    *,
    raw: Callable[[ValueSource, Any, str], Any] | None = None,
) -> Stacking:
    """The rank groups on ``plan`` (unrolled view only).

    ``source=None`` is the auto form (``pass_number`` of multi-pass ops, under the
    lockstep licence); otherwise ``raw(source, record, node_id)`` reads each node's
    annotation (default: ``source.raw``), so a callable shared with another channel is
    still called once per node.
    """
    require_unrolled(plan)
    if source is None:
        check_lockstep(trace.ops)
        name = "pass_number"
    else:
        name = source.name
    groups: dict[Hashable, list[str]] = {}
    values: dict[str, float] = {}
    eligible = 0
    for node in plan.nodes:
        record = node.record
        if not isinstance(record, Op):
            continue
        eligible += 1
        value: Hashable | None
        if source is None:
            value = record.pass_number if record.num_passes > 1 else None
        else:
            read = raw(source, record, node.id) if raw is not None else source.raw(record)
            value = _annotation(read, node.id, name)
        if value is None:
            continue
        groups.setdefault(value, []).append(node.id)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            values[node.id] = float(value)
    # A group of one pins nothing against anything: dropping it keeps the DOT minimal.
    kept = {value: tuple(ids) for value, ids in groups.items() if len(ids) > 1}
    return Stacking(annotation=name, groups=kept, values=values, eligible=eligible)


@dataclass(frozen=True, slots=True)
class Columns:
    """The layout of stacked groups as columns in a top-to-bottom drawing.

    ``loose``: the edges between two groups (drawn, but left out of the ranking, so a
    later column starts at the top rather than below the one before); ``heads``: each
    group's first node in plan order, left to right, and ``aligned`` whether they may
    share one rank (no ranked path joins two of them).
    """

    loose: tuple[tuple[str, str], ...]
    heads: tuple[str, ...]
    aligned: bool


def columns(groups: Sequence[Sequence[str]], edges: Sequence[tuple[str, str]]) -> Columns:
    """Lay ``groups`` (in column order) out as columns over the drawing's ``edges``."""
    group_of = {node: i for i, ids in enumerate(groups) for node in ids}
    loose = []
    ranked: dict[str, list[str]] = {}
    for source, target in edges:
        a, b = group_of.get(source), group_of.get(target)
        if a is not None and b is not None and a != b:
            loose.append((source, target))
        else:
            ranked.setdefault(source, []).append(target)
    heads = tuple(ids[0] for ids in groups if ids)
    return Columns(tuple(loose), heads, not _joined(heads, ranked))


def _joined(heads: Sequence[str], ranked: dict[str, list[str]]) -> bool:
    """Whether a ranked path leads from one of ``heads`` to another (pinning them to
    one rank would then fold that path back on itself)."""
    targets = set(heads)
    for head in heads:
        seen = {head}
        todo = list(ranked.get(head, ()))
        while todo:
            node = todo.pop()
            if node in targets:
                return True
            if node not in seen:
                seen.add(node)
                todo.extend(ranked.get(node, ()))
    return False
