"""Constructor args of a module, read from the instance's attributes at capture time.

The names are the constructor parameters of the module's torch.nn class, read from its
signature (:func:`pytest_tlgraph.capture.signatures.constructor_params`), so every arg a
layer was built with is on the record (``padding_mode``, ``max_norm``, ``momentum``):
which ones a drawing shows is decided there. Reading attributes (not the arguments the
constructor once received) is deliberate: an attribute edited after construction so
that it no longer matches the captured shapes is exactly what the checked suppression
must reveal.
"""

from __future__ import annotations

import inspect
import re
import types
from collections.abc import Callable
from typing import Any, Final

import torch
from torch import nn

from pytest_tlgraph.capture.signatures import constructor_params, recorded_defaults, torch_class
from pytest_tlgraph.constructors import ModuleArgs

__all__ = ["ModuleArgs", "computes", "module_args"]

# The module families of the arg-suppression table; other torch.nn modules are
# ``"torch"``; user modules that derive from no torch.nn class have no args row.
_FAMILIES: Final[tuple[tuple[str, tuple[type[nn.Module], ...]], ...]] = (
    ("linear", (nn.Linear,)),
    ("conv", (nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.ConvTranspose1d, nn.ConvTranspose2d,
              nn.ConvTranspose3d)),
    ("norm", (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d, nn.InstanceNorm1d,
              nn.InstanceNorm2d, nn.InstanceNorm3d)),
    ("layernorm", (nn.LayerNorm,)),
    ("embedding", (nn.Embedding,)),
    ("mha", (nn.MultiheadAttention,)),
    ("dropout", (nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d)),
)  # fmt: skip

_ATOMS: Final = frozenset({bool, int, float, str, type(None)})
_ADDRESS: Final = re.compile(r" at 0x[0-9a-fA-F]+")
_FUNCTIONS: Final = (types.FunctionType, types.BuiltinFunctionType)


def _plain(value: Any) -> Any:
    """A plain, printable copy of an attribute value (tensors and containers included);
    never a text that depends on where an object lives in memory."""
    kind = type(value)
    if kind in _ATOMS:  # the common case first: ints, bools, floats
        return value
    if kind is tuple and _ATOMS.issuperset(map(type, value)):
        return value  # kernel sizes, strides, shapes: already plain
    if kind is tuple or isinstance(value, (list, tuple)):
        return tuple(_plain(v) for v in value)
    if isinstance(value, torch.Tensor):
        return "tensor " + ("x".join(map(str, value.shape)) or "scalar")
    if isinstance(value, torch.dtype):
        return str(value).removeprefix("torch.")
    if isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, _FUNCTIONS):
        return getattr(value, "__qualname__", None) or value.__name__
    return _ADDRESS.sub("", repr(value))


def _torch_forward(cls: type[nn.Module]) -> bool:
    """Whether the module runs a ``forward`` written in torch itself.

    A subclass that overrides ``forward`` keeps its args, but its output no longer
    follows the torch module's shape contract: its module call gets no family (and no
    arg of it is suppressed against the call's shapes).
    """
    for klass in cls.__mro__:
        if "forward" in vars(klass):
            return klass.__module__.split(".", 1)[0] == "torch"
    return False


_MISSING: Final = object()


def _present(module: nn.Module, name: str) -> bool:
    return getattr(module, name, None) is not None


def _unless(equal_to: str) -> Callable[[nn.Module, str], Any]:
    """An arg torch stores filled in from another (``kdim = kdim or embed_dim``): read
    back as ``None``, its default, when it is the other arg's value."""

    def read(module: nn.Module, name: str) -> Any:
        value = getattr(module, name, _MISSING)
        return None if value is not _MISSING and value == getattr(module, equal_to) else value

    return read


#: Args a torch.nn class keeps under another name or only as what it built.
_READERS: Final[dict[tuple[str, str], Callable[[nn.Module, str], Any]]] = {
    ("MultiheadAttention", "bias"): lambda m, _: _present(m, "in_proj_bias"),
    ("MultiheadAttention", "add_bias_kv"): lambda m, _: _present(m, "bias_k"),
    ("MultiheadAttention", "kdim"): _unless("embed_dim"),
    ("MultiheadAttention", "vdim"): _unless("embed_dim"),
    ("PairwiseDistance", "p"): lambda m, _: getattr(m, "norm", _MISSING),
}
#: Flags that turn the learnable parameters off: with one of them false, no ``bias``
#: arg can be read back (there is no bias, whatever was passed).
_AFFINE_FLAGS: Final = ("affine", "elementwise_affine")


class _Layout:
    """What a module class contributes, worked out once per class; the values
    themselves are read on every call."""

    __slots__ = (
        "base", "defaults", "family", "flags", "names", "plain_bias", "readers", "torch_forward",
    )  # fmt: skip

    def __init__(self, cls: type[nn.Module]) -> None:
        base = torch_class(cls)
        self.base = base.__name__ if base is not None else None
        self.family: str | None = None
        if base is not None:
            self.family = next((f for f, kinds in _FAMILIES if issubclass(cls, kinds)), "torch")
        params = constructor_params(self.base) if self.base is not None else None
        #: The defaults the trace keeps for drawing (one object per torch.nn class).
        self.defaults = recorded_defaults(self.base) if self.base is not None else None
        self.names: tuple[str, ...] = tuple(params or ())
        self.readers = {
            name: _READERS[(self.base or "", name)]
            for name in self.names
            if (self.base or "", name) in _READERS
        }
        self.plain_bias = _plain_bias(cls)
        self.torch_forward = _torch_forward(cls)
        #: Names whose default is a flag, read as "has it" when the attribute is a
        #: tensor or ``None`` (``bias=True`` is stored as the bias parameter).
        self.flags = frozenset(n for n in self.names if params and type(params[n]) is bool)


_layouts: dict[type[nn.Module], _Layout] = {}


def _layout(cls: type[nn.Module]) -> _Layout:
    layout = _layouts.get(cls)
    if layout is None:
        layout = _layouts[cls] = _Layout(cls)
    return layout


def _plain_bias(cls: type[nn.Module]) -> bool:
    """Whether attribute access on ``cls`` finds ``bias`` where ``nn.Module`` puts it:
    neither the class defines ``bias`` itself (a property, say) nor replaces
    ``nn.Module``'s ``__getattr__`` or ``object``'s ``__getattribute__``."""
    return (
        not any("bias" in vars(klass) for klass in cls.__mro__)
        and cls.__getattr__ is nn.Module.__getattr__
        and cls.__getattribute__ is object.__getattribute__
    )


def _bias(module: nn.Module, plain: bool) -> Any:
    """``getattr(module, "bias", _MISSING)``; read from the parameter dict where it lives
    when the class is ``plain`` (:func:`_plain_bias`), sparing ``nn.Module.__getattr__``."""
    state = module.__dict__
    if plain and "bias" not in state:
        found = state.get("_parameters", {}).get("bias", _MISSING)
        if found is not _MISSING:
            return found
    return getattr(module, "bias", _MISSING)


def _skipped(value: Any) -> bool:
    """Attributes that are not a constructor arg's value but what the constructor built
    from it (a submodule, a bound method of the module)."""
    return isinstance(value, nn.Module) or inspect.ismethod(value)


def module_args(module: nn.Module) -> tuple[str | None, str | None, ModuleArgs | None]:
    """``(family, call family, args)`` of one module call.

    ``family`` is the module's family in the arg-suppression table (``"linear"``,
    ``"conv"``, ``"norm"``, ``"layernorm"``, ``"embedding"``, ``"mha"``, ``"dropout"``,
    ``"torch"`` for other torch.nn classes), whatever its ``forward``; ``call family``
    the same, or ``None`` for a subclass that overrides ``forward`` (its call's shapes
    follow no torch contract). ``args`` holds every constructor arg of the module's
    torch.nn class that the instance keeps, in signature order; ``(None, None, None)``
    for modules outside torch.nn, whose args we cannot name.
    """
    cls = type(module)
    layout = _layouts.get(cls) or _layout(cls)
    if layout.family is None:
        return None, None, None
    values: dict[str, Any] = {}
    readers, flags = layout.readers, layout.flags
    for name in layout.names:
        if name in readers:
            value = readers[name](module, name)
        elif name == "bias":
            value = _bias(module, layout.plain_bias)
        else:
            value = getattr(module, name, _MISSING)
        if value is _MISSING:
            continue
        if name in flags and (value is None or isinstance(value, torch.Tensor)):
            # A flag stored as what it made: ``bias=True`` is the bias parameter.
            if value is None and any(values.get(f) is False for f in _AFFINE_FLAGS):
                continue  # no learnable parameters: no bias to read back
            value = value is not None
        elif type(value) not in _ATOMS:
            if _skipped(value):
                continue
            value = _plain(value)
        values[name] = value
    call_family = layout.family if layout.torch_forward else None
    return (
        layout.family,
        call_family,
        (ModuleArgs(values, layout.base, layout.defaults) if values else None),
    )


#: The functions that are a family's computation (others match by class name).
_FAMILY_FUNCS: Final = {
    "linear": frozenset({"linear"}),
    "conv": frozenset({"conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                       "conv_transpose3d"}),
    "norm": frozenset({"batch_norm", "instance_norm"}),
    "layernorm": frozenset({"layer_norm"}),
    "embedding": frozenset({"embedding"}),
    "mha": frozenset({"multi_head_attention_forward"}),
    "dropout": frozenset({"dropout", "dropout1d", "dropout2d", "dropout3d", "feature_dropout"}),
}  # fmt: skip


def computes(func: str, family: str | None, class_name: str) -> bool:
    """Whether an op of function ``func`` is the computation of a module call of
    ``family`` whose torch.nn class is ``class_name``: the family's function, or a
    function named like the class (``lstm`` in ``LSTM``, ``rnn_tanh`` in ``RNN``,
    ``embedding_bag`` in ``EmbeddingBag``, ``group_norm`` in a ``GroupNorm``
    subclass)."""
    funcs = _FAMILY_FUNCS.get(family or "")
    if funcs is not None:
        return func in funcs
    return func.replace("_", "").startswith(class_name.lower())
