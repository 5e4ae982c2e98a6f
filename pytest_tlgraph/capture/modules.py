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
from typing import Any, Final

from torch import nn

from pytest_tlgraph.capture.guards import calls_through
from pytest_tlgraph.capture.measure import add_boundary
from pytest_tlgraph.capture.raw import ParamInfo
from pytest_tlgraph.capture.recorder import Recorder
from pytest_tlgraph.memo import remember

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


_WATCHED_CODE = next(
    code
    for code in _watched.__code__.co_consts
    if isinstance(code, CodeType) and code.co_name == "watched_forward"
)
# A source chain ends at the module's forward, however the forward was reached.
add_boundary(_WATCHED_CODE)
# A bad call of the forward through it is the model's error.
calls_through(_WATCHED_CODE)


def _hook_frames(module: nn.Module, address: str, recorder: Recorder) -> tuple[Any, Any]:
    """Open and close ``module``'s call frame from hooks around the user's own: the ops
    its forward hooks and pre-hooks run belong to it (a shadowed ``forward`` would leave
    them to the caller). Only modules that have hooks pay for the hooked call path."""
    type_name = type(module).__name__

    def pre_hook(module: nn.Module, args: Any) -> None:
        recorder.open_call(address, type_name)

    def post_hook(module: nn.Module, args: Any, output: Any) -> None:
        recorder.close_call(address, module, output)

    return (
        module.register_forward_pre_hook(pre_hook, prepend=True),
        module.register_forward_hook(post_hook),
    )


@dataclass(frozen=True, slots=True)
class ModelIndex:
    """One walk over a model: its modules by address, and its parameters and buffers
    by ``id()`` (the first name wins for a tensor registered twice)."""

    modules: tuple[tuple[str, nn.Module], ...]
    params: dict[int, ParamInfo]
    param_count: int


#: Every ``ParamInfo`` handed out, by value: a model captured again gets the very same
#: tuples, and a capture leaves none of its own for the collector to walk.
_infos: dict[ParamInfo, ParamInfo] = {}
_INFOS_LIMIT: Final = 65536


def _shared(info: ParamInfo) -> ParamInfo:
    """``info``, or the equal ``ParamInfo`` handed out before."""
    found = _infos.get(info)
    return remember(_infos, info, info, _INFOS_LIMIT) if found is None else found


def _named_modules(model: nn.Module) -> tuple[tuple[str, nn.Module], ...]:
    """``tuple(model.named_modules())`` without its recursive generators (one frame per
    level for every module): the same pairs, in the same order, each module once."""
    found: list[tuple[str, nn.Module]] = []
    seen: set[nn.Module] = set()
    todo: list[tuple[str, nn.Module]] = [("", model)]
    while todo:
        prefix, module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        found.append((prefix, module))
        dot = prefix + "." if prefix else ""
        children = [
            (dot + name, child) for name, child in module._modules.items() if child is not None
        ]
        todo.extend(reversed(children))
    return tuple(found)


def index_model(model: nn.Module) -> ModelIndex:
    """Walk ``model`` once (what ``named_modules``, ``named_parameters``,
    ``named_buffers`` and ``parameters`` would each walk again); the modules are
    ``named_modules()``'s, with its order and its notion of a module seen twice."""
    modules = _named_modules(model)
    params: dict[int, ParamInfo] = {}
    count = 0
    for prefix, module in modules:
        dot = prefix + "." if prefix else ""
        for name, p in module._parameters.items():
            if p is not None and id(p) not in params:
                params[id(p)] = _shared((dot + name, tuple(p.shape), p.requires_grad))
                count += p.numel()
        # Buffers are read by ops like parameters are: listed on the op, never trained.
        for name, b in module._buffers.items():
            if b is not None and id(b) not in params:
                params[id(b)] = _shared((dot + name, tuple(b.shape), False))
    return ModelIndex(modules, params, count)


def watch_modules(
    modules: tuple[tuple[str, nn.Module], ...], recorder: Recorder
) -> Callable[[], None]:
    """Route the forward of every module in ``modules`` (``(address, module)`` pairs)
    through ``recorder``; return the function that restores each exactly as it was."""
    # Each shadowed module's instance dict and what its "forward" entry was before.
    shadowed: list[tuple[dict[str, Any], Any]] = []
    handles: list[Any] = []

    def restore() -> None:
        while handles:
            handles.pop().remove()
        while shadowed:
            state, previous = shadowed.pop()
            if previous is _MISSING:
                state.pop("forward", None)
            else:
                state["forward"] = previous

    try:
        for address, module in modules:
            if module._forward_hooks or module._forward_pre_hooks:
                handles.extend(_hook_frames(module, address, recorder))
            else:
                state = module.__dict__
                watched = _watched(module, address, recorder)
                shadowed.append((state, state.get("forward", _MISSING)))
                state["forward"] = watched
    except BaseException:
        restore()
        raise
    return restore
