"""What keeps a capture from breaking a model that runs, or the process around it:
compiled models, two threads capturing one model, the torch function mode stack, and
telling the model's errors from the capture's own.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from types import CodeType, TracebackType
from typing import Any, Final

import torch
from torch import nn

from pytest_tlgraph.errors import TraceError

__all__ = [
    "Headroom",
    "blame",
    "calls_through",
    "eager_dynamo",
    "exclusive",
    "leave_mode_stack",
    "refuse_compiled",
    "refuse_scripted",
]

_OWN_DIR: Final = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_lock = threading.Lock()
# id() of every module some capture is routing through its recorder right now.
_busy: dict[int, str] = {}


def _is_compiled(module: nn.Module) -> bool:
    return type(module).__module__.startswith("torch._dynamo") and hasattr(module, "_orig_mod")


def refuse_compiled(model: nn.Module) -> None:
    """Refuse a ``torch.compile``d model in one line, naming the remedy."""
    if _is_compiled(model):
        raise TraceError(
            f"capture() got a torch.compile'd model ({type(model._orig_mod).__name__} wrapped "
            "in OptimizedModule), whose forward runs inside dynamo where no op can be "
            "recorded; capture the original module instead: capture(model._orig_mod, ...).",
            where="<root>",
        )


def refuse_scripted(modules: tuple[tuple[str, nn.Module], ...]) -> None:
    """Refuse a TorchScript model, or a model holding a TorchScript submodule, in one
    line naming the remedy: its ops run in the TorchScript interpreter, where none can
    be recorded, and what autograd saves there would show up as ops of its own."""
    for address, module in modules:
        if not isinstance(module, torch.jit.ScriptModule):
            continue
        original = getattr(module, "original_name", None) or type(module).__name__
        how = (
            "torch.jit.trace"
            if isinstance(module, torch.jit._trace.TracedModule)
            else "torch.jit.script"
        )
        what = "capture() got" if not address else f"submodule {address!r} is"
        raise TraceError(
            f"{what} a TorchScript module ({original} from {how}), whose forward runs in "
            "the TorchScript interpreter where no op can be recorded; capture the eager "
            f"module instead (the {original} before {how}).",
            where=address or "<root>",
        )


@contextmanager
def exclusive(modules: tuple[tuple[str, nn.Module], ...], model_name: str) -> Iterator[None]:
    """Hold every module of a model for one capture; a second capture of any of them
    from another thread (or from inside the forward) is refused, touching nothing."""
    ids = [id(module) for _, module in modules]
    with _lock:
        taken = next((i for i in ids if i in _busy), None)
        if taken is None:
            for i in ids:
                _busy[i] = model_name
    if taken is not None:
        raise TraceError(
            f"capture() of {model_name} refused: its modules are being captured already "
            f"(by a capture of {_busy.get(taken, 'another model')} still running, in another "
            "thread or around this call); one model is captured by one capture at a time. "
            "Capture it after the other capture returns, or capture a copy "
            "(copy.deepcopy(model)).",
            where="<root>",
        )
    try:
        yield
    finally:
        with _lock:
            for i in ids:
                _busy.pop(i, None)


def eager_dynamo() -> Any:
    """Run ``torch.compile``d code inside the forward eagerly, so its ops are recorded
    (a no-op unless torch's compiler was ever imported: nothing can be compiled)."""
    if "torch._dynamo" not in sys.modules:
        return nullcontext()
    return torch.compiler.set_stance("force_eager")


def leave_mode_stack(mode: object) -> None:
    """Take ``mode`` off the torch function mode stack wherever it sits, leaving every
    mode above it (one the forward entered and never left stays the user's)."""
    above: list[Any] = []
    try:
        while torch._C._len_torch_function_stack() > 0:
            top = torch._C._pop_torch_function_stack()
            if top is mode:
                break
            above.append(top)
    finally:
        for entered in reversed(above):
            torch._C._push_on_torch_function_stack(entered)


#: Open module calls a capture allows before it first raises the recursion limit, and
#: the frames it adds above the open calls each time it does.
HEADROOM_STEP: Final = 32


class Headroom:
    """Recursion limit for the frames a capture adds to the model's own: one per open
    module call (the watched ``forward``). While the forward runs the limit grows by
    as many, so a model that runs without the capture runs with it, however deep its
    modules nest; ``restore`` puts the limit back unless the model changed it since."""

    __slots__ = ("_added", "_set")

    def __init__(self) -> None:
        self._added = 0
        self._set: int | None = None

    def grow(self, depth: int) -> int:
        """Make room for ``depth`` open calls; return the depth to call again at."""
        extra = depth + HEADROOM_STEP - self._added
        limit = sys.getrecursionlimit() + extra
        sys.setrecursionlimit(limit)
        self._added += extra
        self._set = limit
        return self._added

    def restore(self) -> None:
        """Take back what ``grow`` added (a limit the model set since stays)."""
        if self._set is not None and sys.getrecursionlimit() == self._set:
            sys.setrecursionlimit(self._set - self._added)
        self._set = None
        self._added = 0


_calls_through: set[CodeType] = set()


def calls_through(code: CodeType) -> None:
    """Mark ``code`` as a frame that only calls the model (a wrapped ``forward``): an
    error raised right there, such as a ``TypeError`` for a bad argument, is the
    model's, not the capture's."""
    _calls_through.add(code)


def blame(error: BaseException) -> str:
    """``"model"`` when ``error`` was raised by the model's code or a torch op it ran,
    ``"capture"`` when it was raised inside this package."""
    tb: TracebackType | None = error.__traceback__
    last = None
    while tb is not None:
        last = tb
        tb = tb.tb_next
    if last is None:
        return "model"
    code = last.tb_frame.f_code
    if code.co_filename.startswith(_OWN_DIR) and code not in _calls_through:
        return "capture"
    return "model"
