"""Benchmark: what a failing snapshot call costs, stage by stage, on a ~1k-op model.

Run as ``python benchmarks/bench_failure_path.py [--rounds R] [--blocks B]``. The model
is the residual MLP of the capture benchmark with ``B`` blocks (200 by default: 1,001
recorded ops); the change is one block's GELU swapped for a ReLU, the smallest edit a
review has to find in a large drawing. The stored side (the old DOT) is drawn once;
each round then times, in turn, what a failing call does with the new model:

* ``forward``: the plain forward (no grad), for scale;
* ``floor``: the recording floor of ``bench_capture.py`` (an empty
  ``TorchFunctionMode`` with saved-tensor hooks);
* ``capture``: ``capture(model, x)``;
* ``dot``: ``trace.draw().dot`` of that trace;
* ``diff``: ``compare(old_dot, new_dot)`` (both DOTs parsed, nodes paired);
* ``story``: ``story_lines(comparison)`` (the report's sentences);
* ``drawing``: ``draw_comparison(comparison).dot`` (the structural diff drawing,
  context view, as the report keeps it; its PNG rendering is left to graphviz);

each cell the best of ``R`` interleaved rounds (10 by default), one thread. It prints
each stage's time, its share of the whole failure path, and the whole against the
capture + DOT of the same model and against the floor. There is no target: the
numbers are reported beside ``bench_capture.py``'s.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_capture import plain_forward, recording_floor

from pytest_tlgraph import capture
from pytest_tlgraph.diff.view.comparison import compare
from pytest_tlgraph.diff.view.drawing import draw_comparison
from pytest_tlgraph.diff.view.story import story_lines
from tests.models import ResidualMLP, seeded


def models(blocks: int) -> tuple[nn.Module, nn.Module, torch.Tensor]:
    """The stored model, the changed one (one block's GELU now a ReLU), an input."""
    old = seeded(ResidualMLP(blocks=blocks)).eval()
    new = seeded(ResidualMLP(blocks=blocks)).eval()
    block = new.blocks[blocks // 2]
    block.forward = _relu_forward(block)
    return old, new, torch.randn(4, 32)


def _relu_forward(block: nn.Module) -> Callable[[torch.Tensor], torch.Tensor]:
    """The block's forward with ReLU for the ``F.gelu`` it calls."""

    def forward(x: torch.Tensor) -> torch.Tensor:
        return x + block.fc2(torch.relu(block.fc1(block.norm(x))))

    return forward


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def one_round(
    old_dot: str, new: nn.Module, x: torch.Tensor
) -> tuple[dict[str, float], int, list[str]]:
    """Each stage's seconds in one round, the ops recorded and the story's lines."""
    gc.collect()
    times: dict[str, float] = {}
    times["forward"], _ = _timed(lambda: plain_forward(new, x))
    times["floor"], _ = _timed(lambda: recording_floor(new, x))
    times["capture"], trace = _timed(lambda: capture(new, x))
    times["dot"], new_dot = _timed(lambda: trace.draw().dot)
    times["diff"], comparison = _timed(lambda: compare(old_dot, new_dot))
    times["story"], lines = _timed(lambda: story_lines(comparison))
    times["drawing"], _ = _timed(lambda: draw_comparison(comparison).dot)
    return times, sum(op.has_function for op in trace.ops), lines


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--blocks", type=int, default=200)
    options = parser.parse_args()
    if options.rounds < 1 or options.blocks < 2:
        parser.error("--rounds takes a positive count, --blocks at least 2")
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    old, new, x = models(options.blocks)
    old_dot = capture(old, x).draw().dot
    best: dict[str, float] = {}
    ops, lines = 0, []
    for number in range(options.rounds + 1):  # the first round warms up, untimed
        times, ops, lines = one_round(old_dot, new, x)
        if number == 0:
            continue
        for name, seconds in times.items():
            best[name] = min(best.get(name, seconds), seconds)
    path = ("capture", "dot", "diff", "story", "drawing")
    whole = sum(best[name] for name in path)
    print(
        f"torch {torch.__version__}, residual MLP ({options.blocks} blocks, {ops} ops), "
        f"one GELU -> ReLU; best of {options.rounds} interleaved rounds, 1 thread\n"
    )
    print(f"{'stage':<10}{'time':>12}{'share':>9}")
    print("-" * 31)
    for name in ("forward", "floor", *path):
        share = f"{best[name] / whole:>8.0%}" if name in path else ""
        print(f"{name:<10}{best[name] * 1e3:>10.2f}ms{share:>9}")
    print("-" * 31)
    print(f"{'failure':<10}{whole * 1e3:>10.2f}ms")
    capture_dot = best["capture"] + best["dot"]
    print(
        f"\nfailure path / (capture + DOT): {whole / capture_dot:.2f}x; "
        f"(capture + DOT) / floor: {capture_dot / best['floor']:.2f}x; "
        f"failure path / floor: {whole / best['floor']:.2f}x"
    )
    print("story:", *lines[:3], sep="\n  ")
    return 0


if __name__ == "__main__":
    sys.exit(main())
