"""What one op node of an opened drawing says of its op, as values: shape, dtype,
params, grad mode and every argument it records (the drawn args row, the call's
``tl_call`` and the constructor defaults ``tl_defaults``).

These are read from the drawing's rows and attributes, which the drawing wrote in
fixed forms (``draw/labels.py``, ``draw/callrows.py``); no sentence of a story is
ever read here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from pytest_tlgraph.diff.args import split_args
from pytest_tlgraph.diff.graph import GraphNode
from pytest_tlgraph.draw.callrows import GRAD_MODES

__all__ = ["OpFacts", "op_facts"]

_ARG: Final = re.compile(r"[A-Za-z_]\w*=")
_SHAPE: Final = re.compile(r"\d+(?:x\d+)*|scalar|\?")
_SIZE: Final = re.compile(r"[\d.,]+ (?:B|KB|MB|GB|TB)")
#: A call argument that names a tensor input or a parameter, not a value.
_TENSOR: Final = re.compile(r"(?:in\d+|param |\(in\d|\[in\d)")
_SKIPPED: Final = ("saved for backward: ",)


@dataclass(frozen=True, slots=True)
class OpFacts:
    """One op as its node records it."""

    shape: str = ""
    dtype: str = ""
    params: str = ""
    grad: str = ""
    args: Mapping[str, str] = field(default_factory=dict)
    #: The names of ``args`` that are the call's own (``tl_call``): one missing on a
    #: side is at its default there, not merely left undrawn.
    called: frozenset[str] = frozenset()
    #: The names of ``args`` the drawing records at their constructor default only.
    defaults: frozenset[str] = frozenset()
    #: The call's own arguments (``tl_call``), apart: one left out is at its default.
    calls: Mapping[str, str] = field(default_factory=dict)
    #: The call's tensor arguments as it refers to its inputs (``(in1[0], in1[1])``).
    operands: Mapping[str, str] = field(default_factory=dict)


def _shape_row(text: str) -> tuple[str, str] | None:
    """``1x8, i64, 64 B`` -> ``("1x8", "i64")``; ``None`` for a row of another kind."""
    head, *rest = text.split(", ")
    if not _SHAPE.fullmatch(head):
        return None
    dtypes = [part for part in rest if not _SIZE.fullmatch(part)]
    return head, ", ".join(dtypes)


def _is_grad(text: str) -> bool:
    return text in GRAD_MODES or ("/" in text and set(text.split("/")) <= {*GRAD_MODES, "grad"})


def op_facts(node: GraphNode) -> OpFacts:
    """What ``node`` records of its op (see the module docstring)."""
    shape = dtype = params = grad = ""
    args: dict[str, str] = {}
    defaults: dict[str, str] = split_args(node.defaults) if node.defaults else {}
    args.update(defaults)
    for text in node.body:
        if text.startswith("@") or text.startswith(_SKIPPED) or text.startswith("· "):
            continue
        if text.startswith("params: "):
            params = text.removeprefix("params: ")
        elif _is_grad(text):
            grad = text
        elif _ARG.match(text):
            args.update(split_args(text))
        elif not shape and (found := _shape_row(text)) is not None:
            shape, dtype = found
    called: set[str] = set()
    calls: dict[str, str] = {}
    operands: dict[str, str] = {}
    for text in (node.call or "").split(" | "):
        for name, value in split_args(text).items():
            if name == "grad":
                grad = value
            elif _TENSOR.match(value):
                operands[name] = value
            else:
                args[name] = calls[name] = value
                called.add(name)
    at_default = frozenset(n for n, v in defaults.items() if args.get(n) == v and n not in called)
    return OpFacts(shape, dtype, params, grad, args, frozenset(called), at_default, calls, operands)
