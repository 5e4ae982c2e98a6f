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


def test_gemma3_draws_a_mask_segment_and_position_segments() -> None:
    trace = corpus_trace("gemma3")
    plan, segments = _segments(trace)
    by_purpose: dict[str | None, list[PlanNode]] = {}
    for node in segments:
        by_purpose.setdefault(_purpose(node), []).append(node)
    assert set(by_purpose) == {"mask", "positions"}
    [mask] = by_purpose["mask"]
    assert {"gt", "le", "and"} <= set(_funcs(trace, mask))
    # The batch and head aranges the causal mask function ignores go with the mask.
    assert _funcs(trace, mask)[:3] == ["arange"] * 3
    assert any(target.startswith("@model.layers.0") for target in _feeds(plan, mask))
    for node in by_purpose["positions"]:
        assert "cumsum" in _funcs(trace, node) or str(node.cluster).startswith(
            "cluster_model.rotary_emb"
        )
    dot = trace.draw(collapse="auto").dot
    assert f"<B>mask: {len(mask.members)} ops</B>" in dot
    assert dot.count("<B>positions: ") == len(by_purpose["positions"])


def test_llama_draws_its_position_ids_as_positions() -> None:
    trace = corpus_trace("llama")
    plan, segments = _segments(trace)
    assert {_purpose(n) for n in segments} == {"positions"}
    [ids] = [n for n in segments if "arange" in _funcs(trace, n)]
    assert "cumsum" in _funcs(trace, ids)
    [rotary] = _feeds(plan, ids)
    [node] = [n for n in plan.nodes if n.id == rotary]
    assert node.cluster == "cluster_model.rotary_emb#1"  # read in the rotary embedding


def test_qwen2_moe_unused_mask_joins_the_position_segment() -> None:
    # Qwen2-MoE builds a causal mask that no op reads (attention runs causal by flag):
    # alone it would be a node with no edge, so it joins the segment of its module
    # call that has one, named by what leaves it: the position ids.
    trace = corpus_trace("qwen2_moe")
    plan, segments = _segments(trace)
    [positions] = segments
    assert _purpose(positions) == "positions"
    assert {"cumsum", "gt", "le", "and", "expand"} <= set(_funcs(trace, positions))
    assert _feeds(plan, positions) == ["@model.rotary_emb#1"]


class _Masked(nn.Module):
    """Builds a causal mask from the input's length (``upper``: the transposed one)."""

    def __init__(self, upper: bool = False) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.upper = upper

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows = torch.arange(x.shape[1])
        first, second = (
            (rows[None, :], rows[:, None]) if self.upper else (rows[:, None], rows[None, :])
        )
        mask = first >= second
        return self.proj(x).masked_fill(~mask[..., None], 0.0)


def test_a_changed_mask_op_changes_the_segment_signature_not_its_rows() -> None:
    before = capture(_Masked(), torch.randn(1, 5, 4)).draw(collapse="auto").dot
    after = capture(_Masked(upper=True), torch.randn(1, 5, 4)).draw(collapse="auto").dot
    assert "<B>mask: 6 ops</B>" in before
    assert _COMMENT.sub("", before) == _COMMENT.sub("", after)  # every row the same
    [old] = re.findall(r'"segment:[^"]+" \[[^\n]*comment="([^"]*)"', before)
    [new] = re.findall(r'"segment:[^"]+" \[[^\n]*comment="([^"]*)"', after)
    old_sig, new_sig = read_signature(old), read_signature(new)
    assert old_sig is not None and new_sig is not None
    assert old_sig.digest != new_sig.digest
    assert (
        old_sig.funcs
        == new_sig.funcs
        == ("arange", "getitem", "getitem", "ge", "getitem", "invert")
    )


class _Shaped(nn.Module):
    """Adds a bias column made from the input's size alone."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        column = torch.zeros(x.shape[0]).view(-1, 1)
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
    assert (_purpose(segment), _funcs(shaped, segment)) == ("shape", ["zeros", "view"])
    indexed = capture(_Indexed(), torch.randint(1, 10, (2, 5)))
    _, [segment] = _segments(indexed)
    assert (_purpose(segment), _funcs(indexed, segment)) == ("index", ["getitem", "sub"])
    assert "<B>index: 2 ops</B>" in indexed.draw(collapse="auto").dot


def test_max_segments_keep_their_first_and_last_op_title() -> None:
    trace = capture(_Shaped(), torch.randn(3, 4))
    plan = build_plan(trace, collapse="max")
    records = [n.record for n in plan.nodes if n.kind == "segment"]
    assert records and all(isinstance(r, SegmentRecord) and r.purpose is None for r in records)
    assert "<B>zeros_1..view_1</B>" in trace.draw(collapse="max").dot
