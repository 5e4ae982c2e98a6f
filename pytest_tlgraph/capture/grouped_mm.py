"""A FLOP formula for ``torch._grouped_mm`` (mixture-of-experts), which torch's counter
does not list: registered with ``torch.utils.flop_counter.register_flop_formula``, so
torch's own ``FlopCounterMode`` counts it too once this package is imported.

``_grouped_mm(a, b, offs)`` multiplies groups of rows (or columns) of ``a`` and ``b``:
each group is an ordinary matrix product, ``2 * m * k * n`` FLOPs, and the groups
partition the grouped axis, so the total is the product over the whole axis. With
``offs`` ending before the grouped axis does, the rows past its end are counted too
(the formula sees shapes only).
"""

from __future__ import annotations

from typing import Any

import torch
from torch.utils.flop_counter import flop_registry, register_flop_formula

__all__ = ["grouped_mm_flop"]


def grouped_mm_flop(a_shape: Any, b_shape: Any, *args: Any, **kwargs: Any) -> int:
    """FLOPs of ``_grouped_mm`` on operands of shapes ``a_shape`` and ``b_shape``."""
    a: tuple[int, ...] = tuple(int(d) for d in a_shape)
    b: tuple[int, ...] = tuple(int(d) for d in b_shape)
    if len(a) == 2 and len(b) == 3:  # rows of a grouped, one (k, n) matrix per group
        return 2 * a[0] * a[1] * b[2]
    if len(a) == 3 and len(b) == 2:  # columns of b grouped, one (m, k) matrix per group
        return 2 * a[1] * a[2] * b[1]
    if len(a) == 3 and len(b) == 3:  # a batch of products
        return 2 * a[0] * a[1] * a[2] * b[2]
    if len(a) == 2 and len(b) == 2:  # the shared k axis grouped: one (m, n) per group
        return 2 * a[0] * a[1] * b[1]
    raise ValueError(f"_grouped_mm on shapes {a} and {b}")


_target = getattr(torch.ops.aten, "_grouped_mm", None)
if _target is not None and _target not in flop_registry:
    register_flop_formula(_target)(grouped_mm_flop)
