"""Salient constructor args (REVIEW.md §1.4): the args a reader needs to know the layer.

An args row shows the args that define the layer (required constructor args and the
named sizes in :data:`DEFINING`) and every other arg whose value differs from the
constructor's default, read from torch's own signature: a convolution reads
``kernel_size=(3, 3), padding=(1, 1)``, not ``dilation=(1, 1), groups=1, bias=True``.
The defaults are those of the module's torch.nn class, the one its args were read
against (``LayerNorm`` for a ``LayerNorm2d`` subclass, :class:`ModuleArgs`); modules
outside torch.nn, and classes whose signature cannot be read, show every arg.
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from typing import Any, Final

from pytest_tlgraph.constructors import REQUIRED, ModuleArgs, constructor_params

__all__ = ["DEFINING", "constructor_defaults", "hidden_defaults"]

#: Args shown whatever their value: they are what the layer is.
DEFINING: Final = frozenset(
    {
        "in_features", "out_features", "in_channels", "out_channels", "kernel_size",
        "num_features", "normalized_shape", "num_embeddings", "embedding_dim", "embed_dim",
        "num_heads", "hidden_size", "input_size", "d_model", "nhead",
    }
)  # fmt: skip
_REQUIRED: Final = REQUIRED
_FUNCTIONS: Final = (types.FunctionType, types.BuiltinFunctionType)


def constructor_defaults(type_name: str) -> Mapping[str, Any] | None:
    """``arg -> default`` (a marker for an arg with none) of the torch.nn class named
    ``type_name`` (:func:`pytest_tlgraph.constructors.constructor_params`); ``None``
    when there is no such class."""
    return constructor_params(type_name)


def _at_default(value: Any, default: Any) -> bool:
    if default is _REQUIRED:
        return False
    if isinstance(default, _FUNCTIONS):
        # A function is recorded by its name (``activation=relu``).
        name: str = getattr(default, "__qualname__", None) or default.__name__
        return bool(value == name)
    if value == default and type(value) is type(default):
        return True
    # A size given as one int is stored per dimension: (1, 1) is the default 1.
    if isinstance(value, tuple) and isinstance(default, int) and not isinstance(default, bool):
        return len(value) > 0 and all(v == default and type(v) is int for v in value)
    # ``bias=True`` is recorded as whether the module has a bias.
    return isinstance(value, bool) and isinstance(default, bool) and value == default


def hidden_defaults(
    args: Mapping[str, Any], type_name: str | None, family: str | None
) -> tuple[str, ...]:
    """The names in ``args`` that are not salient (at their default, and not defining);
    ``()`` when the defaults cannot be read (every arg is then shown).

    Captured args name the torch.nn class they were read against; for other mappings
    ``type_name`` must be a torch.nn class name and ``family`` set (a record built by
    hand without a family claims no torch class)."""
    torch_name = args.torch_class if isinstance(args, ModuleArgs) else None
    if torch_name is None:
        if family is None or type_name is None:
            return ()
        torch_name = type_name
    defaults = constructor_defaults(torch_name)
    if defaults is None:
        return ()
    return tuple(
        name
        for name, value in args.items()
        if name not in DEFINING and name in defaults and _at_default(value, defaults[name])
    )
