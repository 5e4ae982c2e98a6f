"""``Layer.shape_summary`` (ENCODING.md §1.2) and its label row (§5.1)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st
from torch import nn

from pytest_tlgraph import capture
from pytest_tlgraph.trace import shape_summary


class _Shrinking(nn.Module):
    """A recurrence over shrinking slices: each pass drops the last column."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(3):
            x = x[:, :-1]
        return x


class _UpAndDown(nn.Module):
    """One ``mul`` layer whose width goes 4, 8, 2, 6 across its passes."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for width in (4, 8, 2, 6):
            x = F.pad(x, (0, width - x.shape[-1])) if width > x.shape[-1] else x[..., :width]
            x = x * 2
        return x


class _Widening(nn.Module):
    """A ``relu`` applied after two convs that change channels and resolution."""

    def __init__(self) -> None:
        super().__init__()
        self.convs = nn.ModuleList(
            [
                nn.Conv2d(64, 128, 3, stride=2, padding=1),
                nn.Conv2d(128, 512, 3, stride=2, padding=1),
            ]
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for conv in self.convs:
            x = torch.relu(conv(x))
        return x


class _Reducing(nn.Module):
    """``sum`` applied twice: the second pass returns a 0-d tensor."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(2):
            x = x.sum(dim=0)
        return x


class _Steady(nn.Module):
    """Three passes of one layer with one shape."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(3):
            x = self.proj(x)
        return x


def test_shrinking_slices_read_first_to_last() -> None:
    trace = capture(_Shrinking(), torch.randn(2, 6))
    layer = trace.layers["getitem_1"]
    assert layer.varying["shape"] == ((2, 5), (2, 4), (2, 3))
    assert layer.shape_summary == "5->3"


def test_width_up_and_down_reads_min_max() -> None:
    trace = capture(_UpAndDown(), torch.randn(1, 3))
    assert trace.layers["mul_1"].varying["shape"] == ((1, 4), (1, 8), (1, 2), (1, 6))
    assert trace.layers["mul_1"].shape_summary == "2-8"


def test_several_varying_axes_read_full_shapes() -> None:
    trace = capture(_Widening(), torch.randn(2, 64, 8, 8))
    assert trace.layers["relu_1"].shape_summary == "2x128x4x4->2x512x2x2"


def test_rank_change_reads_full_shapes_with_scalar() -> None:
    trace = capture(_Reducing(), torch.randn(2, 3))
    assert trace.layers["sum_1"].shape_summary == "3->scalar"


def test_steady_and_single_pass_layers_have_no_summary() -> None:
    trace = capture(_Steady(), torch.randn(1, 4))
    assert trace.layers["linear_1"].num_passes == 3
    assert trace.layers["linear_1"].shape_summary is None
    assert trace.layers["input_1"].shape_summary is None


def test_rolled_default_label_shows_summary_right_after_title() -> None:
    trace = capture(_Shrinking(), torch.randn(2, 6))
    rolled = trace.draw(view="rolled")
    assert rolled.nodes["getitem_1"].rows[:2] == ("getitem_1 (x3)", "5->3")
    # Escaped by the label choke point: the arrow's '>' never reaches DOT raw.
    assert "<BR/>5-&gt;3<BR/>" in rolled.dot or "<BR/>5-&gt;3>" in rolled.dot


def test_unrolled_and_single_pass_nodes_have_no_summary_row() -> None:
    trace = capture(_Shrinking(), torch.randn(2, 6))
    unrolled = trace.draw()
    for label in ("getitem_1:1", "getitem_1:2", "getitem_1:3"):
        assert "5->3" not in unrolled.nodes[label].rows
    rolled = trace.draw(view="rolled")
    assert all("->" not in row for row in rolled.nodes["input_1"].rows)


def test_shape_summary_token_in_a_field_picker() -> None:
    trace = capture(_UpAndDown(), torch.randn(1, 3))
    rolled = trace.draw(view="rolled", node_label_fields=["name", "shape_summary", "shape"])
    # The passes disagree on shape: no single shape row, the summary stands for it.
    assert rolled.nodes["mul_1"].rows == ("mul_1 (x4)", "2-8")
    # Unset summaries contribute no row.
    assert rolled.nodes["input_1"].rows == ("x", "1x3")


_shape = st.lists(st.integers(1, 9), min_size=1, max_size=4).map(tuple)


@given(st.lists(_shape, min_size=2, max_size=6))
def test_summary_follows_the_spec_rules(shapes: list[tuple[int, ...]]) -> None:
    summary = shape_summary(shapes)
    if len(set(shapes)) == 1:
        assert summary is None
        return
    assert summary is not None
    same_rank = len({len(s) for s in shapes}) == 1
    axes = [a for a in range(len(shapes[0])) if same_rank and len({s[a] for s in shapes}) > 1]
    if len(axes) == 1:
        values = [s[axes[0]] for s in shapes]
        if values == sorted(values) or values == sorted(values, reverse=True):
            assert summary == f"{values[0]}->{values[-1]}"
        else:
            assert summary == f"{min(values)}-{max(values)}"
    else:
        first, last = ("x".join(map(str, s)) for s in (shapes[0], shapes[-1]))
        assert summary == f"{first}->{last}"


def test_summary_needs_every_pass_shape() -> None:
    assert shape_summary([(2, 3)]) is None
    assert shape_summary([(2, 3), None, (2, 4)]) is None
