"""The recording machinery: a ``TorchFunctionMode`` plus module forward hooks.

Only this module (with its siblings in ``capture/``) touches torch internals. It writes
plain ``RawOp`` records; ``assemble`` turns them into the frozen ``Trace``.
"""

from __future__ import annotations

import os
import sys
import time
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields, is_dataclass
from types import CodeType
from typing import Any, Final

import torch
from torch import nn
from torch.overrides import TorchFunctionMode

from pytest_tlgraph.capture.flops import COUNTED_FUNCS, TorchFlopCounter, flops_for, numel
from pytest_tlgraph.capture.module_args import module_args
from pytest_tlgraph.capture.naming import func_name

__all__ = ["ModuleFrame", "RawOp", "Recorder", "iter_tensors"]

_TORCH_DIR: Final = os.path.dirname(torch.__file__) + os.sep
_OWN_DIR: Final = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_MODULE_CALL_CODES: Final = frozenset(
    {nn.Module._call_impl.__code__, nn.Module._wrapped_call_impl.__code__}
)

# Calls that never return a tensor are not ops: skip their bookkeeping entirely.
_NEVER_OPS: Final = frozenset(
    {"size", "dim", "numel", "item", "tolist", "len", "data_ptr", "is_contiguous",
     "element_size", "nelement", "ndimension", "is_floating_point", "is_complex",
     "stride", "storage_offset", "untyped_storage", "repr", "format", "bool", "int",
     "float_", "index", "hash", "iter", "eq_", "ne_", "get_device", "is_nonzero"}
)  # fmt: skip
_NON_TENSOR_PROPS: Final = frozenset(
    {"shape", "dtype", "device", "requires_grad", "grad_fn", "is_leaf", "ndim", "names",
     "layout", "is_cuda", "is_sparse", "is_quantized", "is_meta", "grad", "_version",
     "output_nr", "_base", "is_nested", "itemsize", "nbytes"}
)  # fmt: skip


def iter_tensors(value: Any) -> Iterator[torch.Tensor]:
    """Tensors in ``value``: nested tuples, lists, dicts and dataclasses walked in order."""
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from iter_tensors(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from iter_tensors(item)
    elif is_dataclass(value) and not isinstance(value, type):
        for f in fields(value):
            yield from iter_tensors(getattr(value, f.name))


@dataclass(slots=True)
class RawOp:
    """One recorded call (or input/output record), before labels are assigned."""

    index: int
    func: str
    layer_key: tuple[Any, ...]
    parents: list[int]
    module: str
    module_calls: tuple[tuple[str, int], ...]
    shape: tuple[int, ...] | None
    dtype: torch.dtype | None
    params: tuple[tuple[str, tuple[int, ...], bool], ...] = ()
    module_args: Any = None
    module_type: str | None = None
    module_family: str | None = None
    func_duration: float | None = None
    activation_memory: int | None = None
    flops: tuple[int | None, int | None, int | None, int | None] = (None, None, None, None)
    autograd_memory: int | None = None
    num_autograd_tensors: int | None = None
    magnitude: float | None = None
    grad_norm: float | None = None
    device_time: int | None = None


@dataclass(slots=True)
class ModuleFrame:
    """A module call while (and after) it runs."""

    address: str
    call_number: int
    type_name: str
    depth: int
    parent: tuple[str, int] | None
    module_args: Any = None
    module_family: str | None = None


def magnitude(t: torch.Tensor) -> float | None:
    """Root-mean-square of a float tensor's values; ``None`` otherwise."""
    if not (t.is_floating_point() and t.numel() and t.layout == torch.strided):
        return None
    if t.device.type == "meta":
        return None
    with torch.no_grad():
        value = float(t.detach().double().square().mean().sqrt())
    return value


@dataclass
class _SavedTensors:
    """What autograd saved for backward while one op ran, deduplicated by storage."""

    storages: dict[tuple[str, int], int] = field(default_factory=dict)

    def pack(self, t: torch.Tensor) -> torch.Tensor:
        try:
            storage = t.untyped_storage()
            self.storages[(str(t.device), storage.data_ptr())] = storage.nbytes()
        except (RuntimeError, NotImplementedError):
            self.storages[("opaque", id(t))] = t.numel() * t.element_size()
        return t

    @staticmethod
    def unpack(t: torch.Tensor) -> torch.Tensor:
        return t


class Recorder(TorchFunctionMode):
    """Records every torch call that returns a tensor as a ``RawOp``."""

    def __init__(self, model: nn.Module, *, backward: bool, profile: bool) -> None:
        super().__init__()
        self.ops: list[RawOp] = []
        self.module_calls: list[ModuleFrame] = []
        self.failed: str | None = None
        self._stack: list[ModuleFrame] = []
        self._call_counts: dict[str, int] = {}
        self._producers: dict[int, tuple[weakref.ref[torch.Tensor], int]] = {}
        self._params = {
            id(p): (name, tuple(p.shape), bool(p.requires_grad))
            for name, p in model.named_parameters()
        }
        self._backward = backward
        self._profile = profile
        self.runner_code: CodeType | None = None

    # -- module hooks ---------------------------------------------------------------
    def pre_hook(self, address: str) -> Callable[[nn.Module, Any], None]:
        """A forward pre-hook that opens a module call."""

        def hook(module: nn.Module, _args: Any) -> None:
            number = self._call_counts.get(address, 0) + 1
            self._call_counts[address] = number
            parent = (self._stack[-1].address, self._stack[-1].call_number) if self._stack else None
            frame = ModuleFrame(address, number, type(module).__name__, len(self._stack), parent)
            self._stack.append(frame)
            self.module_calls.append(frame)

        return hook

    def post_hook(self, address: str) -> Callable[[nn.Module, Any, Any], None]:
        """A forward hook that closes a module call and tags its output op with args."""

        def hook(module: nn.Module, _args: Any, output: Any) -> None:
            frame = self._stack.pop()
            frame.module_family, frame.module_args = module_args(module)
            for t in iter_tensors(output):
                index = self.producer(t)
                if index is not None and self.ops[index].module == address:
                    self.ops[index].module_args = frame.module_args
                    self.ops[index].module_type = frame.type_name
                    self.ops[index].module_family = frame.module_family
                break

        return hook

    @property
    def current_module(self) -> str:
        """Address of the innermost module whose forward is running."""
        return self._stack[-1].address if self._stack else ""

    # -- tensor bookkeeping ---------------------------------------------------------
    def producer(self, t: torch.Tensor) -> int | None:
        """Index of the op that produced ``t`` (checked by weak reference, so a
        recycled ``id`` never aliases a dead tensor)."""
        entry = self._producers.get(id(t))
        if entry is not None and entry[0]() is t:
            return entry[1]
        return None

    def register(self, t: torch.Tensor, index: int) -> None:
        """Remember that op ``index`` produced ``t``."""
        self._producers[id(t)] = (weakref.ref(t), index)

    def add_record(self, func: str, key: tuple[Any, ...], parents: list[int],
                   t: torch.Tensor | None) -> RawOp:
        """Append an input/output record (no function, zero time and flops)."""
        raw = RawOp(
            index=len(self.ops), func=func, layer_key=key, parents=parents, module="",
            module_calls=(), shape=tuple(t.shape) if t is not None else None,
            dtype=t.dtype if t is not None else None, func_duration=0.0,
            activation_memory=t.numel() * t.element_size() if t is not None else None,
            flops=(0, 0, 0, 0), magnitude=magnitude(t) if t is not None else None,
        )  # fmt: skip
        self.ops.append(raw)
        return raw

    def _source_chain(self) -> tuple[tuple[str, int], ...]:
        """User source locations between the innermost module's forward and the call."""
        chain: list[tuple[str, int]] = []
        frame = sys._getframe(2)
        while frame is not None:
            code = frame.f_code
            if code in _MODULE_CALL_CODES or code is self.runner_code:
                break
            filename = code.co_filename
            if not (filename.startswith(_TORCH_DIR) or filename.startswith(_OWN_DIR)):
                chain.append((filename, frame.f_lineno))
            frame = frame.f_back  # type: ignore[assignment]
        return tuple(chain)

    # -- the mode -------------------------------------------------------------------
    def __torch_function__(
        self,
        func: Callable[..., Any],
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = kwargs or {}
        name = func_name(func)
        if name in _NEVER_OPS or name in _NON_TENSOR_PROPS:
            return func(*args, **kwargs)
        try:
            out, elapsed, counted, saved = self._run(func, name, args, kwargs)
        except BaseException:
            if self.failed is None:
                where = self.current_module or "<root>"
                self.failed = f"op {name!r} in module {where!r}"
            raise
        outputs = list(iter_tensors(out))
        if not outputs:
            return out
        self._record(name, args, kwargs, outputs, elapsed, counted, saved)
        return out

    def _run(
        self, func: Callable[..., Any], name: str, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[Any, float, int | None, _SavedTensors | None]:
        saved: _SavedTensors | None = None
        hooks_free = torch._C._autograd._top_saved_tensors_default_hooks(False) is None
        if torch.is_grad_enabled() and hooks_free:
            saved = _SavedTensors()
        counter = TorchFlopCounter() if name in COUNTED_FUNCS else None
        profile_range = (
            torch.profiler.record_function(f"tlgraph::{len(self.ops)}") if self._profile else None
        )
        if profile_range is not None:
            profile_range.__enter__()
        try:
            start = time.perf_counter()
            if saved is not None:
                with torch.autograd.graph.saved_tensors_hooks(saved.pack, saved.unpack):
                    out = _call(func, args, kwargs, counter)
            else:
                out = _call(func, args, kwargs, counter)
            elapsed = time.perf_counter() - start
        finally:
            if profile_range is not None:
                profile_range.__exit__(None, None, None)
        return out, elapsed, counter.flops if counter is not None else None, saved

    def _record(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any],
                outputs: list[torch.Tensor], elapsed: float, counted: int | None,
                saved: _SavedTensors | None) -> None:
        parents: list[int] = []
        params: list[tuple[str, tuple[int, ...], bool]] = []
        for t in iter_tensors((args, kwargs)):
            param = self._params.get(id(t))
            if param is not None:
                if param not in params:
                    params.append(param)
                continue
            index = self.producer(t)
            if index is not None and index not in parents:
                parents.append(index)
        first = outputs[0]
        shape = tuple(first.shape)
        built_graph = first.grad_fn is not None
        raw = RawOp(
            index=len(self.ops),
            func=name,
            layer_key=(self.current_module, self._source_chain(), name),
            parents=parents,
            module=self.current_module,
            module_calls=tuple((f.address, f.call_number) for f in self._stack),
            shape=shape,
            dtype=first.dtype,
            params=tuple(params),
            func_duration=elapsed,
            activation_memory=sum(t.numel() * t.element_size() for t in outputs),
            magnitude=magnitude(first),
        )
        count = flops_for(name, counted, numel(shape))
        raw.flops = (count.forward, count.backward, count.total, count.macs)
        if saved is not None and built_graph:
            raw.autograd_memory = sum(saved.storages.values())
            raw.num_autograd_tensors = len(saved.storages)
        self.ops.append(raw)
        for t in outputs:
            self.register(t, raw.index)
        if self._backward and first.requires_grad and first.grad_fn is not None:
            first.register_hook(self._grad_hook(raw))

    @staticmethod
    def _grad_hook(raw: RawOp) -> Callable[[torch.Tensor], None]:
        def hook(grad: torch.Tensor) -> None:
            with torch.no_grad():
                norm = float(grad.detach().double().norm())
            raw.grad_norm = norm if raw.grad_norm is None else raw.grad_norm + norm

        return hook

    def release(self) -> None:
        """Drop every tensor reference the recorder still holds."""
        self._producers.clear()


def _call(
    func: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    counter: TorchFlopCounter | None,
) -> Any:
    if counter is None:
        return func(*args, **kwargs)
    with counter:
        return func(*args, **kwargs)
