"""Repeat folds, ``collapse="max"`` segments and the ``collapse="auto"`` depth choice."""

from __future__ import annotations

from itertools import pairwise

import pytest
import torch
from torch import nn

from pytest_tlgraph import capture
from pytest_tlgraph.draw import build_plan
from pytest_tlgraph.draw.collapse import AUTO_NODE_BUDGET, FoldRecord, SegmentRecord, auto_plan
from pytest_tlgraph.draw.collapse.folds import address_range, fold_runs
from pytest_tlgraph.draw.plan import Plan
from pytest_tlgraph.trace import Trace


class ResidualBlock(nn.Module):
    """LayerNorm -> Linear -> GELU -> Linear, added back to the input."""

    def __init__(self, width: int, extra: bool = False) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.fc1 = nn.Linear(width, 2 * width)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(2 * width, width)
        self.extra = extra

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.fc2(self.act(self.fc1(self.norm(x))))
        if self.extra:
            y = y * 0.5  # one more op: a different structure
        return x + y


class Deep(nn.Module):
    """``depth`` residual blocks in a Sequential, then a linear head."""

    def __init__(self, blocks: int = 40, width: int = 8, odd: int | None = None) -> None:
        super().__init__()
        self.blocks = nn.Sequential(*(ResidualBlock(width, i == odd) for i in range(blocks)))
        self.head = nn.Linear(width, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.blocks(x))


class RootOps(nn.Module):
    """Runs of root-level ops between two top-level modules."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(x * 2)
        x = self.a(x)
        x = torch.tanh(x + 1)
        return self.b(x)


class Repeated(nn.Module):
    """One module called four times in a row, then a loop of bare calls around it."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(4):
            x = self.lin(x)
        for _ in range(2):
            x = self.lin(torch.sigmoid(x))
        return x


@pytest.fixture(scope="module")
def deep() -> Trace:
    torch.manual_seed(0)
    return capture(Deep(), torch.randn(2, 8))


def kinds(plan: Plan) -> dict[str, str]:
    return {n.id: n.kind for n in plan.nodes}


def only(plan: Plan, kind: str):  # type: ignore[no-untyped-def]
    (found,) = [n for n in plan.nodes if n.kind == kind]
    return found


def test_auto_folds_forty_blocks_into_one_node_within_budget(deep: Trace) -> None:
    # Boxed blocks (auto capped at depth 1) fold into one node of kind fold.
    plan = build_plan(deep, collapse="auto", depth=1)
    assert len(plan.nodes) <= AUTO_NODE_BUDGET
    fold = only(plan, "fold")
    record = fold.record
    assert isinstance(record, FoldRecord)
    assert record.count == 40
    assert record.title == "x40 @blocks.0-39 (ResidualBlock)"
    assert [b.module for b in record.boxes] == [f"blocks.{i}" for i in range(40)]
    assert record.representative == "blocks.0"
    blocks = next(c for c in deep.modules if c.address == "blocks")
    assert fold.members == blocks.ops  # the fold stands for every folded op
    assert record.members == record.boxes[0].members  # ...and shows the first block
    head = next(c for c in deep.modules if c.address == "head").ops[0]
    assert list(kinds(plan)) == ["input_1", fold.id, head, "output_1"]
    assert set(plan.edges) == {("input_1", fold.id), (fold.id, head), (head, "output_1")}


def test_auto_draws_the_representative_block_inside_an_nx_cluster(deep: Trace) -> None:
    assert len(deep.ops) > AUTO_NODE_BUDGET  # the plain drawing is over budget
    plan, depth = auto_plan(deep)
    assert depth == max(c.depth for c in deep.modules)  # full detail, repeats folded
    [fold] = [c for c in plan.clusters if c.caption is not None]
    assert fold.title == "x40 @blocks.0-39 (ResidualBlock)"
    first = next(c for c in deep.modules if c.address == "blocks.0")
    inside = [n for n in plan.nodes if n.cluster == fold.id]
    # The representative's ops, each standing for its 40 repetitions.
    assert [n.id for n in inside] == list(first.ops)
    assert all(len(n.members) == 40 for n in inside)
    head = next(c for c in deep.modules if c.address == "head").ops[0]
    assert [n.id for n in plan.nodes] == ["input_1", *first.ops, head, "output_1"]
    # Edges enter at the representative's first op and leave from its last.
    assert ("input_1", first.ops[0]) in plan.edges
    assert (first.ops[-1], head) in plan.edges


def test_auto_picks_the_deepest_depth_within_budget(deep: Trace) -> None:
    plan, depth = auto_plan(deep, budget=5)
    assert depth == 1
    assert plan == build_plan(deep, collapse="auto", collapse_budget=5)
    # One level deeper the blocks open up and the budget is exceeded.
    assert len(auto_plan(deep, max_depth=2, budget=1000)[0].nodes) > 5
    # A budget the plain drawing fits gives the plain drawing.
    plain, top = auto_plan(deep, budget=len(deep.ops))
    assert top == max(c.depth for c in deep.modules)
    assert len(plain.nodes) <= len(deep.ops)


def test_auto_depth_caps_the_search(deep: Trace) -> None:
    assert build_plan(deep, collapse="auto", depth=0) == auto_plan(deep, max_depth=0)[0]
    assert auto_plan(deep, max_depth=0)[1] == 0
    assert [n.kind for n in build_plan(deep, collapse="auto", depth=0).nodes] == [
        "input",
        "box",
        "box",
        "output",
    ]


def test_auto_over_budget_at_depth_zero_falls_back_to_max() -> None:
    trace = capture(RootOps(), torch.randn(1, 4))
    plan, depth = auto_plan(trace, budget=3)
    assert depth is None
    assert plan == build_plan(trace, collapse="max")


def test_plain_depth_never_folds(deep: Trace) -> None:
    plan = build_plan(deep, depth=1)
    assert "fold" not in kinds(plan).values()
    assert [n.id for n in plan.nodes if n.kind == "box"] == [f"@blocks.{i}#1" for i in range(40)]


def test_a_block_of_another_structure_splits_the_fold() -> None:
    trace = capture(Deep(blocks=6, odd=2), torch.randn(2, 8))
    plan = build_plan(trace, collapse="auto", depth=1)  # small enough to draw whole
    collapsed = [n.record.title for n in plan.nodes if n.kind == "fold"]
    # Inside the @blocks cluster, titles are relative to it.
    assert collapsed == ["x2 @0-1 (ResidualBlock)", "x3 @3-5 (ResidualBlock)"]
    assert [n.id for n in plan.nodes if n.kind == "box"] == ["@blocks.2#1"]


def test_rolled_auto_folds_the_blocks_too(deep: Trace) -> None:
    fold = only(build_plan(deep, view="rolled", collapse="auto"), "fold")
    assert fold.id == "@blocks.0*40"
    assert fold.record.title == "x40 @blocks.0-39 (ResidualBlock)"


def test_max_segments_runs_of_root_ops() -> None:
    trace = capture(RootOps(), torch.randn(1, 4))
    plan = build_plan(trace, collapse="max")
    assert [(n.id, n.kind) for n in plan.nodes] == [
        ("input_1", "input"),
        ("segment:mul_1", "segment"),
        ("@a#1", "box"),
        ("segment:add_1", "segment"),
        ("@b#1", "box"),
        ("output_1", "output"),
    ]
    first = plan.nodes[1].record
    assert isinstance(first, SegmentRecord)
    assert first.members == ("mul_1", "relu_1")
    assert first.funcs == ("mul", "relu")
    assert plan.nodes[3].members == ("add_1", "tanh_1")
    assert len(plan.edges) == 5


def test_max_folds_consecutive_calls_of_one_module() -> None:
    trace = capture(Repeated(), torch.randn(1, 4))
    plan = build_plan(trace, collapse="max")
    fold = plan.nodes[1]
    assert fold.kind == "fold"
    assert fold.record.title == "x4 @lin (Linear)"
    assert fold.record.count == 4
    # The two later calls are separated by sigmoid segments: not consecutive, not folded.
    assert [n.kind for n in plan.nodes[2:]] == ["segment", "box", "segment", "box", "output"]


def test_rolled_max_merges_segments_that_share_a_layer() -> None:
    trace = capture(Repeated(), torch.randn(1, 4))
    plan = build_plan(trace, view="rolled", collapse="max")
    assert [(n.id, n.kind) for n in plan.nodes] == [
        ("input_1", "input"),
        ("@lin", "box"),
        ("segment:sigmoid_1", "segment"),
        ("output_1", "output"),
    ]
    assert plan.nodes[1].record.num_calls == 6
    assert plan.nodes[2].members == ("sigmoid_1:1", "sigmoid_1:2")
    assert ("segment:sigmoid_1", "@lin") in plan.edges
    assert ("@lin", "segment:sigmoid_1") in plan.edges


def _runs(
    sequence: list[str], candidates: dict[str, tuple[str, str]], reads: set[tuple[str, str]]
) -> list[tuple[str, ...]]:
    """:func:`fold_runs` over units of one op each (named as the unit), ``(s, t)`` in
    ``reads`` when unit ``t``'s op reads unit ``s``'s."""
    ops_of = {unit: [unit] for unit in sequence}
    return fold_runs(
        sequence, candidates, ops_of, lambda t: [s for s, u in sorted(reads) if u == t]
    )


def _chain(units: str) -> set[tuple[str, str]]:
    return set(pairwise(units))


class Strided(nn.Module):
    """A stride-2 conv and its ReLU: each one halves the map."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(8, 8, 3, stride=2, padding=1)
        self.act = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.conv(x))


def test_a_fold_of_boxes_of_other_shapes_shows_their_range() -> None:
    model = nn.Sequential(nn.Conv2d(3, 8, 1), Strided(), Strided(), Strided()).eval()
    drawing = capture(model, (torch.randn(1, 3, 16, 16),)).draw(collapse="max")
    fold = drawing.nodes["@1#1*3"]
    # The range first to last (the maps 8x8, 4x4, 2x2), then the first box's own shape.
    assert fold.rows == ("x3 @1-3 (Strided)", "1x8x8x8->1x8x2x2", "1x8x8x8")
    picked = capture(model, (torch.randn(1, 3, 16, 16),)).draw(
        collapse="max", node_label_fields=["name", "shape_summary"]
    )
    assert picked.nodes["@1#1*3"].rows == ("x3 @1-3 (Strided)", "1x8x8x8->1x8x2x2")


def test_fold_runs_need_same_parent_signature_and_a_single_appearance() -> None:
    same = {u: ("p", "sig") for u in "abcd"}
    assert _runs(["x", "a", "b", "c", "y"], same, _chain("xabcy")) == [("a", "b", "c")]
    assert _runs(["a", "b", "a"], same, _chain("xaba")) == []  # "a" appears twice
    mixed = {"a": ("p", "s"), "b": ("p", "s"), "c": ("q", "s"), "d": ("q", "s")}
    assert _runs(["a", "b", "c", "d"], mixed, _chain("xabcd")) == [("a", "b"), ("c", "d")]
    assert _runs(["a", "x", "b"], same, _chain("axb")) == []


def test_fold_runs_fold_only_stacks() -> None:
    # b reads a's output, c reads a's too (b and c are siblings), d reads c's.
    same = {u: ("p", "sig") for u in "abcd"}
    runs = _runs(["a", "b", "c", "d"], same, {("x", "a"), ("a", "b"), ("a", "c"), ("c", "d")})
    assert runs == [("a", "b"), ("c", "d")]
    assert _runs(["a", "b", "c"], same, set()) == []


def test_fold_runs_fold_only_repetitions_wired_alike() -> None:
    same = {u: ("p", "sig") for u in "abcd"}
    # c reads a as well as b: a repetition reading one further back ends the fold.
    assert _runs(["a", "b", "c"], same, {("x", "a"), ("a", "b"), ("b", "c"), ("a", "c")}) == [
        ("a", "b")
    ]
    # b reads a, c reads b and x: the second and third are wired otherwise.
    reads = {("x", "a"), ("a", "b"), ("b", "c"), ("x", "c")}
    assert _runs(["a", "b", "c"], same, reads) == [("a", "b")]
    # The first repetition must read from outside what the others read from the one
    # before: a reads nothing, b reads a, so a and b are not one structure's stack.
    assert _runs(["a", "b"], same, {("a", "b"), ("x", "b")}) == []


@pytest.mark.parametrize(
    ("addresses", "expected"),
    [
        (["blocks.0", "blocks.1", "blocks.2"], "blocks.0-2"),
        (["enc.layers.3", "enc.layers.4"], "enc.layers.3-4"),
        (["0", "1"], "0-1"),
        (["lin", "lin", "lin"], "lin"),
        (["blocks.0", "blocks.2"], "blocks.0..blocks.2"),
        (["left", "right"], "left..right"),
        # Other names: the last written past the prefix it shares with the first, never
        # cut inside a number.
        (
            [f"trunk_output.block4.block4-{i}" for i in (1, 2, 5)],
            "trunk_output.block4.block4-1..5",
        ),
        (["stage.layer1", "stage.layer2"], "stage.layer1..2"),
        (["head.conv10", "head.conv12"], "head.conv10..12"),
        (["a.conv", "a.bn"], "a.conv..bn"),
    ],
)
def test_address_range(addresses: list[str], expected: str) -> None:
    assert address_range(addresses) == expected
