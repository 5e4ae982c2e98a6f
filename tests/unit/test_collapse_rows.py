"""Label rows of boxes, folds and segments, and their place in a drawing."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from pytest_tlgraph import capture
from pytest_tlgraph.draw import build_plan
from pytest_tlgraph.draw.collapse.rows import collapsed_rows, func_list
from pytest_tlgraph.draw.plan import Plan, PlanNode
from pytest_tlgraph.options import DrawOptions
from pytest_tlgraph.trace import Trace


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + torch.relu(self.fc(x))


class Net(nn.Module):
    """Root ops, a Linear 4->8, three blocks, root ops, a Linear whose input is not 8."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Linear(4, 8)
        self.blocks = nn.ModuleList(Block() for _ in range(3))
        self.head = nn.Linear(8, 2)
        self.head.in_features = 5  # edited after construction: must stay visible

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.embed(torch.relu(x * 2 - 1))
        for block in self.blocks:
            x = block(x)
        x = x.tanh().sigmoid().tanh().tanh().exp().neg().abs().relu()
        return self.head(x)


class Twice(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(torch.relu(self.lin(x)))


@pytest.fixture(scope="module")
def trace() -> Trace:
    torch.manual_seed(0)
    return capture(Net(), torch.randn(2, 4))


def rows(node: PlanNode, trace: Trace | None, **options: object) -> list[str]:
    opts = DrawOptions.from_kwargs(**options)
    return [r.text for r in collapsed_rows(node, trace=trace, options=opts)]


def by_id(plan: Plan, node_id: str) -> PlanNode:
    return next(n for n in plan.nodes if n.id == node_id)


def test_box_rows_title_shape_and_checked_args(trace: Trace) -> None:
    plan = build_plan(trace, depth=0)
    embed = by_id(plan, "@embed#1")
    # 4 -> 8 is read off the input (2x4) and the output (2x8): both args are redundant.
    assert rows(embed, trace) == ["@embed (Linear)", "2x8"]  # bias=True: the default
    assert rows(embed, trace, show_redundant_args=True) == [
        "@embed (Linear)",
        "2x8",
        "in_features=4, out_features=8, bias=True",
    ]
    # A record drawn without its trace cannot be checked: every arg shows.
    assert rows(embed, None)[2] == "in_features=4, out_features=8, bias=True"
    # in_features was edited to 5 but the input is 2x8: the mismatch stays visible.
    assert rows(by_id(plan, "@head#1"), trace)[2] == "in_features=5"
    title = collapsed_rows(embed, trace=trace, options=DrawOptions())[0]
    assert title.bold


def test_fold_rows_show_the_range_and_the_representative(trace: Trace) -> None:
    fold = next(n for n in build_plan(trace, collapse="max").nodes if n.kind == "fold")
    assert rows(fold, trace) == ["x3 @blocks.0-2 (Block)", "2x8"]


def test_segment_rows_list_first_last_and_funcs(trace: Trace) -> None:
    plan = build_plan(trace, collapse="max")
    first, second = (n for n in plan.nodes if n.kind == "segment")
    assert rows(first, trace) == ["mul_1..relu_1", "3 ops: mul, sub, relu", "2x4"]
    assert rows(second, trace) == [
        "tanh_1..relu_5",  # relu_2-4 ran inside the three blocks
        "8 ops: tanh, sigmoid, tanh x2, exp, neg, abs, ...",
        "2x8",
    ]


def test_rolled_box_title_counts_its_calls() -> None:
    trace = capture(Twice(), torch.randn(1, 3))
    box = by_id(build_plan(trace, view="rolled", depth=0), "@lin")
    assert rows(box, trace)[0] == "@lin (Linear) (x2)"
    unrolled = by_id(build_plan(trace, depth=0), "@lin#2")
    assert rows(unrolled, trace)[0] == "@lin (Linear)"


def test_label_fields_pick_rows_on_collapsed_nodes(trace: Trace) -> None:
    plan = build_plan(trace, depth=0)
    embed = by_id(plan, "@embed#1")
    picked = rows(embed, trace, node_label_fields=["name", "flops", "bytes", "dtype", "module"])
    flops = embed.record.flops_forward
    assert picked[0] == "@embed (Linear)"
    assert picked[1].endswith(" (sum)") and picked[1].startswith(str(flops))
    assert picked[2].endswith(" (sum)")
    assert picked[3:] == ["float32", "@embed"]
    # Tokens with no value on a group of ops add no row; a node is never blank.
    assert rows(embed, trace, node_label_fields=["params", "pass"]) == ["@embed (Linear)"]


def test_unknown_label_field_refuses(trace: Trace) -> None:
    from pytest_tlgraph.errors import EncodingRefusal

    embed = by_id(build_plan(trace, depth=0), "@embed#1")
    with pytest.raises(EncodingRefusal) as caught:
        rows(embed, trace, node_label_fields=["name", "colour"])
    assert caught.value.code == "node_label_field_invalid"


def test_drawing_exposes_collapsed_nodes_as_plain_data(trace: Trace) -> None:
    drawing = trace.draw(collapse="max")
    fold = next(n for n in drawing.nodes.values() if n.kind == "fold")
    assert fold.rows[0] == "x3 @blocks.0-2 (Block)"
    assert fold.module == "blocks.0"
    assert "segment" in {n.kind for n in drawing.nodes.values()}
    assert set(drawing.edges) == set(build_plan(trace, collapse="max").edges)
    assert "<B>x3 @blocks.0-2 (Block)</B>" in drawing.dot


def test_plain_draw_is_unchanged_by_the_collapse_hook(trace: Trace) -> None:
    dot = trace.draw().dot
    assert "@embed (Linear)" not in dot  # no box title in a plain draw
    assert dot == trace.draw(depth=None, collapse=None).dot


@pytest.mark.parametrize(
    ("funcs", "expected"),
    [
        (["add"], "add"),
        (["add", "add", "add", "mul"], "add x3, mul"),
        (["a", "b", "a"], "a, b, a"),
        (list("abcdefg"), "a, b, c, d, e, f, ..."),
    ],
)
def test_func_list(funcs: list[str], expected: str) -> None:
    assert func_list(funcs) == expected
