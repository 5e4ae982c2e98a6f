"""What ``tlgraph draw`` draws: the model named by ``MODULE:FACTORY`` and its inputs.

Every failure raises :class:`CommandError` with one line naming the cause and the remedy.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_tlgraph.errors import CommandError

if TYPE_CHECKING:
    import torch

__all__ = ["CommandError", "load_inputs", "load_model", "parse_shape", "random_inputs"]


def _import(module: str) -> Any:
    """A dotted module (the current directory is searched first) or a ``.py`` file."""
    if module.endswith(".py") or os.sep in module or "/" in module:
        path = Path(module)
        if not path.is_file():
            raise CommandError(f"no such file {module!r}; give a path to a .py file or a module")
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None:  # pragma: no cover - .py files always load
            raise CommandError(f"cannot import {module!r}; give a .py file")
        loaded = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = loaded
        spec.loader.exec_module(loaded)
        return loaded
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        if error.name is not None and module.startswith(error.name):
            raise CommandError(
                f"no module named {module!r}: run tlgraph from the folder that holds it, "
                "add its folder to PYTHONPATH, or give a path such as models.py:Net"
            ) from None
        raise


def load_model(target: str) -> torch.nn.Module:
    """``MODULE:FACTORY``: a class or function called with no arguments, or a module."""
    import torch

    module_name, sep, attr = target.rpartition(":")
    if not sep or not module_name or not attr:
        raise CommandError(
            f"{target!r} is not MODULE:FACTORY; name the model like torchvision.models:resnet18 "
            "or models.py:Net"
        )
    try:
        module = _import(module_name)
    except CommandError:
        raise
    except Exception as error:  # the user's module raised while importing
        raise CommandError(
            f"importing {module_name} raised {type(error).__name__}: {error}; fix the module"
        ) from None
    value: Any = module
    for part in attr.split("."):
        if not hasattr(value, part):
            names = sorted(n for n in dir(module) if not n.startswith("_"))[:12]
            raise CommandError(
                f"{module_name} has no attribute {attr!r}; pick one of: {', '.join(names)}"
            )
        value = getattr(value, part)
    if not isinstance(value, torch.nn.Module):
        if not callable(value):
            raise CommandError(f"{target} is neither an nn.Module nor callable; name a factory")
        try:
            value = value()
        except Exception as error:
            raise CommandError(
                f"calling {target}() raised {type(error).__name__}: {error}; name a factory "
                "that takes no arguments (wrap it in a function)"
            ) from None
    if not isinstance(value, torch.nn.Module):
        raise CommandError(
            f"{target}() returned {type(value).__name__}, not a torch.nn.Module; name a "
            "factory that returns the model"
        )
    return value


def parse_shape(text: str) -> tuple[int, ...]:
    """``1,3,224,224`` (or ``1x3x224x224``) as a tuple of positive whole numbers."""
    parts = text.replace("x", ",").split(",")
    try:
        shape = tuple(int(part) for part in parts)
    except ValueError:
        shape = ()
    if not shape or any(size <= 0 for size in shape):
        raise CommandError(
            f"bad --input-shape {text!r}: give positive whole numbers separated by commas, "
            "e.g. --input-shape 1,3,224,224"
        )
    return shape


def random_inputs(shapes: Sequence[str], dtypes: Sequence[str]) -> tuple[torch.Tensor, ...]:
    """One tensor per shape (seeded random floats; zeros for integer dtypes, valid ids)."""
    import torch

    if len(dtypes) > 1 and len(dtypes) != len(shapes):
        raise CommandError(
            f"{len(dtypes)} --dtype values for {len(shapes)} --input-shape values; give one "
            "--dtype for all inputs or one per input"
        )
    chosen = list(dtypes) * len(shapes) if len(dtypes) == 1 else list(dtypes)
    chosen = chosen or ["float32"] * len(shapes)
    generator = torch.Generator().manual_seed(0)
    out = []
    for shape_text, name in zip(shapes, chosen, strict=True):
        dtype = getattr(torch, name, None)
        if not isinstance(dtype, torch.dtype):
            raise CommandError(
                f"unknown --dtype {name!r}; use a torch dtype name such as float32, "
                "float16, bfloat16 or int64"
            )
        shape = parse_shape(shape_text)
        try:
            if dtype.is_floating_point or dtype.is_complex:
                out.append(torch.randn(shape, generator=generator).to(dtype))
            else:
                out.append(torch.zeros(shape, dtype=dtype))
        except (RuntimeError, MemoryError, OverflowError, TypeError) as error:  # too large
            first = (str(error).strip().splitlines() or [type(error).__name__])[0]
            raise CommandError(
                f"cannot make an input of shape {shape_text!r} as {name} ({first[:200]}); "
                "give a smaller --input-shape"
            ) from None
    return tuple(out)


def load_inputs(path: str) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """A file saved with ``torch.save``: a tensor, a tuple/list of positional arguments,
    or a dict of keyword arguments."""
    import pickle

    import torch

    try:
        loaded = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise CommandError(
            f"no such inputs file {path!r}; give a file saved with torch.save"
        ) from None
    except (OSError, RuntimeError, pickle.UnpicklingError, EOFError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise CommandError(
            f"cannot read inputs file {path!r} ({first}); save a tensor, a tuple of "
            "tensors or a dict of tensors with torch.save"
        ) from None
    if isinstance(loaded, torch.Tensor):
        return (loaded,), {}
    if isinstance(loaded, (tuple, list)):
        return tuple(loaded), {}
    if isinstance(loaded, Mapping):
        return (), dict(loaded)
    raise CommandError(
        f"inputs file {path!r} holds a {type(loaded).__name__}; save a tensor, a tuple of "
        "tensors or a dict of tensors with torch.save"
    )
