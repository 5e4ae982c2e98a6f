"""The recording machinery: a ``TorchFunctionMode`` that records every torch call
returning a tensor, plus the module call frames ``modules.py`` opens and closes.

Only ``capture/`` touches torch internals. This module writes plain ``RawOp`` records;
``assemble`` turns them into the frozen ``Trace``. The per-call path is kept short on
purpose: capture cost is paid on every op of every snapshot test.
"""

from __future__ import annotations

import sys
import time
import weakref
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Final

import torch
from torch import nn
from torch.overrides import TorchFunctionMode

from pytest_tlgraph.capture.callargs import ref as tensor_ref
from pytest_tlgraph.capture.callargs import skeleton
from pytest_tlgraph.capture.constants import NEVER_FOLDED, ConstantTable
from pytest_tlgraph.capture.flops import (
    COUNTED_FUNCS,
    REDUCTION_COST,
    WORK_FUNCS,
    FlopFields,
    count_flops,
    element_work,
    flop_fields,
    input_work,
    is_counted,
)
from pytest_tlgraph.capture.guards import HEADROOM_STEP, Headroom, leave_mode_stack
from pytest_tlgraph.capture.magnitudes import MagnitudeBatch, may_write
from pytest_tlgraph.capture.measure import (
    dtype_name,
    first_tensor,
    iter_tensors,
    magnitude,
    source_chain,
)
from pytest_tlgraph.capture.module_args import computes, module_args
from pytest_tlgraph.capture.naming import func_name
from pytest_tlgraph.capture.raw import ModuleFrame, ParamInfo, RawOp
from pytest_tlgraph.capture.reads import READS, ReadTable
from pytest_tlgraph.capture.regrad import grad_hook, is_fake

__all__ = ["ModuleFrame", "RawOp", "Recorder", "iter_tensors"]
#: pytest leaves this module's frames out of a failing test's traceback: a capture error
#: shows the user's frames and the cause, not the plugin's own (``--full-trace`` shows all).
__tracebackhide__ = True

# Calls that never return a tensor are not ops: skip their bookkeeping entirely. (The
# real test is the return value; this set only spares the common cases the work.)
_SKIPPED: Final = frozenset(
    {"size", "dim", "numel", "item", "tolist", "len", "data_ptr", "is_contiguous",
     "element_size", "nelement", "ndimension", "is_floating_point", "is_complex",
     "stride", "storage_offset", "untyped_storage", "repr", "format", "__bool__",
     "__int__", "__float__", "__index__", "hash", "iter", "get_device", "is_nonzero",
     "shape", "dtype", "device",
     "requires_grad", "grad_fn", "is_leaf", "ndim", "names", "layout", "is_cuda",
     "is_sparse", "is_quantized", "is_meta", "_version", "output_nr", "is_nested",
     "itemsize", "nbytes"}
)  # fmt: skip

# Conversions to a Python scalar keep their dunder name: ``Tensor.__bool__`` and
# ``Tensor.__int__`` return no tensor, while ``Tensor.bool()`` and ``Tensor.int()`` are
# dtype casts, recorded like every other (their plain names would skip them).
_SCALAR_DUNDERS: Final = frozenset({"__bool__", "__int__", "__float__", "__index__"})

# Calls handing out raw memory, which can then be written behind every torch function.
_RAW_ACCESS: Final = frozenset({"untyped_storage", "data_ptr"})

# Argument types that hold no tensor: ``_record`` skips them without a walk.
_PLAIN: Final = frozenset(
    {int, float, bool, str, bytes, type(None), torch.dtype, torch.device, torch.Size}
)

_names: dict[Any, str] = {}
_top_hooks: Final = torch._C._autograd._top_saved_tensors_default_hooks
_grad_enabled: Final = torch.is_grad_enabled
_inference: Final = torch.is_inference_mode_enabled
_clock: Final = time.perf_counter
_getframe: Final = sys._getframe
_Tensor: Final = torch.Tensor
_wrapped: Final = torch._C._functorch.is_functorch_wrapped_tensor
_unwrapped: Final = torch._C._functorch.get_unwrapped
_mode_enabled: Final = torch._C._is_torch_function_mode_enabled
_no_torch_function: Final = torch._C.DisableTorchFunction
_NO_HOOKS: Final = (None, None)
_REFS: Final = tuple(tensor_ref(i) for i in range(64))
# Shared by every call without keyword arguments; never written to.
_NO_KWARGS: Final[dict[str, Any]] = {}


def _name(func: Callable[..., Any]) -> str:
    try:
        return _names[func]
    except KeyError:
        raw = getattr(func, "__name__", None)
        name = _names[func] = raw if raw in _SCALAR_DUNDERS else func_name(func)
        return name
    except TypeError:  # an unhashable callable: name it every time
        return func_name(func)


def _returns_param(name: str, out: torch.Tensor, inputs: list[torch.Tensor]) -> bool:
    """Whether a call that read only parameters or buffers handed one of them back
    unchanged (``inv_freq.to(device)``, ``weight.float()`` on a float32 weight): no
    value was computed, and what reads the result reads the parameter itself (named on
    its params row). A write (``add_``, ``x[i] = v``) is an op even when it returns
    the tensor it wrote."""
    if name == "setitem" or name.endswith("_"):
        return False
    return any(t is out for t in inputs)


def _unpack(t: torch.Tensor) -> torch.Tensor:
    return t


def _released(t: torch.Tensor) -> torch.Tensor:
    raise RuntimeError("a released recorder measures nothing")


class Recorder(TorchFunctionMode):
    """Records every torch call that returns a tensor as a ``RawOp``.

    Entering it also installs the saved-tensor hooks that measure what autograd keeps
    for backward: one pair for the whole forward pass, attributed to the running op.
    """

    def __init__(
        self,
        params: dict[int, ParamInfo],
        *,
        backward: bool,
        profile: bool,
        magnitudes: bool = False,
        constants: ConstantTable | None = None,
    ) -> None:
        """``params`` maps ``id()`` of every parameter and buffer to its ``ParamInfo``;
        ``magnitudes`` asks for each op's output magnitude (the only per-op
        measurement that reads values: it costs a norm per op); ``constants`` holds
        the buffers drawn by value (:mod:`.constants`)."""
        super().__init__()
        #: The constants read (:mod:`.constants`) and the numbers read out of tensors
        #: (:mod:`.reads`) during the forward.
        self.constants = constants if constants is not None else ConstantTable({}, ())
        self.reads = ReadTable()
        self.ops: list[RawOp] = []
        #: Each op's layer key (by op index): calls sharing a key are passes of one layer.
        self.layer_keys: list[tuple[Any, ...]] = []
        #: ``grad_norm`` of each op the backward pass reached, by op index.
        self.grad_norms: dict[int, float] = {}
        #: Ops recorded without a graph under ``backward=True`` (a reentrant checkpoint
        #: runs its ops so): ``Regrad`` may find them again in the backward.
        self.unhooked: list[int] = []
        #: Each unhooked op's output magnitude, for ``Regrad``'s match only.
        self.unhooked_values: dict[int, float] = {}
        self.module_calls: list[ModuleFrame] = []
        #: Profiler range id of each op, by op index (``profile=True`` only).
        self.ranges: dict[int, int] = {}
        self.failed: str | None = None
        #: Whether a measurement met a tensor without values (meta or fake): its
        #: magnitude or grad norm stays ``None``.
        self.valueless = False
        self.measures_magnitudes = magnitudes
        self._stack: list[ModuleFrame] = []
        self._chain: tuple[tuple[str, int], ...] = ()
        self._call_counts: dict[str, int] = {}
        #: ``id(t)`` -> (weak reference, producing op) or, for one output of several,
        #: (weak reference, producing op, which output).
        self._producers: dict[int, tuple[Any, ...]] = {}
        self._params = params
        self._backward = backward
        self._profile = profile
        self._range = 0
        # Storage pointer -> bytes of what autograd saved while the running op ran;
        # ``None`` between ops and while not measuring.
        self._saving: dict[int, int] | None = None
        self._pack = self._pack_saved  # one bound method: compared by identity below
        self._hooks: AbstractContextManager[None] | None = None
        self._magnitudes = MagnitudeBatch()
        self._valueless_grads: list[int] = []
        self._headroom = Headroom()
        #: Open module calls at which the recursion limit grows next.
        self._deeper_at = HEADROOM_STEP
        self._outer_grad = True
        self._outer_inference = False

    def __enter__(self) -> Recorder:
        # The grad mode of the forward pass: an op run under another one is marked.
        self._outer_grad = _grad_enabled()
        self._outer_inference = _inference()
        self._hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, _unpack)
        self._hooks.__enter__()
        try:
            super().__enter__()  # type: ignore[no-untyped-call]
        except BaseException:
            self._hooks.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            # Not a plain pop: a mode the forward entered and never left sits on top.
            leave_mode_stack(self)
            # Measured with the mode off: the norms are not ops of the model.
            if exc[0] is None:
                self._magnitudes.flush()
            else:
                self._magnitudes.clear()
        finally:
            self._headroom.restore()
            if self._hooks is not None:
                self._hooks.__exit__(None, None, None)
                self._hooks = None

    def _pack_saved(self, t: torch.Tensor) -> torch.Tensor:
        """The pack hook: note ``t``'s storage and keep ``t``, detached if it has a graph.

        Keeping a saved output itself would tie it to its own ``grad_fn`` in a
        reference cycle that not even the garbage collector breaks, and every
        activation of the pass would outlive the capture. A tensor without ``grad_fn``
        (a parameter, a buffer, an input) can close no such cycle: like autograd
        itself, we keep it as is, and spare the alias.
        """
        saving = self._saving
        if saving is not None:
            try:
                storage = t.untyped_storage()
                # Host and device allocations never share an address: the pointer
                # alone identifies the storage.
                saving[storage.data_ptr()] = storage.nbytes()
            except (RuntimeError, NotImplementedError):
                # Tensors without storage (e.g. some subclasses): count their elements.
                saving[-id(t)] = t.numel() * t.element_size()
        # A leaf has no grad_fn (asking is_leaf spares the grad_fn's Python wrapper).
        if t.is_leaf:
            return t
        if _mode_enabled():
            # Called from outside any recorded call (a TorchScript function saving for
            # backward): the alias is ours, never an op of the model.
            with _no_torch_function():
                return t.detach()
        return t.detach()

    # -- module calls ---------------------------------------------------------------
    def open_call(self, address: str, type_name: str) -> None:
        """A module's forward begins: push its call frame (``type_name``: its class)."""
        counts = self._call_counts
        number = counts[address] = counts.get(address, 0) + 1
        chain = self._chain
        stack = self._stack
        # The chain's last entry is the enclosing frame's (address, call number).
        frame = ModuleFrame(address, number, type_name, len(stack), chain[-1] if chain else None)
        stack.append(frame)
        if len(stack) >= self._deeper_at:
            self._deeper_at = self._headroom.grow(len(stack))
        self._chain = (*chain, (address, number))
        self.module_calls.append(frame)

    def close_call(self, address: str, module: nn.Module, output: Any) -> None:
        """A module's forward returned: pop its frame and tag its output op with args."""
        frame = self._stack.pop()
        self._chain = self._chain[:-1]
        # Read per call, not once per module: a forward may edit an attribute between
        # two calls, and the args row must show what each call ran with.
        family, frame.module_family, args = module_args(module)
        frame.module_args = args
        raw = None
        if args is not None:
            raw = self._computation(frame, family, args.torch_class or "")
        if raw is not None:
            # The op the family names: its shapes follow the functional's contract,
            # the module's, even where a subclass overrides ``forward``.
            raw.module_family = family
        else:
            t = output if isinstance(output, _Tensor) else first_tensor(output)
            if t is None:
                return
            entry = self._producers.get(id(t))
            if entry is None or entry[0]() is not t or self.ops[entry[1]].module != address:
                return
            raw = self.ops[entry[1]]
            raw.module_family = frame.module_family
        raw.module_args = frame.module_args
        raw.module_type = frame.type_name

    def _computation(self, frame: ModuleFrame, family: str | None, base: str) -> RawOp | None:
        """The call's own op that *is* the module's computation (docs/decisions.md,
        "Drawings a reviewer can read (0.2)"): the last one whose function the module's
        family or torch.nn class ``base`` names (``multi_head_attention_forward`` in
        ``MultiheadAttention``, not a ``transpose`` after it; ``layer_norm`` in a
        ``LayerNorm2d`` that permutes around it), or ``None``."""
        key = (frame.address, frame.call_number)
        for raw in reversed(self.ops):
            if key not in raw.module_calls:
                return None
            if raw.module == frame.address and computes(raw.func, family, base):
                return raw
        return None

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
            index: int = entry[1]
            return index
        return None

    def output_source(self, t: torch.Tensor) -> int | None:
        """The record an output ``t`` comes from: its producer, or the ``const`` record
        of a constant the forward returns (``None`` for a parameter or an unknown)."""
        index = self.producer(t)
        if index is not None or id(t) in self._params:
            return index
        index = self._origin(t)
        if index is not None:
            return index
        return self.constants.record_for(t, self._const_record)

    def register(self, t: torch.Tensor, index: int) -> None:
        """Remember that op ``index`` produced ``t``."""
        self._producers[id(t)] = (weakref.ref(t), index)

    def add_record(
        self, func: str, key: tuple[Any, ...], parents: list[int], t: torch.Tensor
    ) -> RawOp:
        """Append an input/output record (no function, zero time and flops)."""
        raw = RawOp(
            "", "", func, 1, 1, len(self.ops), parents, (), tuple(t.shape),
            dtype_name(t.dtype), "", (), (), None, None, None, 0.0,
            t.numel() * t.element_size(), 0, 0, 0, 0, None, None,
            self._magnitude_now(t), None, None,
        )  # fmt: skip
        self.ops.append(raw)
        self.layer_keys.append(key)
        return raw

    # -- the mode -------------------------------------------------------------------
    def __torch_function__(
        self,
        func: Callable[..., Any],
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        try:
            name = _names[func]
        except (KeyError, TypeError):
            name = _name(func)
        if name in _SKIPPED:
            if name in _RAW_ACCESS and self._magnitudes.pending:
                self._magnitudes.flush()
            if name in READS:
                value = func(*args, **kwargs) if kwargs else func(*args)
                self.reads.note(name, args[0] if args else None, value)
                return value
            return func(*args, **kwargs) if kwargs else func(*args)
        # Kept outputs are measured before anything may write to them.
        if self._magnitudes.pending and may_write(name, args, kwargs or _NO_KWARGS):
            self._magnitudes.flush()
        # Measured only with a graph being built and our hooks on top (a model's own
        # saved-tensor hooks, e.g. checkpointing, hide what autograd keeps).
        grad_on = _grad_enabled()
        measuring = grad_on and (_top_hooks(False) or _NO_HOOKS)[0] is self._pack
        saving = self._saving = {} if measuring else None
        span = None
        if self._profile:
            self._range += 1
            span = torch.profiler.record_function(f"tlgraph::{self._range}")
            span.__enter__()  # type: ignore[no-untyped-call]
        try:
            start = _clock()
            out = func(*args, **kwargs) if kwargs else func(*args)
            elapsed = _clock() - start
        except BaseException:
            self.failed = f"op {name!r} in module {self.current_module or '<root>'!r}"
            raise
        finally:
            self._saving = None
            if span is not None:
                span.__exit__(None, None, None)
        self.failed = None
        if isinstance(out, _Tensor):
            outputs = [out]
        elif name == "setitem" and args and isinstance(args[0], _Tensor):
            # ``x[i] = v`` returns nothing, yet writes ``x``: recorded like an in-place
            # op, so what reads ``x`` next is wired to the write (and ``v`` to it).
            outputs = [args[0]]
        else:
            outputs = iter_tensors(out)
            if not outputs:
                return out
        grad_mode = None
        inference = _inference()
        if grad_on is not self._outer_grad or inference is not self._outer_inference:
            # A block run under another grad mode than the forward around it.
            grad_mode = "inference_mode" if inference else "enable_grad" if grad_on else "no_grad"
        self._record(func, name, args, kwargs or _NO_KWARGS, outputs, elapsed, saving, grad_mode)
        return out

    def _record(
        self,
        func: Callable[..., Any],
        name: str,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        outputs: list[torch.Tensor],
        elapsed: float,
        saving: dict[int, int] | None,
        grad_mode: str | None,
    ) -> None:
        tensors: list[torch.Tensor] = []
        positional, keywords = self._skeleton(args, kwargs, tensors)
        parents: list[int] = []
        params: list[ParamInfo] = []
        sources, outside = self._sources(tensors, parents, params)
        first = outputs[0]
        if not parents and self._no_op(name, first, outputs, tensors, params):
            return
        if outside:
            self._constant_parents(tensors, outside, sources, parents)
        numel = first.numel()
        size = numel * first.element_size()
        if len(outputs) > 1:
            size += sum(t.numel() * t.element_size() for t in outputs[1:])
        # Not a leaf: made by an op that autograd recorded (it has a grad_fn).
        in_graph = not first.is_leaf
        # No graph, nothing saved for backward: unknown, not zero.
        kept = saving if saving is not None and in_graph else None
        stack = self._stack
        module = stack[-1].address if stack else ""
        index = len(self.ops)
        raw = RawOp(
            "", "", name, 1, 1, index, parents, (), tuple(first.shape),
            dtype_name(first.dtype), module,
            self._chain, tuple(params) if params else (), None, None, None, elapsed, size,
            *self._flops(func, name, args, kwargs, tensors, first, numel),
            None if kept is None else sum(kept.values()), None if kept is None else len(kept),
            None, None, None, (func, positional, keywords, tuple(sources)), grad_mode,
        )  # fmt: skip
        self.ops.append(raw)
        self.layer_keys.append((module, source_chain(_getframe(2)), name))
        self._after_record(raw, first, outputs, index, numel, in_graph)

    def _skeleton(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], tensors: list[torch.Tensor]
    ) -> tuple[tuple[Any, ...], tuple[tuple[str, Any], ...] | None]:
        """The call's skeleton: its positional and keyword arguments, each tensor
        replaced by its place among ``tensors`` (appended to in argument order)."""
        positional = []
        call_args, call_kwargs = args, kwargs
        if self.reads:  # numbers read out of tensors are wired as the reads they are
            call_args, call_kwargs, _ = self.reads.mark(args, kwargs)
        for a in call_args:
            if isinstance(a, _Tensor):
                count = len(tensors)
                positional.append(_REFS[count] if count < 64 else tensor_ref(count))
                tensors.append(a)
            elif type(a) in _PLAIN or (type(a) is tuple and _PLAIN.issuperset(map(type, a))):
                positional.append(a)  # no tensor inside (scalars, sizes): spare the walk
            else:
                positional.append(skeleton(a, tensors))
        if not call_kwargs:
            return tuple(positional), None
        keywords = tuple(
            [(k, v if type(v) in _PLAIN else skeleton(v, tensors)) for k, v in call_kwargs.items()]
        )
        return tuple(positional), keywords

    def _sources(
        self, tensors: list[torch.Tensor], parents: list[int], params: list[ParamInfo]
    ) -> tuple[list[Any], list[int]]:
        """Where each of ``tensors`` comes from (a parameter's name, a producing op's
        index, ``("slot", op, output)`` for one output of several, ``None`` for a
        constant), and the places of the constants; fills ``parents`` and ``params``."""
        sources: list[Any] = []
        outside: list[int] = []  # places of the constants among ``tensors``
        known_params, producers = self._params, self._producers
        for t in tensors:
            param = known_params.get(id(t))
            if param is not None:
                sources.append(param[0])
                if param not in params:
                    params.append(param)
                continue
            entry = producers.get(id(t))
            # The weak reference proves it is the same tensor, not a recycled id.
            source: Any
            if entry is not None and entry[0]() is t:
                found: int | None = entry[1]
                # One output of several (``meshgrid``, ``split``): which one, too.
                source = found if len(entry) == 2 else ("slot", found, entry[2])
            else:
                found = source = self._origin(t)
            if found is None:
                outside.append(len(sources))
                sources.append(None)
            else:
                sources.append(source)
                if found not in parents:
                    parents.append(found)
        return sources, outside

    def _no_op(
        self,
        name: str,
        first: torch.Tensor,
        outputs: list[torch.Tensor],
        tensors: list[torch.Tensor],
        params: list[ParamInfo],
    ) -> bool:
        """Whether a call that read no recorded op is no op of its own: an identity on a
        parameter or buffer (nothing computed), or a constant made of constants alone
        (folded, see ``constants.py``)."""
        if id(first) in self._params and _returns_param(name, first, tensors):
            return True
        if not params and name not in NEVER_FOLDED:
            self.constants.fold(outputs)
            return True
        return False

    def _flops(
        self,
        func: Callable[..., Any],
        name: str,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        tensors: list[torch.Tensor],
        first: torch.Tensor,
        numel: int,
    ) -> FlopFields:
        """``(forward, backward, total, macs)`` of one call: counted by torch's counter,
        reduced over its first tensor argument, worked out from its arguments, or by
        its function's fixed cost per output element."""
        counted = None
        if name in COUNTED_FUNCS and is_counted(func):
            counted = count_flops(func, name, args, kwargs, device_work=not self._profile)
        work, worked = 0, None
        if name in REDUCTION_COST:
            work = input_work(name, tensors[0] if tensors else None, args, kwargs)
        elif name in WORK_FUNCS:
            worked = element_work(name, tensors, first, args, kwargs)
        return flop_fields(name, counted, numel, work, worked)

    def _after_record(
        self,
        raw: RawOp,
        first: torch.Tensor,
        outputs: list[torch.Tensor],
        index: int,
        numel: int,
        in_graph: bool,
    ) -> None:
        """What follows a new record: its magnitude, its profiler range, its outputs
        registered as its own, and its grad hook (or, without a graph under
        ``backward=True``, its place among the ops ``Regrad`` may find again)."""
        if self.measures_magnitudes:
            if first.is_meta or (type(first) is not _Tensor and is_fake(first)):
                self.valueless = True  # no values to measure: the field stays None
            else:
                self._magnitudes.add(raw, first, numel)
        if self._profile:
            self.ranges[index] = self._range
        ref = weakref.ref
        producers = self._producers
        if len(outputs) == 1:
            producers[id(first)] = (ref(first), index)
        else:
            for slot, t in enumerate(outputs):
                producers[id(t)] = (ref(t), index, slot)
        if _wrapped(first):
            self._register_unwrapped(outputs, index)
        if self._backward and in_graph:
            hook = grad_hook(self.grad_norms, index, self._valueless_grads)
            first.register_hook(hook)  # type: ignore[no-untyped-call]
        elif self._backward:
            # Inside a reentrant checkpoint: the backward recomputes this op, and
            # ``Regrad`` finds it again by its output's magnitude, kept here for that
            # match alone (the record's ``magnitude`` stays as asked).
            self.unhooked.append(index)
            if first.is_floating_point() and not first.is_meta:
                value = magnitude(first)
                if value is not None:
                    self.unhooked_values[index] = value

    def _constant_parents(
        self,
        tensors: list[torch.Tensor],
        outside: list[int],
        sources: list[Any],
        parents: list[int],
    ) -> None:
        """Wire each constant an op reads (at ``outside`` among ``tensors``) from its
        ``const`` record, made on its first read."""
        record_for, new_record = self.constants.record_for, self._const_record
        for place in outside:
            index = sources[place] = record_for(tensors[place], new_record)
            if index not in parents:
                parents.append(index)

    def _const_record(self, call: tuple[Any, ...], t: torch.Tensor) -> int:
        """Append the ``const`` record of ``t`` (its call ``call``), at the root of the
        drawing; return its index."""
        raw = self.add_record("const", ("const", len(self.ops)), [], t)
        raw.call = call
        return raw.index

    def _magnitude_now(self, t: torch.Tensor) -> float | None:
        """``t``'s magnitude when asked for and ``t`` holds values, else ``None``.

        Every input and output record comes here: a tensor without values among them
        marks the trace as valueless even when nothing is measured."""
        if t.is_meta or (type(t) is not _Tensor and is_fake(t)):
            self.valueless = True
            return None
        return magnitude(t) if self.measures_magnitudes else None

    @property
    def measured_values(self) -> bool:
        """Whether every value measurement found values (no meta or fake tensor)."""
        return not (self.valueless or self._valueless_grads)

    def _origin(self, t: torch.Tensor) -> int | None:
        """The op behind a tensor no recorded call returned: the tensor a functorch
        wrapper holds (``vmap``'s batched inputs), or the base of a view made where no
        torch function sees it (``vmap`` moving its batch dimension out), or ``None``
        (a constant made before the capture)."""
        while True:
            if _wrapped(t):
                t = _unwrapped(t)
            elif t._base is not None:
                t = t._base
            else:
                return None
            index = self.producer(t)
            if index is not None:
                return index

    def _register_unwrapped(self, outputs: list[torch.Tensor], index: int) -> None:
        """Also register what functorch wrappers (``vmap``, ``func.grad``) hold: the
        transform hands the wrapped value itself back to the code around it."""
        ref = weakref.ref
        producers = self._producers
        for t in outputs:
            while _wrapped(t):
                t = _unwrapped(t)
                producers[id(t)] = (ref(t), index)

    def release(self) -> None:
        """Drop every tensor reference the recorder still holds."""
        self._producers.clear()
        self._magnitudes.clear()
        self.constants.release()
        self.reads.release()
        self._saving = None
        # The bound method refers back to the recorder: a cycle only the cyclic
        # collector would free, with every record the recorder still holds.
        self._pack = _released
