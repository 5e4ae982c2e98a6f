"""How a story names a constant node (a ``const`` op: a tensor drawn by value).

``inv_freq (buffer, 4, f32): values [1, 0.1, 0.01, 0.001] -> [...]`` for a named buffer,
``const_2 (constant, 1x1x8x8): values #89f93384 -> #5b5752b7`` for a table computed
from constants alone: the name, what kind of constant it is, and its shape and dtype
as the node's shape row writes them, so the line says which values changed.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_tlgraph.diff.args import split_args

__all__ = ["const_title"]

_KINDS = ("buffer", "attribute")


def const_title(node_id: str, call: str | None, rows: Sequence[str]) -> str:
    """The story's name of the ``const`` node ``node_id`` (its ``tl_call`` text and
    rows): its buffer or attribute name, or its id, with kind, shape and dtype."""
    args = split_args(call or "")
    kind = next((k for k in _KINDS if k in args), None)
    name = args[kind] if kind is not None else node_id
    shape_row = rows[1] if len(rows) > 1 else ""
    # ``4, 16 B`` or ``289, i64, 2.26 KB``: the shape, the dtype when not the default.
    parts = [p for p in shape_row.split(", ")[:-1] if p]
    return f"{name} ({', '.join([kind or 'constant', *parts])})"
