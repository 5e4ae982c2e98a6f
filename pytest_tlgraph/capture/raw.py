"""The mutable records the recorder writes while the forward pass runs.

Each is the unfrozen twin of a trace record, with the same slots in the same order:
``assemble`` fills in what only the whole pass tells (labels, passes, edges, the ops of
each call) and then freezes the very same object (:func:`~pytest_tlgraph.trace.freeze`),
so a capture never builds its records twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_tlgraph.trace import ModuleCall, Op, check_twin

__all__ = ["ModuleFrame", "ParamInfo", "RawOp"]

#: ``(name, shape, trainable)`` of a parameter or buffer an op reads.
ParamInfo = tuple[str, tuple[int, ...], bool]


@dataclass(slots=True)
class RawOp:
    """One recorded call (or input/output record): the twin of :class:`Op`.

    While recording, ``label`` and ``layer`` are empty, ``parents`` holds the parent
    ops' indices and ``children`` is empty; ``assemble`` sets them.
    """

    label: str
    layer: str
    func: str
    pass_number: int
    num_passes: int
    index: int
    parents: Any  # list[int] while recording, tuple[str, ...] once assembled
    children: tuple[str, ...]
    shape: tuple[int, ...] | None
    dtype: str | None
    module: str
    module_calls: tuple[tuple[str, int], ...]
    params: tuple[ParamInfo, ...]
    module_args: Mapping[str, Any] | None
    module_type: str | None
    module_family: str | None
    func_duration: float | None
    activation_memory: int | None
    flops_forward: int | None
    flops_backward: int | None
    flops_total: int | None
    macs_forward: int | None
    autograd_memory: int | None
    num_autograd_tensors: int | None
    magnitude: float | None
    grad_norm: float | None
    device_time: int | None
    #: The call's skeleton while recording (``CallSkeleton``), its ``CallArg`` s once
    #: assembled.
    call: Any = ()
    grad_mode: str | None = None


@dataclass(slots=True)
class ModuleFrame:
    """A module call while (and after) it runs: the twin of :class:`ModuleCall`
    (``ops`` is set by ``assemble``)."""

    address: str
    call_number: int
    type_name: str
    depth: int
    parent: tuple[str, int] | None
    ops: tuple[str, ...] = ()
    module_args: Mapping[str, Any] | None = None
    module_family: str | None = None


check_twin(RawOp, Op)
check_twin(ModuleFrame, ModuleCall)
