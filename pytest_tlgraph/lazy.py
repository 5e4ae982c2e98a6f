"""A read-only mapping built on first use: ``Trace.layers`` and a plain drawing's
``Drawing.nodes`` cost nothing until read.

An unrolled draw never looks at layers, and ``draw().dot`` never looks at the node
records; building either is a sizeable share of the work. Whoever reads them (the
rolled view, the collapse plan, the snapshot report, user code) reads them
transparently.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType
from typing import TypeVar

__all__ = ["LazyMapping"]

K = TypeVar("K")
V = TypeVar("V")


class LazyMapping(Mapping[K, V]):
    """A ``Mapping`` whose items come from ``build()``, called once, on first access."""

    __slots__ = ("_build", "_items")

    def __init__(self, build: Callable[[], dict[K, V]]) -> None:
        self._build: Callable[[], dict[K, V]] | None = build
        self._items: Mapping[K, V] | None = None

    def _get(self) -> Mapping[K, V]:
        items = self._items
        if items is None:
            assert self._build is not None
            items = self._items = MappingProxyType(self._build())
            self._build = None  # drop what the build needed
        return items

    def __getitem__(self, key: K) -> V:
        return self._get()[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())

    def __contains__(self, key: object) -> bool:
        return key in self._get()

    def __repr__(self) -> str:
        return repr(dict(self._get()))

    # What a mapping proxy offers beyond ``Mapping``, so that one wrapped around this
    # mapping reads like one wrapped around a dict.
    def copy(self) -> dict[K, V]:
        """A plain ``dict`` of the items."""
        return dict(self._get())

    def __or__(self, other: Mapping[K, V]) -> dict[K, V]:
        return {**self._get(), **other}

    def __ror__(self, other: Mapping[K, V]) -> dict[K, V]:
        return {**other, **self._get()}

    def __reversed__(self) -> Iterator[K]:
        return reversed(list(self._get()))
