"""Salient constructor args (REVIEW.md §1.4): the args a reader needs to know the layer.

An args row shows the args that define the layer (required constructor args and the
named sizes in :data:`DEFINING`) and every other arg whose value differs from the
constructor's default, read from torch's own signature: a convolution reads
``kernel_size=(3, 3), padding=(1, 1)``, not ``dilation=(1, 1), groups=1, bias=True``.
Only torch.nn modules (a recorded family) are looked up; other modules, and classes
whose signature cannot be read, show every arg.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Mapping
from typing import Any, Final

__all__ = ["DEFINING", "constructor_defaults", "hidden_defaults"]

#: Args shown whatever their value: they are what the layer is.
DEFINING: Final = frozenset(
    {
        "in_features", "out_features", "in_channels", "out_channels", "kernel_size",
        "num_features", "normalized_shape", "num_embeddings", "embedding_dim", "embed_dim",
        "num_heads", "hidden_size", "input_size", "d_model", "nhead",
    }
)  # fmt: skip
_REQUIRED: Final = object()


@functools.cache
def constructor_defaults(type_name: str) -> Mapping[str, Any] | None:
    """``arg -> default`` (:data:`_REQUIRED` for an arg with none) of the torch.nn class
    named ``type_name``: the first ``__init__`` along its MRO with named parameters
    (``LSTM(*args, **kwargs)`` reads ``RNNBase``'s). ``None`` when there is no such class."""
    import torch.nn

    cls = getattr(torch.nn, type_name, None)
    if not isinstance(cls, type):
        return None
    for klass in cls.__mro__:
        init = vars(klass).get("__init__")
        if init is None:
            continue
        try:
            params = list(inspect.signature(init).parameters.values())[1:]
        except (TypeError, ValueError):
            return None
        named = [p for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        if named:
            return {
                p.name: _REQUIRED if p.default is inspect.Parameter.empty else p.default
                for p in named
            }
    return None


def _at_default(value: Any, default: Any) -> bool:
    if default is _REQUIRED:
        return False
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
    ``()`` when the defaults cannot be read (every arg is then shown)."""
    if family is None or type_name is None:
        return ()
    defaults = constructor_defaults(type_name)
    if defaults is None:
        return ()
    return tuple(
        name
        for name, value in args.items()
        if name not in DEFINING and name in defaults and _at_default(value, defaults[name])
    )
