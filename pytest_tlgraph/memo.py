"""Bounded memo tables: the one rule every memo table of the package follows."""

from __future__ import annotations

from typing import TypeVar

__all__ = ["remember"]

K = TypeVar("K")
V = TypeVar("V")


def remember(table: dict[K, V], key: K, value: V, limit: int) -> V:
    """Store ``value`` under ``key`` in ``table`` and return it. A table that already
    holds ``limit`` entries is emptied first: a memo stays bounded and refills by use."""
    if len(table) >= limit:
        table.clear()
    table[key] = value
    return value
