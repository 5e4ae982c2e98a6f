"""The comparison and its story (:mod:`pytest_tlgraph.diff.view.story`), on
real drawings of real models."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch import nn

from pytest_tlgraph import capture
from pytest_tlgraph.diff.edits import ConstantChanged, from_json, to_json
from pytest_tlgraph.diff.graph import read_graph
from pytest_tlgraph.diff.view.comparison import Comparison, compare
from pytest_tlgraph.diff.view.drawing import graph_diff
from pytest_tlgraph.diff.view.rows import row_kind, split_args
from pytest_tlgraph.diff.view.story import UNCHANGED, every_change, story_lines
from tests.models import MLP, seeded


def _dot(model: nn.Module, inputs: Any, **options: Any) -> str:
    return capture(seeded(model), inputs).draw(**options).dot


def _compare(old: nn.Module, new: nn.Module, **options: Any) -> Comparison:
    return _compare_opts(old, new, options, options)


def _compare_opts(
    old: nn.Module, new: nn.Module, old_opts: dict[str, Any], new_opts: dict[str, Any]
) -> Comparison:
    inputs = torch.zeros(2, 8)
    return compare(_dot(old, inputs, **old_opts), _dot(new, inputs, **new_opts))


class Deeper(nn.Module):
    """``MLP`` with one more layer inside a nested block."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.act = nn.ReLU()
        self.block = nn.Sequential(nn.Linear(16, 16), nn.Tanh())
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.fc2(self.block(self.act(self.fc1(x))))
        return out


def test_summary_names_added_nodes_edges_and_clusters() -> None:
    comparison = _compare(MLP(), Deeper())
    # The block's Linear takes number 2: the old linear_2 (fc2) is the new linear_3,
    # untouched, not a changed node beside an added one.
    assert comparison.added == ("linear_2", "tanh_1")
    assert comparison.removed == ()
    assert comparison.renumbered == (("linear_2", "linear_3"),)
    assert comparison.edges_added == (
        ("relu_1", "linear_2"),
        ("linear_2", "tanh_1"),
        ("tanh_1", "linear_3"),
    )
    assert comparison.edges_removed == (("relu_1", "linear_3"),)
    assert comparison.clusters_added == ("cluster_block#1",)
    assert comparison.new.clusters["cluster_block#1"].title == "@block (Sequential)"
    assert not comparison.changed and not comparison.replaced and not comparison.moved
    # The inserted block is one line; the edges that route through it are its own.
    assert story_lines(comparison) == ["added @block (Sequential): 2 ops"]
    reverse = _compare(Deeper(), MLP())
    assert reverse.removed == ("linear_2", "tanh_1")
    assert reverse.union_id("linear_2") == "linear_2 (old)"  # the received side has one
    assert reverse.renumbered == (("linear_3", "linear_2"),)
    assert not reverse.changed
    assert reverse.clusters_removed == comparison.clusters_added
    assert story_lines(reverse) == ["removed @block (Sequential): 2 ops"]


def test_the_summary_and_the_diff_drawing_pair_nodes_alike() -> None:
    before = capture(seeded(MLP()), torch.zeros(2, 8)).draw().dot
    after = capture(seeded(Deeper()), torch.zeros(2, 8)).draw().dot
    comparison = compare(before, after)
    drawn = graph_diff(before, after, context=None).nodes
    assert comparison.added == tuple(k for k, n in drawn.items() if n.kind == "added")
    removed = tuple(comparison.union_id(n) for n in comparison.removed)
    assert removed == tuple(k for k, n in drawn.items() if n.kind == "removed")
    assert tuple(comparison.changed) == tuple(k for k, n in drawn.items() if n.kind == "changed")
    assert comparison.node_statuses == {k: n.kind for k, n in drawn.items()}


def test_a_changed_layer_after_a_renumbering_is_still_named() -> None:
    deeper = Deeper()
    deeper.fc2 = nn.Linear(16, 6)
    comparison = _compare(MLP(d_hidden=16), deeper)
    assert comparison.renumbered == (("linear_2", "linear_3"),)
    # Named by its received id and its full module address, never a relative name.
    changes = every_change(comparison)
    assert "linear_3 @fc2: shape 2x4 -> 2x6" in changes
    assert "linear_3 @fc2: params weight 4x16, bias 4 -> weight 6x16, bias 6" in changes
    # The story tells the op's edits on one line.
    assert "linear_3 @fc2: params weight 4x16 -> 6x16, bias 4 -> 6; shape 2x4 -> 2x6" in (
        story_lines(comparison)
    )


def test_summary_calls_out_args_rows_by_module() -> None:
    loud = {"show_redundant_args": True}
    comparison = _compare_opts(MLP(), MLP(), {}, loud)
    # Every arg comes back, ReLU's inplace=False too.
    assert tuple(comparison.changed) == ("linear_1", "relu_1", "linear_2")
    shown = every_change(comparison)
    assert "relu_1 @act: now shows inplace=False" in shown
    assert "linear_1 @fc1: now shows in_features=8" in shown
    assert "linear_1 @fc1: now shows out_features=16" in shown
    assert "linear_2 @fc2: now shows in_features=16" in shown
    # The same edit on two nodes is one line with both ids and their common pattern.
    assert "2 nodes (linear_1, linear_2) @fc*: now shows bias=True" in story_lines(comparison)
    hidden = every_change(_compare_opts(MLP(), MLP(), loud, {}))
    assert "linear_1 @fc1: no longer shows in_features=8" in hidden


def test_summary_names_changed_arg_values_and_shape_rows() -> None:
    loud = {"show_redundant_args": True}
    comparison = _compare(MLP(d_hidden=16), MLP(d_hidden=32), **loud)
    changes = every_change(comparison)
    assert "linear_1 @fc1: out_features 16 -> 32" in changes
    assert "linear_1 @fc1: shape 2x16 -> 2x32" in changes
    assert "linear_1 @fc1: params weight 16x8, bias 16 -> weight 32x8, bias 32" in changes
    # The story: the model's edits, one line per op, what the model did (an argument)
    # before what follows from it (a shape downstream).
    # The same shape edit on two ops is one line; a param row names what changed.
    assert story_lines(comparison) == [
        "linear_1 @fc1: out_features 16 -> 32; params weight 16x8 -> 32x8, bias 16 -> 32",
        "linear_2 @fc2: in_features 16 -> 32; params weight 4x16 -> 4x32",
        "2 nodes @fc1, @act: shape 2x16 -> 2x32",
    ]


def test_identical_drawings_have_no_changes_and_the_key_is_not_structure() -> None:
    plain = _dot(MLP(), torch.zeros(2, 8))
    coloured = _dot(MLP(), torch.zeros(2, 8), color_by="flops")
    assert compare(plain, plain).unchanged
    assert story_lines(compare(plain, plain)) == [UNCHANGED]
    assert "tlgraph_key" in coloured
    graph = read_graph(coloured)
    assert "tlgraph_key" not in graph.nodes and graph.key_rows
    assert compare(plain, coloured).unchanged


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("in_features=8, bias=True", {"in_features": "8", "bias": "True"}),
        (
            "in_channels=3, kernel_size=(3, 3), padding=(1, 1)",
            {"in_channels": "3", "kernel_size": "(3, 3)", "padding": "(1, 1)"},
        ),
        ("normalized_shape=(32,), eps=1e-05", {"normalized_shape": "(32,)", "eps": "1e-05"}),
    ],
)
def test_split_args_keeps_tuples_whole(text: str, parts: dict[str, str]) -> None:
    assert split_args(text) == parts


def test_row_kinds_of_a_real_linear_node() -> None:
    rows = capture(MLP(), torch.zeros(2, 8)).draw(show_redundant_args=True).nodes["linear_1"].rows
    assert [row_kind(i, row) for i, row in enumerate(rows)] == [
        "title",
        "shape",
        "args",
        "params",
        "module",
    ]


def test_the_terminal_lines_leave_the_renumbering_to_the_full_list() -> None:
    comparison = _compare(MLP(), Deeper())
    # linear_2 -> linear_3 is only a new number: the story does not call it a change.
    lines = story_lines(comparison)
    assert lines == ["added @block (Sequential): 2 ops"]
    assert not any("linear_3" in line for line in lines)
    changes = every_change(comparison)
    assert "renumbered linear_2 is now linear_3" in changes
    assert changes[:2] == ["added linear_2 @block.0", "added tanh_1 @block.1"]


def test_drawings_of_two_schemas_read_as_one_line_never_as_a_false_story() -> None:
    import re

    received = _dot(Deeper(), torch.zeros(2, 8), depth=1)
    legacy = re.sub(r', tl_[a-z]+="[^"]*"', "", _dot(MLP(), torch.zeros(2, 8), depth=1))
    line = (
        "stored with the 0.3 schema (no structured attributes): accept with tlgraph accept "
        "<nodeid>, or run pytest --snapshot-update"
    )
    comparison = compare(legacy, received)
    assert story_lines(comparison) == [line]
    assert every_change(comparison) == [line]
    older = received.replace('tl_schema="0.5"', 'tl_schema="0.3.9"')
    assert story_lines(compare(older, received)) == [
        "stored with the 0.3.9 schema, received with the 0.5 one: accept with tlgraph "
        "accept <nodeid>, or run pytest --snapshot-update"
    ]
    # The same model drawn twice by this version: no schema line.
    assert compare(received, received).unchanged


class _Scaled(nn.Module):
    """A linear scaled by a non-persistent buffer of a submodule (drawn by value)."""

    def __init__(self, last: float) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.inner = nn.Module()
        scale = torch.tensor([1.0, 2.0, 3.0, last])
        self.inner.register_buffer("scale", scale, persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x) * self.inner.scale


@pytest.mark.parametrize("view", [{}, {"depth": 1}, {"collapse": "auto"}])
def test_a_buffer_value_reads_as_a_constant_change_by_its_name(view: dict[str, Any]) -> None:
    old = capture(_Scaled(4.0), torch.zeros(2, 4)).draw(**view).dot
    new = capture(_Scaled(5.0), torch.zeros(2, 4)).draw(**view).dot
    comparison = compare(old, new)
    [edit] = comparison.edits
    assert isinstance(edit, ConstantChanged) and edit.source == "buffer"
    assert from_json(to_json(edit)) == edit
    line = "scale @inner (buffer, 4): values [1, 2, 3, 4] -> [1, 2, 3, 5]"
    assert story_lines(comparison) == [line]
