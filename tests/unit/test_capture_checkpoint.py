"""``grad_norm`` inside reentrant checkpoints equals the norm without checkpointing."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

from pytest_tlgraph import capture


class _Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(4, 8)
        self.b = nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(torch.tanh(self.a(x)))


class _Stack(nn.Module):
    def __init__(self, reentrant: bool | None) -> None:
        super().__init__()
        self.blocks = nn.ModuleList([_Block() for _ in range(3)])
        self.head = nn.Linear(4, 1)
        self.reentrant = reentrant

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            if self.reentrant is None:
                x = block(x)
            else:
                x = checkpoint(block, x, use_reentrant=self.reentrant)
        return self.head(x)


def _norms(reentrant: bool | None) -> dict[str, float | None]:
    torch.manual_seed(0)
    model = _Stack(reentrant)
    x = torch.randn(2, 4, generator=torch.Generator().manual_seed(1), requires_grad=True)
    trace = capture(model, x, backward=True)
    return {op.label: op.grad_norm for op in trace.ops if op.has_function}


def test_every_op_inside_a_reentrant_checkpoint_gets_the_grad_norm_it_has_without_one() -> None:
    plain = _norms(None)
    checkpointed = _norms(True)
    assert list(checkpointed) == list(plain)
    for label, norm in plain.items():
        assert norm is not None
        assert checkpointed[label] == pytest.approx(norm, rel=1e-6), label
    # The blocks share a structure: each recomputed op found its own pass.
    assert len({checkpointed[f"linear_{n}"] for n in (1, 3, 5)}) == 3


def test_non_reentrant_checkpoints_keep_their_grad_norms() -> None:
    plain = _norms(None)
    assert _norms(False) == pytest.approx(plain, rel=1e-6)


def test_every_projection_of_a_reentrant_checkpointed_llama_has_a_grad_norm() -> None:
    from tests.corpus import build

    case = build("llama")
    case.model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": True})
    case.model.train()
    trace = capture(case.model, case.inputs, backward=True)
    linears = [op for op in trace.ops if op.func == "linear"]
    assert len(linears) == 2 * 7 + 1  # q, k, v, o, gate, up, down per layer; the head
    assert [op.label for op in linears if op.grad_norm is None] == []
