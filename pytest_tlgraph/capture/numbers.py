"""A number passed where an op takes a ``Scalar`` is written by its value.

``x + True``, ``x + 1`` and ``x + 1.0`` on a float tensor compute the same thing; the
drawing writes all three ``· + 1`` (the output's dtype row shows any promotion, as
``i + 1.0`` on an integer tensor does). Only arguments ATen declares ``Scalar`` (or
``number``) are rewritten: a ``dim``, a size or a flag keeps its type.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import torch

__all__ = ["by_value", "scalar_args"]


@functools.cache
def scalar_args(name: str) -> frozenset[str]:
    """The argument names some ATen overload of ``name`` declares ``Scalar``."""
    try:
        schemas = torch._C._jit_get_schemas_for_operator(f"aten::{name}")
    except RuntimeError:
        return frozenset()
    found = set()
    for schema in schemas:
        for argument in schema.arguments:
            text = str(argument.type)
            if "Scalar" in text or "number" in text:
                found.add(argument.name)
    return frozenset(found)


def by_value(value: Any) -> Any:
    """``value`` as the number it is: a bool or an integral float as an int (``True``
    and ``1.0`` are ``1``), any other value unchanged (``-0.0`` too: its sign reaches
    the output)."""
    kind = type(value)
    if kind is bool:
        return int(value)
    if kind is float and math.isfinite(value) and value == int(value) and abs(value) < 2**53:
        return value if value == 0 and math.copysign(1, value) < 0 else int(value)
    return value
