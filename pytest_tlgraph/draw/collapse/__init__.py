"""Collapsed plans: module boxes, segments and repeat folds
(docs/decisions.md, "Collapsed drawings").

* ``depth=N``: every module call nested deeper than ``N`` is one box (top-level children
  have depth 1, so ``depth=0`` boxes every top-level call); its ops are hidden and its
  edges rerouted to the box; a module class boxed anywhere is boxed wherever it is
  drawn (:mod:`.detail`).
* ``collapse="max"``: ``depth=0`` plus one segment capsule per run of root-level ops,
  with repeats folded.
* ``collapse="auto"``: from the top-level boxes, the heaviest drawn boxes opened first
  (FLOPs, or ops when FLOPs are unknown: :mod:`.spend`) while the drawing, repeats
  folded, has at most ``AUTO_NODE_BUDGET`` visible nodes.

Every op maps to exactly one visible unit, so member lists partition the ops and edges
are the op edges mapped onto units. The plan is a pure function of the trace and these
options: channels never change it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from pytest_tlgraph.draw.collapse.detail import Key, boxed_deeper_than, drawn_calls
from pytest_tlgraph.draw.collapse.folds import TypePaths, call_signature, fold_runs, fold_title
from pytest_tlgraph.draw.collapse.plumbing import anchor, plumbing_runs
from pytest_tlgraph.draw.collapse.purpose import segment_purpose
from pytest_tlgraph.draw.collapse.records import (
    BoxRecord,
    CollapsedRecord,
    FoldRecord,
    SegmentRecord,
    box_record,
    segment_record,
)
from pytest_tlgraph.draw.collapse.repeats import Repeats, find_repeats
from pytest_tlgraph.draw.collapse.spend import spend_budget
from pytest_tlgraph.draw.plan import (
    Plan,
    PlanNode,
    build_plan,
    clusters_for,
    relative_address,
    scopes,
)
from pytest_tlgraph.errors import UsageError
from pytest_tlgraph.trace import ModuleCall, Trace

__all__ = [
    "AUTO_NODE_BUDGET",
    "COLLAPSED_KINDS",
    "BoxRecord",
    "CollapsedRecord",
    "FoldRecord",
    "SegmentRecord",
    "auto_plan",
    "build_collapsed_plan",
]

#: ``collapse="auto"`` keeps the drawing within this many visible nodes when it can
#: (``collapse_budget=`` changes it): about what one screen holds.
AUTO_NODE_BUDGET: Final = 60
#: Plan node kinds that stand for a group of ops.
COLLAPSED_KINDS: Final = frozenset({"box", "segment", "fold"})

Chain = tuple[tuple[str, int], ...]


@dataclass
class _Unit:
    """A visible node while the plan is being built."""

    id: str
    kind: str
    chain: Chain  # the module calls whose clusters may hold it, root first
    record: Any = None  # Op or Layer for plain nodes
    calls: list[ModuleCall] = field(default_factory=list)  # boxes
    names: list[str] = field(default_factory=list)  # segments: labels listed
    funcs: list[str] = field(default_factory=list)  # segments: their functions
    boxes: tuple[str, ...] = ()  # folds: the folded box ids, representative first
    purpose: str | None = None  # plumbing segments: what they compute


def _validate(view: str, depth: int | None, collapse: str | None) -> None:
    if view not in ("unrolled", "rolled"):
        raise UsageError(f"view={view!r} is not a view; pass 'unrolled' or 'rolled'")
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 0):
        raise UsageError(f"depth={depth!r} must be a non-negative int; pass e.g. depth=1")
    if collapse not in (None, "auto", "max"):
        raise UsageError(f"collapse={collapse!r} is not a collapse mode; pass 'auto' or 'max'")
    if collapse == "max" and depth is not None:
        raise UsageError(
            f"collapse='max' with depth={depth} conflict: 'max' always boxes every top-level "
            "module call, so depth has no meaning there. Drop depth=, or pass "
            "collapse='auto' with depth= as the deepest level auto may pick."
        )


def build_collapsed_plan(
    trace: Trace,
    *,
    view: str = "unrolled",
    depth: int | None = None,
    collapse: str | None = None,
    budget: int | None = None,
) -> Plan:
    """The plan of ``trace`` with module calls collapsed by ``depth`` or ``collapse``.

    With ``collapse="auto"`` a ``depth`` caps the depth auto may pick. A drawing with
    nothing to collapse (``depth`` at or past the deepest module call) is the plain plan.
    """
    _validate(view, depth, collapse)
    if collapse == "max":
        return _collapsed(trace, view, depth=0, segments=True, folds=True)
    if collapse == "auto":
        return auto_plan(trace, view=view, max_depth=depth, budget=budget or AUTO_NODE_BUDGET)[0]
    if depth is None:
        return build_plan(trace, view=view)
    return _collapsed(trace, view, depth=depth, segments=False, folds=False)


def auto_plan(
    trace: Trace,
    *,
    view: str = "unrolled",
    max_depth: int | None = None,
    budget: int = AUTO_NODE_BUDGET,
) -> tuple[Plan, int | None]:
    """``(plan, depth)`` for ``collapse="auto"``: the top-level boxes opened heaviest
    first, never deeper than ``max_depth``, while the plan, repeats folded, has at most
    ``budget`` nodes (:func:`.spend.spend_budget`); ``depth`` is the depth down to
    which every call is open.

    ``depth`` is ``None`` when even ``depth=0`` is over budget: the plan is then the
    ``collapse="max"`` plan, the most compact drawing there is.
    """
    top = max((call.depth for call in trace.modules), default=0)
    start = top if max_depth is None else min(max_depth, top)
    plain = len(trace.layers) if view == "rolled" else len(trace.ops)

    groupings: dict[frozenset[Key], _Grouping | None] = {}

    def count(boxed: frozenset[Key]) -> int:
        # Count before assembling: only the chosen detail pays for records and clusters.
        if boxed not in groupings:
            groupings[boxed] = _group(trace, view, boxed, segments=False, folds=True, plumbing=True)
        grouping = groupings[boxed]
        return plain if grouping is None else grouping.node_count

    deepest = boxed_deeper_than(trace, start)
    if count(deepest) <= budget:  # everything auto may open fits: nothing to choose
        boxed = deepest
    else:
        boxed = boxed_deeper_than(trace, 0)
        if count(boxed) > budget:
            return _collapsed(trace, view, depth=0, segments=True, folds=True), None
        boxed = spend_budget(trace, boxed, count, budget, start)
        count(boxed)
    # The depth down to which every call is open.
    depth = min((call.depth - 1 for call in drawn_calls(trace.modules, boxed)[0]), default=start)
    return _plan(trace, view, groupings[boxed]), depth


@dataclass
class _Grouping:
    """Every op's unit, the fold each folded box went into, and the units by id."""

    unit_of: dict[str, str]
    redirect: dict[str, str]
    units: dict[str, _Unit]
    repeats: Repeats | None = None

    @property
    def node_count(self) -> int:
        """How many nodes the plan will have."""
        return len({self.redirect.get(uid, uid) for uid in self.unit_of.values()})


def _group(
    trace: Trace,
    view: str,
    boxed: frozenset[Key],
    *,
    segments: bool,
    folds: bool,
    plumbing: bool = False,
) -> _Grouping | None:
    """The grouping of ops into units with the calls in ``boxed`` drawn as boxes (the
    outermost of a chain: :mod:`.detail`), or ``None`` when nothing collapses.
    ``plumbing``: each run of plumbing ops is one segment (:mod:`.plumbing`)."""
    calls = {call.key: call for call in trace.modules}
    units: dict[str, _Unit] = {}
    repeats = find_repeats(trace, view, boxed, calls) if folds else None
    unit_of = _assign(trace, view, boxed, segments, calls, units, repeats)
    if plumbing and view == "unrolled":
        _merge_plumbing(trace, unit_of, units)
    if repeats is None and not any(unit.kind in COLLAPSED_KINDS for unit in units.values()):
        return None
    redirect = _fold(trace, view, unit_of, units, calls) if folds else {}
    return _Grouping(unit_of, redirect, units, repeats)


def _plan(trace: Trace, view: str, grouping: _Grouping | None) -> Plan:
    if grouping is None:
        return build_plan(trace, view=view)
    return _assemble(
        trace, view, grouping.unit_of, grouping.redirect, grouping.units, grouping.repeats
    )


def _collapsed(trace: Trace, view: str, *, depth: int, segments: bool, folds: bool) -> Plan:
    boxed = boxed_deeper_than(trace, depth)
    return _plan(trace, view, _group(trace, view, boxed, segments=segments, folds=folds))


def _assign(
    trace: Trace,
    view: str,
    boxed: frozenset[Key],
    segments: bool,
    calls: Mapping[tuple[str, int], ModuleCall],
    units: dict[str, _Unit],
    repeats: Repeats | None = None,
) -> dict[str, str]:
    """Map every op label to its unit id, registering the units in ``units``; an op of
    a folded repetition goes to its representative op's unit."""
    rolled = view == "rolled"
    unit_of: dict[str, str] = {}
    pending: list[list[str]] = []  # runs of root-level ops awaiting a segment
    previous_root = False
    target = repeats.target if repeats is not None else {}
    for op in trace.ops:
        shown = target.get(op.label)
        if shown is not None:
            unit_of[op.label] = unit_of[shown]
            previous_root = False
            continue
        chain = op.module_calls if repeats is None else repeats.chain(op.module_calls)
        box = next((i for i, key in enumerate(chain) if key in boxed), None)
        if box is not None:
            address, number = chain[box]
            uid = f"@{address}" if rolled else f"@{address}#{number}"
            unit = units.setdefault(uid, _Unit(uid, "box", chain[:box]))
            if calls[chain[box]] not in unit.calls:
                unit.calls.append(calls[chain[box]])
            unit_of[op.label] = uid
        elif segments and op.has_function and len(chain) <= 1:
            if not previous_root:
                pending.append([])
            pending[-1].append(op.label)
        else:
            uid = op.layer if rolled else op.label
            if uid not in units:
                record = trace.layers[op.layer] if rolled else op
                kind = op.func if not op.has_function else ("layer" if rolled else "op")
                units[uid] = _Unit(uid, kind, chain, record=record)
            unit_of[op.label] = uid
        previous_root = box is None and segments and op.has_function and len(chain) <= 1
    for run in _merge_runs(trace, pending) if rolled else pending:
        names = list(dict.fromkeys(trace.op(label).layer for label in run)) if rolled else run
        uid = f"segment:{names[0]}"
        funcs = [trace.op(label).func for label in run]
        if rolled:
            funcs = [trace.layers[name].func for name in names]
        units[uid] = _Unit(uid, "segment", (), names=list(names), funcs=funcs)
        unit_of.update(dict.fromkeys(run, uid))
    return unit_of


def _merge_plumbing(trace: Trace, unit_of: dict[str, str], units: dict[str, _Unit]) -> None:
    """Make each run of plumbing ops drawn one by one a segment in their module call."""

    def alone(label: str) -> bool:
        unit = units.get(unit_of[label])
        return unit is not None and unit.id == label and unit.kind == "op"

    remap: dict[str, str] = {}
    for run in plumbing_runs(trace, alone):
        uid = f"segment:{run[0]}"
        chain = units[anchor(trace, run)].chain
        funcs = [trace.op(label).func for label in run]
        purpose = segment_purpose(trace, run)
        units[uid] = _Unit(uid, "segment", chain, names=list(run), funcs=funcs, purpose=purpose)
        remap.update(dict.fromkeys(run, uid))
    for old in remap:
        del units[old]
    if remap:
        for label, uid in unit_of.items():
            if uid in remap:
                unit_of[label] = remap[uid]


def _merge_runs(trace: Trace, runs: Sequence[list[str]]) -> list[list[str]]:
    """Rolled view: runs that share a layer become one segment, since a layer is one
    node; each merged run lists its ops in execution order."""
    owner: dict[str, int] = {}
    groups: list[set[str] | None] = []
    for run in runs:
        layers = {trace.op(label).layer for label in run}
        hits = sorted({owner[layer] for layer in layers if layer in owner})
        merged = set(layers)
        for index in hits:
            merged |= groups[index] or set()
            groups[index] = None
        groups.append(merged)
        for layer in merged:
            owner[layer] = len(groups) - 1
    out = []
    for group in groups:
        if group is not None:
            out.append([op.label for op in trace.ops if op.layer in group])
    out.sort(key=lambda ops: trace.op(ops[0]).index)
    return out


def _fold(
    trace: Trace,
    view: str,
    unit_of: Mapping[str, str],
    units: dict[str, _Unit],
    calls: Mapping[tuple[str, int], ModuleCall],
) -> dict[str, str]:
    """Register a fold unit per run of consecutive same-structure sibling boxes, each
    a true repeat of the one before it (:class:`.folds.Wiring`); return each folded
    box id -> its fold id."""
    paths = TypePaths(calls)
    sequence: list[str] = []
    for op in trace.ops:
        uid = unit_of[op.label]
        if not sequence or sequence[-1] != uid:
            sequence.append(uid)
    parents_of: dict[str, Hashable] = {}
    for uid, unit in units.items():
        if unit.kind != "box":
            continue
        # Rolled boxes are per address, so their siblings are told apart by address.
        parents_of[uid] = tuple(
            dict.fromkeys(
                (call.parent[0] if call.parent else None) if view == "rolled" else call.parent
                for call in unit.calls
            )
        )
    siblings = Counter(parents_of.values())
    candidates: dict[str, tuple[Hashable, Hashable]] = {}
    for uid, parents in parents_of.items():
        if siblings[parents] < 2:  # no sibling box to fold with: no signature needed
            candidates[uid] = (parents, uid)
            continue
        signature = tuple(call_signature(trace, call, paths) for call in units[uid].calls)
        candidates[uid] = (parents, signature)
    ops_of: dict[str, list[str]] = {}
    for op in trace.ops:
        ops_of.setdefault(unit_of[op.label], []).append(op.label)

    redirect: dict[str, str] = {}
    for run in fold_runs(sequence, candidates, ops_of, lambda label: trace.op(label).parents):
        fid = f"{run[0]}*{len(run)}"
        units[fid] = _Unit(fid, "fold", units[run[0]].chain, boxes=run)
        redirect.update(dict.fromkeys(run, fid))
    return redirect


def _assemble(
    trace: Trace,
    view: str,
    unit_of: Mapping[str, str],
    redirect: Mapping[str, str],
    units: Mapping[str, _Unit],
    repeats: Repeats | None = None,
) -> Plan:
    by_unit: dict[str, list[str]] = {}  # before folding: folds need each box's members
    members: dict[str, list[str]] = {}  # emission order: first appearance in execution
    folded = repeats.target if repeats is not None else {}
    for op in trace.ops:
        uid = unit_of[op.label]
        if op.label not in folded:  # a box's values are its representative call's
            by_unit.setdefault(uid, []).append(op.label)
        members.setdefault(redirect.get(uid, uid), []).append(op.label)
    clusters, innermost = clusters_for(
        trace,
        view,
        {uid: units[uid].chain for uid in members},
        forced=repeats.clusters if repeats is not None else None,
    )
    scope = scopes(clusters)
    nodes = []
    for uid, labels in members.items():
        unit = units[uid]
        cluster = innermost[uid]
        within = None if cluster is None else scope[cluster]
        if unit.kind == "fold":
            boxes = [box_record(trace, units[b].calls, by_unit[b]) for b in unit.boxes]
            shown = [relative_address(b.module, within) or b.module for b in boxes]
            record: Any = FoldRecord.of(boxes, fold_title(shown, boxes[0].module_type))
        elif unit.kind == "box":
            record = box_record(trace, unit.calls, by_unit[uid])
        elif unit.kind == "segment":
            record = segment_record(trace, labels, unit.names, unit.funcs, unit.purpose)
        else:
            record = unit.record
        if unit.kind in COLLAPSED_KINDS:
            module: str | None = record.module
        else:
            module = record.module if record.has_function else None
        nodes.append(PlanNode(uid, unit.kind, record, tuple(labels), module, cluster, within))
    edges: dict[tuple[str, str], None] = {}
    for op in trace.ops:
        target = redirect.get(unit_of[op.label], unit_of[op.label])
        for parent in op.parents:
            if repeats is not None and repeats.crosses(parent, op.label):
                continue
            source = redirect.get(unit_of[parent], unit_of[parent])
            # A collapsed node swallows its internal edges; a rolled layer keeps its own
            # recurrence edge, as in the plain rolled drawing.
            if source == target and units[target].kind in COLLAPSED_KINDS:
                continue
            edges[(source, target)] = None
    return Plan(view=view, nodes=tuple(nodes), edges=tuple(edges), clusters=clusters)
