"""Ops a forward runs on a helper thread: refused, never dropped.

The recorder follows the capturing thread only (torch's function modes are per
thread), so a branch a forward hands to another thread (``threading.Thread``, a
``ThreadPoolExecutor``) used to vanish from the drawing, and a change in it passed.
While a capture runs, :class:`HelperThreads` wraps every thread the capturing thread
starts and every task it submits to a thread pool in a detector; a helper that runs a
torch op is named, and the capture is refused in one line naming the thread
(:meth:`HelperThreads.refusal`). A helper that runs no torch op (logging, I/O) is
left alone.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from torch.overrides import TorchFunctionMode

__all__ = ["HelperThreads"]

_lock = threading.Lock()
_active: dict[int, HelperThreads] = {}  # capturing thread's ident -> its guard
_originals: dict[str, Any] = {}


class _Seen(TorchFunctionMode):
    """Notes that a torch op ran on the helper thread it is entered on."""

    def __init__(self, guard: HelperThreads) -> None:
        super().__init__()
        self._guard = guard

    def __torch_function__(
        self,
        func: Callable[..., Any],
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        self._guard.ran_on(threading.current_thread().name)
        return func(*args, **(kwargs or {}))


class HelperThreads:
    """The helper threads a capture's forward ran torch ops on (a context manager)."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self._owner = threading.get_ident()

    def ran_on(self, name: str) -> None:
        """A torch op ran on the helper thread ``name``."""
        if name not in self.names:
            self.names.append(name)

    def watch(self, work: Callable[..., Any]) -> Callable[..., Any]:
        """``work`` run under the detector on whatever thread runs it."""

        def watched(*args: Any, **kwargs: Any) -> Any:
            with _Seen(self):
                return work(*args, **kwargs)

        return watched

    def refusal(self, model: str) -> str | None:
        """The one line refusing the capture of ``model``, or ``None`` when no helper
        thread ran a torch op."""
        if not self.names:
            return None
        shown = ", ".join(repr(n) for n in self.names)
        return (
            f"{model}.forward ran torch ops on the helper thread {shown}; a capture records "
            "the calling thread only, so the drawing would miss them: run that branch on the "
            "calling thread while capturing (the capture kept nothing)"
        )

    def __enter__(self) -> HelperThreads:
        with _lock:
            if not _active:
                _install()
            _active[self._owner] = self
        return self

    def __exit__(self, *exc: object) -> None:
        with _lock:
            _active.pop(self._owner, None)
            if not _active:
                _uninstall()


def _guard() -> HelperThreads | None:
    return _active.get(threading.get_ident())


def _start(thread: threading.Thread) -> None:
    guard = _guard()
    if guard is not None:
        thread.run = guard.watch(thread.run)  # type: ignore[method-assign]
    _originals["start"](thread)


def _submit(
    executor: ThreadPoolExecutor, fn: Callable[..., Any], /, *a: Any, **k: Any
) -> Future[Any]:
    guard = _guard()
    work = fn if guard is None else guard.watch(fn)
    result: Future[Any] = _originals["submit"](executor, work, *a, **k)
    return result


def _install() -> None:
    _originals["start"] = threading.Thread.start
    _originals["submit"] = ThreadPoolExecutor.submit
    threading.Thread.start = _start  # type: ignore[method-assign, assignment]
    ThreadPoolExecutor.submit = _submit  # type: ignore[method-assign, assignment]


def _uninstall() -> None:
    threading.Thread.start = _originals.pop("start")  # type: ignore[method-assign]
    ThreadPoolExecutor.submit = _originals.pop("submit")  # type: ignore[method-assign]
