"""The one way the ``tlgraph_snapshot`` fixture and ``tlgraph draw`` capture a model:
in eval mode, leaving the model and the random state as they were.

Eval mode is set through every submodule's ``training`` flag, never the model's own
``eval()``/``train()``: an override may do more (freeze parameters, swap layers) that
restoring the flags would not undo, and that would make the drawing depend on who
captured it. The global random state (CPU and every CUDA device) is put back after the
forward, so a dropout or a random init inside ``forward`` costs the caller nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from pytest_tlgraph.trace import Trace

__all__ = ["capture_in_eval_mode"]
#: pytest leaves this module's frames out of a failing test's traceback.
__tracebackhide__ = True


def capture_in_eval_mode(
    model: torch.nn.Module,
    args: Any,
    kwargs: Mapping[str, Any] | None = None,
    *,
    backward: bool = False,
    magnitudes: bool = False,
    value_buffers: tuple[str, ...] | str = (),
) -> Trace:
    """:func:`~pytest_tlgraph.capture.capture` with every submodule's ``training`` flag
    cleared; afterwards each flag and the global RNG are restored, on success or
    error. ``magnitudes``: whether a channel of the drawing reads them;
    ``value_buffers``: persistent buffers drawn by value (``capture``'s)."""
    # Looked up on the package at each call, so a wrapper set there is the one run.
    from pytest_tlgraph.capture import capture

    modes = [(module, module.training) for module in model.modules()]
    cpu_rng = torch.get_rng_state()
    cuda_rng = torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None
    try:
        for module, _ in modes:
            module.training = False
        return capture(
            model,
            args,
            kwargs=kwargs,
            backward=backward,
            magnitudes=magnitudes,
            value_buffers=value_buffers,
        )
    finally:
        for module, training in modes:
            module.training = training
        torch.set_rng_state(cpu_rng)
        if cuda_rng is not None:
            torch.cuda.set_rng_state_all(cuda_rng)
