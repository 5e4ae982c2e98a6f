"""Where capture + canonical DOT time goes: the same call with each measured field
switched off, against the recording floor and torchview.

Run as ``python benchmarks/capture_budget.py [--repeats N] [--rounds R]``. For each model
of ``bench_capture.py`` it times ``capture(model, x).draw().dot`` as shipped, with
magnitudes asked for (``capture(..., magnitudes=True)``, off by default), then with
one of the recorder's other per-op measurements switched off, with all of them off, and with
all off and no drawing; then the floor every recorder pays (the forward pass under an
empty ``TorchFunctionMode`` with saved-tensor hooks installed), the plain forward with
grad, and torchview's ``draw_graph``. Each cell runs in a fresh interpreter, best of N
runs, best of R interleaved rounds (``bench_capture.best_of``).

This is a diagnostic, not a product path: the switches patch the recorder's private
names in the worker process, so a switched-off capture draws less too (no args row
without module args). It fails loudly when a patched name no longer exists. A row's
``tview/x`` column is torchview's time over the row's: the ratio ``bench_capture.py``
would report if capture + DOT cost what the row costs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from collections.abc import Callable
from typing import Any

import torch
from torch import nn
from torch.overrides import TorchFunctionMode

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from bench_capture import MODELS, best_of, in_fresh_process, torchview_dot

from pytest_tlgraph import capture
from pytest_tlgraph.capture import recorder

#: The recorder's per-op measurements on by default, each with what switches it off.
FEATURES = ("flops", "sources", "module_args", "saved")
ROWS: dict[str, tuple[str, ...]] = {
    "as shipped": (),
    "with magnitudes": ("with_magnitudes",),
    "no FLOPs": ("flops",),
    "no source chains": ("sources",),
    "no module args": ("module_args",),
    "no saved-tensor sizes": ("saved",),
    "none of the four": FEATURES,
    "none of the four, no draw": (*FEATURES, "nodraw"),
    "recording floor": ("floor",),
    "forward with grad": ("forward",),
    "torchview": ("torchview",),
}


def _patch(owner: Any, name: str, value: Any) -> None:
    if not hasattr(owner, name):
        raise SystemExit(f"capture_budget.py is out of date: {owner!r} has no {name!r}")
    setattr(owner, name, value)


def switch_off(feature: str) -> None:
    """Switch one per-op measurement off in this process."""
    if feature == "flops":
        _patch(recorder, "COUNTED_FUNCS", frozenset())
        _patch(recorder, "REDUCTION_COST", {})
    elif feature == "sources":
        _patch(recorder, "source_chain", lambda frame: ())
    elif feature == "module_args":
        _patch(recorder, "module_args", lambda module: (None, None))
    elif feature == "saved":
        # Never measuring: the pack hook stays installed but notes nothing.
        _patch(recorder, "_grad_enabled", lambda: False)
    else:
        raise ValueError(feature)


class _EmptyMode(TorchFunctionMode):
    def __torch_function__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None
    ) -> Any:
        return func(*args, **(kwargs or {}))


def _keep(t: torch.Tensor) -> torch.Tensor:
    return t if t.is_leaf else t.detach()


def _same(t: torch.Tensor) -> torch.Tensor:
    return t


def runner(switches: tuple[str, ...], model: nn.Module, x: torch.Tensor) -> Callable[[], Any]:
    """The call a row times."""
    if "floor" in switches:

        def floor() -> Any:
            with torch.autograd.graph.saved_tensors_hooks(_keep, _same), _EmptyMode():
                return model(x)

        return floor
    if "forward" in switches:
        return lambda: model(x)
    if "torchview" in switches:
        return lambda: torchview_dot(model, x)
    if "with_magnitudes" in switches:
        return lambda: capture(model, x, magnitudes=True).draw().dot
    for feature in switches:
        if feature != "nodraw":
            switch_off(feature)
    if "nodraw" in switches:
        return lambda: capture(model, x)
    return lambda: capture(model, x).draw().dot


def worker(row: str, model_name: str, repeats: int) -> None:
    """Time one row on one model in this (fresh) process and print seconds."""
    torch.set_num_threads(1)
    torch.manual_seed(0)
    warnings.simplefilter("ignore")
    model, x = MODELS[model_name]()
    print(json.dumps({"seconds": best_of(runner(ROWS[row], model, x), repeats)}))


def measure(row: str, model_name: str, repeats: int) -> float:
    """Run :func:`worker` in a fresh interpreter: seconds."""
    return float(in_fresh_process(__file__, (row, model_name), repeats)["seconds"])


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--worker", nargs=2, metavar=("ROW", "MODEL"))
    options = parser.parse_args()
    if options.rounds < 1 or options.repeats < 1:
        parser.error("--repeats and --rounds take a positive count")
    if options.worker:
        row, model_name = options.worker
        worker(row, model_name, options.repeats)
        return 0
    print(
        f"torch {torch.__version__}, best of >= {options.repeats} runs, best of "
        f"{options.rounds} interleaved rounds, 1 thread, one process per cell"
    )
    for model_name in MODELS:
        best: dict[str, float] = {}
        for _ in range(options.rounds):
            for row in ROWS:
                seconds = measure(row, model_name, options.repeats)
                best[row] = min(best.get(row, seconds), seconds)
        shipped, tview = best["as shipped"], best["torchview"]
        print(f"\n{model_name:<28}{'ms':>9}{'vs shipped':>12}{'tview/x':>9}")
        for row, seconds in best.items():
            print(f"{row:<28}{seconds * 1e3:>9.3f}{(seconds - shipped) * 1e3:>+11.3f}"
                  f"{tview / seconds:>8.2f}x")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
