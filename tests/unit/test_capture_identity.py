"""Ops a drawing would show with no edge (issue 24, item 2): a call that hands a
parameter or buffer back unchanged is not an op, and ``x[i] = v`` is one."""

from __future__ import annotations

import torch
from torch import nn

from pytest_tlgraph import capture


class _Rotary(nn.Module):
    """Reads its buffer through a no-op cast, as a rotary embedding reads ``inv_freq``."""

    def __init__(self, dtype: torch.dtype = torch.float32) -> None:
        super().__init__()
        self.register_buffer("inv_freq", torch.ones(4, dtype=dtype))
        self.scale = nn.Parameter(torch.ones(4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        freq = self.inv_freq.to(x.device).float()
        return x * freq * self.scale.float()


def test_a_cast_that_returns_the_buffer_itself_is_not_an_op() -> None:
    trace = capture(_Rotary(), torch.randn(2, 4))
    funcs = [op.func for op in trace.ops if op.has_function]
    assert funcs == ["mul", "mul"]
    [first, second] = [op for op in trace.ops if op.has_function]
    assert [p[0] for p in first.params] == ["inv_freq"]  # named on its consumer's row
    assert [p[0] for p in second.params] == ["scale"]
    assert all(op.parents or op.func == "input" for op in trace.ops)


def test_a_cast_that_makes_a_new_tensor_stays_an_op_wired_to_its_consumer() -> None:
    trace = capture(_Rotary(torch.float64), torch.randn(2, 4))
    [cast] = [op for op in trace.ops if op.func == "float" and op.params]
    assert [p[0] for p in cast.params] == ["inv_freq"]
    assert [trace.op(child).func for child in cast.children] == ["mul"]


class _Counter(nn.Module):
    """Writes its buffer in place: a write is an op even though it returns the buffer."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("seen", torch.zeros(()))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.seen.add_(1)
        return x + 1


def test_an_in_place_write_on_a_buffer_is_still_an_op() -> None:
    trace = capture(_Counter(), torch.randn(3))
    assert "add_" in [op.func for op in trace.ops]


class _Unsort(nn.Module):
    """Inverts a permutation with ``inv[perm] = arange(n)``, as an MoE's experts do."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        perm = torch.argsort(x)
        inv = torch.empty_like(perm)
        inv[perm] = torch.arange(perm.size(0))
        return x[inv]


def test_setitem_is_an_op_between_what_it_writes_and_what_reads_it() -> None:
    trace = capture(_Unsort(), torch.randn(5))
    by_func = {op.func: op for op in trace.ops}
    write = by_func["setitem"]
    # ``arange(n)`` is computed from literals alone: drawn as the constant it is.
    assert {trace.op(p).func for p in write.parents} == {"empty_like", "argsort", "const"}
    assert write.shape == (5,)
    assert write.label in by_func["getitem"].parents
    # The arange feeds the write: no op is left without a consumer.
    assert all(op.children for op in trace.ops if op.func != "output")
