"""``clusters_for``: drawn clusters and innermost clusters from module-call chains."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from pytest_tlgraph import capture
from pytest_tlgraph.draw import build_plan
from pytest_tlgraph.draw.plan import Cluster, clusters_for
from pytest_tlgraph.trace import ModuleCall, Trace
from tests.models import MLP, ResidualMLP, seeded

Chain = tuple[tuple[str, int], ...]


def _walk_every_node(
    trace: Trace, view: str, chains: Mapping[str, Sequence[tuple[str, int]]]
) -> tuple[tuple[Cluster, ...], dict[str, str | None]]:
    """The definition, node by node: a call is drawn when it holds two visible nodes."""
    types = {call.key: call.type_name for call in trace.modules}

    def cid(address: str, number: int) -> str:
        return f"cluster_{address}" if view == "rolled" else f"cluster_{address}#{number}"

    population: dict[str, int] = {}
    for chain in chains.values():
        for address, number in chain:
            if address:
                population[cid(address, number)] = population.get(cid(address, number), 0) + 1
    kept: dict[str, Cluster] = {}
    innermost: dict[str, str | None] = {}
    for node_id, chain in chains.items():
        parent = None
        for address, number in chain:
            if not address:
                continue
            if population[cid(address, number)] < 2:
                break
            type_name = types.get((address, number), "?")
            number_drawn = None if view == "rolled" else number
            cluster = Cluster(
                cid(address, number), address, type_name, parent, call_number=number_drawn
            )
            kept.setdefault(cid(address, number), cluster)
            parent = cid(address, number)
        innermost[node_id] = parent
    # No frame drawn twice: a cluster holding one cluster and no node of its own goes,
    # what it held moving up to its parent (outermost first).
    for cluster in list(kept.values()):
        inner = [c for c in kept.values() if c.parent == cluster.id]
        if len(inner) == 1 and cluster.id not in innermost.values():
            del kept[cluster.id]
            kept[inner[0].id] = replace(inner[0], parent=cluster.parent)
    order = [c for c in population if c in kept]
    return tuple(sorted(kept.values(), key=lambda c: order.index(c.id))), innermost


def _tree_trace() -> Trace:
    """A trace whose module calls form a small tree: a, a.b, a.c, each called twice."""
    calls = []
    for number in (1, 2):
        calls.append(ModuleCall("a", number, "A", 1, ("", 1), ()))
        calls.append(ModuleCall("a.b", number, "B", 2, ("a", number), ()))
        calls.append(ModuleCall("a.c", number, "C", 2, ("a", number), ()))
    return Trace(ops=(), layers={}, modules=tuple(calls), model_name="Tree", param_count=0)


_CHAINS: list[Chain] = [
    (("", 1),),
    (("", 1), ("a", 1)),
    (("", 1), ("a", 1), ("a.b", 1)),
    (("", 1), ("a", 1), ("a.c", 1)),
    (("", 1), ("a", 2), ("a.b", 2)),
    (("", 1), ("a", 2), ("a.c", 2)),
    (("", 1), ("a", 2), ("a.z", 1)),  # a call the trace does not list: type "?"
]


@given(
    picks=st.lists(st.sampled_from(_CHAINS), max_size=12),
    view=st.sampled_from(["unrolled", "rolled"]),
    as_lists=st.booleans(),
)
def test_clusters_match_the_node_by_node_definition(
    picks: list[Chain], view: str, as_lists: bool
) -> None:
    trace = _tree_trace()
    chains: dict[str, Sequence[tuple[str, int]]] = {
        f"n{i}": list(chain) if as_lists else chain for i, chain in enumerate(picks)
    }
    assert clusters_for(trace, view, chains) == _walk_every_node(trace, view, chains)


@pytest.mark.parametrize("view", ["unrolled", "rolled"])
def test_clusters_of_a_real_model_match_the_definition(view: str) -> None:
    trace = capture(seeded(ResidualMLP(blocks=4)), torch.randn(2, 32))
    records = list(trace.layers.values()) if view == "rolled" else list(trace.ops)
    chains = {r.label: r.module_calls for r in records}
    clusters, innermost = clusters_for(trace, view, chains)
    assert (clusters, innermost) == _walk_every_node(trace, view, chains)
    plan = build_plan(trace, view=view)
    assert plan.clusters == clusters
    assert {n.id: n.cluster for n in plan.nodes} == innermost
    assert len(clusters) == 5  # blocks and its four residual blocks


def test_a_module_with_one_visible_node_is_no_cluster() -> None:
    trace = capture(seeded(MLP()), torch.randn(2, 8))
    clusters, innermost = clusters_for(
        trace, "unrolled", {o.label: o.module_calls for o in trace.ops}
    )
    assert clusters == ()  # fc1, act and fc2 each issue one op
    assert set(innermost.values()) == {None}
