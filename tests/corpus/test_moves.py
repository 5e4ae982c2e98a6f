# ruff: noqa: E501  (the stories are asserted whole, one line each)
"""The true story when blocks move, split and fold: each edit of
:data:`tests.corpus.changes.MOVES` on a corpus model, compared in the full, ``depth=1``
and ``collapse="auto"`` views, reads exactly the lines below: what was added, removed,
moved or changed and nothing else (docs/diffs.md shows their context drawings)."""

from __future__ import annotations

import functools
from collections.abc import Mapping

import pytest

from pytest_tlgraph import Trace, capture
from pytest_tlgraph.diff.view.comparison import Comparison, compare
from pytest_tlgraph.diff.view.diffplan import plan_diff
from pytest_tlgraph.diff.view.drawing import draw_comparison
from pytest_tlgraph.diff.view.story import headline, rewired_edges, story_lines
from pytest_tlgraph.draw.plan import Cluster
from tests.corpus.changes import MOVES

VIEWS: dict[str, dict[str, object]] = {
    "full": {},
    "depth1": {"depth": 1},
    "auto": {"collapse": "auto"},
}

#: The story of each edit in each view, line by line.
STORIES: dict[str, dict[str, list[str]]] = {
    "head_inserted": {
        "full": [
            "added @layer2.0 (BasicBlock): 7 ops",
        ],
        "depth1": [
            "added @layer2.0 (BasicBlock): 7 ops",
        ],
        "auto": [
            "added @layer2.0 (BasicBlock): 7 ops",
        ],
    },
    "middle_inserted": {
        "full": [
            "added @layer2.2 (BasicBlock): 7 ops",
        ],
        "depth1": [
            "added @layer2.2 (BasicBlock): 7 ops",
        ],
        "auto": [
            "x1 -> x2 @layer2.1-2 (BasicBlock): block @layer2.2 added (7 ops)",
        ],
    },
    "block_removed": {
        "full": [
            "removed @layer3.1 (BasicBlock): 7 ops",
        ],
        "depth1": [
            "removed @layer3.1 (BasicBlock): 7 ops",
        ],
        "auto": [
            "removed @layer3.1 (BasicBlock): 7 ops (the view: x2 @layer1.0-1 (BasicBlock) drawn open, 7 nodes in its frame (was one box), @layer2.0 (BasicBlock) drawn open, 9 nodes in its frame (was one box), @layer2.1 (BasicBlock) drawn open, 7 nodes in its frame (was one box), ... and 3 more)",
        ],
    },
    "blocks_swapped": {
        "full": [
            "order changed in @layer1: 0, 1 -> 1, 0",
        ],
        "depth1": [
            "order changed in @layer1: 0, 1 -> 1, 0",
        ],
        "auto": [
            "order changed in @layer1: 0, 1 -> 1, 0",
        ],
    },
    "fold_broken": {
        "full": [
            "replaced relu -> gelu on 2 nodes @layer1.2.relu",
        ],
        "depth1": [
            "replaced relu -> gelu on 2 ops @layer1.2.relu",
        ],
        "auto": [
            "replaced relu -> gelu on 2 ops @layer1.2.relu (the view: fold x4 -> x2 + 1 + 1)",
        ],
    },
    "decoder_fold_broken": {
        "full": [
            "replaced silu_3 -> gelu_1 (@model.layers.2.mlp.act_fn)",
        ],
        "depth1": [
            "@model.layers.2 (LlamaDecoderLayer): inside: mlp.act_fn silu -> gelu",
        ],
        "auto": [
            "gelu_1 @model.layers.2.mlp.act_fn: silu -> gelu (the view: fold x4 -> x2 + 1 + 1, @model.layers.0.self_attn (LlamaAttention) drawn as one box (was 30 nodes in its frame))",
        ],
    },
    "olmo2_fold_broken": {
        "full": [
            "replaced silu_2 -> gelu_1 (@model.layers.1.mlp.act_fn)",
        ],
        "depth1": [
            "@model.layers.1 (Olmo2DecoderLayer): inside: mlp.act_fn silu -> gelu",
        ],
        "auto": [
            "gelu_1 @model.layers.1.mlp.act_fn: silu -> gelu (the view: fold x2 -> 1 + 1, @model.layers.0.self_attn (Olmo2Attention) drawn as one box (was 34 nodes in its frame))",
        ],
    },
    "fold_count_changed": {
        "full": [
            "removed @layer1.3 (BasicBlock): 7 ops",
        ],
        "depth1": [
            "removed @layer1.3 (BasicBlock): 7 ops",
        ],
        "auto": [
            "x4 -> x3 @layer1.0-2 (BasicBlock): block @layer1.3 removed (7 ops)",
        ],
    },
    "box_moved": {
        "full": [
            "moved, same content (16 nodes at another module address): @layer2.0 (BasicBlock) -> @layer2.1, @layer2.1 (BasicBlock) -> @layer2.2",
        ],
        "depth1": [
            "moved, same content (2 nodes at another module address): @layer2.0 (BasicBlock) -> @layer2.1, @layer2.1 (BasicBlock) -> @layer2.2",
        ],
        "auto": [
            "moved, same content (2 nodes at another module address): @layer2.0 (BasicBlock) -> @layer2.1, @layer2.1 (BasicBlock) -> @layer2.2",
        ],
    },
    "order_swapped": {
        "full": [
            "order changed in @(top level): bn1, relu -> relu, bn1",
        ],
        "depth1": [
            "order changed in @(top level): bn1, relu -> relu, bn1",
        ],
        "auto": [
            "order changed in @(top level): bn1, relu -> relu, bn1",
        ],
    },
    "helper_refactored": {
        "full": [
            "order changed in @attn: q_proj, k_proj, v_proj -> v_proj, k_proj, q_proj; the same dataflow, only the order they run in",
        ],
        "depth1": [
            "order changed in @attn: q_proj, k_proj, v_proj -> v_proj, k_proj, q_proj",
        ],
        "auto": [
            "order changed in @attn: q_proj, k_proj, v_proj -> v_proj, k_proj, q_proj; the same dataflow, only the order they run in",
        ],
    },
}


@functools.cache
def _traces(name: str) -> tuple[Trace, Trace]:
    before, after = MOVES[name]()
    return tuple(  # type: ignore[return-value]
        capture(case.model, case.inputs, kwargs=case.kwargs or None) for case in (before, after)
    )


@functools.cache
def _compared(name: str, view: str) -> Comparison:
    before, after = _traces(name)
    return compare(before.draw(**VIEWS[view]).dot, after.draw(**VIEWS[view]).dot)


@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("name", list(MOVES))
def test_each_move_reads_its_true_story(name: str, view: str) -> None:
    comparison = _compared(name, view)
    assert story_lines(comparison) == STORIES[name][view]
    # The headline leads with the model's change, never a redrawing or a move.
    assert headline(comparison).startswith(STORIES[name][view][0])
    # Nothing reads as rewired: every edge that changed is explained by a node or
    # module added, removed or reordered.
    lines = story_lines(comparison)
    assert not any(line.startswith(("edges added", "edges removed")) for line in lines)


def test_every_move_has_its_story_in_every_view() -> None:
    assert set(STORIES) == set(MOVES)
    assert all(set(views) == set(VIEWS) for views in STORIES.values())


@pytest.mark.parametrize("view", list(VIEWS))
def test_a_block_inserted_at_a_stage_head_adds_one_block_and_changes_nothing(view: str) -> None:
    comparison = _compared("head_inserted", view)
    assert not comparison.removed and not comparison.changed and not comparison.replaced
    new = comparison.new
    assert {_block(new.nodes[n].address) for n in comparison.added} == {"layer2.0"}
    # The blocks that were layer2.0 and layer2.1 are the same blocks one index on.
    moved = {(_block(was), _block(now)) for _, was, now in comparison.moved}
    assert moved == {("layer2.0", "layer2.1"), ("layer2.1", "layer2.2")}


def _frames_of(cluster: str | None, clusters: Mapping[str, Cluster]) -> list[str]:
    """``cluster`` and the frames around it, innermost first."""
    out = []
    while cluster is not None and cluster in clusters:
        out.append(cluster)
        cluster = clusters[cluster].parent
    return out


def _block(address: str) -> str:
    return ".".join(address.split(".")[:2])


@pytest.mark.parametrize("view", list(VIEWS))
def test_q_k_v_run_in_another_order_are_not_rewired(view: str) -> None:
    comparison = _compared("helper_refactored", view)
    assert not comparison.added and not comparison.removed and not comparison.changed
    assert rewired_edges(comparison) == ([], [])


def test_a_fold_broken_by_one_repetition_leaves_no_added_block() -> None:
    comparison = _compared("fold_broken", "auto")
    assert not comparison.added and not comparison.removed
    (split,) = comparison.splits
    assert [count for _, count in split.parts] == [2, 1, 1]
    assert [what for _, what in split.changes] == ["relu -> gelu (2 ops)", None]
    # The diff drawing marks the changed repetition, not the one still a repetition.
    drawing = draw_comparison(comparison, context=None)
    assert drawing.nodes["@layer1.2#1"].kind == "changed"
    assert drawing.nodes["@layer1.3#1"].kind == "unchanged"


@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("name", list(MOVES))
def test_each_move_is_drawn_with_what_the_story_says(name: str, view: str) -> None:
    comparison = _compared(name, view)
    statuses = comparison.node_statuses
    for context in (None, 2):
        drawing = draw_comparison(comparison, context=context)
        kinds = {node_id: node.kind for node_id, node in drawing.nodes.items()}
        # Every node that changed is drawn with its status, in the context view too,
        # except: a node that runs in another order is drawn once per side (removed,
        # then added); a module the view only redrew is drawn once, as received; a
        # node marked only because its frame holds the edit is drawn inside that
        # frame, marked instead; the fold that only kept fewer repetitions, unchanged.
        plan = plan_diff(comparison, context)
        redrawn = {comparison.union_id(n) for g in comparison.regrouped for n in g.frame}
        redrawn |= {comparison.union_id(g.box) for g in comparison.regrouped}
        redrawn |= {n for g in comparison.regrouped for n in (g.box, *g.frame)}
        counts = {split.count_line for split in comparison.splits}  # the fold's note
        for node_id, status in statuses.items():
            if status == "unchanged":
                continue
            per_side = (kinds.get(node_id), kinds.get(f"{node_id} (before)"))
            frames = _frames_of(plan.graph.cluster_of.get(node_id), plan.graph.clusters)
            held = any(plan.frames.get(c) == "changed" and c in plan.notes for c in frames)
            assert (
                kinds.get(node_id) == status
                or per_side == ("added", "removed")
                or (node_id in redrawn and kinds.get(node_id) in (None, "unchanged"))
                or (held and kinds.get(node_id) in ("unchanged", "run", None))
                or (comparison.split_of.get(node_id) in counts and kinds[node_id] == "unchanged")
            ), (node_id, context)
    added = sum(1 for s in statuses.values() if s == "added")
    removed = sum(1 for s in statuses.values() if s == "removed")
    assert (added, removed) == (len(comparison.added), len(comparison.removed))
