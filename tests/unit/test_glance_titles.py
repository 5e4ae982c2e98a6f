"""Fold counts and titles read first (issue 24, item 3): the count leads a fold's title,
in bold, at the top of its cluster; other sibling names shorten to their shared prefix;
a frame that holds one frame and nothing else is drawn once."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from pytest_tlgraph import capture
from pytest_tlgraph.draw import build_plan
from tests.corpus.traces import corpus_trace
from tests.plan_checks import check_plan


def _cluster_line(dot: str, title: str) -> str:
    lines = [line for line in dot.splitlines() if f"label=<{title}>" in line or title in line]
    lines = [line for line in lines if line.lstrip().startswith("graph [label=")]
    assert len(lines) == 1, title
    return lines[0]


@pytest.mark.parametrize(
    ("name", "title"),
    [
        ("llama", "x2 @model.layers.0-1 (LlamaDecoderLayer)"),
        ("phi3", "x2 @model.layers.0-1 (Phi3DecoderLayer)"),
        ("mixtral", "x2 @model.layers.0-1 (MixtralDecoderLayer)"),
        ("gpt2", "x2 @transformer.h.0-1 (GPT2Block)"),
    ],
)
def test_the_fold_count_leads_its_bold_title_at_the_top(name: str, title: str) -> None:
    trace = corpus_trace(name)
    bottomup = trace.draw(collapse="auto")
    assert title in bottomup.clusters
    line = _cluster_line(bottomup.dot, title)
    assert f"label=<<B>{title}</B>>" in line
    # graphviz flips top and bottom with the ranks: "b" is the top of a bottom-up picture.
    assert 'labelloc="b"' in line
    topdown = trace.draw(collapse="auto", direction="topdown")
    assert 'labelloc="t"' in _cluster_line(topdown.dot, title)
    # A module's frame keeps its plain title where graphviz puts it.
    plain = _cluster_line(bottomup.dot, "@model (LlamaModel)") if name == "llama" else None
    assert plain is None or ("<B>" not in plain and "labelloc" not in plain)


def test_a_fold_node_title_leads_with_its_count() -> None:
    # ResNet's layer1 stacks two BasicBlocks: one boxed fold node at depth 1.
    plan = build_plan(corpus_trace("resnet18_basic"), collapse="auto", depth=1)
    titles = [n.record.title for n in plan.nodes if n.kind == "fold"]
    assert titles[0] == "x2 @layer1.0-1 (BasicBlock)"  # within @layer1


class _Bottleneck(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.b(torch.relu(self.a(x)))


class _RegNetLike(nn.Module):
    """torchvision's RegNet names its blocks ``block4-1`` ... ``block4-5``."""

    def __init__(self) -> None:
        super().__init__()
        self.block4 = nn.Sequential()
        for i in range(1, 6):
            self.block4.add_module(f"block4-{i}", _Bottleneck())
        self.head = nn.Linear(4, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.block4(x))


def test_other_sibling_names_shorten_to_their_shared_prefix() -> None:
    trace = capture(_RegNetLike(), torch.randn(2, 4))
    drawing = trace.draw(collapse="auto")
    assert "x5 @block4.block4-1..5 (_Bottleneck)" in drawing.clusters
    assert not any("..block4.block4-5" in title for title in drawing.clusters)


def test_a_frame_holding_only_a_fold_is_drawn_once_on_bert() -> None:
    trace = corpus_trace("bert")
    plan = build_plan(trace, collapse="auto")
    check_plan(trace, plan)
    titles = {c.title: c for c in plan.clusters}
    # BertEncoder holds nothing but the fold of its layers: only the fold is drawn.
    assert "@encoder (BertEncoder)" not in titles
    assert titles["x2 @encoder.layer.0-1 (BertLayer)"].parent is None
    assert "@encoder (BertEncoder)" not in trace.draw(collapse="auto").dot


def test_the_regnet_stage_frame_is_not_drawn_around_its_fold() -> None:
    plan = build_plan(capture(_RegNetLike(), torch.randn(2, 4)), collapse="auto")
    assert [c.title for c in plan.clusters] == ["x5 @block4.block4-1..5 (_Bottleneck)"]


class _Wrapper(nn.Module):
    """A block whose only content is one inner module of two ops."""

    def __init__(self) -> None:
        super().__init__()
        self.inner = _Bottleneck()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.inner(x)


def test_a_fold_holding_one_frame_keeps_its_count_and_drops_the_inner_frame() -> None:
    model = nn.Sequential(_Wrapper(), _Wrapper(), _Wrapper(), nn.Linear(4, 2))
    trace = capture(model, torch.randn(2, 4))
    plan = build_plan(trace, collapse="auto", depth=2)
    check_plan(trace, plan)
    assert [c.title for c in plan.clusters] == ["x3 @0-2 (_Wrapper)"]
    inside = [n for n in plan.nodes if n.cluster == plan.clusters[0].id]
    # The nodes now sit in the fold's frame: their titles are relative to it.
    assert [n.kind for n in inside] == ["box", "op", "box", "op"]
    drawn = trace.draw(collapse="auto", depth=2).nodes[inside[0].id]
    assert drawn.rows[0] == "@inner.a (Linear)"
