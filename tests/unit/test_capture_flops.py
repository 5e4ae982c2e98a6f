"""FLOPs (ENCODING.md §1.3): torch's own counter for matmul/conv/attention, a per-element
table for pointwise ops, zero for views, ``None`` for the rest."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from pytest_tlgraph import Op, capture
from pytest_tlgraph.capture import flops
from tests.models import Attention


class _Call(nn.Module):
    """A module whose forward is one call of ``fn`` on its inputs."""

    def __init__(self, fn: Callable[..., torch.Tensor]) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, *args: torch.Tensor) -> torch.Tensor:
        return self.fn(*args)


def _only_op(fn: Callable[..., torch.Tensor], *args: torch.Tensor) -> Op:
    computed = capture(_Call(fn), args).ops
    (op,) = [op for op in computed if op.has_function and op.func != "const"]
    return op


def _torch_count(fn: Callable[..., torch.Tensor], *args: Any) -> int:
    with FlopCounterMode(display=False) as counter:
        fn(*args)
    return int(counter.get_total_flops())


def _meta(t: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(t, device="meta")


_MATMUL_FAMILY = {
    "linear": (F.linear, lambda: (torch.randn(4, 32), torch.randn(64, 32), torch.randn(64))),
    "conv2d": (F.conv2d, lambda: (torch.randn(2, 3, 16, 16), torch.randn(8, 3, 3, 3))),
    "conv1d": (F.conv1d, lambda: (torch.randn(2, 4, 20), torch.randn(6, 4, 5))),
    "matmul": (torch.matmul, lambda: (torch.randn(2, 3, 4), torch.randn(4, 5))),
    "bmm": (torch.bmm, lambda: (torch.randn(2, 3, 4), torch.randn(2, 4, 5))),
    "baddbmm": (
        torch.baddbmm,
        lambda: (torch.randn(2, 3, 5), torch.randn(2, 3, 4), torch.randn(2, 4, 5)),
    ),
}


@pytest.mark.parametrize("name", sorted(_MATMUL_FAMILY))
def test_matmul_and_conv_flops_equal_torch_flop_counter(name: str) -> None:
    fn, make = _MATMUL_FAMILY[name]
    args = make()
    op = _only_op(fn, *args)
    expected = _torch_count(fn, *args)
    assert expected > 0
    assert op.func == name
    assert op.flops_forward == expected
    assert op.flops_backward == 2 * expected
    assert op.flops_total == 3 * expected
    assert op.macs_forward == expected // 2


def test_linear_flops_are_two_per_multiply_accumulate() -> None:
    # An independent check of the counter itself: 4 rows x 64 outputs x 32 inputs.
    op = _only_op(F.linear, torch.randn(4, 32), torch.randn(64, 32))
    assert op.flops_forward == 2 * 4 * 64 * 32
    assert op.macs_forward == 4 * 64 * 32


def test_attention_flops_come_from_torch_on_the_decomposed_call() -> None:
    q, k, v = (torch.randn(2, 2, 5, 8) for _ in range(3))
    op = _only_op(F.scaled_dot_product_attention, q, k, v)
    # On CPU torch runs a fused kernel its counter does not list (it reports 0 there);
    # on meta tensors it takes the decomposed path its formulas cover.
    expected = _torch_count(F.scaled_dot_product_attention, *map(_meta, (q, k, v)))
    assert expected == 2 * (2 * 2 * 5 * 5 * 8) * 2  # two batched matmuls
    assert op.flops_forward == expected
    assert op.flops_backward == 2 * expected


def test_attention_module_ops_all_have_flops() -> None:
    trace = capture(Attention(width=8), torch.randn(2, 5, 8))
    counted = {op.func: op.flops_forward for op in trace.ops if op.has_function}
    assert counted["linear"] == 2 * 2 * 5 * 8 * 8
    assert counted["scaled_dot_product_attention"] == 2 * (2 * 5 * 5 * 8) * 2


@given(
    shape=st.lists(st.integers(1, 6), min_size=1, max_size=3).map(tuple),
    func=st.sampled_from(sorted(["relu", "sigmoid", "tanh", "exp", "neg", "gelu", "sqrt"])),
)
@settings(max_examples=25, deadline=None)
def test_pointwise_flops_are_the_table_cost_times_numel(shape: tuple[int, ...], func: str) -> None:
    fn = getattr(F, func, None) or getattr(torch, func)
    op = _only_op(fn, torch.rand(shape))
    numel = int(torch.Size(shape).numel())
    cost = flops.POINTWISE_COST[func]
    assert op.flops_forward == cost * numel
    assert op.flops_backward == op.flops_forward  # 1x for pointwise
    assert op.flops_total == 2 * cost * numel
    assert op.macs_forward == 0


def test_the_pointwise_table_prices_activations_above_additions() -> None:
    x = torch.randn(10)
    add = _only_op(torch.add, x, x)
    gelu = _only_op(F.gelu, x)
    assert add.flops_forward == 10
    assert gelu.flops_forward is not None and gelu.flops_forward > add.flops_forward


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x.view(-1),
        lambda x: x.reshape(3, 4),
        lambda x: x.transpose(0, 1),
        lambda x: x.permute(1, 0),
        lambda x: x[0],
        lambda x: x.clone(),
        lambda x: x.contiguous(),
        lambda x: torch.cat([x, x]),
        lambda x: x.unsqueeze(0),
    ],
)
def test_views_reshapes_and_copies_cost_zero(fn: Callable[[torch.Tensor], torch.Tensor]) -> None:
    op = _only_op(fn, torch.randn(4, 3))
    assert (op.flops_forward, op.flops_backward, op.flops_total, op.macs_forward) == (0, 0, 0, 0)


def test_unknown_ops_have_no_flops_at_all() -> None:
    for fn in (torch.linalg.inv, torch.unique, torch.fft.fft):
        op = _only_op(fn, torch.randn(4, 4))
        assert op.flops_forward is None and op.flops_backward is None, op.func
        assert op.flops_total is None and op.macs_forward is None


_ROW = torch.zeros(1, 6)


@pytest.mark.parametrize(
    ("fn", "expected"),
    [
        (lambda x: x.sum(), 24),
        (lambda x: x.mean(dim=-1), 24),
        (lambda x: x.amax(dim=0), 24),
        (lambda x: torch.cumsum(x, dim=1), 24),
        (lambda x: x.var(dim=-1), 72),
        (lambda x: torch.logsumexp(x, dim=-1), 72),
        (lambda x: x.norm(), 48),
        (lambda x: torch.sort(x, dim=-1).values, 24 * 3),  # 6 sorted: ceil(log2 6) = 3
        (lambda x: torch.max(x, _ROW), 24),  # elementwise: the output's numel
    ],
)
def test_reductions_cost_per_input_element(
    fn: Callable[[torch.Tensor], torch.Tensor], expected: int
) -> None:
    op = _only_op(fn, torch.randn(4, 6))
    assert op.flops_forward == expected and op.flops_backward == expected
    assert op.macs_forward == 0


def test_rotary_and_rms_norm_ops_have_a_per_element_cost() -> None:
    for fn in (torch.sin, torch.cos, torch.rsqrt, lambda x: x.pow(2), torch.exp):
        op = _only_op(fn, torch.rand(3, 5) + 0.5)
        assert op.flops_forward == 15, op.func


def test_inputs_and_outputs_count_zero_flops() -> None:
    trace = capture(_Call(torch.relu), torch.randn(3))
    for op in (trace.op("input_1"), trace.op("output_1")):
        assert (op.flops_forward, op.flops_backward, op.flops_total, op.macs_forward) == (
            0,
            0,
            0,
            0,
        )


def test_counting_leaves_the_random_state_alone() -> None:
    class Dropout(nn.Module):
        def forward(self, q: torch.Tensor) -> torch.Tensor:
            return F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)

    q = torch.randn(1, 1, 4, 8)
    torch.manual_seed(7)
    capture(Dropout(), q)
    after_capture = torch.rand(3)
    torch.manual_seed(7)
    Dropout()(q)
    after_forward = torch.rand(3)
    # The count replays the call: the draws it makes must not shift the user's stream.
    assert torch.equal(after_capture, after_forward)


def test_counts_are_memoised_on_shapes_and_scalar_arguments(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    replays: list[str] = []
    real = flops._replay

    def spy(func: Any, args: Any, kwargs: Any, *, meta: bool) -> int | None:
        replays.append(getattr(func, "__name__", "?"))
        return real(func, args, kwargs, meta=meta)

    monkeypatch.setattr(flops, "_replay", spy)
    monkeypatch.setattr(flops, "_memo", {})
    x, w = torch.randn(3, 7), torch.randn(5, 7)
    first = _only_op(F.linear, x, w).flops_forward
    again = _only_op(F.linear, torch.randn(3, 7), torch.randn(5, 7)).flops_forward
    assert first == again == 2 * 3 * 5 * 7
    assert replays == ["linear"]
    other = _only_op(F.linear, torch.randn(4, 7), w).flops_forward
    assert other == 2 * 4 * 5 * 7 and len(replays) == 2
    conv = torch.randn(1, 2, 6, 6), torch.randn(3, 2, 3, 3)
    assert _only_op(lambda a, b: F.conv2d(a, b, stride=1), *conv).flops_forward != (
        _only_op(lambda a, b: F.conv2d(a, b, stride=2), *conv).flops_forward
    )


_IMAGE = torch.randn(1, 2, 6, 6)


@pytest.mark.parametrize(
    ("fn", "x", "taps"),
    [
        (lambda x: F.interpolate(x, scale_factor=2, mode="nearest"), _IMAGE, 1),
        (lambda x: F.interpolate(x, scale_factor=2, mode="nearest-exact"), _IMAGE, 1),
        (lambda x: F.interpolate(x, scale_factor=2, mode="linear"), torch.randn(1, 2, 6), 2),
        (lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"), _IMAGE, 4),
        (lambda x: F.interpolate(x, scale_factor=2, mode="bicubic"), _IMAGE, 16),
        (lambda x: F.interpolate(x, scale_factor=2, mode="trilinear"),
         torch.randn(1, 2, 3, 3, 3), 8),
        (lambda x: nn.Upsample(scale_factor=2, mode="bilinear")(x), _IMAGE, 4),
        # area reads its window: 6 -> 2 is 3 x 3 inputs per output element.
        (lambda x: F.interpolate(x, size=(2, 2), mode="area"), _IMAGE, 9),
        # antialiased, an axis shrunk by 2 reads twice the taps: (2 * 2) ** 2.
        (lambda x: F.interpolate(x, size=(3, 3), mode="bilinear", antialias=True), _IMAGE, 16),
    ],
)  # fmt: skip
def test_resampling_costs_its_taps_per_output_element(
    fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, taps: int
) -> None:
    op = _only_op(fn, x)
    assert op.func == "interpolate"
    assert op.flops_forward == taps * op_numel(op) > 0
    assert (op.flops_backward, op.flops_total, op.macs_forward) == (
        op.flops_forward, 2 * op.flops_forward, 0,
    )  # fmt: skip


def op_numel(op: Op) -> int:
    assert op.shape is not None
    return math.prod(op.shape)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x.swapaxes(0, 1),
        lambda x: torch.swapdims(x, 0, 1),
        lambda x: torch.moveaxis(x, 0, 1),
        lambda x: torch.as_tensor(x),
        lambda x: torch.broadcast_to(x, (2, 4, 3)),
        lambda x: x.ravel(),
        lambda x: torch.tensor_split(x, 2)[0],
        lambda x: torch.hstack([x, x]),
        lambda x: torch.rot90(x),
    ],
)
def test_layout_ops_cost_zero(fn: Callable[[torch.Tensor], torch.Tensor]) -> None:
    op = _only_op(fn, torch.randn(4, 3))
    assert (op.flops_forward, op.flops_backward, op.flops_total, op.macs_forward) == (0, 0, 0, 0)


def test_meshgrid_costs_zero() -> None:
    def grid(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.stack(torch.meshgrid(x, y, indexing="ij"))

    ops = capture(_Call(grid), (torch.arange(3.0), torch.arange(4.0))).ops
    (mesh,) = [op for op in ops if op.func == "meshgrid"]
    assert (mesh.flops_forward, mesh.flops_total) == (0, 0)


_INDEX = torch.tensor([[0, 2], [1, 0]])


@pytest.mark.parametrize(
    ("fn", "written"),
    [
        (lambda x: x.gather(1, _INDEX), 4),  # the output's elements
        (lambda x: torch.take_along_dim(x[:2], _INDEX, dim=1), 4),
        (lambda x: x.index_select(1, torch.tensor([0, 2])), 8),
        (lambda x: x.new_zeros(2, 3).scatter_(1, _INDEX, 1.0), 4),  # the index's elements
        (lambda x: torch.zeros(2, 3).scatter(1, _INDEX, x), 4),
        (lambda x: torch.zeros(2, 3).scatter_add(1, _INDEX, x), 4),
        (lambda x: torch.zeros(5, 3).index_add_(0, torch.tensor([0, 3]), x[:2, :3]), 6),
        (lambda x: torch.zeros(5, 3).index_copy(0, torch.tensor([1, 4]), x[:2, :3]), 6),
        (lambda x: x.new_zeros(4, 3).index_fill_(0, torch.tensor([0, 2]), 1.0), 6),
        (lambda x: torch.zeros(4, 3).index_put_((torch.tensor([0, 1, 3]),), x[0, :3]), 9),
    ],
)  # fmt: skip
def test_indexed_ops_cost_one_per_element_written(
    fn: Callable[[torch.Tensor], torch.Tensor], written: int
) -> None:
    ops = [op for op in capture(_Call(fn), (torch.randn(4, 4),)).ops if op.has_function]
    op = ops[-1]
    assert op.flops_forward == written
    assert op.flops_total == 2 * written and op.macs_forward == 0


def test_a_masked_index_put_counts_the_selected_elements() -> None:
    mask = torch.tensor([[True, False, True], [False, False, True]])

    def fill(x: torch.Tensor) -> torch.Tensor:
        return torch.zeros(2, 3).index_put((mask,), x)

    ops = [op for op in capture(_Call(fill), (torch.tensor(1.0),)).ops if op.has_function]
    assert ops[-1].func == "index_put" and ops[-1].flops_forward == 3


def test_weight_norm_costs_three_per_weight_element() -> None:
    conv = nn.utils.parametrizations.weight_norm(nn.Conv1d(4, 6, 3), dim=2)
    trace = capture(conv, torch.randn(1, 4, 8))
    (norm,) = [op for op in trace.ops if op.func == "_weight_norm"]
    assert norm.shape == (6, 4, 3) and norm.flops_forward == 3 * 6 * 4 * 3


def test_grid_sample_costs_its_taps_per_output_element() -> None:
    grid = torch.rand(1, 3, 5, 2) * 2 - 1
    for mode, taps in (("nearest", 1), ("bilinear", 4), ("bicubic", 16)):
        op = _only_op(lambda x, g, m=mode: F.grid_sample(x, g, mode=m, align_corners=False),
                      _IMAGE, grid)  # fmt: skip
        assert op.func == "grid_sample" and op.shape == (1, 2, 3, 5)
        assert op.flops_forward == taps * 2 * 3 * 5, mode
