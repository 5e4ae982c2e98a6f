"""Every argument of a recorded call, named and written canonically.

The recorder keeps, per op, a *skeleton* of the call (:func:`skeleton`): the arguments
as they were passed, each tensor replaced by a :class:`TensorRef` to its place among
the call's tensors, so a trace holds no activation. At assembly :func:`call_args`
names each argument by the op's own signature, drops the arguments equal to their
declared default (the value is compared, never assumed), and writes the rest as
:class:`~pytest_tlgraph.trace.CallArg` values: plain data the drawing reads without
torch.

Where the names come from, in order (looked up once per function and argument types):

1. a function written in Python (``torch.nn.functional.layer_norm``): its own
   ``inspect.signature``;
2. the ATen schemas of the op's name (``aten::softmax``), overloads filtered by the
   types of the values passed (as torch's argument parser does); a name or default is
   taken only where every overload left agrees;
3. the signature torch documents for the function in ``torch.overrides`` (used for
   names only, never for defaults, which it does not always state exactly);
4. nothing: the argument is named by its position (``arg1``) and never dropped.

Values are written the same on every machine and in every process: floats in their
shortest round-trip form, dtypes and memory formats without ``torch.``, slices as
``1:4``, a device equal to the capture's own device left out (a model captured on
another device draws the same), any other object by its type name alone.
"""

from __future__ import annotations

import functools
import inspect
import math
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields, is_dataclass
from typing import Any, Final

import torch

from pytest_tlgraph.capture.numbers import by_value, scalar_args
from pytest_tlgraph.capture.quantized import packed_scheme
from pytest_tlgraph.capture.reads import ReadArg, ReadRef
from pytest_tlgraph.memo import remember
from pytest_tlgraph.trace import CallArg

__all__ = [
    "RAW_DEFAULT",
    "CallSkeleton",
    "Opaque",
    "TensorRef",
    "call_args",
    "ref",
    "skeleton",
    "tensor_names",
]


class TensorRef:
    """A tensor's place among one call's tensors (in the order the recorder met them).

    One instance per place (:func:`ref`), so refs compare and hash by identity, in C."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index

    def __repr__(self) -> str:
        return f"TensorRef({self.index})"


class Opaque:
    """An argument that is neither a tensor nor a plain value: kept by its type name
    only (never by a text that depends on where it lives in memory)."""

    __slots__ = ("type_name",)

    def __init__(self, value: object) -> None:
        self.type_name = type(value).__name__

    def __eq__(self, other: object) -> bool:
        return type(other) is Opaque and other.type_name == self.type_name

    def __hash__(self) -> int:
        return hash(("Opaque", self.type_name))


_REFS: dict[int, TensorRef] = {}

#: ``(func, positional skeletons, keyword skeletons or None, sources)``; a source is a
#: producing op's index (int), a parameter or buffer name (str) or, for a tensor made
#: before the capture, its shape (tuple).
CallSkeleton = tuple[Callable[..., Any], tuple[Any, ...], tuple[tuple[str, Any], ...] | None,
                     tuple[Any, ...]]  # fmt: skip

_PLAIN_TYPES: Final = frozenset(
    {int, float, bool, str, type(None), complex, torch.dtype, torch.device,
     torch.memory_format, torch.layout, types.EllipsisType}
)  # fmt: skip

#: Sentinel of :func:`call_args` for "no default declared".
RAW_DEFAULT: Final = inspect.Parameter.empty


def ref(index: int) -> TensorRef:
    """The one :class:`TensorRef` of ``index``."""
    found = _REFS.get(index)
    if found is None:
        found = _REFS[index] = TensorRef(index)
    return found


def skeleton(value: Any, tensors: list[torch.Tensor]) -> Any:
    """``value`` with every tensor inside replaced by its :class:`TensorRef` (appended to
    ``tensors`` in order); containers become tuples (lists stay lists), anything not
    plain an :class:`Opaque`. Walks what the recorder's fast path did not."""
    if isinstance(value, torch.Tensor):
        tensors.append(value)
        return ref(len(tensors) - 1)
    kind = type(value)
    if kind in _PLAIN_TYPES:
        return value
    if kind is ReadArg:  # a number read out of a tensor: a reference to the read
        return value.skeleton(tensors, ref)
    if kind is slice:
        return slice(
            skeleton(value.start, tensors), skeleton(value.stop, tensors),
            skeleton(value.step, tensors),
        )  # fmt: skip
    if isinstance(value, list):
        return [skeleton(v, tensors) for v in value]
    if isinstance(value, tuple):  # torch.Size, named tuples: their values
        return tuple(skeleton(v, tensors) for v in value)
    if isinstance(value, dict):
        return {str(k): skeleton(v, tensors) for k, v in value.items()}
    if isinstance(value, (bool, int, float, str)):  # subclasses: the plain value
        for base in (bool, int, float, str):
            if isinstance(value, base):
                return base(value)
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: skeleton(getattr(value, f.name), tensors) for f in fields(value)}
    if hasattr(value, "item") and type(value).__module__ == "numpy":
        return skeleton(value.item(), tensors)
    scheme = packed_scheme(value)  # a quantized op's packed weight: its scheme
    return Opaque(value) if scheme is None else scheme


# -- naming: the signature of each function ---------------------------------------------


class _Param:
    __slots__ = ("default", "kind", "name", "types")

    def __init__(self, name: str, kind: str, default: Any, types_: tuple[str, ...]) -> None:
        self.name = name
        #: "pos" (positional or keyword), "kw" (keyword only), "var" (*args)
        self.kind = kind
        self.default = default
        self.types = types_


@functools.cache
def _schemas(name: str) -> list[list[_Param]]:
    """Each non-``out`` ATen overload of ``name`` as its parameter list."""
    try:
        found = torch._C._jit_get_schemas_for_operator(f"aten::{name}")
    except RuntimeError:
        return []
    out = []
    for schema in found:
        if any(a.name == "out" or a.is_out for a in schema.arguments):
            continue
        params = []
        for a in schema.arguments:
            default = a.default_value if a.has_default_value() else RAW_DEFAULT
            params.append(_Param(a.name, "kw" if a.kwarg_only else "pos", default, (str(a.type),)))
        out.append(params)
    return out


@functools.lru_cache(maxsize=4096)
def _python_params(func: Callable[..., Any], use_defaults: bool) -> list[_Param] | None:
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        return None
    params = []
    for p in signature.parameters.values():
        if p.kind is p.VAR_KEYWORD:
            continue
        if p.kind is p.VAR_POSITIONAL:
            params.append(_Param(p.name, "var", RAW_DEFAULT, ()))
            continue
        kind = "kw" if p.kind is p.KEYWORD_ONLY else "pos"
        default = p.default if use_defaults else RAW_DEFAULT
        params.append(_Param(p.name, kind, default, ()))
    return params


@functools.cache
def _overrides() -> Mapping[Any, Callable[..., Any]]:
    from torch.overrides import get_testing_overrides

    return get_testing_overrides()


def _accepts(type_text: str, value: Any) -> bool:
    """Whether an ATen argument of type ``type_text`` takes ``value`` (a skeleton)."""
    optional = type_text.startswith("Optional[")
    if optional:
        if value is None:
            return True
        type_text = type_text[9:-1]
    kind = type(value)
    if kind is TensorRef:
        return type_text == "Tensor"
    if kind is ReadRef:  # a read number binds like the number it was
        kind = value.value_type
    if type_text.startswith("List["):
        inner = type_text[5:-1]
        if kind in (list, tuple):
            return all(_accepts(inner, v) for v in value)
        # One int stands for a list of ints (``dim=1`` for ``int[1] dim``).
        return inner in ("int", "SymInt") and kind is int
    if kind is bool:
        return type_text in ("bool", "number", "Scalar")
    if kind is int:
        return type_text in ("int", "SymInt", "float", "number", "Scalar", "bool")
    if kind is float:
        return type_text in ("float", "number", "Scalar")
    if kind is complex:
        return type_text in ("complex", "number", "Scalar")
    if kind is str:
        return type_text in ("str", "Device")
    if kind is torch.device:
        return type_text == "Device"
    if kind in (torch.dtype, torch.memory_format, torch.layout):
        return type_text == "int"  # ATen writes ScalarType, MemoryFormat, Layout so
    if value is None:
        return False
    return type_text in ("t", "Any")


def _fits(params: Sequence[_Param], args: tuple[Any, ...], kw: Mapping[str, Any]) -> bool:
    positional = [p for p in params if p.kind == "pos"]
    if len(args) > len(positional):
        last = positional[-1] if positional else None
        # A list argument given as several values (``x.view(1, 4, 8)``).
        if last is None or not last.types[0].startswith("List[") or len(args) < len(positional):
            return False
        packed = (*args[: len(positional) - 1], tuple(args[len(positional) - 1 :]))
        args = packed
    by_name = {p.name: p for p in params}
    for p, value in zip(positional, args, strict=False):
        if not _accepts(p.types[0], value) or p.name in kw:
            return False
    for name, value in kw.items():
        found = by_name.get(name)
        if found is None or not _accepts(found.types[0], value):
            return False
    given = {p.name for p in positional[: len(args)]} | set(kw)
    return all(p.default is not RAW_DEFAULT or p.name in given for p in params)


_AGREE_FAILED: Final = object()


def _agreed(values: Sequence[Any]) -> Any:
    first = values[0]
    for v in values[1:]:
        if type(v) is not type(first) or v != first:
            return _AGREE_FAILED
    return first


def _bind(
    params: list[_Param], args: tuple[Any, ...], kw: Mapping[str, Any]
) -> list[tuple[str, Any, Any]]:
    """``(name, value, default)`` of each argument given, bound to ``params`` (a list
    parameter takes the trailing values packed)."""
    out: list[tuple[str, Any, Any]] = []
    positional = [p for p in params if p.kind in ("pos", "var")]
    for i, value in enumerate(args):
        if i < len(positional):
            p = positional[i]
            if p.kind == "var":
                out.append((p.name, tuple(args[i:]), RAW_DEFAULT))
                break
            last = i == len(positional) - 1 and len(args) > len(positional)
            if last:
                out.append((p.name, tuple(args[i:]), p.default))
                break
            out.append((p.name, value, p.default))
        else:
            out.append((f"arg{i}", value, RAW_DEFAULT))
    by_name = {p.name: p for p in params}
    for name, value in kw.items():
        found = by_name.get(name)
        out.append((name, value, RAW_DEFAULT if found is None else found.default))
    return out


def _python_params_of(func: Callable[..., Any], use_defaults: bool) -> list[_Param] | None:
    try:
        return _python_params(func, use_defaults)
    except TypeError:  # an unhashable callable: read every time
        return _python_params.__wrapped__(func, use_defaults)


def _named(
    func: Callable[..., Any], name: str, args: tuple[Any, ...], kw: Mapping[str, Any]
) -> list[tuple[str, Any, Any]]:
    """The call's arguments, each with its name and declared default."""
    if isinstance(func, types.FunctionType):
        params = _python_params_of(func, use_defaults=True)
        if params is not None and not all(p.kind == "var" for p in params):
            try:
                return _bind(params, args, kw)
            except (IndexError, TypeError):
                pass
    overloads = [o for o in _schemas(name) if _fits(o, args, kw)]
    if overloads:
        bound = [_bind(o, args, kw) for o in overloads]
        if len({len(b) for b in bound}) == 1:
            out = []
            for i, entries in enumerate(zip(*bound, strict=True)):
                names = {e[0] for e in entries}
                if len(names) == 1:
                    arg_name = entries[0][0]
                    default = _agreed([e[2] for e in entries])
                    if default is _AGREE_FAILED:
                        default = RAW_DEFAULT
                else:  # the overloads name this place differently: by position
                    arg_name, default = f"arg{i}", RAW_DEFAULT
                out.append((arg_name, entries[0][1], default))
            return out
    params = _python_params_of(_overrides().get(func, func), use_defaults=True)
    if params is not None:
        try:
            documented = _bind(params, args, kw)
        except (IndexError, TypeError):
            pass
        else:
            # The documented signature's defaults count only where ATen declares the
            # same one (``padding=0`` is ``int[2] padding=0``); elsewhere none is known.
            declared = _aten_defaults(name)
            return [
                (n, v, d if n in declared and _is_default(d, declared[n]) else RAW_DEFAULT)
                for n, v, d in documented
            ]
    out = [(f"arg{i}", v, RAW_DEFAULT) for i, v in enumerate(args)]
    return out + [(k, v, RAW_DEFAULT) for k, v in kw.items()]


@functools.cache
def _aten_defaults(name: str) -> dict[str, Any]:
    """Each argument name of the ATen overloads of ``name`` with the one default they
    all declare for it (names whose overloads disagree, or declare none, are left out)."""
    found: dict[str, list[Any]] = {}
    for overload in _schemas(name):
        for p in overload:
            found.setdefault(p.name, []).append(p.default)
    out = {}
    for arg, defaults in found.items():
        agreed = _agreed(defaults)
        if agreed is not _AGREE_FAILED and agreed is not RAW_DEFAULT:
            out[arg] = agreed
    return out


def _is_default(value: Any, default: Any) -> bool:
    """Whether ``value`` is the declared ``default``: the same type and equal (``1`` is
    not ``1.0`` nor ``True``; ``0.0`` is not ``-0.0``)."""
    if default is RAW_DEFAULT:
        return False
    if type(default) in (list, tuple) and type(value) in (int, tuple, list):
        # An ATen list default (``int[2] stride=1`` reads ``[1]``) stands for its value
        # in every place: ``1`` and ``(1, 1)`` are it, ``(1, 2)`` is not.
        if not default or not all(type(d) is int for d in default):
            return False
        values = value if type(value) in (tuple, list) else (value,)
        if not all(type(v) is int for v in values):
            return False
        if len(set(default)) == 1:  # one value in every place: any count of it
            return all(v == default[0] for v in values)
        return tuple(values) == tuple(default)
    if type(value) is not type(default):
        return False
    if type(value) is float:
        return value == default and math.copysign(1, value) == math.copysign(1, default)
    try:
        return bool(value == default)
    except Exception:
        return False


# -- writing -----------------------------------------------------------------------------


def _float_text(value: float) -> str:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(value)


class _Writer:
    """Writes skeleton values as text, tensors named by where they come from."""

    __slots__ = ("device", "names")

    def __init__(self, names: Sequence[str], device: torch.device | None) -> None:
        self.names = names
        self.device = device

    def text(self, value: Any) -> str:
        kind = type(value)
        if kind is bool or kind is int or value is None:
            return str(value)
        if kind is float:
            return _float_text(value)
        if kind is str:
            return str(value)
        if kind is TensorRef:
            return str(self.names[value.index])
        if kind is ReadRef:
            read: str = value.text(self.text(value.ref))
            return read
        if isinstance(value, tuple):  # torch.Size too
            inner = ", ".join(self.text(v) for v in value)
            return f"({inner},)" if len(value) == 1 else f"({inner})"
        if kind is list:
            return "[" + ", ".join(self.text(v) for v in value) + "]"
        if kind is slice:
            parts = ["" if v is None else self.text(v) for v in (value.start, value.stop)]
            text = ":".join(parts)
            return text if value.step is None else f"{text}:{self.text(value.step)}"
        if kind is types.EllipsisType:
            return "..."
        if kind in (torch.dtype, torch.memory_format, torch.layout, torch.device):
            return str(value).removeprefix("torch.")
        if kind is dict:
            return "{" + ", ".join(f"{k}: {self.text(v)}" for k, v in sorted(value.items())) + "}"
        if kind is complex:
            return repr(value)
        if kind is Opaque:
            return f"<{value.type_name}>"
        return f"<{kind.__name__}>"

    def plain(self, value: Any) -> Any:
        """The value as plain data (tensors as their names): what checks compare."""
        kind = type(value)
        if kind is TensorRef:
            return self.names[value.index]
        if isinstance(value, (tuple, list)):
            return tuple(self.plain(v) for v in value)
        if kind in (int, float, bool, str) or value is None:
            return value
        return self.text(value)


def _operand(value: Any) -> bool:
    """Whether ``value`` holds tensors only (one, or a list or tuple of them)."""
    if type(value) is TensorRef:
        return True
    if type(value) in (list, tuple) and value:
        return all(type(v) is TensorRef for v in value)
    return False


def _home_device(value: Any, device: torch.device | None) -> bool:
    """A device (or device string) equal to the capture's own device."""
    if device is None:
        return False
    if type(value) is torch.device:
        return value == device
    if type(value) is str:
        try:
            return torch.device(value) == device
        except (RuntimeError, TypeError):
            return False
    return False


def tensor_names(sources: Sequence[Any], parents: Sequence[int], module: str) -> list[str]:
    """Each tensor's name in the written call: ``in2`` for the op's second parent (as
    its in-edges number them), ``param weight`` for a parameter or buffer (named below
    the op's module), ``const 1x8`` for a tensor made before the capture."""
    # A handful of parents is the usual call: looked up in place, without a dict.
    ordinal = _ordinal if len(parents) <= _FEW else _ordinals(parents)
    prefix = None
    out = []
    for source in sources:
        kind = type(source)
        if kind is int:
            found = ordinal(parents, source)
            out.append("in?" if found is None else _IN[found] if found < _FEW else f"in{found}")
        elif kind is str:
            if prefix is None:
                prefix = f"{module}." if module else ""
            out.append(f"param {source.removeprefix(prefix)}")
        elif source and source[0] == "slot":
            found = ordinal(parents, source[1])
            out.append(f"in{'?' if found is None else found}[{source[2]}]")
        else:
            shape = "x".join(map(str, source)) if source else "scalar"
            out.append(f"const {shape}")
    return out


#: Parents up to this many are looked up by a scan; ``in1`` .. ``in7`` written once.
_FEW: Final = 8
_IN: Final = tuple(f"in{i}" for i in range(_FEW))


def _ordinal(parents: Sequence[int], source: int) -> int | None:
    """``source``'s place among ``parents``, from 1, or ``None``."""
    for place, parent in enumerate(parents, start=1):
        if parent == source:
            return place
    return None


def _ordinals(parents: Sequence[int]) -> Callable[[Sequence[int], int], int | None]:
    """:func:`_ordinal` for many parents: one dict, built once per call."""
    table = {p: i for i, p in enumerate(parents, start=1)}
    return lambda _, source: table.get(source)


def call_args(
    call: CallSkeleton, parents: Sequence[int], module: str, device: torch.device | None
) -> tuple[CallArg, ...]:
    """The written arguments of one recorded call, in signature order, those equal to
    their declared default left out (see the module docstring)."""
    func, args, kw, sources = call
    names = tensor_names(sources, parents, module)
    key = _memo_key(func, args, kw, device, names)
    if key is not None:
        found = _written.get(key)
        if found is not None:
            return found
    out = _call_args(func, args, kw, names, device)
    if key is not None:
        remember(_written, key, out, _WRITTEN_LIMIT)
    return out


# Calls repeat (a block's calls in every block, a model drawn again): each distinct call
# is named and written once.
_written: dict[Any, tuple[CallArg, ...]] = {}
_WRITTEN_LIMIT: Final = 8192


def _type_key(values: Sequence[Any]) -> tuple[Any, ...] | None:
    """The types of ``values`` (one level into tuples), for a memo key: equal values of
    different types (``1``, ``1.0``, ``True``) read differently. ``None`` for values a
    key cannot tell apart safely (containers deeper than one level, ``0.0`` which equals
    ``-0.0``, unhashable ones)."""
    out: list[Any] = []
    for v in values:
        kind = type(v)
        if kind is tuple:
            inner = tuple(map(type, v))
            if tuple in inner or list in inner or (float in inner and 0.0 in v):
                return None
            out.append(inner)
        elif kind is list or kind is dict or kind is slice or (kind is float and v == 0.0):
            return None
        else:
            out.append(kind)
    return tuple(out)


def _memo_key(
    func: Any, args: tuple[Any, ...], kw: Any, device: Any, names: Sequence[str]
) -> tuple[Any, ...] | None:
    if not kw:
        for a in args:
            if type(a) is not TensorRef:
                break
        else:  # tensors alone (``linear(x)``, ``relu(x)``): their places say it all
            return (func, args, device, tuple(names))
    types_ = _type_key(args)
    if types_ is None:
        return None
    kw_types: tuple[Any, ...] | None = ()
    if kw:
        kw_types = _type_key([v for _, v in kw])
        if kw_types is None:
            return None
    key = (func, args, kw, device, types_, kw_types, tuple(names))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _call_args(
    func: Callable[..., Any],
    args: tuple[Any, ...],
    kw: tuple[tuple[str, Any], ...] | None,
    names: Sequence[str],
    device: torch.device | None,
) -> tuple[CallArg, ...]:
    name = getattr(func, "__name__", "") or ""
    writer = _Writer(names, device)
    if name.startswith("__r") and name[3:-2] in _REFLECTED and len(args) == 2 and not kw:
        # ``1 - x`` is ``Tensor.__rsub__(x, 1)``: written as the call it computes,
        # ``sub(self=1, other=x)``.
        named = [("self", args[1], RAW_DEFAULT), ("other", args[0], RAW_DEFAULT)]
        name = name[3:-2]
    else:
        if name.startswith("__") and name.endswith("__"):
            name = name[2:-2]
            if name.startswith("i") and name[1:] in _REFLECTED:
                name = name[1:] + "_"
        named = _named(func, name, args, dict(kw or ()))
    out = []
    scalars = scalar_args(name)
    for arg_name, value, default in named:
        if arg_name in scalars and type(value) in (bool, int, float):
            value = by_value(value)  # ``x + True``, ``x + 1``, ``x + 1.0``: one value
            if isinstance(default, (bool, int, float)):
                default = by_value(default)
        if _is_default(value, default):
            continue
        if arg_name == "device" and _home_device(value, device):
            continue
        operand = _operand(value)
        if operand and type(value) is tuple:
            # ``cat((a, b))`` is ``cat([a, b])``: a sequence of tensors is written as one.
            value = list(value)
        out.append(CallArg(arg_name, writer.text(value), operand, writer.plain(value)))
    return tuple(out)


_REFLECTED: Final = frozenset(
    {"add", "sub", "mul", "truediv", "div", "floordiv", "mod", "pow", "matmul", "and",
     "or", "xor", "lshift", "rshift"}
)  # fmt: skip
