"""Constructor signatures of torch.nn classes: which args a module records, and their
defaults.

Capture reads a module's args by the names of its torch.nn class's constructor
parameters (:func:`constructor_params`); drawing hides the ones at their default
(:mod:`pytest_tlgraph.draw.salient`). Both read the same signature, so what an args row
can show and what it leaves out agree.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import ItemsView, Iterator, KeysView, Mapping, ValuesView
from typing import Any, Final

__all__ = ["REQUIRED", "ModuleArgs", "constructor_params", "torch_class"]

#: The default of a constructor parameter that has none.
REQUIRED: Final = object()

#: Factory keyword arguments: where the tensors live, not what the layer is.
_FACTORY: Final = frozenset({"device", "dtype"})


class ModuleArgs(Mapping[str, Any]):
    """A module call's constructor args (read only, in signature order), with the name
    of the torch.nn class whose signature named them (``torch_class``): ``LayerNorm``
    for a ``LayerNorm2d`` subclass, whose own name torch does not know."""

    __slots__ = ("_torch_class", "_values")

    def __init__(self, values: Mapping[str, Any], torch_class: str | None = None) -> None:
        self._values = dict(values)
        self._torch_class = torch_class

    @property
    def torch_class(self) -> str | None:
        """The torch.nn class the args were read against, ``None`` when unknown."""
        return self._torch_class

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __contains__(self, key: object) -> bool:
        return key in self._values

    def keys(self) -> KeysView[str]:
        """The arg names, in signature order."""
        return self._values.keys()

    def items(self) -> ItemsView[str, Any]:
        """``(name, value)`` pairs, in signature order."""
        return self._values.items()

    def values(self) -> ValuesView[Any]:
        """The values, in signature order."""
        return self._values.values()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ModuleArgs):
            return self._values == other._values
        if isinstance(other, Mapping):
            return self._values == dict(other.items())
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ModuleArgs({self._values!r}, torch_class={self._torch_class!r})"


def torch_class(cls: type) -> type | None:
    """The first class along ``cls``'s MRO that torch.nn defines and exports under its
    own name (``Linear`` for torch's ``NonDynamicallyQuantizableLinear`` and for a user's
    ``Linear`` subclass), never ``nn.Module`` itself; ``None`` for a plain user module."""
    import torch.nn

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
    import torch.nn

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
