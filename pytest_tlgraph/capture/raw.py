"""The mutable records the recorder writes while the forward pass runs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

__all__ = ["ModuleFrame", "ParamInfo", "RawOp"]

#: ``(name, shape, trainable)`` of a parameter or buffer an op reads.
ParamInfo = tuple[str, tuple[int, ...], bool]


@dataclass(slots=True)
class RawOp:
    """One recorded call (or input/output record), before labels are assigned."""

    index: int
    func: str
    layer_key: tuple[Any, ...]
    parents: list[int]
    module: str
    module_calls: tuple[tuple[str, int], ...]
    shape: tuple[int, ...] | None
    dtype: torch.dtype | None
    params: tuple[ParamInfo, ...] = ()
    module_args: Any = None
    module_type: str | None = None
    module_family: str | None = None
    func_duration: float | None = None
    activation_memory: int | None = None
    flops: tuple[int | None, int | None, int | None, int | None] = (None, None, None, None)
    autograd_memory: int | None = None
    num_autograd_tensors: int | None = None
    magnitude: float | None = None
    grad_norm: float | None = None
    device_time: int | None = None


@dataclass(slots=True)
class ModuleFrame:
    """A module call while (and after) it runs."""

    address: str
    call_number: int
    type_name: str
    depth: int
    parent: tuple[str, int] | None
    module_args: Any = None
    module_family: str | None = None
