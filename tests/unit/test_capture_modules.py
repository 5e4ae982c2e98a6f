"""``index_model``: one walk gives what torch's own walks give, in the same order."""

from __future__ import annotations

import pytest
from torch import nn

from pytest_tlgraph.capture.modules import index_model
from tests.models import CNN, Attention, HostileNames, ResidualMLP, SharedModule, WithBuffer, seeded


class _Reused(nn.Module):
    """One module registered under two names and inside a container, a None child, an
    empty container, a tied parameter and a frozen one."""

    def __init__(self) -> None:
        super().__init__()
        shared = nn.Linear(3, 3)
        self.first = shared
        self.blocks = nn.ModuleList([nn.Sequential(nn.ReLU(), shared), nn.Tanh()])
        self.second = shared
        self.missing = None
        self.head = nn.Linear(3, 3)
        self.head.weight = shared.weight  # tied: counted and named once
        self.frozen = nn.Linear(3, 2)
        self.frozen.requires_grad_(False)
        self.empty = nn.Sequential()  # a container without children is falsy, yet walked


class _Block(nn.Module):
    """Compares by value, as a dataclass module may: torch's walk keeps one of two equal
    blocks, and so must ours."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(2, 2)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Block)

    def __hash__(self) -> int:
        return 0


class _EqualBlocks(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.x = _Block()
        self.y = _Block()


_MODELS = {
    "equal blocks": _EqualBlocks,
    "cnn": CNN,
    "residual": ResidualMLP,
    "attention": Attention,
    "shared": SharedModule,
    "buffer": WithBuffer,
    "hostile": HostileNames,
    "reused": _Reused,
}


@pytest.mark.parametrize("name", sorted(_MODELS))
def test_index_walks_modules_parameters_and_buffers_as_torch_does(name: str) -> None:
    model = seeded(_MODELS[name]())
    index = index_model(model)
    assert [(a, id(m)) for a, m in index.modules] == [(a, id(m)) for a, m in model.named_modules()]
    named = {id(p): (n, tuple(p.shape), p.requires_grad) for n, p in model.named_parameters()}
    buffers = {id(b): (n, tuple(b.shape), False) for n, b in model.named_buffers()}
    assert index.params == {**named, **{k: v for k, v in buffers.items() if k not in named}}
    assert index.param_count == sum(p.numel() for p in model.parameters())


def test_tied_and_shared_tensors_are_listed_under_their_first_name() -> None:
    index = index_model(_Reused())
    names = sorted(info[0] for info in index.params.values())
    assert names == sorted(
        ["first.weight", "first.bias", "head.bias", "frozen.weight", "frozen.bias"]
    )
    assert ("frozen.weight", (2, 3), False) in index.params.values()
