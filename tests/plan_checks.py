"""Invariants every plan must keep, checked by the collapse tests and their properties."""

from __future__ import annotations

from pytest_tlgraph.draw.collapse import COLLAPSED_KINDS
from pytest_tlgraph.draw.collapse.records import member_sums
from pytest_tlgraph.draw.plan import Plan
from pytest_tlgraph.fields import BOX_SUMMED
from pytest_tlgraph.trace import Trace

__all__ = ["check_plan"]


def check_plan(trace: Trace, plan: Plan) -> None:
    """Assert that ``plan`` draws ``trace`` faithfully.

    Node ids are unique; every op belongs to exactly one node; the edges are the op edges
    mapped onto their nodes, once each, with no edge inside a collapsed node (an edge
    between two repetitions of a repeat fold is drawn by none: both its ends are in the
    fold's cluster); every cluster but a fold's holds at least two nodes; a box or
    segment record carries its members' exact sums.
    """
    ids = [n.id for n in plan.nodes]
    assert len(ids) == len(set(ids))
    owner = {label: n.id for n in plan.nodes for label in n.members}
    assert sorted(owner) == sorted(op.label for op in trace.ops)
    assert sum(len(n.members) for n in plan.nodes) == len(trace.ops)
    kinds = {n.id: n.kind for n in plan.nodes}
    mapped = {
        (owner[p], owner[op.label])
        for op in trace.ops
        for p in op.parents
        if owner[p] != owner[op.label] or kinds[owner[p]] not in COLLAPSED_KINDS
    }
    parents = {c.id: c.parent for c in plan.clusters}
    folds = {c.id for c in plan.clusters if c.caption is not None}

    def fold_clusters(node_id: str) -> set[str]:
        cid, found = next(n.cluster for n in plan.nodes if n.id == node_id), set()
        while cid is not None:
            if cid in folds:
                found.add(cid)
            cid = parents[cid]
        return found

    assert set(plan.edges) <= mapped
    for source, target in mapped - set(plan.edges):
        assert fold_clusters(source) & fold_clusters(target), (source, target)
    assert len(plan.edges) == len(set(plan.edges))
    population: dict[str, int] = {}
    for node in plan.nodes:
        cid = node.cluster
        while cid is not None:
            population[cid] = population.get(cid, 0) + 1
            cid = parents[cid]
    assert all(population.get(c.id, 0) >= 2 for c in plan.clusters if c.id not in folds)
    for node in plan.nodes:
        if node.kind in ("box", "segment"):
            # A box in a repeat fold stands for every repetition's ops and shows the
            # representative's: the ops of its own calls.
            calls = set(getattr(node.record, "calls", ()))
            own = [
                trace.op(label)
                for label in node.members
                if not calls or calls.intersection(trace.op(label).module_calls)
            ]
            sums = member_sums(own)
            assert {f: getattr(node.record, f) for f in BOX_SUMMED} == sums
