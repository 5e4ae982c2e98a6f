"""Capture leaves nothing behind (ENCODING.md §1): no mode, hook or patched function, on
success or on error; a model that raises becomes a ``TraceError``; no activation
survives the capture."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from pytest_tlgraph import TraceError, capture
from tests.models import CNN, MLP, Failing, RecurrentCell, seeded

_global_hooks = torch.nn.modules.module


def _functions() -> dict[str, Any]:
    """Every callable defined on torch, torch.nn.functional, the tensor classes and
    nn.Module, as stored (unbound), by name."""
    found: dict[str, Any] = {}
    namespaces = (torch, F, torch.Tensor, torch._C.TensorBase, nn.Module)
    for namespace in namespaces:
        for name, value in vars(namespace).items():
            if callable(value) or isinstance(value, (classmethod, staticmethod, property)):
                found[f"{getattr(namespace, '__name__', namespace)}.{name}"] = value
    return found


def _state(model: nn.Module) -> dict[str, Any]:
    """Everything a capture could leave changed behind it."""
    return {
        "function modes": torch._C._len_torch_function_stack(),
        "dispatch modes": torch._C._len_torch_dispatch_stack(),
        "grad enabled": torch.is_grad_enabled(),
        "saved tensor hooks": torch._C._autograd._top_saved_tensors_default_hooks(False),
        "module hooks": [
            (
                dict(m._forward_hooks),
                dict(m._forward_pre_hooks),
                dict(m._forward_hooks_with_kwargs),
                dict(m._forward_pre_hooks_with_kwargs),
                dict(m._forward_hooks_always_called),
                dict(m._backward_hooks),
            )
            for m in model.modules()
        ],
        "global hooks": (
            dict(_global_hooks._global_forward_hooks),
            dict(_global_hooks._global_forward_pre_hooks),
            dict(_global_hooks._global_backward_hooks),
        ),
        "forwards": [m.__dict__.get("forward") for m in model.modules()],
        "grads": [None if p.grad is None else p.grad.clone() for p in model.parameters()],
        "training": [m.training for m in model.modules()],
    }


def _assert_same(before: dict[str, Any], after: dict[str, Any]) -> None:
    assert before.keys() == after.keys()
    for key in before:
        if key == "grads":
            assert len(before[key]) == len(after[key])
            for b, a in zip(before[key], after[key], strict=True):
                assert (b is None and a is None) or torch.equal(b, a)
        else:
            assert before[key] == after[key], key


@contextmanager
def _unchanged(model: nn.Module) -> Iterator[None]:
    before, functions = _state(model), _functions()
    yield
    _assert_same(before, _state(model))
    after = _functions()
    changed = [name for name, fn in functions.items() if after.get(name) is not fn]
    assert changed == [], f"patched functions survived: {changed[:5]}"


def test_a_successful_capture_leaves_no_mode_hook_or_patch() -> None:
    model = seeded(CNN())
    with _unchanged(model):
        capture(model, torch.randn(2, 3, 8, 8), backward=True)


def test_a_failing_capture_leaves_no_mode_hook_or_patch() -> None:
    model = Failing()
    with _unchanged(model), pytest.raises(TraceError):
        capture(model, torch.randn(2, 4), backward=True)


def test_user_hooks_grad_mode_and_saved_tensor_hooks_survive_untouched() -> None:
    model = seeded(MLP())
    seen: list[str] = []
    model.fc1.register_forward_hook(lambda m, i, o: seen.append("post"))
    model.fc1.register_forward_pre_hook(lambda m, i: seen.append("pre"))
    pack: Callable[[torch.Tensor], torch.Tensor] = lambda t: t  # noqa: E731
    with (
        torch.no_grad(),
        torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t),
        _unchanged(model),
    ):
        capture(model, torch.randn(2, 8))
    assert seen == ["pre", "post"]  # the model's own hooks still ran, once each


def test_parameter_grads_and_training_mode_are_untouched() -> None:
    model = seeded(CNN()).eval()
    for p in model.parameters():
        p.grad = torch.ones_like(p)
    with _unchanged(model):
        capture(model, torch.randn(2, 3, 8, 8), backward=True)
    assert all(not m.training for m in model.modules())


# -- failures -------------------------------------------------------------------------
def test_a_failing_op_is_named_and_the_original_error_chained() -> None:
    with pytest.raises(TraceError) as info:
        capture(Failing(), torch.randn(2, 4))
    error = info.value
    assert isinstance(error.__cause__, RuntimeError)
    assert error.where == "op 'matmul' in module 'broken'"
    message = str(error)
    assert "Failing raised RuntimeError" in message and "'matmul'" in message
    assert "'broken'" in message and str(error.__cause__) in message
    assert "Fix the model or its inputs" in message


def test_a_python_error_outside_any_op_names_the_module() -> None:
    class Checks(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = _Validating()

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.inner(torch.relu(x))

    with pytest.raises(TraceError) as info:
        capture(Checks(), torch.randn(3))
    assert isinstance(info.value.__cause__, ValueError)
    assert info.value.where == "module 'inner'"


class _Validating(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise ValueError("inputs must be positive")


def test_an_op_error_the_model_handles_itself_is_not_blamed_later() -> None:
    class Recovers(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            try:
                x = x @ x  # a shape error the model expects and handles
            except RuntimeError:
                x = x.sum(dim=0)
            if x.dim() > 0:
                raise KeyError("late failure")
            return x

    with pytest.raises(TraceError) as info:
        capture(Recovers(), torch.randn(2, 3))
    assert "matmul" not in info.value.where
    assert info.value.where == "module '<root>'"


def test_interrupts_are_not_wrapped_but_still_clean_up() -> None:
    class Interrupted(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            raise KeyboardInterrupt

    model = Interrupted()
    with _unchanged(model), pytest.raises(KeyboardInterrupt):
        capture(model, torch.randn(2))


# -- no activations -------------------------------------------------------------------
class _Watched(nn.Module):
    """Keeps weak references to every tensor its forward creates."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(256, 256)
        self.refs: list[weakref.ref[torch.Tensor]] = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.tanh(self.fc(x))  # tanh saves its own output for backward
        y = torch.exp(h)  # so does exp
        self.refs += [weakref.ref(h), weakref.ref(y)]
        return y


@pytest.mark.parametrize("backward", [False, True])
def test_no_activation_outlives_the_capture_even_without_the_collector(backward: bool) -> None:
    model = _Watched()
    x = torch.randn(512, 256)
    gc.collect()
    gc.disable()  # reference cycles would keep tensors alive until a collection
    try:
        trace = capture(model, x, backward=backward)
        alive = [ref() is not None for ref in model.refs]
    finally:
        gc.enable()
    assert alive == [False, False]
    assert len(trace.ops) == 5


def test_a_failing_capture_keeps_no_activation_either() -> None:
    class FailsLate(_Watched):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            super().forward(x)
            raise RuntimeError("late")

    model = FailsLate()
    with pytest.raises(TraceError) as info:
        capture(model, torch.randn(64, 256))
    # The traceback holds the forward's frames (and their tensors) while it lives.
    del info
    gc.collect()
    assert [ref() for ref in model.refs] == [None, None]


def test_recurrent_and_normalised_models_capture_twice_identically() -> None:
    # Nothing carried over between captures: the second trace equals the first.
    for model, x in ((seeded(RecurrentCell()), torch.randn(2, 8)), (seeded(CNN()).eval(),
                     torch.randn(2, 3, 8, 8))):  # fmt: skip
        first, second = capture(model, x), capture(model, x)
        strip = ("func_duration",)
        for a, b in zip(first.ops, second.ops, strict=True):
            for name in a.__dataclass_fields__:
                if name not in strip:
                    assert getattr(a, name) == getattr(b, name), (a.label, name)


def test_a_forward_set_on_the_instance_is_used_and_kept() -> None:
    model = seeded(MLP())
    model.act.forward = lambda x: torch.sigmoid(x)  # type: ignore[method-assign]
    replaced = model.act.forward
    with _unchanged(model):
        trace = capture(model, torch.randn(2, 8))
    assert model.act.forward is replaced
    assert trace.op("sigmoid_1").module == "act"


def test_submodule_signatures_stay_visible_during_capture() -> None:
    import inspect

    class Introspecting(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = MLP()

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            assert list(inspect.signature(self.inner.forward).parameters) == ["x"]
            return self.inner(x)

    capture(Introspecting(), torch.randn(2, 8))
