"""Content signatures of boxes, folds and segments (issue 21, item 1): written into the
canonical DOT, read back, compared and named."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch import nn

from pytest_tlgraph import capture
from pytest_tlgraph.diff.dotparse import parse_gv
from pytest_tlgraph.diff.edits import to_json
from pytest_tlgraph.diff.graph import GraphModel, read_graph
from pytest_tlgraph.diff.inside import fold_name, inside_change
from pytest_tlgraph.diff.view.comparison import compare
from pytest_tlgraph.diff.view.story import every_change, story_lines
from pytest_tlgraph.draw.collapse.signature import (
    DIGEST_HEX,
    MAX_LISTED_GROUPS,
    Signature,
    expand_funcs,
    read_signature,
)
from pytest_tlgraph.draw.dot import emit
from pytest_tlgraph.snapshots.failure import structure_of


class _Block(nn.Module):
    def __init__(self, hidden: int = 8, act: type[nn.Module] = nn.ReLU) -> None:
        super().__init__()
        self.fc1 = nn.Linear(4, hidden)
        self.act = act()
        self.fc2 = nn.Linear(hidden, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.fc2(self.act(self.fc1(x)))  # type: ignore[no-any-return]


class _Net(nn.Module):
    def __init__(self, *blocks: nn.Module) -> None:
        super().__init__()
        self.blocks = nn.Sequential(*blocks)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.blocks(x))


def _dot(model: nn.Module, **opts: Any) -> str:
    torch.manual_seed(0)
    return capture(model, torch.zeros(1, 4)).draw(**opts).dot


def _summary(old: nn.Module, new: nn.Module, **opts: Any) -> list[str]:
    return every_change(compare(_dot(old, **opts), _dot(new, **opts)))


def _rows(graph: GraphModel) -> dict[str, tuple[str, ...]]:
    return {node_id: node.rows for node_id, node in graph.nodes.items()}


def _signatures(graph: GraphModel) -> dict[str, str]:
    return {k: node.signature for k, node in graph.nodes.items() if node.signature is not None}


def test_a_box_writes_its_digest_count_and_functions() -> None:
    graph = read_graph(_dot(_Net(_Block()), depth=0))
    assert graph.nodes["@blocks#1"].title == "@blocks (Sequential)"
    signature = read_signature(graph.nodes["@blocks#1"].signature)
    assert signature is not None
    assert len(signature.digest) == DIGEST_HEX
    assert signature.count == 4
    assert signature.funcs == ("linear", "relu", "linear", "add")
    assert graph.nodes["tanh_1"].signature is None  # a plain op carries none


def test_a_hidden_width_change_fails_though_every_row_is_the_same() -> None:
    old, new = _Net(_Block(hidden=8)), _Net(_Block(hidden=16))
    old_graph, new_graph = read_graph(_dot(old, depth=0)), read_graph(_dot(new, depth=0))
    assert _rows(old_graph) == _rows(new_graph)
    # The box's line says what changed inside, in the full view's words (tl_ops).
    assert _summary(old, new, depth=0) == [
        "@blocks (Sequential): inside: linear shape 1x8 -> 1x16, linear out_features 8 -> "
        "16, linear params weight 8x4, bias 8 -> weight 16x4, bias 16, relu shape 1x8 -> "
        "1x16, and 2 more"
    ]


def test_a_fold_hashes_every_repetition() -> None:
    old = _Net(_Block(), _Block(), _Block())
    new = _Net(_Block(), _Block(), _Block())
    new.blocks[2].fc1.weight.requires_grad_(False)  # frozen: the params differ, not the rows
    opts = {"collapse": "auto", "collapse_budget": 4}
    old_graph, new_graph = read_graph(_dot(old, **opts)), read_graph(_dot(new, **opts))
    fold = "@blocks.0#1*3"
    assert old_graph.nodes[fold].title == "x3 @blocks.0-2 (_Block)"
    assert _rows(old_graph) == _rows(new_graph)
    assert old_graph.nodes[fold].signature != new_graph.nodes[fold].signature
    changes = _summary(old, new, **opts)
    assert changes == [
        "x3 @blocks.0-2 (_Block): inside: args, shapes, params or wiring changed (4 ops)"
    ]


def test_a_swapped_function_is_named() -> None:
    changes = _summary(_Net(_Block()), _Net(_Block(act=nn.GELU)), depth=0)
    assert changes == ["@blocks (Sequential): inside: relu -> gelu (1 op)"]


def test_a_segment_carries_a_signature_too() -> None:
    class Root(nn.Module):
        def __init__(self, dim: int) -> None:
            super().__init__()
            self.dim = dim

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.tanh(x.unsqueeze(self.dim).squeeze(self.dim) * 2)

    old, new = read_graph(_dot(Root(0), collapse="max")), read_graph(_dot(Root(2), collapse="max"))
    segment = next(k for k in new.nodes if k.startswith("segment:"))
    assert _rows(old) == _rows(new)
    assert new.nodes[segment].signature is not None
    assert old.nodes[segment].signature != new.nodes[segment].signature


def test_node_spec_fn_cannot_overwrite_the_signature() -> None:
    def spec(node: Any, attrs: dict[str, Any]) -> dict[str, Any]:
        return {**attrs, "comment": "mine"}

    graph = read_graph(_dot(_Net(_Block()), depth=0, node_spec_fn=spec))
    assert read_signature(graph.nodes["@blocks#1"].signature) is not None


def test_the_signature_round_trips_through_the_stored_gv() -> None:
    dot = _dot(_Net(_Block(), _Block()), collapse="auto", color_by="flops", collapse_budget=4)
    assert "comment=" in dot
    assert emit(parse_gv(dot).graph) == dot


def test_the_ci_summary_counts_and_names_the_change() -> None:
    old, new = _dot(_Net(_Block()), depth=0), capture(_Net(_Block(act=nn.GELU)), torch.zeros(1, 4))
    data = structure_of(compare(old, new.draw(depth=0).dot))
    assert data.changed_nodes == ("@blocks#1",)
    assert data.story == ("@blocks (Sequential): inside: 0.act relu -> gelu",)
    assert data.headline == "@blocks (Sequential): inside: 0.act relu -> gelu"
    assert [to_json(edit) for edit in data.edits] == [
        {"kind": "op_replaced", "at": "blocks.0.act", "old": "relu", "new": "gelu", "id": "",
         "old_id": ""}
    ]  # fmt: skip


def test_a_long_box_lists_no_functions_and_says_its_content_changed() -> None:
    funcs = tuple(f"f{i}" for i in range(MAX_LISTED_GROUPS + 1))
    model = nn.Sequential(*(nn.Linear(2, 2) if i % 2 else nn.ReLU() for i in range(500)))
    graph = read_graph(capture(nn.Sequential(model), torch.zeros(1, 2)).draw(depth=0).dot)
    signature = read_signature(graph.nodes["@0#1"].signature)
    assert signature is not None and signature.funcs is None and signature.count == 500
    old, new = Signature("a" * 12, 3, None), Signature("b" * 12, 3, None)
    assert inside_change(old, new) == "content changed (3 ops)"
    assert expand_funcs(", ".join(funcs)) == funcs


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        (("relu", "add", "relu"), ("gelu", "add", "gelu"), "relu -> gelu (2 ops)"),
        (("linear", "add"), ("linear", "mul", "add"), "mul now runs (1 op)"),
        (("linear", "mul", "add"), ("linear", "add"), "mul no longer runs (1 op)"),
        (("a", "b"), ("c", "d"), "a -> c (1 op), b -> d (1 op)"),
    ],
)
def test_inside_change_names_the_function_edits(
    old: tuple[str, ...], new: tuple[str, ...], said: str
) -> None:
    before = Signature("0" * 12, len(old), old)
    after = Signature("1" * 12, len(new), new)
    assert inside_change(before, after) == said
    assert inside_change(before, before) is None
    assert inside_change(None, after) is None


def test_many_function_edits_are_counted_past_four() -> None:
    old = tuple("abcdef")
    new = tuple(f"{c}2" for c in old)
    said = inside_change(Signature("0" * 12, 6, old), Signature("1" * 12, 6, new))
    assert said == "a -> a2 (1 op), b -> b2 (1 op), c -> c2 (1 op), d -> d2 (1 op), and 2 more"


@pytest.mark.parametrize(
    ("first", "last", "count", "type_name", "full"),
    [
        ("layer1.0", "layer1.1", 2, "BasicBlock", "x2 @layer1.0-1 (BasicBlock)"),
        ("a.head", "a.head_dist", 2, "Linear", "x2 @a.head..a.head_dist (Linear)"),
        ("h.0", "h.11", 12, "Block", "x12 @h.0-11 (Block)"),
        ("0", "3", 4, "Block", "x4 @0-3 (Block)"),
        ("blocks.0", "blocks.3", 2, "Block", "x2 @blocks.0..blocks.3 (Block)"),
        ("cell", "cell", 5, "LSTMCell", "x5 @cell (LSTMCell)"),
    ],
)
def test_fold_name_writes_the_full_addresses(
    first: str, last: str, count: int, type_name: str, full: str
) -> None:
    assert fold_name(first, last, count, type_name) == full


def test_read_signature_refuses_other_comments() -> None:
    assert read_signature("a user's comment") is None
    assert read_signature(None) is None
    assert read_signature("0123456789ab 1 op: relu") == Signature("0123456789ab", 1, ("relu",))


def test_a_repeat_fold_cluster_hashes_every_repetition() -> None:
    from pytest_tlgraph.diff.view.drawing import graph_diff

    old = _Net(_Block(), _Block(), _Block())
    new = _Net(_Block(), _Block(), _Block())
    new.blocks[2].fc1.weight.requires_grad_(False)  # the third repetition: never drawn
    old_dot, new_dot = _dot(old, collapse="auto"), _dot(new, collapse="auto")
    old_graph, new_graph = read_graph(old_dot), read_graph(new_dot)
    assert _rows(old_graph) == _rows(new_graph) and not _signatures(new_graph)
    cluster = new_graph.clusters["cluster_blocks.0#1"]
    assert cluster.title == "x3 @blocks.0-2 (_Block)"
    assert cluster.signature is not None and cluster.signature.endswith(" 12 ops")
    comparison = compare(old_dot, new_dot)
    (change,) = comparison.clusters_changed
    assert (change.id, change.new_title) == ("cluster_blocks.0#1", "x3 @blocks.0-2 (_Block)")
    assert change.inside == "content changed (12 ops)"
    assert not comparison.unchanged
    said = (
        "x3 @blocks.0-2 (_Block): inside: same ops, shapes and args; what changed is kept "
        "only in its digest (the names, wiring or parameters inside: a parameter's name or "
        "whether it trains)"
    )
    assert story_lines(comparison) == [said]
    diff = graph_diff(old_dot, new_dot, context=None)  # the whole union
    _assert_amber_fold_frame(diff.dot)
    assert emit(parse_gv(new_dot).graph) == new_dot
    assert compare(old_dot, _dot(_Net(_Block(), _Block(), _Block()), collapse="auto")).unchanged


def _assert_amber_fold_frame(dot: str) -> None:
    # The frame's caption carries the story's line for the edit it holds.
    line = next(x for x in dot.splitlines() if "what changed is kept only in its" in x)
    assert line.strip().startswith("graph [label=<x3 @blocks.0-2 (_Block)<BR/>» x3 @blocks")
    assert 'color="#B07800"' in line  # amber: changed


def test_the_diff_drawing_with_context_shows_a_changed_fold_frame() -> None:
    from pytest_tlgraph.diff.view.drawing import graph_diff

    new = _Net(_Block(), _Block(), _Block())
    new.blocks[2].fc1.weight.requires_grad_(False)
    old_dot = _dot(_Net(_Block(), _Block(), _Block()), collapse="auto")
    _assert_amber_fold_frame(graph_diff(old_dot, _dot(new, collapse="auto")).dot)


def test_a_drawing_stored_without_signatures_says_so_and_how_to_rewrite_it() -> None:
    import re

    # 0.3 drew signatures but no structured attribute; 0.2 neither.
    drawn = _dot(_Net(_Block(), _Block(), _Block()), depth=1)
    new = re.sub(r', tl_[a-z]+="[^"]*"', "", drawn)
    old = re.sub(r', comment="[^"]*"', "", new)
    comparison = compare(old, new)
    assert comparison.unsigned == ("@blocks.0#1", "@blocks.1#1", "@blocks.2#1")
    assert not comparison.unchanged and not comparison.changed
    (line,) = story_lines(comparison)
    assert line.startswith("content signature on one side only (3): @blocks.0#1, ")
    assert line.endswith("predates the signatures of collapsed nodes (0.2): if nothing else "
                         "changed, run pytest --snapshot-update to rewrite it")  # fmt: skip


def test_a_drawing_with_the_schema_never_reads_as_predating_signatures() -> None:
    """A stored drawing that names its schema was written by a version that signs
    every collapsed node: a missing signature there is a fact, not its age."""
    import re

    new = _dot(_Net(_Block(), _Block(), _Block()), depth=1)
    old = re.sub(r', comment="[^"]*"', "", new, count=1)
    (line,) = story_lines(compare(old, new))
    assert line == "content signature on one side only (1): @blocks.0#1"


def _boxed(*layers: nn.Module) -> str:
    torch.manual_seed(0)
    return capture(nn.Sequential(*layers), torch.randn(2, 4)).draw(depth=1).dot


def test_a_box_moved_to_another_address_reads_moved_not_changed() -> None:
    # A parameter-free layer inserted before the block shifts its index: @0 -> @1.
    before = _boxed(_Block())
    after = _boxed(nn.Identity(), _Block())
    lines = story_lines(compare(before, after))
    moved = [line for line in lines if line.startswith("moved, same content")]
    # The block moved whole, its parameters with it: one module, named once.
    assert moved == [
        "moved, same content (4 nodes at another module address): @0 (_Block) -> @1"
    ], lines
    assert not any("inside" in line for line in lines), lines


def test_a_moved_box_whose_content_changed_still_reads_changed() -> None:
    before = _boxed(_Block())
    after = _boxed(nn.Identity(), _Block(hidden=16))
    lines = story_lines(compare(before, after))
    assert (
        "@1.fc2 (Linear): inside: linear in_features 8 -> 16; params weight 4x8 -> 4x16"
    ) in lines
