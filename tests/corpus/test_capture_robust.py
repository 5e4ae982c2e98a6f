"""REVIEW.md §4.5 on the corpus: capture never breaks a model that runs, and never
outlives its call."""

from __future__ import annotations

import pickle
import threading
from typing import Any

import pytest
import torch
from torch import nn
from torch.overrides import TorchFunctionMode, handle_torch_function, has_torch_function

from pytest_tlgraph import TraceError, capture
from pytest_tlgraph.capture import recorder as recorder_module
from tests.corpus import build


def _modes() -> list[object]:
    """The torch function mode stack, bottom first, left exactly as it was."""
    stack = [
        torch._C._pop_torch_function_stack() for _ in range(torch._C._len_torch_function_stack())
    ]
    for mode in reversed(stack):
        torch._C._push_on_torch_function_stack(mode)
    return stack[::-1]


def _no_forward_left(model: nn.Module) -> None:
    assert all("forward" not in vars(module) for module in model.modules())


def test_inference_mode_around_the_capture() -> None:
    case = build("gpt2")
    with torch.inference_mode():
        trace = capture(case.model, case.inputs, magnitudes=True)
    plain = capture(case.model, case.inputs)
    assert len([op for op in trace.ops if op.func == "addmm"]) == 8
    assert all(op.magnitude is not None for op in trace.ops if op.func == "addmm")
    # Inference tensors reach torch's counter whole (linear, not its mm): same FLOPs.
    assert [op.flops_forward for op in trace.ops] == [op.flops_forward for op in plain.ops]


class _InferenceInside(nn.Module):
    def __init__(self, inner: nn.Module) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, ids: torch.Tensor) -> Any:
        with torch.inference_mode():
            return self.inner(ids).logits.softmax(dim=-1)


def test_inference_mode_inside_forward() -> None:
    case = build("llama")
    trace = capture(_InferenceInside(case.model), case.inputs, magnitudes=True)
    assert trace.ops[-2].func == "softmax" and trace.ops[-2].magnitude is not None


def test_reentrant_checkpointing_with_backward() -> None:
    case = build("llama")
    case.model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": True})
    case.model.train()
    before = [p.grad for p in case.model.parameters()]
    trace = capture(case.model, case.inputs, backward=True)
    assert [p.grad for p in case.model.parameters()] == before  # no .grad left behind
    head = next(op for op in trace.ops if op.module == "lm_head")
    assert head.grad_norm is not None and head.grad_norm > 0


def test_a_compiled_model_is_refused_in_one_line() -> None:
    case = build("gpt2")
    compiled = torch.compile(case.model)
    with pytest.raises(TraceError) as info:
        capture(compiled, case.inputs)
    message = str(info.value)
    assert "\n" not in message
    assert "torch.compile" in message and "model._orig_mod" in message
    assert "Fix the model" not in message
    trace = capture(compiled._orig_mod, case.inputs)  # the remedy works
    assert trace.model_name == "GPT2LMHeadModel"


class _CompiledInside(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = torch.compile(nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0))
        self.head = nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(x))


def test_compiled_code_inside_forward_runs_eagerly_and_is_recorded() -> None:
    model = _CompiledInside()
    trace = capture(model, torch.randn(5, 2, 16))
    assert any(op.func == "multi_head_attention_forward" for op in trace.ops)
    assert trace.ops[-2].module == "head"


def test_a_meta_model_captures_with_backward() -> None:
    with torch.device("meta"):
        case = build("nn_transformer")
    case.model.to("meta")
    inputs = tuple(t.to("meta") for t in case.inputs)
    trace = capture(case.model, inputs, backward=True, magnitudes=True)
    assert any(op.func == "multi_head_attention_forward" for op in trace.ops)
    assert all(op.grad_norm is None and op.magnitude is None for op in trace.ops)
    assert not trace.values  # the drawing notes why magnitudes and grad norms are unset


def linear(x: torch.Tensor, counter: torch.Tensor) -> torch.Tensor:
    """A user function named like torch's ``linear`` that updates state."""
    if has_torch_function((x,)):
        return handle_torch_function(linear, (x,), x, counter)  # type: ignore[no-any-return]
    counter.add_(1.0)
    return x * 2.0


class _NamedLikeTorch(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("calls", torch.zeros(()))
        self.proj = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(linear(x, self.calls))


def test_the_flop_replay_reruns_torchs_functions_only() -> None:
    model = _NamedLikeTorch()
    trace = capture(model, torch.randn(2, 4))
    assert float(model.calls) == 1.0  # run once, by the model, never replayed
    (mine,) = [op for op in trace.ops if op.func == "linear" and op.module == ""]
    assert mine.flops_forward is None  # not torch's: no count, never guessed
    assert next(op for op in trace.ops if op.module == "proj").flops_forward == 2 * 2 * 4 * 4


class _UserMode(TorchFunctionMode):
    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        return func(*args, **(kwargs or {}))


class _LeavesModeEntered(nn.Module):
    def __init__(self, inner: nn.Module, fail: bool = False) -> None:
        super().__init__()
        self.inner = inner
        self.mode = _UserMode()
        self.fail = fail

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.mode.__enter__()
        out = self.inner(x)
        if self.fail:
            raise ValueError("the model gives up")
        return out


@pytest.mark.parametrize("fail", [False, True])
def test_a_mode_the_forward_leaves_entered_stays_the_users(fail: bool) -> None:
    case = build("mha_no_weights")
    model = _LeavesModeEntered(case.model, fail=fail)
    before = _modes()
    try:
        if fail:
            with pytest.raises(TraceError, match="the model gives up"):
                capture(model, case.inputs)
        else:
            capture(model, case.inputs)
        after = _modes()
    finally:
        while torch._C._len_torch_function_stack() > len(before):
            torch._C._pop_torch_function_stack()
    assert after == [*before, model.mode]
    assert not any(isinstance(mode, recorder_module.Recorder) for mode in after)


class _Gate(nn.Module):
    """Waits inside its forward until released: a capture held open."""

    def __init__(self, inner: nn.Module) -> None:
        super().__init__()
        self.inner = inner
        self.entered = threading.Event()
        self.release = threading.Event()

    def forward(self, x: torch.Tensor, **kwargs: Any) -> torch.Tensor:
        self.entered.set()
        assert self.release.wait(timeout=30)
        return self.inner(x, **kwargs)  # type: ignore[no-any-return]


def test_one_model_captured_from_two_threads_is_refused_and_left_intact() -> None:
    case = build("transformer_encoder_layer")
    model = _Gate(case.model)
    results: dict[str, Any] = {}

    def first() -> None:
        results["first"] = capture(model, case.inputs, kwargs=case.kwargs)

    thread = threading.Thread(target=first)
    thread.start()
    try:
        assert model.entered.wait(timeout=30)
        with pytest.raises(TraceError) as info:
            capture(model, case.inputs, kwargs=case.kwargs)
    finally:
        model.release.set()
        thread.join(timeout=30)
    message = str(info.value)
    assert "being captured already" in message and "Fix the model" not in message
    first_ops = results["first"].ops
    assert sum(op.func == "multi_head_attention_forward" for op in first_ops) == 1
    _no_forward_left(model)
    pickle.dumps(model.inner)
    assert len(capture(model, case.inputs, kwargs=case.kwargs).ops) == len(first_ops)


def test_a_failure_inside_the_capture_does_not_blame_the_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    case = build("gpt2")

    # The recorder's own bookkeeping breaks (not the model): its frame lookup fails.
    monkeypatch.setattr(recorder_module, "_getframe", None)
    with pytest.raises(TraceError) as info:
        capture(case.model, case.inputs)
    message = str(info.value)
    assert "Fix the model" not in message and "bug in pytest-tlgraph" in message
    assert isinstance(info.value.__cause__, TypeError)
    _no_forward_left(case.model)
    assert torch._C._len_torch_function_stack() == 0
