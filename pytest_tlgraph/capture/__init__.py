"""Capture a model's forward pass into a frozen ``Trace`` (the only torch-facing stage)."""

from __future__ import annotations

import sys
import types
from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch import nn
from torch.autograd.graph import _engine_run_backward

from pytest_tlgraph.capture.assemble import assemble
from pytest_tlgraph.capture.constants import ConstantTable, split_buffers
from pytest_tlgraph.capture.guards import (
    blame,
    calls_through,
    eager_dynamo,
    exclusive,
    refuse_compiled,
    refuse_scripted,
)
from pytest_tlgraph.capture.io_names import input_names, output_names
from pytest_tlgraph.capture.measure import add_boundary, iter_tensors
from pytest_tlgraph.capture.modules import ModelIndex, index_model, watch_modules
from pytest_tlgraph.capture.recorder import Recorder
from pytest_tlgraph.capture.regrad import Regrad
from pytest_tlgraph.capture.threads import HelperThreads
from pytest_tlgraph.collector import collector_paused
from pytest_tlgraph.errors import TraceError
from pytest_tlgraph.trace import Trace

__all__ = ["capture"]
#: pytest leaves this module's frames out of a failing test's traceback: a capture error
#: shows the user's frames and the cause, not the plugin's own (``--full-trace`` shows all).
__tracebackhide__ = True

BackwardSpec = bool | Callable[[Any], torch.Tensor]


def _positional(inputs: Any) -> tuple[Any, ...]:
    if isinstance(inputs, (tuple, list)):
        return tuple(inputs)
    return (inputs,)


def _loss(output: Any, backward: BackwardSpec) -> torch.Tensor | None:
    """The scalar to backpropagate: the user's, or the sum of all float outputs."""
    if callable(backward):
        loss = backward(output)
        if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
            raise TypeError(
                f"the backward callable returned {type(loss).__name__}"
                f"{'' if not isinstance(loss, torch.Tensor) else f' of shape {tuple(loss.shape)}'}"
                "; it must return a one-element loss tensor (e.g. output.sum())"
            )
        return loss
    floats = [t for t in iter_tensors(output) if t.is_floating_point() and t.requires_grad]
    if not floats:
        return None
    return torch.stack([t.sum() for t in floats]).sum()


def _parameters(index: ModelIndex) -> list[torch.Tensor]:
    """``model.parameters()`` from the index: the same tensors, each once, without
    torch's recursive walk (one generator per level of nesting)."""
    seen: set[int] = set()
    found: list[torch.Tensor] = []
    for _, module in index.modules:
        for p in module._parameters.values():
            if p is not None and id(p) not in seen:
                seen.add(id(p))
                found.append(p)
    return found


def _run_backward(
    loss: torch.Tensor | None, params: list[torch.Tensor], inputs: Any, recorder: Recorder
) -> None:
    """Backpropagate without leaving any ``.grad`` changed: ``autograd.grad`` on the
    leaves, or, through reentrant checkpointing (which refuses ``autograd.grad``), a
    plain ``backward`` with every leaf's ``.grad`` put back afterwards, the ops the
    checkpoints recompute tied to the recorded ones for their ``grad_norm``."""
    if loss is None or loss.grad_fn is None:
        return
    leaves: list[torch.Tensor] = [p for p in params if p.requires_grad]
    leaves += [t for t in iter_tensors(inputs) if t.requires_grad and t.is_leaf]
    if not leaves:
        return
    if not _reentrant(loss):
        torch.autograd.grad(loss, leaves, allow_unused=True)
        return
    grads = [t.grad for t in leaves]
    try:
        seed = torch.ones_like(loss)
        with Regrad(recorder.ops, recorder.unhooked_values, recorder.grad_norms):
            # The engine itself: ``torch.autograd.backward`` is a torch function, inside
            # which the mode would see none of the checkpoints' recomputed ops.
            _engine_run_backward(
                (loss,), (seed,), False, False, (), allow_unreachable=True, accumulate_grad=True
            )
    finally:
        for t, grad in zip(leaves, grads, strict=True):
            t.grad = grad


def _reentrant(loss: torch.Tensor) -> bool:
    """Whether the graph behind ``loss`` holds a reentrant checkpoint."""
    seen: set[int] = set()
    todo = [loss.grad_fn]
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if type(node).__name__ == "CheckpointFunctionBackward":
            return True
        todo.extend(next_node for next_node, _ in node.next_functions)
    return False


def capture(
    model: nn.Module,
    inputs: Any,
    *,
    kwargs: Mapping[str, Any] | None = None,
    backward: BackwardSpec = False,
    profile: bool = False,
    magnitudes: bool = False,
    value_buffers: tuple[str, ...] | str = (),
) -> Trace:
    """Run ``model(*inputs, **kwargs)`` once and return its frozen ``Trace``.

    ``inputs`` is one tensor or a tuple/list of positional arguments. Every torch call
    that returns a tensor becomes an ``Op``. No mode, hook or patched function survives
    the call, on success or on error; a model that raises is re-raised as ``TraceError``
    naming the failing op, with the original exception chained. ``backward=True`` (or a
    callable ``output -> loss``) backpropagates to record ``grad_norm`` without leaving
    any ``.grad`` changed. ``profile=True`` joins device kernels to ops (``device_time``).
    ``magnitudes=True`` measures each op's output magnitude (one norm per op, the only
    measurement that reads values); without it every ``magnitude`` is ``None`` and
    ``color_by``/``size_by``/``stack_by="magnitude"`` refuse. On the meta device or fake
    tensors nothing reads values: magnitudes and grad norms stay ``None``.
    A ``torch.compile``d model, a TorchScript module (or a model holding one), and a
    model another capture is running, are refused with ``TraceError`` before anything
    is touched.

    The forward runs once, as the model is: ``capture()`` changes no ``training`` flag.
    On a model in train mode that call does what any training-mode call does: BatchNorm
    updates its running statistics (and ``num_batches_tracked``) and dropout draws from
    the global RNG. Put the model in eval mode first to avoid both; the
    ``tlgraph_snapshot`` fixture and ``tlgraph draw`` clear the flags themselves and
    restore them and the RNG (:mod:`pytest_tlgraph.capture.eval_capture`).
    """
    if not isinstance(model, nn.Module):
        raise TypeError(
            f"capture() takes a torch.nn.Module, got {type(model).__name__}; "
            "wrap a plain function in an nn.Module whose forward calls it"
        )
    if kwargs is not None and not isinstance(kwargs, Mapping):
        raise TypeError(
            f"capture(kwargs=...) takes a mapping of keyword arguments for forward, got "
            f"{type(kwargs).__name__}; pass positional arguments as inputs=(a, b, ...)"
        )
    refuse_compiled(model)
    args = _positional(inputs)
    kw = dict(kwargs or {})
    with collector_paused():
        return _indexed_capture(
            model,
            args,
            kw,
            backward=backward,
            profile=profile,
            magnitudes=magnitudes,
            value_buffers=_patterns(value_buffers),
        )


def _indexed_capture(
    model: nn.Module,
    args: tuple[Any, ...],
    kw: dict[str, Any],
    *,
    backward: BackwardSpec,
    profile: bool,
    magnitudes: bool,
    value_buffers: tuple[str, ...] = (),
) -> Trace:
    """Index ``model``, hold it and capture it. The index (every module and parameter
    of the model) is let go when this returns, before the collector runs again."""
    index = index_model(model)
    refuse_scripted(index.modules)
    with exclusive(index.modules, type(model).__name__):
        constants = ConstantTable(
            split_buffers(index.modules, index.params, value_buffers), index.modules
        )
        return _capture(
            model,
            index,
            args,
            kw,
            backward=backward,
            profile=profile,
            magnitudes=magnitudes,
            constants=constants,
        )


def _capture(
    model: nn.Module,
    index: ModelIndex,
    args: tuple[Any, ...],
    kw: dict[str, Any],
    *,
    backward: BackwardSpec,
    profile: bool,
    magnitudes: bool,
    constants: ConstantTable | None = None,
) -> Trace:
    recorder = Recorder(
        index.params,
        backward=bool(backward),
        profile=profile,
        magnitudes=magnitudes,
        constants=constants,
    )
    # Keyword tensors are inputs too: an op reading one must have a parent to point at.
    for i, t in enumerate(iter_tensors((args, kw)), start=1):
        raw = recorder.add_record("input", ("input", i), [], t)
        recorder.register(t, raw.index)
    profiler = None
    output: Any = None
    stage = "forward"
    threads = HelperThreads()  # a branch run on another thread: refused, never dropped
    try:
        restore = watch_modules(index.modules, recorder)
        try:
            profiler = _start_profiler() if profile else None
            with eager_dynamo(), recorder, threads:
                output = _forward(model, args, kw)
        finally:
            restore()
            if profiler is not None:
                profiler.__exit__(None, None, None)
        if backward:
            stage = "backward"
            _run_backward(_loss(output, backward), _parameters(index), (args, kw), recorder)
    except Exception as error:
        in_op = stage == "forward" and recorder.failed is not None
        if stage == "backward":
            where = "the backward pass"
        else:
            where = recorder.failed or f"module {recorder.current_module or '<root>'!r}"
        recorder.release()
        raise _failure(model, error, where, in_op=in_op) from error
    refused = threads.refusal(type(model).__name__)
    if refused is not None:
        recorder.release()
        raise TraceError(refused, where="forward")
    for i, t in enumerate(iter_tensors(output), start=1):
        producer = recorder.output_source(t)
        recorder.add_record("output", ("output", i), [] if producer is None else [producer], t)
    io_names = _end_names(recorder, model, args, kw, output)
    join = _join(profiler, recorder.ranges) if profiler is not None else None
    recorder.release()
    return assemble(
        recorder.ops,
        recorder.layer_keys,
        recorder.module_calls,
        model_name=type(model).__name__,
        param_count=index.param_count,
        grad_norms=recorder.grad_norms,
        device_time=join[0] if join else None,
        device_join=join[1] if join else None,
        device_join_reason=join[2] if join else None,
        io_names=io_names,
        magnitudes=magnitudes,
        values=recorder.measured_values,
        device=_home_device(args, kw, index),
        default_dtype=str(torch.get_default_dtype()).removeprefix("torch."),
    )


def _patterns(value_buffers: Any) -> tuple[str, ...]:
    """``value_buffers`` checked: a name pattern or a sequence of them."""
    if isinstance(value_buffers, str):
        return (value_buffers,)
    if not isinstance(value_buffers, (tuple, list)) or not all(
        isinstance(p, str) for p in value_buffers
    ):
        raise TypeError(
            f"value_buffers takes buffer name patterns (a str or a tuple of str, e.g. "
            f"('*.mask',)), got {value_buffers!r}"
        )
    return tuple(value_buffers)


def _home_device(args: tuple[Any, ...], kw: dict[str, Any], index: ModelIndex) -> torch.device:
    """The device the capture ran on: its first input tensor's, else its first
    parameter's, else the CPU. A device argument naming it is left out of the drawing."""
    for t in iter_tensors((args, kw)):
        return t.device
    for p in _parameters(index):
        return p.device
    return torch.device("cpu")


def _failure(model: nn.Module, error: Exception, where: str, *, in_op: bool) -> TraceError:
    """The error to raise: the model's fault (a torch op it ran raised, or its own
    code), or the capture's (raised inside this package), which says so."""
    name = type(model).__name__
    if not in_op and blame(error) == "capture":
        return TraceError(
            f"pytest-tlgraph failed while capturing {name} at {where}: "
            f"{type(error).__name__}: {error}. The model is not at fault: this is a bug in "
            "pytest-tlgraph, please report it with this traceback; the capture kept nothing.",
            where=where,
        )
    return TraceError(
        f"{name} raised {type(error).__name__} during capture at {where}: "
        f"{error}. Fix the model or its inputs; the capture kept nothing.",
        where=where,
    )


def _end_names(
    recorder: Recorder, model: nn.Module, args: tuple[Any, ...], kw: dict[str, Any], output: Any
) -> dict[int, str]:
    """Record index -> title of the input and output records."""
    io_names: dict[int, str] = {}
    inputs = [raw.index for raw in recorder.ops if raw.func == "input"]
    outputs = [raw.index for raw in recorder.ops if raw.func == "output"]
    for indices, names in (
        (inputs, input_names(model, args, kw)),
        (outputs, output_names(output)),
    ):
        if names is not None and len(names) == len(indices):
            io_names.update(zip(indices, names, strict=True))
    return io_names


def _forward(model: nn.Module, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    return model(*args, **kw)


# Source chains stop here at the latest, even for ops issued outside any module call.
add_boundary(_forward.__code__)
calls_through(_forward.__code__)


def _start_profiler() -> Any:
    activities = [torch.profiler.ProfilerActivity.CPU]
    if torch.cuda.is_available():
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    profiler = torch.profiler.profile(activities=activities)
    profiler.__enter__()  # type: ignore[no-untyped-call]
    return profiler


def _join(
    profiler: Any, ranges: Mapping[int, int]
) -> tuple[dict[int, int | None], str, str | None]:
    """Device time per op index from the profiler ranges the recorder opened."""
    from pytest_tlgraph.capture.profiler_join import events_from_profiler, join_device_time

    names = {str(number): index for index, number in ranges.items()}
    joined = join_device_time(events_from_profiler(profiler), list(names))
    per_op = {names[name]: value for name, value in joined.per_op.items()}
    return per_op, joined.status, joined.reason


class _CallableModule(types.ModuleType):
    """Importing a submodule binds ``pytest_tlgraph.capture`` to this package, which
    would shadow the public ``capture`` function; calling the package calls it."""

    __call__ = staticmethod(capture)


sys.modules[__name__].__class__ = _CallableModule
