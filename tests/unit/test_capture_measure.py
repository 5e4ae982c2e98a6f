"""Per-op measurements: the magnitude of every dtype, and parents read from any argument."""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from pytest_tlgraph import capture

measure = sys.modules["pytest_tlgraph.capture.measure"]

_FLOATS = [torch.float16, torch.bfloat16, torch.float32, torch.float64]


def _rms(t: torch.Tensor) -> float:
    """The reference: root-mean-square computed in float64."""
    values = t.detach().double()
    return math.sqrt(float((values * values).sum()) / t.numel())


@settings(max_examples=60, deadline=None)
@given(
    dtype=st.sampled_from(_FLOATS),
    shape=st.lists(st.integers(min_value=1, max_value=5), min_size=0, max_size=3),
    scale=st.sampled_from([1e-3, 1.0, 1e3]),
    seed=st.integers(min_value=0, max_value=2**16),
)
def test_magnitude_is_the_root_mean_square_in_every_float_dtype(
    dtype: torch.dtype, shape: list[int], scale: float, seed: int
) -> None:
    generator = torch.Generator().manual_seed(seed)
    t = (torch.randn(shape, generator=generator) * scale).to(dtype)
    tolerance = 1e-6 if dtype in (torch.float32, torch.float64) else 1e-3
    assert measure.magnitude(t) == pytest.approx(_rms(t), rel=tolerance, abs=1e-30)


def test_float64_magnitude_accumulates_in_float64() -> None:
    # 1e14 + 1 is exact in float64 and rounds to 1e14 in float32.
    t = torch.tensor([1e7, 1.0], dtype=torch.float64)
    assert measure.magnitude(t) == math.sqrt((1e14 + 1) / 2)
    # In float32 the 1 is lost: the sum of squares rounds to float32(1e14).
    assert measure.magnitude(t.float()) == math.sqrt(float(np.float32(1e14)) / 2)


def test_views_give_the_value_of_their_copy() -> None:
    t = torch.randn(5, 7, generator=torch.Generator().manual_seed(1))
    negative = torch._neg_view(t)  # a negative-bit view, which plain numpy() refuses
    with pytest.raises(RuntimeError):
        negative.numpy()
    assert measure.magnitude(negative) == measure.magnitude(t.neg())
    transposed = t.t()  # strided, not contiguous: read through its strides
    assert measure.magnitude(transposed) == pytest.approx(measure.magnitude(t), rel=1e-6)
    expanded = t[0].expand(3, 7)  # stride 0: every repeated value counts
    assert measure.magnitude(expanded) == pytest.approx(measure.magnitude(t[0]), rel=1e-6)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_magnitudes_accumulate_in_float32(dtype: torch.dtype) -> None:
    t = torch.full((4, 4), 60000.0 if dtype == torch.float16 else 3.0, dtype=dtype)
    expected = float(torch.linalg.vector_norm(t, dtype=torch.float32)) / 4.0
    assert measure.magnitude(t) == expected
    assert math.isfinite(expected)


def test_float32_squares_that_overflow_are_redone_in_float64() -> None:
    t = torch.full((2, 2), 1e30)
    assert math.isinf(float(torch.linalg.vector_norm(t)))
    assert measure.magnitude(t) == pytest.approx(1e30)


@pytest.mark.parametrize(
    "t",
    [
        torch.arange(6),
        torch.ones(3, dtype=torch.bool),
        torch.ones(3, dtype=torch.complex64),
        torch.empty(0, 4),
        torch.empty(2, 2, device="meta"),
    ],
    ids=["int", "bool", "complex", "empty", "meta"],
)
def test_no_magnitude_without_float_values_to_read(t: torch.Tensor) -> None:
    assert measure.magnitude(t) is None


def test_magnitude_reads_tensors_that_require_grad_and_leaves_their_graph_working() -> None:
    leaf = torch.randn(3, requires_grad=True)
    out = leaf * 2
    assert measure.magnitude(out) == pytest.approx(_rms(out), rel=1e-6)
    assert measure.magnitude(leaf) == pytest.approx(_rms(leaf), rel=1e-6)
    (grad,) = torch.autograd.grad(out.sum(), leaf)
    assert torch.equal(grad, torch.full((3,), 2.0))


class _Mixed(nn.Module):
    """Tensors reach ops bare, in lists, in keyword arguments and next to sizes."""

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        joined = torch.cat([a, b], dim=0)
        shaped = joined.reshape(torch.Size([2, -1]))
        return torch.add(shaped, other=shaped.flip(0), alpha=2)


def test_parents_come_from_bare_listed_and_keyword_tensors() -> None:
    trace = capture(_Mixed(), (torch.randn(2, 3), torch.randn(2, 3)))
    assert trace.op("cat_1").parents == ("input_1", "input_2")
    assert trace.op("reshape_1").parents == ("cat_1",)
    assert trace.op("add_1").parents == ("reshape_1", "flip_1")
    assert trace.op("add_1").shape == (2, 6)


class _Functionalized(nn.Module):
    """An in-place op under functionalization: its tensors are wrappers owning no storage."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.func.functionalize(lambda r: (r * 2).add_(1))(x)


class _Jvp(nn.Module):
    """A forward-mode derivative: dual tensors are functorch wrappers."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _, tangent = torch.func.jvp(torch.sin, (x,), (torch.ones_like(x),))
        return tangent


# torch.func scripts a helper of its own on first use, which warns in this torch.
@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
@pytest.mark.parametrize("size", [4, 3000])
def test_wrapper_tensors_without_storage_are_read_through_torch(size: int) -> None:
    # x * 2 is 1.0 everywhere and the in-place add makes it 2.0: values numpy could only
    # have read from memory the wrappers do not own.
    trace = capture(_Functionalized(), torch.full((size,), 0.5), magnitudes=True)
    assert trace.op("mul_1").magnitude == pytest.approx(1.0, rel=1e-6)
    assert trace.op("add__1").magnitude == pytest.approx(2.0, rel=1e-6)
    jvp = capture(_Jvp(), torch.full((size,), 0.25), magnitudes=True)
    assert jvp.op("output_1").magnitude == pytest.approx(math.cos(0.25), rel=1e-6)


def test_non_contiguous_outputs_are_read_in_place_with_their_value() -> None:
    t = torch.randn(64, 48, generator=torch.Generator().manual_seed(2))
    assert measure.magnitude(t.t()) == pytest.approx(measure.magnitude(t), rel=1e-6)
    assert measure.magnitude(t[:, ::2]) == pytest.approx(
        math.sqrt(float((t[:, ::2].double() ** 2).mean())), rel=1e-6
    )
