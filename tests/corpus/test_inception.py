"""Inception v3's auto drawing shows the parallel branches that define it (issue 24,
item 2): within the 60-node budget at least one Inception block is a frame whose
branches are separate boxes feeding its concatenation, not a chain of whole blocks."""

from __future__ import annotations

import pytest
import torch

from pytest_tlgraph import capture
from pytest_tlgraph.draw import build_plan
from pytest_tlgraph.draw.collapse import AUTO_NODE_BUDGET
from pytest_tlgraph.draw.plan import Plan, PlanNode
from pytest_tlgraph.trace import Trace
from tests.corpus import models_inception
from tests.corpus.traces import corpus_trace
from tests.plan_checks import check_plan

BLOCKS = frozenset({"InceptionA", "InceptionB", "InceptionC", "InceptionD", "InceptionE"})


def _block_of(plan: Plan, node: PlanNode) -> str | None:
    """The address of the Inception block whose frame holds ``node``, if any."""
    clusters = {c.id: c for c in plan.clusters}
    cid = node.cluster
    while cid is not None:
        if clusters[cid].type_name in BLOCKS:
            return clusters[cid].address
        cid = clusters[cid].parent
    return None


def _branch_joins(plan: Plan) -> dict[str, int]:
    """Per Inception block drawn as a frame, the most distinct nodes of that block that
    feed one of its concatenations (its branches, at the block's output ``cat``)."""
    nodes = {n.id: n for n in plan.nodes}
    joins: dict[str, int] = {}
    for node in plan.nodes:
        block = _block_of(plan, node)
        if block is None or node.kind != "op" or node.record.func != "cat":
            continue
        feeding = {s for s, t in plan.edges if t == node.id and _block_of(plan, nodes[s]) == block}
        joins[block] = max(joins.get(block, 0), len(feeding))
    return joins


def _auto(trace: Trace) -> Plan:
    plan = build_plan(trace, collapse="auto")
    check_plan(trace, plan)
    assert len(plan.nodes) <= AUTO_NODE_BUDGET
    return plan


def test_auto_shows_an_inception_blocks_branches() -> None:
    plan = _auto(corpus_trace("inception_v3"))
    joins = _branch_joins(plan)
    # Every open block's output is fed by each of its branches: three for the grid
    # reductions (InceptionB, InceptionD), four for the others.
    assert joins and min(joins.values()) >= 3, joins
    # The branches are drawn as BasicConv2d boxes, not hidden inside a block box.
    inside = [n for n in plan.nodes if n.kind == "box" and _block_of(plan, n) is not None]
    assert {n.record.module_type for n in inside} == {"BasicConv2d"}
    assert len(inside) >= 3


def test_the_one_depth_drawing_that_fits_is_the_chain_auto_avoids() -> None:
    # One depth for the whole model (0.2's auto): depth=0 fits and hides every branch,
    # depth=1 opens all eleven Mixed blocks at once and is far over budget.
    trace = corpus_trace("inception_v3")
    chain = build_plan(trace, depth=0)
    assert len(chain.nodes) <= AUTO_NODE_BUDGET and not _branch_joins(chain)
    assert len(build_plan(trace, depth=1).nodes) > 2 * AUTO_NODE_BUDGET


def test_every_call_of_an_open_inception_class_is_open() -> None:
    # Same class, same detail: the class auto opens is open in every call it draws.
    plan = _auto(corpus_trace("inception_v3"))
    framed = {c.type_name for c in plan.clusters} & BLOCKS
    boxed = {n.record.module_type for n in plan.nodes if n.kind in ("box", "fold")}
    assert framed and not framed & boxed, (framed, boxed)


@pytest.mark.parametrize("device", ["meta"])
def test_torchvisions_widths_on_a_299_image_show_the_branches_too(
    device: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The full-size network (no channel shrink, its 299x299 input), captured on meta.
    monkeypatch.setattr(models_inception, "SHRINK", 1)
    with torch.device(device):
        model = models_inception.Inception3(num_classes=1000).eval()
        trace = capture(model, torch.randn(1, 3, 299, 299))
    joins = _branch_joins(_auto(trace))
    assert joins and min(joins.values()) >= 3, joins
