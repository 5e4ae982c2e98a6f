"""Repeat folds as "Nx" clusters and the screen-sized auto (REVIEW.md §1.2, §1.3), on
the real-model corpus."""

from __future__ import annotations

import io

import pytest
import torch
from PIL import Image
from torch import nn

from pytest_tlgraph import capture
from pytest_tlgraph.draw import build_plan
from pytest_tlgraph.draw.collapse import AUTO_NODE_BUDGET
from tests.corpus import names
from tests.corpus.traces import corpus_trace
from tests.plan_checks import check_plan

SCREEN = (4000, 8000)


@pytest.mark.parametrize("name", names())
def test_auto_fits_a_screen(name: str) -> None:
    trace = corpus_trace(name)
    drawing = trace.draw(collapse="auto")
    assert AUTO_NODE_BUDGET == 60
    assert len(drawing.nodes) <= AUTO_NODE_BUDGET
    image = Image.open(io.BytesIO(drawing.png(dpi=96)))
    assert image.width <= SCREEN[0] and image.height <= SCREEN[1], image.size
    check_plan(trace, build_plan(trace, collapse="auto"))


@pytest.mark.parametrize(
    ("name", "title"),
    [
        ("gpt2", "x2 @transformer.h.0-1 (GPT2Block)"),
        ("bert", "x2 @encoder.layer.0-1 (BertLayer)"),
        ("llama", "x2 @model.layers.0-1 (LlamaDecoderLayer)"),
        ("sequential_2000", "x2000 @0-3999 (Linear, ReLU)"),
    ],
)
def test_repeated_blocks_fold_into_one_titled_cluster(name: str, title: str) -> None:
    trace = corpus_trace(name)
    drawing = trace.draw(collapse="auto", color_by="flops")
    assert title in drawing.clusters
    assert drawing.state is not None
    assert f"{title}: repeat fold shows its representative only" in drawing.state.notes


def test_the_sequential_folds_to_its_representative_pair() -> None:
    drawing = corpus_trace("sequential_2000").draw(collapse="auto")
    assert [n.rows[0] for n in drawing.nodes.values()] == ["input", "linear_1", "relu_1", "output"]
    assert len(drawing.nodes["linear_1"].members) == 2000
    assert drawing.edges == (("input_1", "linear_1"), ("linear_1", "relu_1"),
                             ("relu_1", "output_1"))  # fmt: skip


class _Twelve(nn.Module):
    """Twelve blocks, one (h.3) with an extra op: the run splits around it."""

    def __init__(self) -> None:
        super().__init__()
        self.h = nn.ModuleList(_Block(i == 3) for i in range(12))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.h:
            x = block(x)
        return x


class _Block(nn.Module):
    def __init__(self, odd: bool) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.odd = odd

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.fc(x))
        return y * 2 if self.odd else y


def test_a_changed_block_splits_the_run() -> None:
    drawing = capture(_Twelve(), torch.randn(2, 4)).draw(collapse="auto")
    assert drawing.clusters == (
        "x3 @h.0-2 (_Block)", "@h.3 (_Block)", "x8 @h.4-11 (_Block)",
    )  # fmt: skip


def test_collapse_budget_changes_the_budget() -> None:
    trace = corpus_trace("t5")
    small = trace.draw(collapse="auto", collapse_budget=20)
    assert len(small.nodes) <= 20 < len(trace.draw(collapse="auto").nodes)
    with pytest.raises(ValueError, match="collapse='auto'"):
        trace.draw(collapse_budget=20)
    with pytest.raises(ValueError, match="positive int"):
        trace.draw(collapse="auto", collapse_budget=0)
