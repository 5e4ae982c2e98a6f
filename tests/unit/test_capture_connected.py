"""No cut graphs: every call that makes a tensor from a tensor is recorded, with an
edge from what it read (dtype casts, ``vmap``, ``autograd.grad`` inside a forward)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
from torch import nn

from pytest_tlgraph import Trace, capture

#: Every dtype cast method of ``Tensor``.
CASTS = (
    "int", "bool", "byte", "char", "short", "long", "half", "float", "double",
    "bfloat16", "cfloat", "cdouble",
)  # fmt: skip


class _Apply(nn.Module):
    def __init__(self, how: Callable[[torch.Tensor], torch.Tensor]) -> None:
        super().__init__()
        self.how = how

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.how(x)
        return (y.abs() if y.is_complex() else y.float()).sum()


def _edges(trace: Trace) -> list[tuple[str, tuple[str, ...]]]:
    return [(op.label, op.parents) for op in trace.ops]


@pytest.mark.parametrize("cast", CASTS)
def test_every_dtype_cast_method_is_an_op_between_its_input_and_its_reader(cast: str) -> None:
    trace = capture(_Apply(lambda x: getattr(x, cast)()), torch.randn(3, 4))
    op = trace.ops[1]
    assert (op.func, op.parents) == (cast, ("input_1",))
    assert trace.ops[2].parents == (op.label,)
    # A cast is a copy: zero FLOPs, not an uncounted op that greys its box.
    assert (op.flops_forward, op.flops_backward) == (0, 0)


@pytest.mark.parametrize(
    ("how", "func"),
    [
        (lambda x: x.to(torch.int32), "to"),
        (lambda x: x.to(dtype=torch.bool), "to"),
        (lambda x: x.type(torch.int64), "type"),
        (lambda x: x.type("torch.IntTensor"), "type"),
        (lambda x: x.data * 2, "data"),
    ],
)
def test_to_type_and_data_are_ops_with_their_input_as_parent(
    how: Callable[[torch.Tensor], torch.Tensor], func: str
) -> None:
    trace = capture(_Apply(how), torch.randn(3, 4))
    assert (trace.ops[1].func, trace.ops[1].parents) == (func, ("input_1",))


def test_conversions_to_python_scalars_are_not_ops() -> None:
    class Scalars(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            n = int(x.sum() > 0) + int(bool(x.max() > 10))
            return x * n

    funcs = [op.func for op in capture(Scalars(), torch.ones(2)).ops]
    assert funcs == ["input", "sum", "gt", "max", "gt", "mul", "output"]


def test_roberta_style_position_ids_are_one_connected_chain() -> None:
    """``(ids != pad).int()`` then ``cumsum``: the cast joins ``ne`` to ``cumsum``."""

    class Positions(nn.Module):
        def forward(self, ids: torch.Tensor) -> torch.Tensor:
            mask = ids.ne(1).int()
            return (torch.cumsum(mask, dim=1).type_as(mask) * mask).long() + 1

    trace = capture(Positions(), torch.tensor([[0, 5, 1, 1]]))
    assert _edges(trace)[:4] == [
        ("input_1", ()),
        ("ne_1", ("input_1",)),
        ("int_1", ("ne_1",)),
        ("cumsum_1", ("int_1",)),
    ]


class _Vmapped(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        per_row = torch.func.vmap(lambda r: self.lin(r).relu() * 2)(x)
        nested = torch.func.vmap(torch.func.vmap(torch.sin))(x)
        moved = torch.func.vmap(lambda c: (c.unsqueeze(-1) * c).sum(0), in_dims=1, out_dims=1)(x)
        return per_row + nested + moved.sum()


def test_vmap_inside_a_forward_is_drawn_as_the_ops_it_runs_per_sample() -> None:
    trace = capture(_Vmapped(), torch.randn(3, 4))
    edges = dict(_edges(trace))
    assert edges["linear_1"] == ("input_1",)
    assert edges["relu_1"] == ("linear_1",) and edges["mul_1"] == ("relu_1",)
    assert trace.op("linear_1").shape == (4,)  # one sample: what the function sees
    assert edges["sin_1"] == ("input_1",)
    assert edges["add_1"] == ("mul_1", "sin_1")  # both vmap outputs reach their reader
    assert edges["sum_2"] == ("sum_1",)  # out_dims=1 moves the batch axis: still joined
    assert [op.label for op in trace.ops if op.has_function and not op.parents] == []


class _Forces(nn.Module):
    """An energy model whose output is the gradient of its energy (a force field)."""

    def __init__(self) -> None:
        super().__init__()
        self.energy = nn.Linear(4, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with torch.enable_grad():
            x = x.detach().requires_grad_(True)
            e = self.energy(x.tanh()).sum()
            (g,) = torch.autograd.grad(e, x, create_graph=True)
        return -g


def test_autograd_grad_inside_a_forward_is_one_op_from_its_outputs_and_inputs() -> None:
    with torch.no_grad():
        trace = capture(_Forces(), torch.randn(3, 4))
    edges = dict(_edges(trace))
    assert edges["grad_1"] == ("sum_1", "requires_grad__1")
    assert edges["neg_1"] == ("grad_1",)
    assert trace.op("grad_1").shape == (3, 4)
