"""Small real models shared by the test suite and the benchmarks.

Each model is tiny (it runs in well under a millisecond on a CPU) but exercises one
structural feature of a trace: module nesting, normalisation layers, a module reused in
a loop, a loop of bare torch calls, two modules' passes interleaved in a given order, a
module shared between two branches, several inputs, nested outputs, hostile module
names, a failing forward pass.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch
import torch.nn.functional as F
from torch import nn

if TYPE_CHECKING:
    from pytest_tlgraph import Trace

__all__ = [
    "CNN",
    "MLP",
    "Attention",
    "BareLoop",
    "Branches",
    "DataclassOut",
    "DictOut",
    "Failing",
    "HostileCluster",
    "HostileNames",
    "Interleaved",
    "KwargsModel",
    "Pair",
    "PairOut",
    "RecurrentCell",
    "ResidualMLP",
    "SharedModule",
    "Shrink",
    "TupleOut",
    "WithBuffer",
    "seeded",
    "without_pool_flops",
]


def seeded(model: nn.Module, seed: int = 0) -> nn.Module:
    """Re-initialise ``model``'s parameters from ``seed`` so every process builds the
    same weights (byte-identical tests compare drawings across processes)."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=generator) * 0.1)
    return model


class MLP(nn.Module):
    """``Linear -> ReLU -> Linear``: the smallest model with nested modules."""

    def __init__(self, d_in: int = 8, d_hidden: int = 16, d_out: int = 4) -> None:
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(d_hidden, d_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.act(self.fc1(x)))


class CNN(nn.Module):
    """Two conv blocks with BatchNorm, pooling, flatten and a linear head."""

    def __init__(self, channels: int = 8, classes: int = 10) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, channels, 3, padding=1),
            nn.BatchNorm2d(channels),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(channels, 2 * channels, 3, padding=1),
            nn.BatchNorm2d(2 * channels),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
        )
        self.head = nn.Linear(2 * channels, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.flatten(self.features(x), 1))


class RecurrentCell(nn.Module):
    """One ``Linear`` reused ``steps`` times in a loop (an unrolled recurrence)."""

    def __init__(self, width: int = 8, steps: int = 3) -> None:
        super().__init__()
        self.cell = nn.Linear(width, width)
        self.steps = steps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x
        for _ in range(self.steps):
            h = torch.tanh(self.cell(h) + x)
        return h


class BareLoop(nn.Module):
    """A loop of bare torch calls with no submodule (each call one multi-pass layer)."""

    def __init__(self, steps: int = 4) -> None:
        super().__init__()
        self.steps = steps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(self.steps):
            x = torch.sigmoid(x * 2.0)
        return x


class Interleaved(nn.Module):
    """Two ``Linear(width, width)`` modules ``a`` and ``b`` called in the order ``schedule``
    spells, each on the previous result; an ``r`` in the schedule is a bare ``torch.relu``.

    ``"ababab"`` advances two loops in lockstep (A1 B1 A2 B2 A3 B3), ``"aaabbb"`` runs one
    loop after the other (A1 A2 A3 B1 B2 B3), ``"abaab"`` lets ``a`` run ahead before ``b``
    resumes (A1 B1 A2 A3 B2).
    """

    def __init__(self, schedule: str, width: int = 4) -> None:
        super().__init__()
        unknown = sorted(set(schedule) - set("abr"))
        if unknown:
            raise ValueError(
                f"schedule {schedule!r} has steps {unknown}; use 'a' and 'b' for the two "
                "modules and 'r' for torch.relu"
            )
        self.a = nn.Linear(width, width)
        self.b = nn.Linear(width, width)
        self.schedule = schedule

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        calls: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
            "a": self.a,
            "b": self.b,
            "r": torch.relu,
        }
        for step in self.schedule:
            x = calls[step](x)  # one call site: each step's passes make one layer
        return x


class Shrink(nn.Module):
    """Halves the last axis on every pass: a loop whose passes vary in shape."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(2):
            x = x[..., : x.shape[-1] // 2]
            x = torch.relu(x)
        return x


class SharedModule(nn.Module):
    """One ``Linear`` instance called from two different places in ``forward``."""

    def __init__(self, width: int = 6) -> None:
        super().__init__()
        self.shared = nn.Linear(width, width)
        self.other = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = self.shared(x)
        b = self.other(x)
        c = self.shared(b)
        return a + c


class Branches(nn.Module):
    """Two sibling submodules joined by a matmul: an op with two parents."""

    def __init__(self) -> None:
        super().__init__()
        self.left = nn.Linear(4, 3)
        self.right = nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.matmul(self.left(x), self.right(x).T)


class Pair(nn.Module):
    """Two tensor inputs and a non-tensor argument."""

    def forward(self, a: torch.Tensor, b: torch.Tensor, scale: float = 1.0) -> torch.Tensor:
        return (a - b) * scale


class KwargsModel(nn.Module):
    """A tensor passed by keyword (``mask=``) next to a positional one."""

    def forward(self, x: torch.Tensor, *, mask: torch.Tensor | None = None) -> torch.Tensor:
        y = torch.relu(x)
        return y if mask is None else y * mask


class TupleOut(nn.Module):
    """Returns a nested tuple ``(a, (b, c))``."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        return x + 1, (x * 2, x.exp())


class DictOut(nn.Module):
    """Returns a dict whose values include a list of tensors."""

    def forward(self, x: torch.Tensor) -> dict[str, Any]:
        return {"logits": x.neg(), "parts": [x.abs(), x.square()], "name": "ignored"}


@dataclass
class PairOut:
    """A dataclass output: tensors in field order, plus a non-tensor field."""

    first: torch.Tensor
    tag: str
    second: torch.Tensor


class DataclassOut(nn.Module):
    """Returns a ``PairOut`` dataclass."""

    def forward(self, x: torch.Tensor) -> PairOut:
        return PairOut(first=x.cos(), tag="t", second=x.sin())


class Attention(nn.Module):
    """Scaled dot-product attention between projections of one input."""

    def __init__(self, width: int = 8) -> None:
        super().__init__()
        self.q = nn.Linear(width, width)
        self.k = nn.Linear(width, width)
        self.v = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(self.q(x), self.k(x), self.v(x))


class TwoBranches(nn.Module):
    """Two convolutions side by side: a larger ``kernel`` in branch ``a`` costs more
    FLOPs, which moves a FLOPs colour domain while branch ``b`` keeps its rows."""

    def __init__(self, kernel: int) -> None:
        super().__init__()
        self.a = nn.Conv2d(3, 8, kernel, padding=kernel // 2)
        self.b = nn.Conv2d(3, 8, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.a(x) + self.b(x)


class NamedBlocks(nn.Module):
    """A two-op block for every name, so each name titles a cluster and labels nodes."""

    def __init__(self, names: list[str]) -> None:
        super().__init__()
        for name in names:
            self.add_module(name, nn.Sequential(nn.Linear(2, 2), nn.ReLU()))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.children():
            x = block(x)
        return x


class HostileNames(nn.Module):
    """Module names full of DOT and HTML metacharacters."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleDict(
            {'a<b&c"d': nn.Linear(4, 4), "e>f'g\\h": nn.Linear(4, 4), "{x}|[y];": nn.ReLU()}
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks.values():
            x = block(x)
        return x


class HostileCluster(nn.Module):
    """A called submodule with a hostile name and two ops, so it is drawn as a cluster
    whose id and title carry the name, next to a one-op module with another."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleDict(
            {
                'q"<&>\\ \u00fc{}|;': nn.Sequential(nn.Linear(4, 4), nn.Tanh()),
                "line\nbreak\\": nn.ReLU(),
            }
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks.values():
            x = block(x)
        return x


class WithBuffer(nn.Module):
    """Adds a registered buffer and a frozen parameter to its input."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("offset", torch.ones(4))
        self.frozen = nn.Parameter(torch.ones(4), requires_grad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x + self.offset) * self.frozen


class _Broken(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # (n, 3) @ (n, 3) is a shape error: the failing op is this matmul.
        y = self.proj(x)
        return torch.matmul(y, y)


class Failing(nn.Module):
    """Runs one good op, then a submodule whose ``matmul`` raises a shape error."""

    def __init__(self) -> None:
        super().__init__()
        self.pre = nn.Linear(4, 4)
        self.broken = _Broken()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.broken(torch.relu(self.pre(x)))


class _ResidualBlock(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.fc1 = nn.Linear(width, 2 * width)
        self.fc2 = nn.Linear(2 * width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.fc2(F.gelu(self.fc1(self.norm(x))))


class ResidualMLP(nn.Module):
    """``blocks`` residual MLP blocks (LayerNorm, Linear, GELU, Linear, add)."""

    def __init__(self, blocks: int = 40, width: int = 32) -> None:
        super().__init__()
        self.blocks = nn.Sequential(*(_ResidualBlock(width) for _ in range(blocks)))
        self.head = nn.Linear(width, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.blocks(x))


def without_pool_flops(trace: Trace) -> Trace:
    """``trace`` with its pooling ops' FLOP counts unknown, like an op nobody counts."""
    unknown = {"flops_forward": None, "flops_backward": None, "flops_total": None,
               "macs_forward": None}  # fmt: skip
    ops = tuple(dataclasses.replace(op, **unknown) if "pool" in op.func else op for op in trace.ops)
    return dataclasses.replace(trace, ops=ops)
