"""Plumbing becomes one segment per run in ``collapse="auto"`` (issue 24, item 2): mask,
index and shape arithmetic that reads no weight and no activation. Such arithmetic that
reads no input value either (a causal mask from the sequence length, rotary tables) is a
constant subgraph since issue 39: one ``const`` node at the root, never a segment."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from pytest_tlgraph import capture
from pytest_tlgraph.draw import build_plan
from pytest_tlgraph.draw.collapse import AUTO_NODE_BUDGET
from pytest_tlgraph.draw.collapse.plumbing import plumbing_ops
from pytest_tlgraph.draw.collapse.records import BoxRecord, FoldRecord
from tests.corpus.traces import corpus_trace
from tests.plan_checks import check_plan

DECODERS = ["gemma2", "gemma3", "qwen2_moe", "llama", "phi3", "mixtral", "qwen2", "mistral"]


@pytest.mark.parametrize("name", [*DECODERS, "roberta"])
def test_at_most_a_quarter_of_the_auto_nodes_are_plumbing(name: str) -> None:
    trace = corpus_trace(name)
    plan = build_plan(trace, collapse="auto")
    check_plan(trace, plan)
    plumbing = plumbing_ops(trace)
    segments = [n for n in plan.nodes if n.kind == "segment"]
    for node in segments:
        assert set(node.members) <= plumbing  # never an op that reads a weight or data
        assert node.cluster is not None  # drawn in its module's frame
    alone = [n for n in plan.nodes if n.kind == "op" and n.id in plumbing]
    assert 4 * (len(segments) + len(alone)) <= len(plan.nodes)
    if name == "roberta":  # position ids computed from the input ids: one segment
        assert segments
    else:  # masks and rotary tables depend on no input value: constants, drawn once
        assert {trace.op(n.id).func for n in alone} == {"const"}
        assert all(n.cluster is None for n in alone)


@pytest.mark.parametrize(
    ("name", "compute"),
    [
        ("gemma2", "Gemma2DecoderLayer"),
        ("gemma3", "Gemma3DecoderLayer"),
        ("qwen2_moe", "Qwen2MoeSparseMoeBlock"),
        ("llama", "LlamaDecoderLayer"),
    ],
)
def test_auto_expands_where_the_compute_is_within_the_budget(name: str, compute: str) -> None:
    trace = corpus_trace(name)
    plan = build_plan(trace, collapse="auto")
    assert len(plan.nodes) <= AUTO_NODE_BUDGET
    # Drawn as a frame with its ops or boxes inside, not as one box.
    frames = [c.id for c in plan.clusters if c.type_name == compute]
    assert frames
    inside = [n for n in plan.nodes if n.cluster in frames]
    assert len(inside) >= 2
    boxed = {n.record.module_type for n in plan.nodes if isinstance(n.record, BoxRecord)}
    boxed |= {n.record.boxes[0].module_type for n in plan.nodes if isinstance(n.record, FoldRecord)}
    assert compute not in boxed


def test_gemma3_mask_and_rotary_tables_are_a_few_constants_and_the_mlp_opens() -> None:
    trace = corpus_trace("gemma3")
    constants = [op for op in trace.ops if op.func == "const"]
    assert plumbing_ops(trace) == {op.label for op in constants}
    assert 1 <= len(constants) <= 6
    plan = build_plan(trace, collapse="auto")
    assert {n.id for n in plan.nodes if n.kind == "op" and n.cluster is None} >= {
        op.label for op in constants
    }
    assert "Gemma3MLP" in {c.type_name for c in plan.clusters}


class _Masked(nn.Module):
    """A causal mask from the input's length, and'ed with the input's padding mask."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
        n = x.shape[1]
        rows = torch.arange(n)
        causal = rows[:, None] >= rows[None, :]  # no input value: a constant
        keep = causal[-1] & valid.bool()  # computed from the input: plumbing
        h = self.proj(x)
        return h.masked_fill(~keep[..., None], 0.0)


def test_the_mask_of_a_small_model_is_one_constant_and_one_segment() -> None:
    inputs = (torch.randn(1, 5, 4), torch.tensor([[1, 1, 1, 0, 0]]))
    trace = capture(_Masked(), inputs)
    plan = build_plan(trace, collapse="auto")
    check_plan(trace, plan)
    [segment] = [n for n in plan.nodes if n.kind == "segment"]
    funcs = [trace.op(label).func for label in segment.members]
    assert funcs[0] == "bool" and "and" in funcs
    assert "linear" not in funcs and "masked_fill" not in funcs
    [constant] = [op for op in trace.ops if op.func == "const"]
    assert ("input_2", segment.id) in plan.edges and (constant.label, segment.id) in plan.edges
    # depth=N and plain drawings keep every op.
    assert "segment" not in {n.kind for n in build_plan(trace, depth=1).nodes}


class Inner(nn.Module):
    """A linear that also runs a check whose answer feeds nothing (an island)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        bool(
            torch.randint(0, 4, (4,)).add(1).gt(0).all()
        )  # steers Python only (a draw)
        return self.fc(x) * positions


class Checked(nn.Module):
    """Positions built in the outer module; with ``inner``, the island runs inside."""

    def __init__(self, inner: bool) -> None:
        super().__init__()
        self.inner = Inner() if inner else None
        self.fc = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.inner is None:
            bool(torch.randint(0, 4, (4,)).add(1).gt(0).all())
            return self.fc(x)
        positions = torch.randint(0, 8, (8,)).float().unsqueeze(0)
        return self.inner(x, positions)


def test_a_dead_island_with_no_segment_to_join_is_drawn_op_by_op() -> None:
    trace = capture(Checked(inner=False), (torch.randn(2, 8),))
    plan = build_plan(trace, collapse="auto")
    assert [n.id for n in plan.nodes if n.kind == "segment"] == []
    touched = {end for edge in plan.edges for end in edge}
    assert [n.id for n in plan.nodes if n.id not in touched] == []
    assert ("randint_1", "add_1") in plan.edges and ("gt_1", "all_1") in plan.edges


def test_a_dead_island_joins_the_segment_of_the_module_around_it() -> None:
    trace = capture(Checked(inner=True), (torch.randn(2, 8),))
    plan = build_plan(trace, collapse="auto")
    segments = [n for n in plan.nodes if n.kind == "segment"]
    assert len(segments) == 1
    # The positions (outer module) and the inner check: one segment, in the outer frame.
    assert set(segments[0].members) == {
        "randint_1", "float_1", "unsqueeze_1", "randint_2", "add_1", "gt_1", "all_1"
    }  # fmt: skip
    assert segments[0].cluster is None
    touched = {end for edge in plan.edges for end in edge}
    assert [n.id for n in plan.nodes if n.id not in touched] == []
