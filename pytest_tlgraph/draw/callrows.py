"""The rows and the attribute that a recorded call's own arguments give a node.

Every argument a call received that is not at its declared default is in the drawing
(capture recorded and named them: :class:`~pytest_tlgraph.trace.CallArg`):

* the **args row** (``dim=-1``, ``approximate=tanh``, ``idx=(:, 0)``) shows the ones
  that are not tensors, except those provably redundant with what the node shows
  already (checked, never assumed: a ``view`` size that is the output shape, a cast's
  dtype that the shape row names);
* a scalar operand of an arithmetic op reads as one **operand row**: ``· * 0.5``,
  ``· + 1e-06``, ``1 - ·``, ``· ** 2`` (``·`` is the tensor input);
* a **grad row** (``no_grad``, ``inference_mode``, ``enable_grad``) marks an op run
  under another grad mode than the forward around it;
* the ``tl_call`` attribute (``pytest_tlgraph.schema.CALL_ATTR``, which Graphviz
  never draws) holds the whole call as written (``tensors=[in1, in2], dim=1``),
  whenever it holds anything the rest of the drawing does not: a non-tensor
  argument, or tensor operands out of the order their in-edges are numbered in. A
  change of any value a call computes with therefore changes the DOT, whatever the
  label shows.

Drawing reads plain data only: nothing here imports torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from pytest_tlgraph.memo import remember
from pytest_tlgraph.trace import CallArg, Layer, Op, Trace

__all__ = [
    "GRAD_MODES",
    "OPERATORS",
    "call_text",
    "calls_of",
    "grad_row",
    "operand_row",
    "short_dtype",
    "visible_args",
]

#: The grad modes an op can be marked with, as the row names them.
GRAD_MODES: Final = ("no_grad", "inference_mode", "enable_grad")

#: The arithmetic ops whose scalar operand reads as an operator row.
OPERATORS: Final = {
    "add": "+", "sub": "-", "mul": "*", "div": "/", "true_divide": "/",
    "floor_divide": "//", "remainder": "%", "pow": "**", "eq": "==", "ne": "!=",
    "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
}  # fmt: skip
# Commutative ops: their in-edges carry no position.
_COMMUTATIVE: Final = frozenset(
    {"add", "add_", "mul", "mul_", "maximum", "minimum", "eq", "ne", "logical_and",
     "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "hypot",
     "and", "or", "xor"}
)  # fmt: skip
_OPERAND_NAMES: Final = ("self", "input", "other", "exponent")
_SIZED: Final = frozenset({"view", "reshape", "_unsafe_view"})
_EXPANDED: Final = frozenset({"expand", "broadcast_to"})
_SHORT_DTYPES: Final = {
    "float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64",
    "int64": "i64", "int32": "i32", "int16": "i16", "int8": "i8", "uint8": "u8",
    "bool": "bool", "complex64": "c64", "complex128": "c128", "complex32": "c32",
}  # fmt: skip


def short_dtype(name: str) -> str:
    """``bfloat16`` -> ``bf16``, ``int64`` -> ``i64``; other dtypes keep their name."""
    return _SHORT_DTYPES.get(name, name)


def _base(func: str) -> str:
    return func[:-1] if func.endswith("_") and not func.endswith("__") else func


def commutative(func: str) -> bool:
    """Whether ``func``'s tensor inputs are interchangeable (their edges carry no
    position)."""
    return func in _COMMUTATIVE


def calls_of(record: Op | Layer) -> tuple[tuple[CallArg, ...], ...]:
    """The call of each distinct pass of ``record``: one for an op or a layer whose
    passes agree, one per pass where they differ."""
    if isinstance(record, Layer) and record.call is None:
        per_pass: tuple[tuple[CallArg, ...], ...] = record.varying.get("call", ())
        return tuple(dict.fromkeys(per_pass))
    return (record.call or (),)


def _scalar_operand(func: str, call: Sequence[CallArg]) -> CallArg | None:
    """The one scalar operand of an arithmetic call (``other=0.5`` of ``mul``)."""
    if _base(func) not in OPERATORS:
        return None
    found = [a for a in call if a.name in _OPERAND_NAMES and not a.operand]
    if len(found) != 1 or not isinstance(found[0].value, (int, float, bool)):
        return None
    return found[0]


def operand_row(record: Op | Layer) -> str | None:
    """``· * 0.5`` (``1 - ·`` when the scalar comes first); ``None`` without one.
    Passes with different scalars read ``· * 0.5/0.25``."""
    if _base(record.func) not in OPERATORS:
        return None
    texts = []
    first = True
    for call in calls_of(record):
        scalar = _scalar_operand(record.func, call)
        if scalar is None:
            return None
        first = scalar.name in ("self", "input")
        texts.append(scalar.text)
    if not texts:
        return None
    symbol = OPERATORS[_base(record.func)]
    value = "/".join(texts)
    return f"{value} {symbol} ·" if first else f"· {symbol} {value}"


def _resolved(size: Any, shape: Sequence[int]) -> tuple[int, ...] | None:
    """A ``view``/``reshape`` size with its one ``-1`` worked out from ``shape``."""
    if not isinstance(size, tuple) or not all(type(d) is int for d in size):
        return None
    if len(size) == 1 and isinstance(size[0], tuple):
        size = size[0]
    if size.count(-1) > 1 or len(size) != len(shape):
        return None
    return tuple(shape[i] if d == -1 else d for i, d in enumerate(size))


def _redundant(arg: CallArg, record: Op | Layer, trace: Trace | None) -> bool:
    """Whether the node already shows what ``arg`` says (checked on its values)."""
    shape = record.shape
    func = _base(record.func)
    if arg.name in ("size", "shape") and shape is not None:
        if func in _SIZED:
            return _resolved(arg.value, shape) == tuple(shape)
        if func in _EXPANDED and isinstance(arg.value, tuple) and len(arg.value) == len(shape):
            return all(d == -1 or d == s for d, s in zip(arg.value, shape, strict=True))
    if arg.name == "dtype" and trace is not None and record.dtype is not None:
        # The shape row names every dtype but the default floating one.
        written = str(record.dtype).removeprefix("torch.")
        return arg.text == written and written != trace.default_dtype
    return False


def visible_args(record: Op | Layer, trace: Trace | None) -> str | None:
    """The args row of a call (``dim=-1, keepdim=True``): its non-tensor arguments
    that no other row shows; passes that differ read ``dim=1/2``. ``None`` when none is
    left."""
    if record.call is None:
        return _visible_args(record, trace)
    key = (
        record.func, record.call, record.shape, record.dtype,
        trace.default_dtype if trace is not None else None,
    )  # fmt: skip
    try:
        return _visible[key]
    except KeyError:
        return remember(_visible, key, _visible_args(record, trace), _MEMO_LIMIT)
    except TypeError:
        return _visible_args(record, trace)


def _visible_args(record: Op | Layer, trace: Trace | None) -> str | None:
    calls = calls_of(record)
    shown: dict[str, list[str]] = {}
    for call in calls:
        scalar = _scalar_operand(record.func, call)
        for arg in call:
            if arg.operand or arg is scalar or _redundant(arg, record, trace):
                continue
            texts = shown.setdefault(arg.name, [])
            if arg.text not in texts:
                texts.append(arg.text)
    if not shown:
        return None
    return ", ".join(f"{name}={'/'.join(texts)}" for name, texts in shown.items())


def grad_row(record: Op | Layer) -> str | None:
    """``no_grad`` (or ``inference_mode``, ``enable_grad``) for an op run under another
    grad mode than the forward around it."""
    if isinstance(record, Layer) and "grad_mode" in record.varying:
        modes = [m or "grad" for m in record.varying["grad_mode"]]
        return "/".join(dict.fromkeys(modes))
    return record.grad_mode


def _canonical_order(call: Sequence[CallArg], parents: int) -> bool:
    """Whether the call's tensor operands come as its in-edges number them (``in1``,
    ``in2``, ...) with every parameter after them: then the edges and the params row
    already say it all."""
    seen_param = False
    expected = 1
    for arg in call:
        if not arg.operand:
            continue
        names = arg.value if isinstance(arg.value, tuple) else (arg.value,)
        for name in names:
            if isinstance(name, str) and name.startswith("in") and "[" in name:
                return False  # one output of several: the edge cannot say which
            if isinstance(name, str) and name.startswith("in") and name[2:].isdigit():
                if seen_param or int(name[2:]) != expected:
                    return False
                expected += 1
            else:
                seen_param = True
    return True


_call_texts: dict[tuple[CallArg, ...], str | None] = {}
_visible: dict[tuple[Any, ...], str | None] = {}
_MEMO_LIMIT: Final = 8192


def call_text(record: Op | Layer) -> str | None:
    """The ``tl_call`` attribute of ``record``: its whole call (every pass's, `` | ``
    between passes that differ), or ``None`` when the rest of the drawing says it all."""
    call = record.call
    if call is None:  # passes that differ: written every time
        return _call_text(record)
    try:
        return _call_texts[call]
    except KeyError:
        return remember(_call_texts, call, _call_text(record), _MEMO_LIMIT)
    except TypeError:  # a value that does not hash
        return _call_text(record)


def _call_text(record: Op | Layer) -> str | None:
    calls = calls_of(record)
    needed = False
    for call in calls:
        if any(not a.operand for a in call) or not _canonical_order(call, len(record.parents)):
            needed = True
            break
    if not needed:
        return None
    return " | ".join(", ".join(f"{a.name}={a.text}" for a in call) for call in calls)


def edge_positions(record: Op | Layer) -> bool:
    """Whether ``record``'s in-edges are drawn with their position: its inputs are not
    interchangeable and it has more than one."""
    return len(record.parents) > 1 and not commutative(record.func)
