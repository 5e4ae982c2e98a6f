"""Folds only of true repeats (issue 30, item 6), on every corpus model.

A repeat fold draws its first repetition for all of them, so a drawn edge is true only
when some op of one end feeds some op of the other *in the same repetition* of every
fold holding both ends (an edge entering or leaving a fold may come from or go to any
repetition). Each check reads the drawing and the trace alone: a fold cluster's
repetitions are its ops in execution order cut into ``xN`` equal runs (repetitions are
consecutive and of one structure), a fold node's its boxes.

* the drawn graph has no cycle and no self-loop (the unrolled views: a rolled node
  stands for every pass of a layer, so a recurrence is drawn as one);
* every drawn edge stands for an op edge of the trace within one repetition;
* each repetition after the first reads the one just before it and none further back,
  and the calls of one repetition of several (``x2 (ReLU, Conv2d)``) are one piece of
  dataflow.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pytest

from pytest_tlgraph.draw import build_plan
from pytest_tlgraph.draw.collapse import FoldRecord
from pytest_tlgraph.draw.plan import Plan
from pytest_tlgraph.trace import Trace
from tests.corpus import names
from tests.corpus.traces import corpus_trace

DRAWINGS: dict[str, dict[str, Any]] = {
    "auto": {"collapse": "auto"},
    "auto-depth1": {"collapse": "auto", "depth": 1},
    "auto-depth2": {"collapse": "auto", "depth": 2},
    "depth1": {"depth": 1},
    "depth2": {"depth": 2},
    "max": {"collapse": "max"},
}
_COUNT = re.compile(r"x(\d+) @")

#: Op label -> ``(the repetitions of the folds around, its repetition of this one)``.
Repetitions = dict[str, tuple[tuple[int, ...], int]]


def _fold_clusters(plan: Plan) -> dict[str, tuple[int, frozenset[str], list[str]]]:
    """Each repeat-fold cluster, outermost first: ``(count, node ids inside, its ops)``."""
    parent = {c.id: c.parent for c in plan.clusters}
    folds = {c.id: int(m[1]) for c in plan.clusters if (m := _COUNT.match(c.title))}
    inside: dict[str, set[str]] = {cid: set() for cid in folds}
    for node in plan.nodes:
        cid = node.cluster
        while cid is not None:
            if cid in inside:
                inside[cid].add(node.id)
            cid = parent[cid]
    out = {}
    for cid, count in folds.items():
        ops = [label for node in plan.nodes if node.id in inside[cid] for label in node.members]
        out[cid] = (count, frozenset(inside[cid]), ops)
    return out


def _folds(trace: Trace, plan: Plan) -> list[tuple[str, frozenset[str], Repetitions]]:
    """Every fold of the plan: its name, the node ids it holds, each op's repetition. A
    fold nested in another is cut into its repetitions within each of the outer one's."""
    out: list[tuple[str, frozenset[str], Repetitions]] = []
    around: dict[str, tuple[int, ...]] = {}  # op -> its repetitions of the folds so far
    for cid, (count, inside, ops) in _fold_clusters(plan).items():
        groups: dict[tuple[int, ...], list[str]] = {}
        for label in ops:
            groups.setdefault(around.get(label, ()), []).append(label)
        reps: Repetitions = {}
        for key, labels in groups.items():
            ordered = sorted(labels, key=lambda label: trace.op(label).index)
            assert len(ordered) % count == 0, f"{cid}: {len(ordered)} ops do not cut x{count}"
            size = len(ordered) // count
            reps.update({label: (key, i // size) for i, label in enumerate(ordered)})
        around.update({label: (*key, rep) for label, (key, rep) in reps.items()})
        out.append((cid, inside, reps))
    for node in plan.nodes:
        if isinstance(node.record, FoldRecord):
            reps = {
                label: ((), i) for i, box in enumerate(node.record.boxes) for label in box.members
            }
            out.append((node.id, frozenset({node.id}), reps))
    return out


def _cycle(nodes: Sequence[str], edges: Sequence[tuple[str, str]]) -> list[str]:
    """The nodes left on a cycle once every node without a drawn input is peeled off."""
    into = {n: 0 for n in nodes}
    out: dict[str, list[str]] = {n: [] for n in nodes}
    for source, target in edges:
        into[target] += 1
        out[source].append(target)
    ready = [n for n, k in into.items() if k == 0]
    while ready:
        node = ready.pop()
        for target in out[node]:
            into[target] -= 1
            if into[target] == 0:
                ready.append(target)
    return sorted(n for n, k in into.items() if k)


def _false_edges(trace: Trace, plan: Plan, folds: Sequence[Any]) -> list[tuple[str, str]]:
    members = {node.id: node.members for node in plan.nodes}
    false = []
    for source, target in plan.edges:
        shared = [reps for _, inside, reps in folds if {source, target} <= inside]
        produced = set(members[source])
        real = any(
            parent in produced and all(reps.get(parent) == reps.get(label) for reps in shared)
            for label in members[target]
            for parent in trace.op(label).parents
        )
        if not real:
            false.append((source, target))
    return false


def _untrue_repeats(trace: Trace, plan: Plan, folds: Sequence[Any]) -> list[str]:
    """Folds some repetition of which does not read the one before it, reads one further
    back, or (several calls a repetition) is not one piece of dataflow."""
    scope = {c.id: c.scope_address for c in plan.clusters}
    types = {c.id: c.title.rsplit(" (", 1)[-1].count(",") + 1 for c in plan.clusters}
    bad = []
    for name, _, reps in folds:
        reads: dict[tuple[tuple[int, ...], int], set[int]] = {}
        for label, (key, rep) in reps.items():
            found = reads.setdefault((key, rep), set())
            for p in trace.op(label).parents:
                if p in reps and reps[p][0] == key:
                    found.add(reps[p][1])
        for (key, rep), read in sorted(reads.items()):
            if rep and (rep - 1 not in read or any(r < rep - 1 for r in read)):
                bad.append(f"{name}: repetition {rep} of {key} reads {sorted(read)}")
        if types.get(name, 1) > 1 and not _one_piece(trace, reps, scope[name]):
            bad.append(f"{name}: the calls of its first repetition are not one dataflow")
    return bad


def _one_piece(trace: Trace, reps: Repetitions, parent: str | None) -> bool:
    """Whether the calls of the first repetition (children of ``parent``) are joined."""
    first = min(reps.values())
    call_of: dict[str, tuple[str, int]] = {}
    for label, rep in reps.items():
        if rep != first:
            continue
        chain = trace.op(label).module_calls
        at = next(i for i, key in enumerate(chain) if key[0] == parent) if parent else -1
        call_of[label] = chain[at + 1]
    root = {call: call for call in call_of.values()}

    def find(call: tuple[str, int]) -> tuple[str, int]:
        while root[call] != call:
            call = root[call]
        return call

    for label, call in call_of.items():
        for p in trace.op(label).parents:
            if p in call_of:
                root[find(call_of[p])] = find(call)
    return len({find(call) for call in root}) == 1


@pytest.mark.parametrize("name", names())
def test_folds_draw_only_edges_the_model_has(name: str) -> None:
    trace = corpus_trace(name)
    problems: dict[str, Any] = {}
    for key, options in DRAWINGS.items():
        plan = build_plan(trace, **options)
        nodes = [node.id for node in plan.nodes]
        loops = [source for source, target in plan.edges if source == target]
        cycle = _cycle(nodes, [e for e in plan.edges if e[0] != e[1]])
        folds = _folds(trace, plan)
        found = {
            "self-loops": loops,
            "on a cycle": cycle,
            "false edges": _false_edges(trace, plan, folds),
            "untrue repeats": _untrue_repeats(trace, plan, folds),
        }
        found = {k: v for k, v in found.items() if v}
        if found:
            problems[key] = found
    assert problems == {}, f"{name}: {problems}"


def test_olmo2_attention_draws_each_projection_and_folds_no_siblings() -> None:
    # q_norm, k_proj, k_norm, v_proj alternate in type but are no stack: q_norm reads
    # q_proj, k_norm reads k_proj, v_proj reads the layer's input.
    trace = corpus_trace("olmo2")
    plan = build_plan(trace, collapse="auto")
    titles = [c.title for c in plan.clusters]
    assert not [t for t in titles if "q_norm" in t], titles
    assert "x2 @model.layers.0-1 (Olmo2DecoderLayer)" in titles
    drawn = {label: node.id for node in plan.nodes for label in node.members}
    attention = "model.layers.0.self_attn"
    projections = {
        name: drawn[next(c for c in trace.modules if c.address == f"{attention}.{name}").ops[0]]
        for name in ("q_proj", "k_proj", "v_proj")
    }
    assert len(set(projections.values())) == 3, projections


def test_dpt_fusion_fold_shows_the_range_of_its_shapes() -> None:
    # Fusion layers 1-3 refine 4x4, 8x8 and 16x16 maps: each op the fold draws says so,
    # under its first repetition's own shape.
    trace = corpus_trace("dpt")
    plan = build_plan(trace, collapse="auto")
    parent = {c.id: c.parent for c in plan.clusters}
    fold = next(c.id for c in plan.clusters if c.title.startswith("x3 @neck.fusion_stage."))

    def in_fold(cluster: str | None) -> bool:
        while cluster is not None and cluster != fold:
            cluster = parent[cluster]
        return cluster == fold

    drawing = trace.draw(collapse="auto")
    inside = [node.id for node in plan.nodes if in_fold(node.cluster)]
    convs = [n for n in inside if drawing.nodes[n].members[0].startswith("conv2d")]
    assert len(convs) >= 3
    ranges = []
    for node_id in convs:
        rows = drawing.nodes[node_id].rows
        first, _, last = rows[1].partition("->")
        shapes = [trace.op(label).shape for label in drawing.nodes[node_id].members]
        assert (first, last) == ("x".join(map(str, shapes[0])), "x".join(map(str, shapes[-1])))
        assert rows[2].startswith(f"{first}, "), rows
        ranges.append(rows[1])
    # The two residual units' convs (each an x2 fold), the projection after the upsampling.
    assert ranges.count("1x16x4x4->1x16x16x16") == 2, ranges
    assert ranges.count("1x16x8x8->1x16x32x32") == 1, ranges
