"""Checked suppression of redundant constructor args, on real torch modules."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
import torch
import torch.nn.utils.parametrize as parametrize
from hypothesis import given
from hypothesis import strategies as st
from torch import nn

from pytest_tlgraph import capture
from pytest_tlgraph.draw.labels import args_row
from pytest_tlgraph.draw.suppression import FAMILY_TABLE, NEVER_CANDIDATES, redundant_args
from pytest_tlgraph.trace import Trace

torch.manual_seed(0)


def _args_rows(trace: Trace, **options: Any) -> dict[str, str]:
    """Node id -> the args row, for every node that has one (found by its ``=``; a row
    wrapped over several lines is joined again)."""
    drawing = trace.draw(**options)
    rows = {
        node_id: " ".join(
            row for row in node.rows if "=" in row and not row.startswith(("params:", "@"))
        )
        for node_id, node in drawing.nodes.items()
    }
    return {node_id: row for node_id, row in rows.items() if row}


def _arg_names(row: str) -> list[str]:
    return [part.split("=", 1)[0] for part in row.split(", ") if "=" in part]


def test_linear_in_and_out_features_are_suppressed() -> None:
    trace = capture(nn.Linear(32, 10, bias=False), torch.randn(1, 32))
    # Both sizes are proven by the shapes; bias=False differs from the default.
    assert _args_rows(trace) == {"linear_1": "bias=False"}
    full = _args_rows(trace, show_redundant_args=True)
    assert full == {"linear_1": "in_features=32, out_features=10, bias=False"}


def test_mlp_plain_draw_keeps_only_unlicensed_args() -> None:
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.25), nn.Linear(16, 3))
    rows = _args_rows(capture(model.eval(), torch.randn(2, 6)))
    # Sizes proven by the shapes and bias at its default: no args row at all.
    assert "linear_1" not in rows and "linear_2" not in rows
    # Dropout's p is never a candidate; in eval mode dropout is still one op.
    assert "p=0.25" in rows.values()


def test_conv_with_groups_and_stride_keeps_the_geometry() -> None:
    conv = nn.Conv2d(4, 8, kernel_size=3, stride=2, padding=1, groups=2)
    rows = _args_rows(capture(conv, torch.randn(1, 4, 9, 9)))
    row = rows["conv2d_1"]
    # dilation=(1, 1) and bias=True are the defaults: left out as not salient.
    assert _arg_names(row) == ["kernel_size", "stride", "padding", "groups"]
    assert "groups=2" in row
    assert "stride=(2, 2)" in row


def test_conv_transpose_suppresses_its_channels() -> None:
    conv = nn.ConvTranspose2d(6, 3, kernel_size=2, stride=2)
    trace = capture(conv, torch.randn(1, 6, 4, 4))
    op = trace.ops[1]
    assert op.func == "conv_transpose2d"
    assert op.shape == (1, 3, 8, 8)
    assert "in_channels" not in _args_rows(trace)[op.label]
    assert "out_channels" not in _args_rows(trace)[op.label]


def test_conv_on_channels_last_input_still_suppresses() -> None:
    x = torch.randn(2, 3, 8, 8).to(memory_format=torch.channels_last)
    assert x.stride()[1] == 1  # channels really are innermost in memory
    rows = _args_rows(capture(nn.Conv2d(3, 5, 3), x))
    assert "in_channels" not in rows["conv2d_1"]
    assert "out_channels" not in rows["conv2d_1"]


def test_unbatched_conv_input_keeps_its_channels() -> None:
    # (C, H, W) with H == C: axis 1 is a spatial axis here, so a match there proves nothing.
    rows = _args_rows(capture(nn.Conv2d(3, 3, 1), torch.randn(3, 3, 5)))
    assert _arg_names(rows["conv2d_1"])[:2] == ["in_channels", "out_channels"]


def test_batchnorm_suppresses_num_features_only() -> None:
    rows = _args_rows(capture(nn.BatchNorm2d(7, eps=1e-3), torch.randn(2, 7, 3, 3)))
    assert _arg_names(rows["batch_norm_1"]) == ["eps"]
    full = _args_rows(capture(nn.BatchNorm2d(7), torch.randn(2, 7, 3, 3)), show_redundant_args=True)
    assert _arg_names(full["batch_norm_1"]) == [
        "num_features", "eps", "momentum", "affine", "track_running_stats", "bias"
    ]  # fmt: skip


def test_unbatched_instance_norm_mismatch_stays_visible() -> None:
    # num_features=5 disagrees with the 8 channels of this unbatched (C, L) input; its
    # axis 1 happens to be 5, which must not pass for the channel axis.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trace = capture(nn.InstanceNorm1d(5), torch.randn(8, 5))
    rows = _args_rows(trace)
    # The batch axis the module adds and takes away again: their own arguments.
    assert (rows.pop("unsqueeze_1"), rows.pop("squeeze_1")) == ("dim=0", "dim=0")
    [row] = rows.values()
    assert "num_features=5" in row


def test_layernorm_suppresses_normalized_shape() -> None:
    trace = capture(nn.LayerNorm(12, elementwise_affine=False), torch.randn(2, 5, 12))
    assert _arg_names(_args_rows(trace)["layer_norm_1"]) == ["elementwise_affine"]
    two_axes = capture(nn.LayerNorm([5, 12], eps=1e-6), torch.randn(2, 5, 12))
    assert "normalized_shape" not in _args_rows(two_axes)["layer_norm_1"]


def test_embedding_keeps_num_embeddings() -> None:
    trace = capture(nn.Embedding(50, 16), torch.tensor([[1, 2, 3]]))
    row = _args_rows(trace)["embedding_1"]
    assert "num_embeddings=50" in row
    assert "embedding_dim" not in row


def test_multihead_attention_keeps_num_heads() -> None:
    mha = nn.MultiheadAttention(16, 4, batch_first=True)

    class SelfAttention(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.mha = mha

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.mha(x, x, x)[0]

    trace = capture(SelfAttention(), torch.randn(2, 5, 16))
    [row] = [r for r in _args_rows(trace).values() if "num_heads" in r]
    assert "num_heads=4" in row
    assert "embed_dim" not in row


def test_edited_in_features_mismatch_is_shown() -> None:
    linear = nn.Linear(8, 4)
    linear.in_features = 9  # no longer the width the layer is fed
    row = _args_rows(capture(linear, torch.randn(3, 8)))["linear_1"]
    assert row == "in_features=9"


def test_half_precision_suppresses_like_float() -> None:
    model = nn.Sequential(nn.Linear(4, 6, bias=False), nn.LayerNorm(6, eps=1e-3)).half()
    rows = _args_rows(capture(model, torch.randn(2, 4).half()))
    assert rows["linear_1"] == "bias=False"
    assert rows["layer_norm_1"] == "eps=0.001"


class _TwoCalls(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 3)

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return self.proj(a).sum() + self.proj(b).sum()


def test_rolled_layer_with_varying_shapes_keeps_args_unrolled_suppresses() -> None:
    trace = capture(_TwoCalls(), (torch.randn(2, 4), torch.randn(5, 4)))
    assert trace.layers["linear_1"].shape is None
    unrolled = _args_rows(trace)
    assert "linear_1:1" not in unrolled and "linear_1:2" not in unrolled
    rolled = _args_rows(trace, view="rolled")
    assert rolled["linear_1"] == "in_features=4, out_features=3"


class _SwappedWidth(nn.Module):
    """One Linear fed two different widths: its weight is swapped between the calls."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 3)
        self.wide = nn.Parameter(torch.randn(3, 8))
        self.narrow = self.proj.weight

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        first = self.proj(a)
        self.proj.weight, self.proj.in_features = self.wide, 8
        second = self.proj(b)
        self.proj.weight, self.proj.in_features = self.narrow, 4
        return first + second


def test_two_input_widths_rolled_shows_both_unrolled_suppresses() -> None:
    trace = capture(_SwappedWidth(), (torch.randn(2, 4), torch.randn(2, 8)))
    unrolled = _args_rows(trace)
    assert "linear_1:1" not in unrolled and "linear_1:2" not in unrolled
    rolled = _args_rows(trace, view="rolled")
    assert rolled["linear_1"] == "in_features=4/8"


def test_two_data_inputs_keep_the_input_side_arg() -> None:
    linear = nn.Linear(4, 3)
    # The parametrized weight is computed by a traced op: the linear reads two tensors.
    parametrize.register_parametrization(linear, "weight", _Doubled())
    trace = capture(linear, torch.randn(2, 4))
    assert len(trace.op("linear_1").parents) == 2
    # The parametrized class torch makes derives from Linear: Linear's defaults apply.
    assert type(linear).__name__ == "ParametrizedLinear"
    assert _args_rows(trace)["linear_1"] == "in_features=4"


class _Doubled(nn.Module):
    def forward(self, w: torch.Tensor) -> torch.Tensor:
        return w * 2


class _Constant(nn.Module):
    def __init__(self, *, buffer: bool) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 3)
        table = torch.randn(2, 4)
        if buffer:  # a persistent buffer: state, drawn by shape on its reader only
            self.register_buffer("table", table)
        else:  # a plain attribute: a constant, drawn as a node with its values
            self.table = table

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(self.table) + x


def test_input_without_traced_source_keeps_in_features() -> None:
    trace = capture(_Constant(buffer=True), torch.randn(2, 3))
    assert trace.op("linear_1").parents == ()
    assert _args_rows(trace)["linear_1"] == "in_features=4"


def test_input_from_a_constant_node_shows_its_shape_so_in_features_is_implied() -> None:
    trace = capture(_Constant(buffer=False), torch.randn(2, 3))
    assert trace.op("linear_1").parents == ("const_1",)
    assert trace.op("const_1").shape == (2, 4)
    assert "linear_1" not in _args_rows(trace)


class _Reshaping(nn.Linear):
    """A Linear whose own forward changes the output contract."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return super().forward(x).reshape(-1, self.out_features)


def test_subclass_with_own_forward_keeps_its_args_on_the_family_op() -> None:
    trace = capture(nn.Sequential(_Reshaping(4, 5)), torch.randn(2, 3, 4))
    linear, reshape = trace.op("linear_1"), trace.op("reshape_1")
    assert (linear.module_type, linear.module_family) == ("_Reshaping", "linear")
    assert reshape.shape == (6, 5) and reshape.module_args is None
    # On the linear op the functional's own shapes prove both sizes; bias=True is
    # Linear's default.
    assert _args_rows(trace) == {}
    full = _args_rows(trace, show_redundant_args=True)
    assert full == {"linear_1": "in_features=4, out_features=5, bias=True"}
    # The call's box follows no torch contract: nothing is suppressed against its shapes.
    assert _args_rows(trace, depth=0) == {"@0#1": "in_features=4, out_features=5"}


def test_torch_module_outside_the_table_shows_its_args() -> None:
    rows = _args_rows(capture(nn.Softmax(dim=-1), torch.randn(2, 3)))
    assert rows == {"softmax_1": "dim=-1"}


def test_args_row_without_shapes_keeps_everything() -> None:
    args = {"in_features": 4, "out_features": 3, "bias": True}
    full = "in_features=4, out_features=3, bias=True"
    assert args_row(args, family="linear", input_shape=None, output_shape=None) == full
    assert args_row(args, family=None, input_shape=(2, 4), output_shape=(2, 3)) == full
    assert args_row(args, family="linear", input_shape=(2, 4), output_shape=(2, 3)) == "bias=True"
    assert (
        args_row(
            args, family="linear", input_shape=(2, 4), output_shape=(2, 3), show_redundant=True
        )
        == full
    )
    assert args_row({}, family="linear", input_shape=None, output_shape=None) is None
    only = {"in_features": 4}
    assert args_row(only, family="linear", input_shape=(1, 4), output_shape=None) is None


def test_flags_never_stand_for_dimensions() -> None:
    # True == 1 in Python; a bool must not license suppression against a width of 1.
    args = {"out_features": True}
    assert redundant_args(args, family="linear", input_shape=None, output_shape=(2, 1)) == set()


def test_table_never_lists_a_never_candidate() -> None:
    listed = {c.arg for candidates in FAMILY_TABLE.values() for c in candidates}
    assert listed.isdisjoint(NEVER_CANDIDATES)


_dims = st.integers(min_value=1, max_value=6)
_shapes = st.lists(_dims, min_size=0, max_size=5).map(tuple)
_values = st.one_of(
    _dims, st.booleans(), st.tuples(_dims, _dims), st.none(), st.sampled_from(["same", "zeros"])
)
_names = st.sampled_from(
    sorted({c.arg for cs in FAMILY_TABLE.values() for c in cs} | NEVER_CANDIDATES | {"bias"})
)


@given(
    family=st.sampled_from([*sorted(FAMILY_TABLE), "torch", "dropout", None]),
    args=st.dictionaries(_names, _values, max_size=6),
    input_shape=st.one_of(st.none(), _shapes),
    output_shape=st.one_of(st.none(), _shapes),
)
def test_only_table_args_equal_to_their_dimension_are_suppressed(
    family: str | None,
    args: dict[str, Any],
    input_shape: tuple[int, ...] | None,
    output_shape: tuple[int, ...] | None,
) -> None:
    hidden = redundant_args(args, family=family, input_shape=input_shape, output_shape=output_shape)
    candidates = {c.arg: c for c in FAMILY_TABLE.get(family or "", ())}
    for name in hidden:
        candidate = candidates[name]  # only table rows of this family, never anything else
        shape = input_shape if candidate.side == "input" else output_shape
        assert shape is not None
        value = args[name]
        if candidate.axis == "last":
            assert shape[-1] == value
        elif candidate.axis == "channel":
            assert shape[1] == value
        else:
            assert shape[-len(value) :] == value
        assert not isinstance(value, bool)
    shown = args_row(args, family=family, input_shape=input_shape, output_shape=output_shape)
    full = args_row(
        args, family=family, input_shape=input_shape, output_shape=output_shape, show_redundant=True
    )
    # Suppression only removes whole args, in order, from the full row.
    kept = [part for part in (full or "").split(", ") if part.split("=", 1)[0] not in hidden]
    assert (shown or "") == ", ".join(kept) if args else shown is None


@pytest.mark.parametrize("family", sorted(FAMILY_TABLE))
def test_mismatch_by_one_is_never_suppressed(family: str) -> None:
    args: dict[str, Any] = {}
    for candidate in FAMILY_TABLE[family]:
        args[candidate.arg] = (7,) if candidate.axis == "trailing" else 7
    args["kernel_size"] = (3, 3)
    shape = (2, 8, 8, 8)
    assert redundant_args(args, family=family, input_shape=shape, output_shape=shape) == set()
    matching = (2, 7, 7, 7)
    assert redundant_args(args, family=family, input_shape=matching, output_shape=matching) == {
        c.arg for c in FAMILY_TABLE[family]
    }
