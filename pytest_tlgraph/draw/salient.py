"""Salient constructor args (docs/guide.md, "Draw options", ``show_redundant_args``):
the args a reader needs to know the layer.

An args row shows the args that define the layer (required constructor args and the
named sizes in :data:`DEFINING`) and every other arg whose value differs from the
constructor's default: a convolution reads ``kernel_size=(3, 3), padding=(1, 1)``, not
``dilation=(1, 1), groups=1, bias=True``. The defaults are those capture recorded on the
args (:attr:`ModuleArgs.defaults`, the signature of the torch.nn class the args were
read against: ``LayerNorm`` for a ``LayerNorm2d`` subclass), so drawing reads the frozen
trace, never torch; args without recorded defaults (modules outside torch.nn, a
signature that cannot be read, a mapping built by hand) show every arg.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from pytest_tlgraph.constructors import REQUIRED, ModuleArgs

__all__ = ["DEFINING", "hidden_defaults"]

#: Args shown whatever their value: they are what the layer is.
DEFINING: Final = frozenset(
    {
        "in_features", "out_features", "in_channels", "out_channels", "kernel_size",
        "num_features", "normalized_shape", "num_embeddings", "embedding_dim", "embed_dim",
        "num_heads", "hidden_size", "input_size", "d_model", "nhead",
    }
)  # fmt: skip


def _at_default(value: Any, default: Any) -> bool:
    if default is REQUIRED:
        return False
    if value == default and type(value) is type(default):
        return True
    # A size given as one int is stored per dimension: (1, 1) is the default 1.
    if isinstance(value, tuple) and isinstance(default, int) and not isinstance(default, bool):
        return len(value) > 0 and all(v == default and type(v) is int for v in value)
    # ``bias=True`` is recorded as whether the module has a bias.
    return isinstance(value, bool) and isinstance(default, bool) and value == default


def hidden_defaults(args: Mapping[str, Any]) -> tuple[str, ...]:
    """The names in ``args`` that are not salient (at their recorded default, and not
    defining); ``()`` when the args carry no defaults (every arg is then shown)."""
    defaults = args.defaults if isinstance(args, ModuleArgs) else None
    if defaults is None:
        return ()
    return tuple(
        name
        for name, value in args.items()
        if name not in DEFINING and name in defaults and _at_default(value, defaults[name])
    )
