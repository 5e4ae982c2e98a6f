"""``stack_by``: rank columns under the lockstep licence (ENCODING.md §3.4)."""

from __future__ import annotations

import re

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from pytest_tlgraph import EncodingRefusal, Op, Trace
from pytest_tlgraph.capture import capture
from tests.models import MLP, Interleaved, seeded

# Orders of two modules' passes (``Interleaved`` calls ``a`` and ``b`` as spelled).
LOCKSTEP = "ababab"  # A1 B1 A2 B2 A3 B3
RAGGED = "ababa"  # lockstep with an early exit: A3 runs, B3 does not
CHAINED = "aaabbb"  # two loops one after the other: A1 A2 A3 B1 B2 B3
LATE_RESUMPTION = "abaab"  # A1 B1 A2 A3 B2: b resumes after a ran ahead


def trace_of(model: nn.Module) -> Trace:
    return capture(seeded(model), torch.randn(1, 4))


def rank_lines(dot: str) -> list[list[str]]:
    return [re.findall(r'"([^"]+)";', line) for line in dot.splitlines() if "{ rank=same;" in line]


def test_lockstep_loops_stack_by_pass_number() -> None:
    trace = trace_of(Interleaved(LOCKSTEP))
    assert [op.label for op in trace.ops][1:-1] == [
        "linear_1:1", "linear_2:1", "linear_1:2", "linear_2:2", "linear_1:3", "linear_2:3",
    ]  # fmt: skip
    rows = trace.draw(stack_by=True, direction="bottomup")
    assert rank_lines(rows.dot) == [
        ["linear_1:1", "linear_2:1"],
        ["linear_1:2", "linear_2:2"],
        ["linear_1:3", "linear_2:3"],
    ]
    assert 'newrank="true"' in rows.dot
    # Left to right, each pass is a column of a top-to-bottom drawing: its own edges
    # rank it, the edges between passes do not, the passes' first ops share the top.
    drawing = trace.draw(stack_by=True, direction="leftright")
    assert rank_lines(drawing.dot) == [["linear_1:1", "linear_1:2", "linear_1:3"]]
    assert 'rankdir="TB"' in drawing.dot and 'newrank="true"' in drawing.dot
    assert '"linear_1:1" -> "linear_2:1";' in drawing.dot
    assert '"linear_2:1" -> "linear_1:2" [constraint="false"];' in drawing.dot
    assert '"linear_1:1" -> "linear_1:2" [style="invis"];' in drawing.dot
    assert drawing.state is not None
    channel = drawing.state.channels["stack_by"]
    assert channel.source == "pass_number"
    assert dict(channel.groups) == {
        1: ("linear_1:1", "linear_2:1"),
        2: ("linear_1:2", "linear_2:2"),
        3: ("linear_1:3", "linear_2:3"),
    }
    assert channel.encoded == 6 and channel.eligible == len(trace.ops)
    assert drawing.nodes["tlgraph_key"].rows == ("aligned: same pass_number",)


def test_caption_discloses_the_annotation() -> None:
    drawing = trace_of(Interleaved(LOCKSTEP)).draw(stack_by=True)
    graph_line = next(ln for ln in drawing.dot.splitlines() if ln.startswith("  graph ["))
    assert "<BR/>stacked by: pass_number>" in graph_line
    # The caption stays when the key is dropped: it is the disclosure, not the key.
    hidden = trace_of(Interleaved(LOCKSTEP)).draw(stack_by=True, show_legend=False)
    assert "stacked by: pass_number" in hidden.dot
    assert "tlgraph_key" not in hidden.dot and "tlgraph_key" not in hidden.nodes


def test_auto_string_equals_true() -> None:
    trace = trace_of(Interleaved(LOCKSTEP))
    assert trace.draw(stack_by="auto").dot == trace.draw(stack_by=True).dot


def test_ragged_early_exit_qualifies_and_drops_groups_of_one() -> None:
    trace = trace_of(Interleaved(RAGGED))
    assert [op.label for op in trace.ops][-2] == "linear_1:3"
    drawing = trace.draw(stack_by=True)
    # linear_1:3 would be alone in pass 3: a group of one pins nothing and is dropped.
    assert rank_lines(drawing.dot) == [["linear_1:1", "linear_2:1"], ["linear_1:2", "linear_2:2"]]
    assert drawing.state is not None
    assert 3 not in drawing.state.channels["stack_by"].groups


@pytest.mark.parametrize(
    ("model", "breaker", "after"),
    [(Interleaved(CHAINED), "linear_2:1", 3), (Interleaved(LATE_RESUMPTION), "linear_2:2", 3)],
)
def test_non_lockstep_loops_refuse_naming_the_first_breaking_op(
    model: nn.Module, breaker: str, after: int
) -> None:
    trace = trace_of(model)
    with pytest.raises(EncodingRefusal) as info:
        trace.draw(stack_by=True)
    assert info.value.code == "stack_by_auto_underivable"
    assert repr(breaker) in info.value.cause
    assert f"pass {after}" in info.value.cause
    assert "explicit annotation" in info.value.remedy


def test_a_trace_without_multi_pass_ops_refuses() -> None:
    trace = trace_of(MLP(d_in=4))
    with pytest.raises(EncodingRefusal) as info:
        trace.draw(stack_by=True)
    assert info.value.code == "stack_by_auto_underivable"
    assert "no" in info.value.cause and "multi-pass" in info.value.cause


def test_explicit_field_bypasses_the_licence() -> None:
    trace = trace_of(Interleaved(CHAINED))
    drawing = trace.draw(stack_by="pass_number")
    # Every op has a pass number, single-pass inputs and outputs included.
    assert rank_lines(drawing.dot) == [
        ["input_1", "linear_1:1", "linear_2:1", "output_1"],
        ["linear_1:2", "linear_2:2"],
        ["linear_1:3", "linear_2:3"],
    ]
    assert "stacked by: pass_number" in drawing.dot


def test_explicit_callable_bypasses_the_licence_and_none_is_not_pinned() -> None:
    trace = trace_of(Interleaved(LATE_RESUMPTION))
    calls: list[str] = []

    def phase(record: Op) -> str | None:
        calls.append(record.label)
        if not record.has_function:
            return None
        return "early" if record.index <= 2 else "late"

    drawing = trace.draw(stack_by=phase)
    assert sorted(calls) == sorted(op.label for op in trace.ops)
    assert rank_lines(drawing.dot) == [
        ["linear_1:1", "linear_2:1"],
        ["linear_1:2", "linear_1:3", "linear_2:2"],
    ]
    assert "stacked by: callable phase" in drawing.dot
    assert drawing.nodes["tlgraph_key"].rows == ("aligned: same callable phase",)


def test_non_finite_annotations_are_not_pinned() -> None:
    trace = trace_of(Interleaved(LOCKSTEP))
    drawing = trace.draw(stack_by=lambda r: float("nan") if r.func == "linear" else 1.0)
    assert rank_lines(drawing.dot) == [["input_1", "output_1"]]


def test_multi_element_tensor_annotation_refuses() -> None:
    trace = trace_of(Interleaved(LOCKSTEP))
    with pytest.raises(EncodingRefusal) as info:
        trace.draw(stack_by=lambda r: torch.zeros(2))
    assert info.value.code == "encoding_value_invalid"
    assert "stack_by=" in info.value.cause and "2 elements" in info.value.cause
    assert "'input_1'" in info.value.cause and "one annotation per node" in info.value.remedy
    unhashable = trace_of(Interleaved(LOCKSTEP))
    with pytest.raises(EncodingRefusal) as info:
        unhashable.draw(stack_by=lambda r: [r.pass_number])
    assert info.value.code == "encoding_value_invalid"


def test_one_element_tensor_annotation_counts_as_its_item() -> None:
    trace = trace_of(Interleaved(CHAINED))
    as_tensor = trace.draw(stack_by=lambda r: torch.tensor([r.pass_number]))
    as_number = trace.draw(stack_by=lambda r: r.pass_number)
    assert as_tensor.dot == as_number.dot
    assert len(rank_lines(as_tensor.dot)) == 3


def test_rolled_view_refuses_before_the_licence_is_checked() -> None:
    for model in (Interleaved(LOCKSTEP), Interleaved(CHAINED)):
        with pytest.raises(EncodingRefusal) as info:
            trace_of(model).draw(stack_by=True, view="rolled")
        assert info.value.code == "stack_by_requires_unrolled"
        assert "view='unrolled'" in info.value.remedy


def test_stacking_composes_with_colour() -> None:
    trace = trace_of(Interleaved(LOCKSTEP))
    both = trace.draw(stack_by=True, color_by="flops")
    assert rank_lines(both.dot) == rank_lines(trace.draw(stack_by=True).dot)
    assert both.nodes["tlgraph_key"].rows == (
        "forward FLOPs: 0 FLOPs [bar] 32 FLOPs",
        "aligned: same pass_number",
    )


def test_stacked_drawing_renders() -> None:
    from io import BytesIO

    from PIL import Image

    png = trace_of(Interleaved(LOCKSTEP)).draw(stack_by=True, direction="leftright").png()
    image = Image.open(BytesIO(png))
    assert image.format == "PNG" and image.width > image.height  # columns read left to right


@settings(max_examples=40, deadline=None)
@given(schedule=st.text(alphabet="ab", min_size=1, max_size=7))
def test_the_licence_holds_exactly_when_pass_numbers_never_decrease(schedule: str) -> None:
    trace = capture(Interleaved(schedule, width=2), torch.randn(1, 2))
    counts = {name: schedule.count(name) for name in "ab"}
    seen = {"a": 0, "b": 0}
    layer = {name: f"linear_{i}" for i, name in enumerate(dict.fromkeys(schedule), start=1)}
    breaker = None
    previous = 0
    for name in schedule:
        seen[name] += 1
        if counts[name] < 2:
            continue
        if seen[name] < previous and breaker is None:
            breaker = f"{layer[name]}:{seen[name]}"
        previous = seen[name]
    if max(counts.values()) < 2 or breaker is not None:
        with pytest.raises(EncodingRefusal) as info:
            trace.draw(stack_by=True)
        assert info.value.code == "stack_by_auto_underivable"
        if breaker is not None:
            assert repr(breaker) in info.value.cause
    else:
        drawing = trace.draw(stack_by=True)
        assert drawing.state is not None
        for number, ids in drawing.state.channels["stack_by"].groups.items():
            assert len(ids) > 1
            assert all(trace.op(i).pass_number == number for i in ids)
