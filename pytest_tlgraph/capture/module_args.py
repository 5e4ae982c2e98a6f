"""Constructor args of a module, read from the instance's attributes at capture time.

Reading attributes (not the arguments the constructor once received) is deliberate: an
attribute edited after construction so that it no longer matches the captured shapes is
exactly what the checked suppression must reveal.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

import torch
from torch import nn

__all__ = ["computes", "module_args"]

# Ordered attribute lists of the torch.nn families we know; other torch.nn modules fall
# back to their declared ``__constants__``; user modules have no args row.
_FAMILY_ARGS: Final[tuple[tuple[str, tuple[type[nn.Module], ...], tuple[str, ...]], ...]] = (
    ("linear", (nn.Linear,), ("in_features", "out_features", "bias")),
    (
        "conv",
        (nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.ConvTranspose1d, nn.ConvTranspose2d,
         nn.ConvTranspose3d),
        ("in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation",
         "groups", "bias"),
    ),
    (
        "norm",
        (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d, nn.InstanceNorm1d,
         nn.InstanceNorm2d, nn.InstanceNorm3d),
        ("num_features", "eps", "affine"),
    ),
    ("layernorm", (nn.LayerNorm,), ("normalized_shape", "eps", "elementwise_affine")),
    ("embedding", (nn.Embedding,), ("num_embeddings", "embedding_dim", "padding_idx")),
    ("mha", (nn.MultiheadAttention,), ("embed_dim", "num_heads", "dropout", "batch_first")),
    ("dropout", (nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d), ("p",)),
)  # fmt: skip

_SKIPPED_CONSTANTS: Final = frozenset({"inplace", "padding_mode", "output_padding"})


_ATOMS: Final = frozenset({bool, int, float, str, type(None)})


def _plain(value: Any) -> Any:
    """A plain, printable copy of an attribute value (tensors and containers included)."""
    kind = type(value)
    if kind in _ATOMS:  # the common case first: ints, bools, floats
        return value
    if kind is tuple and _ATOMS.issuperset(map(type, value)):
        return value  # kernel sizes, strides, shapes: already plain
    if kind is tuple or isinstance(value, (list, tuple)):
        return tuple(_plain(v) for v in value)
    if isinstance(value, torch.Tensor):
        return None
    if isinstance(value, torch.dtype):
        return str(value).removeprefix("torch.")
    if isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


def _torch_forward(cls: type[nn.Module]) -> bool:
    """Whether the module runs a ``forward`` written in torch itself.

    A subclass of a table family that overrides ``forward`` keeps its args, but its
    output no longer follows the torch module's shape contract, so it gets no family
    (and no arg of it is ever suppressed).
    """
    for klass in cls.__mro__:
        if "forward" in vars(klass):
            return klass.__module__.split(".", 1)[0] == "torch"
    return False


_MISSING: Final = object()
# What a module class contributes, worked out once per class: (family, arg names,
# whether it has args at all, whether its bias is read from the parameter dict). The
# values themselves are read on every call.
_layouts: dict[type[nn.Module], tuple[str | None, tuple[str, ...], bool, bool]] = {}


def _layout(cls: type[nn.Module]) -> tuple[str | None, tuple[str, ...], bool, bool]:
    layout = _layouts.get(cls)
    if layout is None:
        for family, classes, names in _FAMILY_ARGS:
            if issubclass(cls, classes):
                layout = (family if _torch_forward(cls) else None, names, True, _plain_bias(cls))
                break
        else:
            if cls.__module__.startswith("torch.nn."):
                constants = getattr(cls, "__constants__", ())
                names = tuple(n for n in constants if n not in _SKIPPED_CONSTANTS)
                layout = ("torch", names, True, False)
            else:
                layout = (None, (), False, False)
        _layouts[cls] = layout
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
    """``getattr(module, "bias", None)``; read from the parameter dict where it lives
    when the class is ``plain`` (:func:`_plain_bias`), sparing ``nn.Module.__getattr__``."""
    state = module.__dict__
    if plain and "bias" not in state:
        found = state.get("_parameters", {}).get("bias", _MISSING)
        if found is not _MISSING:
            return found
    return getattr(module, "bias", None)


def module_args(module: nn.Module) -> tuple[str | None, Mapping[str, Any] | None]:
    """``(family, args)``: the module's family in the arg-suppression table (``"linear"``,
    ``"conv"``, ``"norm"``, ``"layernorm"``, ``"embedding"``, ``"mha"``, ``"dropout"``,
    ``"torch"`` for other torch.nn modules) and the constructor args shown on its output
    op; ``(None, None)`` for modules outside torch.nn, whose args we cannot name. A
    subclass of a table family that overrides ``forward`` gets ``(None, args)``."""
    cls = type(module)
    family, names, has_args, plain_bias = _layouts.get(cls) or _layout(cls)
    if not has_args:
        return None, None
    values: dict[str, Any] = {}
    for name in names:
        if name == "bias" and family != "torch":
            values[name] = _bias(module, plain_bias) is not None
            continue
        value = getattr(module, name, _MISSING)
        if value is not _MISSING:
            values[name] = value if type(value) in _ATOMS else _plain(value)
    if family == "torch" and not values:
        return "torch", None
    return family, MappingProxyType(values)


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


def computes(func: str, frame: Any) -> bool:
    """Whether an op of function ``func`` is the computation of the module call
    ``frame`` (its ``module_family`` and ``type_name``): the family's function, or a
    function named like the class (``lstm`` in ``LSTM``, ``rnn_tanh`` in ``RNN``,
    ``embedding_bag`` in ``EmbeddingBag``)."""
    funcs = _FAMILY_FUNCS.get(frame.module_family or "")
    if funcs is not None:
        return func in funcs
    return func.replace("_", "").startswith(frame.type_name.lower())
