"""Batched magnitudes: the values of one norm per op, measured before any write."""

from __future__ import annotations

import sys
from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from pytest_tlgraph import capture
from pytest_tlgraph.capture.magnitudes import PURE_CALLS, may_write
from pytest_tlgraph.capture.measure import magnitude
from pytest_tlgraph.trace import Trace
from tests.models import CNN, Attention, RecurrentCell, ResidualMLP, seeded

magnitudes = sys.modules["pytest_tlgraph.capture.magnitudes"]


def _rms(t: torch.Tensor) -> float:
    """The per-op formula, read from a fresh tensor of the same values."""
    value = magnitude(t)
    assert value is not None
    return value


def _magnitudes(trace: Trace) -> list[float | None]:
    return [op.magnitude for op in trace.ops]


class _Half(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8).half()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.fc(x.half())).double() * 2


_MODELS: dict[str, Callable[[], tuple[nn.Module, torch.Tensor]]] = {
    "cnn": lambda: (seeded(CNN()), torch.randn(2, 3, 16, 16)),
    "residual": lambda: (seeded(ResidualMLP(blocks=30)), torch.randn(4, 32)),
    "recurrent": lambda: (seeded(RecurrentCell(steps=5)), torch.randn(2, 8)),
    "attention": lambda: (seeded(Attention()), torch.randn(2, 5, 8)),
    "half": lambda: (seeded(_Half()), torch.randn(3, 8)),
}


@pytest.mark.parametrize("grad", [True, False])
@pytest.mark.parametrize("name", sorted(_MODELS))
def test_batches_read_the_values_one_norm_per_op_reads(
    name: str, grad: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    model, x = _MODELS[name]()
    with torch.set_grad_enabled(grad):
        batched = capture(model, x, magnitudes=True)
        # A batch of one measures each op at once, with the per-op norm.
        monkeypatch.setattr(magnitudes, "MAX_TENSORS", 1)
        one_by_one = capture(model, x, magnitudes=True)
    assert _magnitudes(batched) == _magnitudes(one_by_one)
    assert sum(m is not None for m in _magnitudes(batched)) >= 4


class _WritesAfter(nn.Module):
    """Each op's output is written to right after it, in a different way."""

    def __init__(self, write: Callable[[torch.Tensor], object]) -> None:
        super().__init__()
        self.write = write

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x * 2
        z = y + 1  # a pure op in between: the batch still holds y
        self.write(y)
        return z + y


def _out_write(y: torch.Tensor) -> None:
    torch.mul(y, 0.5, out=y)


def _view_write(y: torch.Tensor) -> None:
    y.view(-1)[:2].zero_()


def _setitem(y: torch.Tensor) -> None:
    y[0] = 7.0


@pytest.mark.parametrize(
    "write",
    [
        lambda y: y.add_(10),
        lambda y: F.relu(y, inplace=True),
        lambda y: F.relu(y, True),
        lambda y: F.dropout(y, 0.5, True, True),
        _setitem,
        _out_write,
        _view_write,
        lambda y: y.data.mul_(3),
    ],
    ids=["add_", "relu inplace=", "relu positional", "dropout", "setitem", "out=", "view", "data"],
)
def test_an_op_reads_its_values_from_before_later_writes(write: Callable[..., object]) -> None:
    x = torch.randn(4, 6, generator=torch.Generator().manual_seed(3))
    trace = capture(_WritesAfter(write), x, magnitudes=True)
    assert trace.op("mul_1").magnitude == _rms(x * 2)
    assert trace.op("add_1").magnitude == _rms(x * 2 + 1)


class _HiddenWrite(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x * 2
        z = y + 1
        with torch._C.DisableTorchFunction():  # a write no torch function sees
            y.mul_(0)
        return z


def test_a_write_no_torch_function_sees_leaves_the_magnitude_unknown_not_wrong() -> None:
    trace = capture(_HiddenWrite(), torch.randn(3, 3), magnitudes=True)
    assert trace.op("mul_1").magnitude is None
    assert trace.op("add_1").magnitude is not None


def test_tensors_off_the_dense_cpu_path_are_measured_at_once() -> None:
    model = nn.Linear(4, 3, device="meta")
    trace = capture(model, torch.randn(2, 4, device="meta"), magnitudes=True)
    assert [op.func for op in trace.ops] == ["input", "linear", "output"]
    assert _magnitudes(trace) == [None, None, None]


def test_pure_calls_write_nothing_and_everything_else_may() -> None:
    y = torch.ones(2)
    for name in PURE_CALLS:
        assert not may_write(name, (y, y), {})
        assert may_write(name, (y, y), {"out": y})
    for name in ("add_", "setitem", "copy_", "fill_", "set", "numpy", "batch_norm", "?"):
        assert may_write(name, (y,), {})
    assert not may_write("relu", (y,), {"inplace": False})
    assert may_write("relu", (y,), {"inplace": True})
    assert may_write("relu", (y, True), {})
    assert not may_write("relu", (y, False), {})
