"""The corpus registry: named factories, each building one :class:`Case`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

__all__ = ["CORPUS", "TRANSFORMERS", "Case", "build", "names", "register"]


@dataclass
class Case:
    """One corpus model with the inputs of one forward pass."""

    name: str
    model: nn.Module
    inputs: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)

    def run(self) -> Any:
        """The plain forward pass, outside any capture."""
        return self.model(*self.inputs, **self.kwargs)


Factory = Callable[[], Case]
#: Every corpus entry by name, in registration order.
CORPUS: dict[str, Factory] = {}
#: The names of the transformer decoders/encoders (the per-depth encoding checks).
TRANSFORMERS: list[str] = []


def register(name: str, *, transformer: bool = False) -> Callable[[Factory], Factory]:
    """Add a factory to the corpus under ``name``."""

    def add(factory: Factory) -> Factory:
        if name in CORPUS:
            raise ValueError(f"corpus entry {name!r} registered twice")
        CORPUS[name] = factory
        if transformer:
            TRANSFORMERS.append(name)
        return factory

    return add


def names() -> list[str]:
    """Every corpus entry's name, in registration order."""
    _load()
    return list(CORPUS)


def build(name: str) -> Case:
    """A fresh :class:`Case` for entry ``name``, seeded (the same weights every time)."""
    _load()
    try:
        factory = CORPUS[name]
    except KeyError:
        raise KeyError(f"no corpus entry {name!r}; entries: {', '.join(CORPUS)}") from None
    torch.manual_seed(0)
    case = factory()
    case.model.eval()
    return case


def _load() -> None:
    # The factories register themselves on import.
    from tests.corpus import (  # noqa: F401
        hf_models,
        models_args,
        models_faithful_collapse,
        models_glance,
        models_graph,
        models_inception,
        models_mobilenet,
        models_plain,
        models_recurrent,
        models_values,
        torch_models,
    )
