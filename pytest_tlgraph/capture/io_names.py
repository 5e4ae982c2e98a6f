"""Names of a forward pass's input and output tensors
(docs/decisions.md, "Drawings a reviewer can read (0.2)").

Inputs are named by the forward argument they fill (``input_ids``, ``args[2]`` for a
``*args`` entry, a ``**kwargs`` key as given), outputs by their path in the returned
structure (``logits``, ``past_key_values[0][1]``, ``[1]``; one tensor is ``output``); a
named tuple's items by their field (GoogLeNet's ``logits``, ``aux_logits2``).
A tensor nested in an argument adds its path (``batch.image``). The walk mirrors
:func:`pytest_tlgraph.capture.measure.iter_tensors` exactly, so the n-th name belongs to
the n-th input or output record.
"""

from __future__ import annotations

import inspect
from dataclasses import fields, is_dataclass
from typing import Any, Final

import torch
from torch import nn

from pytest_tlgraph.capture.measure import iter_tensors
from pytest_tlgraph.memo import remember

__all__ = ["input_names", "output_names"]

_SCALARS: Final = (int, float, bool, str, bytes, torch.dtype, torch.device)


def _walk(value: Any, path: str, out: list[str]) -> None:
    """Append the path of every tensor in ``value``, in :func:`iter_tensors` order."""
    if isinstance(value, torch.Tensor):
        out.append(path)
    elif value is None or isinstance(value, _SCALARS):
        return
    elif isinstance(value, (list, tuple)):
        named = _field_names(value)
        if named is not None:
            for name, item in zip(named, value, strict=True):
                _walk(item, f"{path}.{name}" if path else name, out)
            return
        for i, item in enumerate(value):
            _walk(item, f"{path}[{i}]", out)
    elif isinstance(value, dict):
        for key, item in value.items():
            _walk(item, f"{path}.{key}" if path else str(key), out)
    elif is_dataclass(value) and not isinstance(value, type):
        for f in fields(value):
            _walk(getattr(value, f.name), f"{path}.{f.name}" if path else f.name, out)


def _field_names(value: list[Any] | tuple[Any, ...]) -> tuple[str, ...] | None:
    """The field names of a named tuple (a ``NamedTuple``, ``collections.namedtuple`` or
    one of torch's ``torch.return_types``), one per item; ``None`` for plain sequences."""
    kind = type(value)
    if kind is tuple or kind is list or not isinstance(value, tuple):
        return None
    names = getattr(kind, "_fields", None) or getattr(kind, "__match_args__", None)
    if (
        isinstance(names, tuple)
        and len(names) == len(value)
        and all(isinstance(n, str) for n in names)
    ):
        return names
    return None


def _checked(names: list[str], value: Any) -> list[str] | None:
    """``names`` if they line up with the tensors the capture recorded, else ``None``."""
    return names if len(names) == len(iter_tensors(value)) else None


#: ``(positional parameter names, *args name)`` of each forward function seen, by the
#: function itself: reading a signature costs more than a small model's capture.
_params_of: dict[Any, tuple[tuple[str, ...], str | None] | None] = {}
_PARAMS_CACHE_LIMIT: Final = 1024


def _forward_params(forward: Any) -> tuple[tuple[str, ...], str | None] | None:
    """The names of ``forward``'s positional parameters and of its ``*args``, or
    ``None`` when it has no signature to read."""
    try:
        params = inspect.signature(forward).parameters.values()
    except (TypeError, ValueError):
        return None
    named = tuple(p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
    star = next((p.name for p in params if p.kind is p.VAR_POSITIONAL), None)
    return named, star


def _positional_names(model: nn.Module, count: int) -> list[str]:
    """The parameter name each positional argument of ``model.forward`` fills."""
    forward = model.forward
    # A method of the model's class is read once per function; anything else (a
    # forward set on the instance, a partial, a callable object) every time.
    function = getattr(forward, "__func__", None)
    if function is not None and getattr(forward, "__self__", None) is model:
        try:
            found = _params_of[function]
        except KeyError:
            found = remember(_params_of, function, _forward_params(forward), _PARAMS_CACHE_LIMIT)
    else:
        found = _forward_params(forward)
    if found is None:
        return [f"args[{i}]" for i in range(count)]
    named, star = found
    names = list(named[:count])
    extra = count - len(names)
    names += [f"{star or 'args'}[{i}]" for i in range(extra)]
    return names


def input_names(
    model: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> list[str] | None:
    """One name per input tensor of ``model(*args, **kwargs)``, or ``None`` when they
    cannot be lined up with the recorded inputs."""
    out: list[str] = []
    for name, value in zip(_positional_names(model, len(args)), args, strict=True):
        _walk(value, name, out)
    for key, value in kwargs.items():
        _walk(value, str(key), out)
    return _checked(out, (args, kwargs))


def output_names(output: Any) -> list[str] | None:
    """One name per output tensor: ``output`` for a single tensor, else its path."""
    if isinstance(output, torch.Tensor):
        return ["output"]
    out: list[str] = []
    _walk(output, "", out)
    return _checked(out, output)
