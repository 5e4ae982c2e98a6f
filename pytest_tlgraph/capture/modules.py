"""The model's structure: one walk for its modules and parameters, and the module call
boundaries (every submodule's ``forward`` routed through the recorder for the duration
of one capture, and restored exactly afterwards).

An instance attribute shadowing ``forward`` is the cheapest equivalent of a pair of
forward hooks: a module without hooks keeps torch's fast call path, where hooks send
every call through the slow one (most of the capture cost of a deep model).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import CodeType
from typing import Any

import torch
from torch import nn

from pytest_tlgraph.capture.measure import add_boundary
from pytest_tlgraph.capture.raw import ParamInfo
from pytest_tlgraph.capture.recorder import Recorder

__all__ = ["ModelIndex", "index_model", "watch_modules"]
#: pytest leaves this module's frames out of a failing test's traceback: a capture error
#: shows the user's frames and the cause, not the plugin's own (``--full-trace`` shows all).
__tracebackhide__ = True

_MISSING = object()


def _watched(module: nn.Module, address: str, recorder: Recorder) -> Callable[..., Any]:
    """The ``forward`` that routes one call of ``module`` through ``recorder``."""
    forward = module.forward
    open_call, close_call = recorder.open_call, recorder.close_call
    type_name = type(module).__name__

    def watched_forward(*args: Any, **kwargs: Any) -> Any:
        open_call(address, type_name)
        # On an exception the frame stays open: the innermost module names the failure.
        output = forward(*args, **kwargs)
        close_call(address, module, output)
        return output

    # inspect.signature follows __wrapped__: a model that introspects its submodules'
    # forward still sees their own parameters.
    watched_forward.__wrapped__ = forward  # type: ignore[attr-defined]
    return watched_forward


# A source chain ends at the module's forward, however the forward was reached.
add_boundary(
    next(
        code
        for code in _watched.__code__.co_consts
        if isinstance(code, CodeType) and code.co_name == "watched_forward"
    )
)


@dataclass(frozen=True, slots=True)
class ModelIndex:
    """One walk over a model: its modules by address, and its parameters and buffers
    by ``id()`` (the first name wins for a tensor registered twice)."""

    modules: tuple[tuple[str, nn.Module], ...]
    params: dict[int, ParamInfo]
    param_count: int


def index_model(model: nn.Module) -> ModelIndex:
    """Walk ``model`` once (what ``named_modules``, ``named_parameters``,
    ``named_buffers`` and ``parameters`` would each walk again); the modules are
    ``named_modules()``'s, with its order and its notion of a module seen twice."""
    modules = tuple(model.named_modules())
    params: dict[int, ParamInfo] = {}
    count = 0
    for prefix, module in modules:
        dot = prefix + "." if prefix else ""
        for name, p in module._parameters.items():
            if p is not None and id(p) not in params:
                params[id(p)] = (dot + name, tuple(p.shape), p.requires_grad)
                count += p.numel()
        # Buffers are read by ops like parameters are: listed on the op, never trained.
        for name, b in module._buffers.items():
            if b is not None and id(b) not in params:
                params[id(b)] = (dot + name, tuple(b.shape), False)
    return ModelIndex(modules, params, count)


def watch_modules(
    modules: tuple[tuple[str, nn.Module], ...], recorder: Recorder
) -> Callable[[], None]:
    """Route the forward of every module in ``modules`` (``(address, module)`` pairs)
    through ``recorder``; return the function that restores each exactly as it was."""
    # Each shadowed module's instance dict and what its "forward" entry was before.
    shadowed: list[tuple[dict[str, Any], Any]] = []

    def restore() -> None:
        while shadowed:
            state, previous = shadowed.pop()
            if previous is _MISSING:
                state.pop("forward", None)
            else:
                state["forward"] = previous

    try:
        for address, module in modules:
            # TorchScript runs outside Python: its ops are invisible, so is its call.
            if not isinstance(module, torch.jit.ScriptModule):
                state = module.__dict__
                watched = _watched(module, address, recorder)
                shadowed.append((state, state.get("forward", _MISSING)))
                state["forward"] = watched
    except BaseException:
        restore()
        raise
    return restore
