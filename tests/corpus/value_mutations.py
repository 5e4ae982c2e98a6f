"""Mutations of values a model keeps in tensors that are not learned, and the cold
capture control (issue 39).

A probe forward, under a ``TorchFunctionMode`` over the whole model, finds the tensors
the forward reads that are neither parameters, persistent buffers nor inputs, nor made
by a call that read any of those: the *constant roots* (a non-persistent buffer, a table
on a scheduler object, a module attribute, a cached index). A call whose tensor
arguments all derive from roots derives from them too, so the probe knows which roots
reach a number read out with ``.item()``/``.tolist()``/``int()``/``float()``.

Three kinds rewrite one root in place (floats scaled, integers moved by one, masks
inverted), the first candidate whose rewrite runs and changes the output:

* ``buffer``: a non-persistent buffer's values;
* ``outside``: a tensor held outside the model's parameters and buffers;
* ``item``: a root whose values reach a number read out of a tensor.

The ``cold`` control clears every ``functools`` cache the model's classes and modules
hold and captures again: the first capture in a process must draw what a later one does.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn
from torch.overrides import TorchFunctionMode

__all__ = ["VALUE_KINDS", "Root", "clear_caches", "constant_roots", "rewrites"]

#: The mutation kinds of this module, by name, with their table text.
VALUE_KINDS = {
    "buffer": "a non-persistent buffer's values changed",
    "outside": "a tensor held outside the model's parameters changed",
    "item": "a constant read out with .item() changed",
}
_READS = frozenset({"item", "tolist", "__int__", "__float__", "__index__"})
_RANDOM = frozenset(
    {"rand", "randn", "randint", "randperm", "rand_like", "randn_like", "normal",
     "bernoulli", "multinomial", "dropout", "empty", "empty_like"}
)  # fmt: skip


@dataclass
class Root:
    """One constant root: the tensor, where it lives, and what reads it."""

    tensor: torch.Tensor
    kind: str  # "buffer" or "outside"
    name: str
    read_out: bool = False


class _Probe(TorchFunctionMode):
    """Finds the constant roots of one forward (see the module doc)."""

    def __init__(self, learned: set[int], buffers: dict[int, str]) -> None:
        super().__init__()
        self.learned = learned
        self.buffers = buffers
        self.roots: dict[int, Root] = {}
        #: ``id`` of a tensor made by a call -> the roots it derives from (``None``:
        #: from something that is no constant).
        self.derived: dict[int, frozenset[int] | None] = {}
        self.keep: list[Any] = []

    def _origin(self, t: torch.Tensor) -> frozenset[int] | None:
        if id(t) in self.derived:
            return self.derived[id(t)]
        if id(t) in self.learned:
            return None
        if id(t) not in self.roots:
            kind = "buffer" if id(t) in self.buffers else "outside"
            name = self.buffers.get(id(t), f"<{'x'.join(map(str, t.shape)) or 'scalar'}>")
            self.roots[id(t)] = Root(t, kind, name)
        return frozenset({id(t)})

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        name = str(getattr(func, "__name__", ""))
        tensors = [a for a in _tensors((args, kwargs))]
        with torch._C.DisableTorchFunction():
            origins = [self._origin(t) for t in tensors]
        if name in _READS and origins and origins[0] is not None:
            for root in origins[0]:
                self.roots[root].read_out = True
            return out
        derived: frozenset[int] | None = frozenset()
        if name in _RANDOM or any(o is None for o in origins):
            derived = None
        else:
            derived = frozenset().union(*[o for o in origins if o is not None])
        for t in _tensors(out):
            self.derived[id(t)] = derived
            self.keep.append(t)
        return out


def _tensors(value: Any) -> Iterator[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _tensors(v)
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _tensors(v)


def constant_roots(model: nn.Module, run: Callable[[], Any], inputs: Any) -> list[Root]:
    """The constant roots one forward (``run``) reads, in the order it first reads them."""
    learned = {id(p) for p in model.parameters()}
    buffers: dict[int, str] = {}
    for address, module in model.named_modules():
        for name, b in module._buffers.items():
            if b is None:
                continue
            if name in module._non_persistent_buffers_set:
                buffers.setdefault(id(b), f"{address}.{name}" if address else name)
            else:
                learned.add(id(b))  # persistent state: kept out, like the weights
    probe = _Probe(learned, buffers)
    for t in _tensors(inputs):
        probe.derived[id(t)] = None
    with torch.no_grad(), probe:
        run()
    return list(probe.roots.values())


@contextmanager
def rewritten(root: Root) -> Iterator[str]:
    """``root``'s values rewritten in place for the block (then put back); yields what
    was done."""
    t = root.tensor
    saved = t.detach().clone()
    with torch.no_grad():
        if t.dtype == torch.bool:
            t.logical_not_()
            what = "inverted"
        elif t.is_floating_point():
            t.mul_(1.5).add_(0.01)
            what = "x1.5 + 0.01"
        else:
            t.add_(1)
            what = "+1"
    try:
        yield f"{root.kind} {root.name} {'x'.join(map(str, t.shape)) or 'scalar'} {what}"
    finally:
        with torch.no_grad():
            t.copy_(saved)


def rewrites(kind: str, roots: list[Root]) -> list[Root]:
    """The roots a mutation of ``kind`` may rewrite, in the order they were read."""
    if kind == "item":
        return [r for r in roots if r.read_out]
    return [r for r in roots if r.kind == kind]


def clear_caches(model: nn.Module) -> int:
    """Clear every ``functools`` cache held by the classes of ``model``'s modules (their
    methods) and by the Python modules defining them; how many were cleared."""
    cleared = 0
    seen: set[int] = set()
    owners: list[Any] = []
    for module in model.modules():
        for klass in type(module).__mro__:
            owners.append(vars(klass))
            python_module = sys.modules.get(klass.__module__)
            if python_module is not None:
                owners.append(vars(python_module))
    for namespace in owners:
        if id(namespace) in seen:
            continue
        seen.add(id(namespace))
        for value in list(namespace.values()):
            target = getattr(value, "__func__", value)
            clear = getattr(target, "cache_clear", None)
            if callable(clear):
                clear()
                cleared += 1
    return cleared
