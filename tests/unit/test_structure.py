"""The structural summary, on real drawings of real models."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch import nn

from pytest_tlgraph import capture
from pytest_tlgraph.snapshots.graphdata import GraphData, parse_dot
from pytest_tlgraph.snapshots.graphdiff import graph_diff
from pytest_tlgraph.snapshots.report import summary_lines
from pytest_tlgraph.snapshots.structure import row_kind, split_args, summarize
from tests.models import MLP, seeded


def _graph(model: nn.Module, inputs: Any, **options: Any) -> GraphData:
    return parse_dot(capture(seeded(model), inputs).draw(**options).dot)


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
    before = _graph(MLP(), torch.zeros(2, 8))
    after = _graph(Deeper(), torch.zeros(2, 8))
    summary = summarize(before, after)
    # The block's Linear takes number 2: the old linear_2 (fc2) is the new linear_3,
    # untouched, not a changed node beside an added one.
    assert summary.nodes_added == ("linear_2", "tanh_1")
    assert summary.nodes_removed == ()
    assert summary.renumbered == (("linear_2", "linear_3"),)
    assert summary.edges_added == (
        ("relu_1", "linear_2"),
        ("linear_2", "tanh_1"),
        ("tanh_1", "linear_3"),
    )
    assert summary.edges_removed == (("relu_1", "linear_3"),)
    assert summary.clusters_added == ("@block (Sequential)",)
    assert summary.row_changes == ()
    reverse = summarize(after, before)
    assert reverse.nodes_removed == ("linear_2 (old)", "tanh_1")
    assert reverse.renumbered == (("linear_3", "linear_2"),)
    assert reverse.row_changes == ()
    assert reverse.clusters_removed == summary.clusters_added


def test_the_summary_and_the_diff_drawing_pair_nodes_alike() -> None:
    before = capture(seeded(MLP()), torch.zeros(2, 8)).draw().dot
    after = capture(seeded(Deeper()), torch.zeros(2, 8)).draw().dot
    summary = summarize(parse_dot(before), parse_dot(after))
    drawn = graph_diff(before, after).nodes
    assert summary.nodes_added == tuple(k for k, n in drawn.items() if n.kind == "added")
    assert summary.nodes_removed == tuple(k for k, n in drawn.items() if n.kind == "removed")
    assert summary.changed_nodes == tuple(k for k, n in drawn.items() if n.kind == "changed")


def test_a_changed_layer_after_a_renumbering_is_still_named() -> None:
    wide = _graph(MLP(d_hidden=16), torch.zeros(2, 8))
    deeper = Deeper()
    deeper.fc2 = nn.Linear(16, 6)
    summary = summarize(wide, _graph(deeper, torch.zeros(2, 8)))
    assert summary.renumbered == (("linear_2", "linear_3"),)
    changes = [str(change) for change in summary.row_changes]
    assert "linear_3: shape row 2x4, 32 B -> 2x6, 48 B" in changes


def test_summary_calls_out_args_rows_by_module() -> None:
    quiet = _graph(MLP(), torch.zeros(2, 8))
    loud = _graph(MLP(), torch.zeros(2, 8), show_redundant_args=True)
    summary = summarize(quiet, loud)
    # Every arg comes back, ReLU's inplace=False too.
    assert summary.changed_nodes == ("linear_1", "relu_1", "linear_2")
    shown = [str(change) for change in summary.row_changes]
    assert "act: args row now shows inplace=False" in shown
    assert "fc1: args row now shows in_features=8" in shown
    assert "fc1: args row now shows out_features=16" in shown
    assert "fc2: args row now shows in_features=16" in shown
    hidden = [str(change) for change in summarize(loud, quiet).row_changes]
    assert "fc1: args row no longer shows in_features=8" in hidden


def test_summary_names_changed_arg_values_and_shape_rows() -> None:
    narrow = _graph(MLP(d_hidden=16), torch.zeros(2, 8), show_redundant_args=True)
    wide = _graph(MLP(d_hidden=32), torch.zeros(2, 8), show_redundant_args=True)
    changes = [str(change) for change in summarize(narrow, wide).row_changes]
    assert "fc1: args row changed out_features=16 -> out_features=32" in changes
    assert "linear_1: shape row 2x16, 128 B -> 2x32, 256 B" in changes
    assert "linear_1: params row weight 16x8, bias 16 -> weight 32x8, bias 32" in changes


def test_identical_drawings_have_no_changes_and_the_key_is_not_structure() -> None:
    plain = _graph(MLP(), torch.zeros(2, 8))
    coloured = _graph(MLP(), torch.zeros(2, 8), color_by="flops")
    assert summarize(plain, plain).unchanged
    assert "tlgraph_key" in coloured.nodes
    assert summarize(plain, coloured).unchanged


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


def test_the_terminal_lines_name_the_renumbering() -> None:
    summary = summarize(_graph(MLP(), torch.zeros(2, 8)), _graph(Deeper(), torch.zeros(2, 8)))
    lines = summary_lines(summary)
    assert lines[:2] == [
        "nodes added (2): linear_2, tanh_1",
        "renumbered (1): linear_2 is now linear_3",
    ]
    assert not any("label rows changed" in line for line in lines)
