"""``backward=True``: gradient norms per op, computed without touching any ``.grad``."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from pytest_tlgraph import TraceError, capture
from tests.models import MLP, KwargsModel, RecurrentCell, TupleOut, seeded


def _norm(t: torch.Tensor) -> float:
    return float(t.double().norm())


def test_grad_norm_is_none_without_backward() -> None:
    trace = capture(seeded(MLP()), torch.randn(2, 8))
    assert all(op.grad_norm is None for op in trace.ops)


def test_grad_norm_equals_the_independently_computed_gradient_norm() -> None:
    model, x = seeded(MLP()), torch.randn(2, 8)
    trace = capture(model, x, backward=True)
    h = F.linear(x, model.fc1.weight, model.fc1.bias)
    a = torch.relu(h)
    out = F.linear(a, model.fc2.weight, model.fc2.bias)
    grads = torch.autograd.grad(out.sum(), [h, a, out])
    for label, grad in zip(("linear_1", "relu_1", "linear_2"), grads, strict=True):
        assert trace.op(label).grad_norm == pytest.approx(_norm(grad), rel=1e-6), label
    # Records have no function and no gradient of their own.
    assert trace.op("input_1").grad_norm is None
    assert trace.op("output_1").grad_norm is None


def test_each_pass_of_a_loop_gets_its_own_gradient_norm() -> None:
    model, x = seeded(RecurrentCell(width=4, steps=3)), torch.randn(2, 4)
    trace = capture(model, x, backward=True)
    outs, h = [], x
    for _ in range(3):
        pre = model.cell(h)
        outs.append(pre)
        h = torch.tanh(pre + x)
    grads = torch.autograd.grad(h.sum(), outs)
    for number, grad in enumerate(grads, start=1):
        op = trace.op(f"linear_1:{number}")
        assert op.grad_norm == pytest.approx(_norm(grad), rel=1e-6)
    norms = [trace.op(f"linear_1:{n}").grad_norm for n in (1, 2, 3)]
    assert len(set(norms)) == 3
    assert trace.layers["linear_1"].grad_norm is None
    assert trace.layers["linear_1"].varying["grad_norm"] == tuple(norms)


def test_a_tensor_read_twice_reports_the_norm_of_its_summed_gradient() -> None:
    class Twice(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = x * 2
            return y * y + y

    x = torch.randn(5, requires_grad=True)
    trace = capture(Twice(), x, backward=True)
    y = x * 2
    (grad,) = torch.autograd.grad((y * y + y).sum(), [y])
    assert trace.op("mul_1").grad_norm == pytest.approx(_norm(grad), rel=1e-6)


def test_backward_sums_every_float_output_and_ignores_the_rest() -> None:
    x = torch.randn(3, requires_grad=True)
    trace = capture(TupleOut(), x, backward=True)
    # d(sum(x+1) + sum(2x) + sum(exp x)) / d(output) is ones for each output.
    for label in ("add_1", "mul_1", "exp_1"):
        assert trace.op(label).grad_norm == pytest.approx(3**0.5)


def test_a_callable_chooses_the_loss() -> None:
    model, x = seeded(MLP()), torch.randn(2, 8)
    trace = capture(model, x, backward=lambda out: (out**2).mean())
    out = model(x)
    (grad,) = torch.autograd.grad((out**2).mean(), [out])
    assert trace.op("linear_2").grad_norm == pytest.approx(_norm(grad), rel=1e-6)


def test_a_callable_that_returns_no_scalar_is_a_clear_error() -> None:
    with pytest.raises(TraceError, match="one-element loss tensor") as info:
        capture(MLP(), torch.randn(2, 8), backward=lambda out: out)
    assert isinstance(info.value.__cause__, TypeError)
    assert info.value.where == "the backward pass"


def test_backward_touches_no_parameter_or_input_grad() -> None:
    model = seeded(MLP())
    x = torch.randn(2, 8, requires_grad=True)
    model.fc1.weight.grad = torch.full_like(model.fc1.weight, 7.0)
    capture(model, x, backward=True)
    assert torch.equal(model.fc1.weight.grad, torch.full_like(model.fc1.weight, 7.0))
    assert model.fc2.weight.grad is None and model.fc1.bias.grad is None
    assert x.grad is None


def test_backward_without_any_graph_leaves_grad_norm_unset() -> None:
    model = seeded(MLP()).requires_grad_(False)
    trace = capture(model, torch.randn(2, 8), backward=True)
    assert all(op.grad_norm is None for op in trace.ops)


def test_keyword_inputs_that_need_a_gradient_are_backpropagated_to() -> None:
    x = torch.randn(2, 3)
    mask = torch.rand(2, 3, requires_grad=True)
    trace = capture(KwargsModel(), x, kwargs={"mask": mask}, backward=True)
    # Only the keyword input needs a gradient: d(sum(relu(x) * mask))/d(output) = ones.
    assert trace.op("mul_1").grad_norm == pytest.approx(6**0.5)


class _KeepsASide(torch.nn.Module):
    """Keeps a side result the output does not depend on: the capture's backward never
    reaches it, a later backward of the user's does."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)
        self.probe = torch.nn.Linear(4, 4)
        self.side: torch.Tensor | None = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.side = torch.tanh(self.probe(x))
        return self.fc(x) * 2


def test_a_backward_after_the_capture_leaves_the_trace_as_captured() -> None:
    model = seeded(_KeepsASide())
    trace = capture(model, torch.randn(3, 4), backward=True)
    assert trace.op("tanh_1").grad_norm is None  # not on the path to the loss
    assert trace.op("linear_2").grad_norm is not None
    assert model.side is not None
    # The user's own backward runs the capture's gradient hook on ``side``: the
    # frozen trace must neither change nor make that backward fail.
    model.side.sum().backward()
    assert trace.op("tanh_1").grad_norm is None
    assert model.probe.weight.grad is not None
