"""Benchmark: ``collapse="auto"`` on a 48-block transformer-style model.

Run as ``python benchmarks/bench_collapse.py [--repeats N] [--renderer pure|system]``.
The model is built in code (token embedding, 48 pre-norm blocks of attention and MLP,
final norm, head); nothing is downloaded. It times, as best of N repeats after one
warm-up:

* capture: ``capture(model, tokens)``;
* plan: ``build_plan(trace, collapse="auto")`` (depth search and repeat folding);
* dot: ``trace.draw(collapse="auto").dot``;
* render: ``drawing.png()`` of the collapsed drawing;

and prints node counts of the plain and the collapsed plan in both views.
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from pytest_tlgraph import capture
from pytest_tlgraph.draw import build_plan
from pytest_tlgraph.draw.collapse import AUTO_NODE_BUDGET, auto_plan


class Attention(nn.Module):
    """Multi-head self-attention written out op by op."""

    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, tokens, width = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        shape = (batch, tokens, self.heads, width // self.heads)
        q, k, v = (t.reshape(shape).transpose(1, 2) for t in (q, k, v))
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(width // self.heads)
        out = torch.matmul(torch.softmax(scores, dim=-1), v)
        return self.proj(out.transpose(1, 2).reshape(batch, tokens, width))


class Block(nn.Module):
    """Pre-norm transformer block: ``x + attn(norm(x))``, then ``x + mlp(norm(x))``."""

    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(width)
        self.attn = Attention(width, heads)
        self.norm2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(
            nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class Transformer(nn.Module):
    """Embedding, ``blocks`` transformer blocks, final norm and a vocabulary head."""

    def __init__(self, blocks: int = 48, width: int = 64, heads: int = 4, vocab: int = 256) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.blocks = nn.Sequential(*(Block(width, heads) for _ in range(blocks)))
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.head(self.norm(self.blocks(self.embed(tokens))))


def best_of(fn: Callable[[], Any], repeats: int) -> float:
    """The fastest of ``repeats`` timed calls, in seconds (one untimed warm-up call)."""
    fn()
    times = []
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--renderer", choices=("pure", "system"), default=None)
    args = parser.parse_args()
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    torch.manual_seed(0)
    model = Transformer().eval()
    tokens = torch.randint(0, 256, (2, 16))
    trace = capture(model, tokens)
    ops = sum(1 for op in trace.ops if op.has_function)
    drawing = trace.draw(collapse="auto")
    timings = {
        "capture": best_of(lambda: capture(model, tokens), args.repeats),
        "auto plan": best_of(lambda: build_plan(trace, collapse="auto"), args.repeats),
        "draw().dot": best_of(lambda: trace.draw(collapse="auto").dot, args.repeats),
        "png()": best_of(lambda: drawing.png(renderer=args.renderer), args.repeats),
    }
    print(f"torch {torch.__version__}, best of {args.repeats}, 1 thread")
    print(f"model: Transformer, 48 blocks, {ops} ops, {trace.param_count:,} params\n")
    print(f"{'step':<14}{'time':>12}")
    print("-" * 26)
    for step, seconds in timings.items():
        print(f"{step:<14}{seconds * 1e3:>10.2f}ms")
    print(f"\n{'view':<10}{'plain nodes':>13}{'auto nodes':>12}{'auto depth':>12}{'folds':>7}")
    print("-" * 54)
    for view in ("unrolled", "rolled"):
        plain = build_plan(trace, view=view)
        plan, depth = auto_plan(trace, view=view)
        folds = [n.record.title for n in plan.nodes if n.kind == "fold"]
        folds += [c.title for c in plan.clusters if c.caption is not None]  # "Nx" clusters
        shown = "max" if depth is None else str(depth)
        print(f"{view:<10}{len(plain.nodes):>13}{len(plan.nodes):>12}{shown:>12}{len(folds):>7}")
        for title in folds:
            print(f"{'':<10}fold: {title}")
    within = len(drawing.nodes) <= AUTO_NODE_BUDGET
    print(f"\nbudget {AUTO_NODE_BUDGET} nodes: {'met' if within else 'MISSED'}")
    return 0 if within else 1


if __name__ == "__main__":
    sys.exit(main())
