"""Constructor signatures of torch.nn classes, read once per class at capture: which
args a module records, and the defaults the trace keeps for drawing.

Capture reads a module's args by the names of its torch.nn class's constructor
parameters (:func:`constructor_params`) and records the class's defaults as plain data
(:func:`recorded_defaults`) on the call's :class:`~pytest_tlgraph.constructors.ModuleArgs`;
drawing hides the args at their default from that record alone. Both read the same
signature, so what an args row can show and what it leaves out agree.
"""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Mapping
from typing import Any, Final

import torch.nn

from pytest_tlgraph.constructors import REQUIRED, Defaults, Unreadable

__all__ = ["constructor_params", "recorded_defaults", "torch_class"]

#: Factory keyword arguments: where the tensors live, not what the layer is.
_FACTORY: Final = frozenset({"device", "dtype"})
_ATOMS: Final = frozenset({bool, int, float, str, type(None)})
_FUNCTIONS: Final = (types.FunctionType, types.BuiltinFunctionType)


def torch_class(cls: type) -> type | None:
    """The first class along ``cls``'s MRO that torch.nn defines and exports under its
    own name (``Linear`` for torch's ``NonDynamicallyQuantizableLinear`` and for a user's
    ``Linear`` subclass), never ``nn.Module`` itself; ``None`` for a plain user module."""
    for klass in cls.__mro__:
        if klass is torch.nn.Module:
            return None
        exported: object = getattr(torch.nn, klass.__name__, None)
        if exported is klass and klass.__module__.startswith("torch.nn."):
            return klass
    return None


@functools.cache
def constructor_params(type_name: str) -> Mapping[str, Any] | None:
    """``arg -> default`` (:data:`REQUIRED` for an arg with none) of the torch.nn class
    named ``type_name``, in signature order: the first ``__init__`` along its MRO with
    named parameters (``LSTM(*args, **kwargs)`` reads ``RNNBase``'s), without the
    factory arguments (``device``, ``dtype``) and private ones (``Embedding``'s
    ``_weight``). ``None`` when torch.nn has no such class or its signature cannot be
    read."""
    cls = getattr(torch.nn, type_name, None)
    if not isinstance(cls, type):
        return None
    for klass in cls.__mro__:
        init = vars(klass).get("__init__")
        if init is None:
            continue
        try:
            params = list(inspect.signature(init).parameters.values())[1:]
        except (TypeError, ValueError):
            return None
        named = [p for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        if named:
            return {
                p.name: REQUIRED if p.default is inspect.Parameter.empty else p.default
                for p in named
                if p.name not in _FACTORY and not p.name.startswith("_")
            }
    return None


def _recorded(default: Any) -> Any:
    """A default as plain data: atoms and flat tuples of atoms as they are, a function
    by its name (as capture records a function-valued arg), anything else
    :class:`Unreadable` (no recorded value equals it)."""
    if default is REQUIRED or type(default) in _ATOMS:
        return default
    if _plain_tuple(default):
        return default
    if isinstance(default, _FUNCTIONS):
        name: str = getattr(default, "__qualname__", None) or default.__name__
        return name
    return Unreadable(repr(default))


def _plain_tuple(value: Any) -> bool:
    """Whether ``value`` is a tuple of atoms and such tuples (compared as it is)."""
    return type(value) is tuple and all(
        type(item) in _ATOMS or _plain_tuple(item) for item in value
    )


@functools.cache
def recorded_defaults(type_name: str) -> Defaults | None:
    """The defaults of the torch.nn class ``type_name`` as the trace keeps them (one
    object per class, shared by every call of it); ``None`` when they cannot be read."""
    params = constructor_params(type_name)
    if params is None:
        return None
    return Defaults({name: _recorded(default) for name, default in params.items()})
