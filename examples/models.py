"""A small model zoo, built in code (nothing is downloaded).

Each model is small enough to capture in milliseconds on a CPU and shows one kind of
architecture: a multilayer perceptron, a convolutional net, a recurrent cell unrolled
over time, and a stack of transformer blocks. Some carry ``example_input_array`` (the
PyTorch Lightning convention the ``tlgraph_snapshot`` fixture reads); the others take
their inputs from the test.
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["ConvNet", "MnistMLP", "RecurrentTagger", "TinyTransformer"]


class MnistMLP(nn.Module):
    """Flatten, two hidden layers with dropout, ten classes."""

    def __init__(self, hidden: int = 64) -> None:
        super().__init__()
        self.flatten = nn.Flatten()
        self.fc1 = nn.Linear(28 * 28, hidden)
        self.act1 = nn.ReLU()
        self.drop = nn.Dropout(0.2)
        self.fc2 = nn.Linear(hidden, hidden // 2)
        self.act2 = nn.ReLU()
        self.head = nn.Linear(hidden // 2, 10)
        self.example_input_array = torch.zeros(4, 1, 28, 28)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.drop(self.act1(self.fc1(self.flatten(x))))
        return self.head(self.act2(self.fc2(x)))


class ConvBlock(nn.Module):
    """Conv, batch norm, ReLU, 2x2 max pool."""

    def __init__(self, c_in: int, c_out: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, 3, padding=1)
        self.norm = nn.BatchNorm2d(c_out)
        self.act = nn.ReLU()
        self.pool = nn.MaxPool2d(2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(self.act(self.norm(self.conv(x))))


class ConvNet(nn.Module):
    """Two conv blocks, global average pooling and a linear classifier."""

    def __init__(self, width: int = 8, classes: int = 10) -> None:
        super().__init__()
        self.block1 = ConvBlock(3, width)
        self.block2 = ConvBlock(width, 2 * width)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Linear(2 * width, classes)
        self.example_input_array = torch.zeros(2, 3, 32, 32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool(self.block2(self.block1(x)))
        return self.head(torch.flatten(x, 1))


class RecurrentTagger(nn.Module):
    """An Elman-style cell unrolled over the sequence, tagging every step.

    Each step runs the same input projection, hidden projection, tanh and output
    projection: the passes of every layer advance in lockstep, so ``stack_by=True``
    may pin them into timestep columns.
    """

    def __init__(self, features: int = 6, hidden: int = 12, tags: int = 4) -> None:
        super().__init__()
        self.hidden = hidden
        self.inp = nn.Linear(features, hidden)
        self.rec = nn.Linear(hidden, hidden, bias=False)
        self.out = nn.Linear(hidden, tags)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x.new_zeros(x.shape[0], self.hidden)
        steps = []
        for t in range(x.shape[1]):
            h = torch.tanh(self.inp(x[:, t]) + self.rec(h))
            steps.append(self.out(h))
        return torch.stack(steps, dim=1)


class TransformerBlock(nn.Module):
    """Pre-norm self-attention and feed-forward, each with a residual connection."""

    def __init__(self, dim: int = 32, heads: int = 4) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.norm1(x)
        x = x + self.attn(y, y, y, need_weights=False)[0]
        return x + self.ff(self.norm2(x))


class TinyTransformer(nn.Module):
    """Token embedding, ``depth`` identical transformer blocks, a language-model head."""

    def __init__(self, vocab: int = 100, dim: int = 32, depth: int = 4) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList(TransformerBlock(dim) for _ in range(depth))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab)
        self.example_input_array = torch.zeros(2, 8, dtype=torch.long)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))
