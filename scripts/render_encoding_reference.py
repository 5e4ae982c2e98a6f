"""Render the reference images in docs/images/encoding/.

Every figure is one ``(filename, function)`` pair in :data:`FIGURES`; the function
returns the ``Drawing`` to render, and the image is its ``Drawing.png()`` from the
pinned ``graphviz-pure`` renderer, so the files are byte-identical on every machine.
Add a figure by appending a pair to ``FIGURES``.

Usage::

    python scripts/render_encoding_reference.py            # every figure
    python scripts/render_encoding_reference.py conv_args_after.png
    python scripts/render_encoding_reference.py --out /tmp/figures
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import torch
from torch import nn

from pytest_tlgraph import capture
from pytest_tlgraph.draw import Drawing
from pytest_tlgraph.draw.node_styles import attention_node_mode
from pytest_tlgraph.trace import Trace

OUT_DIR = Path(__file__).resolve().parent.parent / "docs" / "images" / "encoding"
DPI = 96


class ConvNet(nn.Module):
    """Two conv / batch-norm / ReLU stages and a linear head."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU())
        self.down = nn.Sequential(
            nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.BatchNorm2d(32), nn.ReLU()
        )
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Linear(32, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.head(self.pool(self.down(self.stem(x))).flatten(1))
        return out


class TransformerBlock(nn.Module):
    """Token embedding, then one pre-norm block: self-attention and an MLP."""

    def __init__(self, vocab: int = 100, dim: int = 32, heads: int = 4) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.norm1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens)
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        out: torch.Tensor = x + self.mlp(self.norm2(x))
        return out


class SelfAttention(nn.Module):
    """Single-head attention written out: q @ k^T, scale, softmax, @ v."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.q, self.k, self.v = nn.Linear(dim, dim), nn.Linear(dim, dim), nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.q(x), self.k(x), self.v(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        out: torch.Tensor = scores.softmax(dim=-1) @ v
        return out


class AttentionBlock(nn.Module):
    """A residual hand-written attention followed by a residual MLP."""

    def __init__(self, dim: int = 16) -> None:
        super().__init__()
        self.attn = SelfAttention(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(x)
        out: torch.Tensor = x + self.mlp(x)
        return out


def conv_trace() -> Trace:
    """The conv net on one 3x16x16 image (eval mode: batch norm uses running stats)."""
    torch.manual_seed(0)
    return capture(ConvNet().eval(), torch.randn(1, 3, 16, 16))


def transformer_trace() -> Trace:
    """The transformer block on two sequences of six tokens."""
    torch.manual_seed(0)
    return capture(TransformerBlock().eval(), torch.randint(0, 100, (2, 6)))


def attention_trace() -> Trace:
    """The hand-written attention block on two sequences of five 16-wide tokens."""
    torch.manual_seed(0)
    return capture(AttentionBlock(), torch.randn(2, 5, 16))


class LockstepRNN(nn.Module):
    """An encoder cell and a decoder cell alternating over three timesteps."""

    def __init__(self, dim: int = 8, steps: int = 3) -> None:
        super().__init__()
        self.enc = nn.Linear(2 * dim, dim)
        self.dec = nn.Linear(2 * dim, dim)
        self.dim, self.steps = dim, steps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = y = x[:, 0]
        for t in range(self.steps):
            h = torch.tanh(self.enc(torch.cat([x[:, t], h], dim=-1)))
            y = torch.tanh(self.dec(torch.cat([h, y], dim=-1)))
        return y


def lockstep_trace() -> Trace:
    """The two-cell recurrence on one sequence of three 8-wide steps."""
    torch.manual_seed(0)
    return capture(LockstepRNN(), torch.randn(1, 3, 8))


def square_trace() -> Trace:
    """Linear, ReLU, Linear, every tensor 1x8: one output size throughout."""
    torch.manual_seed(0)
    return capture(nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 8)), torch.randn(1, 8))


#: ``(filename, function)``: each function returns the drawing written to ``filename``.
FIGURES: list[tuple[str, Callable[[], Drawing]]] = [
    ("conv_args_before.png", lambda: conv_trace().draw(show_redundant_args=True)),
    ("conv_args_after.png", lambda: conv_trace().draw()),
    ("transformer_args_before.png", lambda: transformer_trace().draw(show_redundant_args=True)),
    ("transformer_args_after.png", lambda: transformer_trace().draw()),
    ("attention_style_before.png", lambda: attention_trace().draw()),
    (
        "attention_style_after.png",
        lambda: attention_trace().draw(node_spec_fn=attention_node_mode),
    ),
    ("color_by_flops_light.png", lambda: conv_trace().draw(color_by="flops")),
    ("color_by_flops_dark.png", lambda: conv_trace().draw(color_by="flops", page="dark")),
    ("size_by_bytes.png", lambda: conv_trace().draw(size_by="bytes")),
    (
        "stack_by_lockstep.png",
        lambda: lockstep_trace().draw(stack_by=True, direction="leftright"),
    ),
    # Every tensor of the square net is 1x8 float32: no range, a one-line key.
    ("key_degenerate.png", lambda: square_trace().draw(color_by="bytes")),
    ("collapsed_flops.png", lambda: transformer_trace().draw(collapse="max", color_by="flops")),
]


def render(out_dir: Path = OUT_DIR, names: Sequence[str] = ()) -> list[Path]:
    """Write the figures named in ``names`` (all when empty) into ``out_dir``."""
    known = [name for name, _ in FIGURES]
    unknown = sorted(set(names) - set(known))
    if unknown:
        raise SystemExit(
            f"unknown figure(s): {', '.join(unknown)}; the figures are: {', '.join(known)}"
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, make in FIGURES:
        if names and name not in names:
            continue
        path = out_dir / name
        path.write_bytes(make().png(dpi=DPI, renderer="pure"))
        written.append(path)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point: render the figures and list the files written."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("names", nargs="*", help="figure file names (default: all)")
    parser.add_argument("--out", type=Path, default=OUT_DIR, help="output directory")
    args = parser.parse_args(argv)
    for path in render(args.out, args.names):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
