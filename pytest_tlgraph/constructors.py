"""What a module call's constructor args are, as plain data: the ``ModuleArgs`` mapping
capture records and drawing reads, and the defaults it carries.

Capture reads a module's args by the names of its torch.nn class's constructor
parameters and records that class's defaults beside them
(:mod:`pytest_tlgraph.capture.signatures`); drawing hides the args at their default
(:mod:`pytest_tlgraph.draw.salient`) from the recorded defaults alone, so a drawing
depends on the frozen trace, never on the installed torch. Nothing here imports torch.
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterator, KeysView, Mapping, ValuesView
from typing import Any, Final

__all__ = ["REQUIRED", "Defaults", "ModuleArgs", "Unreadable"]


class _Required:
    """The default of a constructor parameter that has none (one object, kept by
    pickling: it unpickles as :data:`REQUIRED` itself)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "REQUIRED"

    def __reduce__(self) -> str:
        return "REQUIRED"


#: The default of a constructor parameter that has none.
REQUIRED: Final = _Required()


class Unreadable:
    """A default that is not plain data (an object of some class, a list): recorded by
    its text, and equal to no recorded value, so an arg beside it is always shown."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"Unreadable({self.text!r})"


class _ReadOnly(Mapping[str, Any]):
    """A read-only ``str``-keyed mapping over a private copy of its values."""

    __slots__ = ("_values",)

    def __init__(self, values: Mapping[str, Any]) -> None:
        self._values = dict(values)

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __contains__(self, key: object) -> bool:
        return key in self._values


class Defaults(_ReadOnly):
    """``arg -> default`` of one torch.nn class, in signature order, as capture recorded
    it: plain values (bools, numbers, strings, ``None``, tuples of those), a function by
    its name (``activation=relu``), :data:`REQUIRED` for an arg without one and
    :class:`Unreadable` for anything else. Read only and hashable (its hash is worked
    out once), so a drawing can key what it writes by it."""

    __slots__ = ("_hash",)

    def __init__(self, values: Mapping[str, Any]) -> None:
        super().__init__(values)
        self._hash: int | None = None

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Defaults):
            return self is other or self._values == other._values
        return NotImplemented

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(tuple((k, _hashable(v)) for k, v in self._values.items()))
        return self._hash

    def __repr__(self) -> str:
        return f"Defaults({self._values!r})"


def _hashable(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        return id(value)
    return value


class ModuleArgs(_ReadOnly):
    """A module call's constructor args (read only, in signature order), with the name
    of the torch.nn class whose signature named them (``torch_class``): ``LayerNorm``
    for a ``LayerNorm2d`` subclass, whose own name torch does not know; and that class's
    constructor ``defaults`` as capture recorded them (``None`` when unknown)."""

    __slots__ = ("_defaults", "_torch_class")

    def __init__(
        self,
        values: Mapping[str, Any],
        torch_class: str | None = None,
        defaults: Defaults | None = None,
    ) -> None:
        super().__init__(values)
        self._torch_class = torch_class
        self._defaults = defaults

    @property
    def torch_class(self) -> str | None:
        """The torch.nn class the args were read against, ``None`` when unknown."""
        return self._torch_class

    @property
    def defaults(self) -> Defaults | None:
        """The constructor defaults of :attr:`torch_class`, ``None`` when unknown."""
        return self._defaults

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
