"""Plumbing segments are named by what they compute (issue 24, item 2): ``mask: 12
ops``, ``positions: 5 ops``, ``shape: 2 ops``, ``index: 3 ops``; their content
signature stays in the DOT, so a change inside still fails."""

from __future__ import annotations

import re

import torch
from torch import nn

from pytest_tlgraph import capture
from pytest_tlgraph.draw import build_plan
from pytest_tlgraph.draw.collapse.records import SegmentRecord
from pytest_tlgraph.draw.collapse.signature import read_signature
from pytest_tlgraph.draw.plan import Plan, PlanNode
from pytest_tlgraph.trace import Trace
from tests.corpus.traces import corpus_trace
from tests.plan_checks import check_plan

# The hidden content: the signature and the calls inside (neither is drawn).
_COMMENT = re.compile(r', (?:comment|tl_inside|tl_ops)="[^"]*"')


def _segments(trace: Trace) -> tuple[Plan, list[PlanNode]]:
    plan = build_plan(trace, collapse="auto")
    check_plan(trace, plan)
    return plan, [n for n in plan.nodes if n.kind == "segment"]


def _purpose(node: PlanNode) -> str | None:
    assert isinstance(node.record, SegmentRecord)
    return node.record.purpose


def _funcs(trace: Trace, node: PlanNode) -> list[str]:
    return [trace.op(label).func for label in node.members]


def _feeds(plan: Plan, node: PlanNode) -> list[str]:
    return [target for source, target in plan.edges if source == node.id]


def _constants(trace: Trace) -> list[str]:
    return [op.label for op in trace.ops if op.func == "const"]


def test_gemma3_draws_its_masks_and_rotary_tables_as_constants() -> None:
    # Without an attention mask input, the masks and position ids are computed from
    # sizes alone: each table is one ``const`` node (drawn by value), not plumbing.
    trace = corpus_trace("gemma3")
    _, segments = _segments(trace)
    assert segments == []
    tables = [op for op in trace.ops if op.func == "const" and op.shape == (1, 1, 8, 8)]
    assert len(tables) >= 4  # cos and sin for each of the two layer types
    assert all(op.children for op in tables)
    dot = trace.draw(collapse="auto").dot
    assert "<B>mask: " not in dot and "<B>positions: " not in dot
    assert all(f'"{label}" [' in dot for label in _constants(trace))


def test_llama_draws_its_rotary_tables_as_constants_read_by_every_layer() -> None:
    trace = corpus_trace("llama")
    _, segments = _segments(trace)
    assert segments == []
    cos_sin = [trace.op(label) for label in _constants(trace)]
    assert [op.shape for op in cos_sin] == [(1, 1, 8, 8), (1, 1, 8, 8)]
    readers = {trace.op(child).module for op in cos_sin for child in op.children}
    assert readers == {"model.layers.0.self_attn", "model.layers.1.self_attn"}


def test_qwen2_moe_unread_mask_draws_nothing() -> None:
    # Qwen2-MoE builds a causal mask that no op reads (attention runs causal by flag):
    # a constant is drawn when an op reads it, so it leaves no node without an edge.
    trace = corpus_trace("qwen2_moe")
    _, segments = _segments(trace)
    assert segments == []
    assert all(trace.op(label).children for label in _constants(trace))


class _Masked(nn.Module):
    """Builds a causal mask from the input's length (``upper``: the transposed one)."""

    def __init__(self, upper: bool = False) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.upper = upper

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # Counted from the input (sizes alone would make it a constant).
        rows = torch.ones_like(x[0, :, 0], dtype=torch.long).cumsum(0)
        first, second = (
            (rows[None, :], rows[:, None]) if self.upper else (rows[:, None], rows[None, :])
        )
        mask = first >= second
        return self.proj(x).masked_fill(~mask[..., None], 0.0)


def test_a_changed_mask_op_changes_the_segment_signature_not_its_rows() -> None:
    before = capture(_Masked(), torch.randn(1, 5, 4)).draw(collapse="auto").dot
    after = capture(_Masked(upper=True), torch.randn(1, 5, 4)).draw(collapse="auto").dot
    assert "<B>mask: 8 ops</B>" in before
    assert _COMMENT.sub("", before) == _COMMENT.sub("", after)  # every row the same
    [old] = re.findall(r'"segment:[^"]+" \[[^\n]*comment="([^"]*)"', before)
    [new] = re.findall(r'"segment:[^"]+" \[[^\n]*comment="([^"]*)"', after)
    old_sig, new_sig = read_signature(old), read_signature(new)
    assert old_sig is not None and new_sig is not None
    assert old_sig.digest != new_sig.digest
    assert (
        old_sig.funcs
        == new_sig.funcs
        == ("getitem", "ones_like", "cumsum", "getitem", "getitem", "ge", "getitem", "invert")
    )


class _Shaped(nn.Module):
    """Adds a bias column made from the input's size alone."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        column = x.new_zeros(x.shape[0]).view(-1, 1)  # torch.zeros would be a constant
        return self.proj(x) + column


class _Indexed(nn.Module):
    """Shifts token ids before the lookup: integer index arithmetic."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(10, 4)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.embed(ids[:, 1:] - 1)


def test_size_made_tensors_are_shape_and_integer_arithmetic_is_index() -> None:
    shaped = capture(_Shaped(), torch.randn(3, 4))
    _, [segment] = _segments(shaped)
    assert (_purpose(segment), _funcs(shaped, segment)) == ("shape", ["new_zeros", "view"])
    indexed = capture(_Indexed(), torch.randint(1, 10, (2, 5)))
    _, [segment] = _segments(indexed)
    assert (_purpose(segment), _funcs(indexed, segment)) == ("index", ["getitem", "sub"])
    assert "<B>index: 2 ops</B>" in indexed.draw(collapse="auto").dot


def test_max_segments_keep_their_first_and_last_op_title() -> None:
    trace = capture(_Shaped(), torch.randn(3, 4))
    plan = build_plan(trace, collapse="max")
    records = [n.record for n in plan.nodes if n.kind == "segment"]
    assert records and all(isinstance(r, SegmentRecord) and r.purpose is None for r in records)
    assert "<B>new_zeros_1..view_1</B>" in trace.draw(collapse="max").dot
