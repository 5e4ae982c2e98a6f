"""Benchmark: the story of a changed row holding a long index list (issue 37).

Run as ``python benchmarks/bench_long_row.py [--sizes 5000,10000,20000]``. For each
size it draws a gather by that many Python indices and by the same list with one entry
changed, compares the two drawings, and times ``story_lines`` of the comparison (best
of three); it prints the seconds and the ratio of each size to the first (linear: the
ratio follows the size; 0.4 took 10.8 / 48.8 / 188.6 s).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import torch
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from pytest_tlgraph import capture
from pytest_tlgraph.diff.view.comparison import compare
from pytest_tlgraph.diff.view.story import story_lines
from pytest_tlgraph.draw import draw


class Gather(nn.Module):
    """Picks columns by a Python index list."""

    def __init__(self, index: list[int]) -> None:
        super().__init__()
        self.index = index

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[:, self.index]


def story_seconds(count: int, repeats: int = 3) -> float:
    """Best of ``repeats`` seconds of the story of a ``count``-entry changed row."""
    index = list(range(count))
    changed = [*index[: count // 2], 0, *index[count // 2 + 1 :]]
    x = torch.zeros(2, count)
    comparison = compare(draw(capture(Gather(index), x)).dot, draw(capture(Gather(changed), x)).dot)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        story_lines(comparison)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    """Print the story's time per size and its ratio to the first size."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="5000,10000,20000")
    sizes = [int(s) for s in parser.parse_args().sizes.split(",")]
    first = None
    for size in sizes:
        seconds = story_seconds(size)
        first = first or seconds
        print(f"{size:>7} entries: story {seconds:.4f} s ({seconds / first:.1f}x)")


if __name__ == "__main__":
    main()
