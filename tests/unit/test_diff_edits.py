"""The typed edits and the op-level opening of a drawing (``pytest_tlgraph.diff``)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import torch
from torch import nn

from pytest_tlgraph import capture
from pytest_tlgraph.diff.edits import EDIT_KINDS, BlockRemoved, from_json, to_json
from pytest_tlgraph.diff.engine import model_edits
from pytest_tlgraph.diff.graph import read_graph
from pytest_tlgraph.diff.record import op_level


def _sample(cls: type) -> Any:
    values: dict[str, Any] = {}
    for item in dataclasses.fields(cls):
        kind = str(item.type)
        if "tuple" in kind:
            values[item.name] = ("a @x", "b @y")
        elif "int" in kind:
            values[item.name] = 3
        elif "bool" in kind:
            values[item.name] = True
        else:
            values[item.name] = f"{item.name}-value"
    return cls(**values)


@pytest.mark.parametrize("kind", list(EDIT_KINDS))
def test_every_edit_reads_back_from_its_json_form(kind: str) -> None:
    edit = _sample(EDIT_KINDS[kind])
    data = to_json(edit)
    assert data["kind"] == kind
    assert from_json(data) == edit


def test_a_json_edit_of_an_unknown_kind_or_without_a_field_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown edit kind 'nope'"):
        from_json({"kind": "nope"})
    with pytest.raises(ValueError, match="without its field 'at'"):
        from_json({"kind": "block_removed", "type": "X", "ops": 1})
    assert from_json({"kind": "block_removed", "at": "a", "type": "X", "ops": 1}) == (
        BlockRemoved("a", "X", 1)
    )


class _Block(nn.Module):
    def __init__(self, act: type[nn.Module] = nn.ReLU) -> None:
        super().__init__()
        self.fc1, self.act, self.fc2 = nn.Linear(8, 16), act(), nn.Linear(16, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.fc2(self.act(self.fc1(x)))


class _Stack(nn.Module):
    def __init__(self, n: int = 4, act_at: int | None = None) -> None:
        super().__init__()
        self.blocks = nn.Sequential(
            *(_Block(nn.GELU if i == act_at else nn.ReLU) for i in range(n))
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.blocks(x)


_VIEWS: list[dict[str, Any]] = [{}, {"depth": 1}, {"collapse": "auto"}]


def _dot(model: nn.Module, **options: Any) -> str:
    torch.manual_seed(0)
    return capture(model.eval(), (torch.randn(2, 8),)).draw(**options).dot


@pytest.mark.parametrize("options", _VIEWS, ids=["default", "depth1", "auto"])
def test_every_view_opens_to_the_same_ops(options: dict[str, Any]) -> None:
    full = op_level(read_graph(_dot(_Stack()))).graph
    opened = op_level(read_graph(_dot(_Stack(), **options))).graph
    ops = sorted(n.func for n in opened.nodes.values() if n.kind == "op")
    assert ops == sorted(n.func for n in full.nodes.values() if n.kind == "op")


@pytest.mark.parametrize("options", _VIEWS, ids=["default", "depth1", "auto"])
def test_the_same_edit_is_found_in_every_view(options: dict[str, Any]) -> None:
    old = read_graph(_dot(_Stack(), **options))
    removed = model_edits(old, read_graph(_dot(_Stack(3), **options)))
    assert [(type(e).__name__, e.address) for e in removed] == [("BlockRemoved", "blocks.3")]
    swapped = model_edits(old, read_graph(_dot(_Stack(act_at=2), **options)))
    assert [(type(e).__name__, e.address.startswith("blocks.2")) for e in swapped] == [
        ("OpReplaced", True)
    ]
    assert model_edits(old, old) == ()
