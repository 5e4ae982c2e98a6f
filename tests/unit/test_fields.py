"""The measurement fields, declared once (``pytest_tlgraph/fields.py``): the records
hold exactly the declared slots, and each field aggregates as its declaration says, over
the passes of a rolled layer, the ops of a box or segment and the boxes of a fold, on
real corpus models."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pytest

from pytest_tlgraph import capture
from pytest_tlgraph.capture.raw import RawOp
from pytest_tlgraph.draw import build_plan
from pytest_tlgraph.draw.collapse.records import CollapsedRecord, FoldRecord
from pytest_tlgraph.draw.encoding.sources import resolve_source
from pytest_tlgraph.fields import BOX_SUMMED, FIELDS, MEASURED, Field, check_record
from pytest_tlgraph.trace import Layer, Op, Trace
from tests.corpus.registry import build


def _trace(name: str) -> Trace:
    case = build(name)
    return capture(case.model, case.inputs, kwargs=case.kwargs)


def _measurements(cls: type) -> list[str]:
    return [f.name for f in dataclasses.fields(cls) if f.name in MEASURED]


def test_every_record_holds_the_declared_fields_in_order() -> None:
    assert _measurements(Op) == _measurements(Layer) == list(MEASURED)
    assert RawOp.__slots__ == Op.__slots__  # type: ignore[attr-defined]
    assert _measurements(CollapsedRecord) == list(BOX_SUMMED)
    assert [f.name for f in FIELDS if f.stored] == list(MEASURED)
    assert {f.name for f in FIELDS if not f.stored} == {"param_count"}  # an Op property
    assert all(isinstance(getattr(Op, f.name), property) for f in FIELDS if not f.stored)


def test_a_record_out_of_step_with_the_table_is_refused() -> None:
    @dataclasses.dataclass
    class Missing:
        func_duration: float

    @dataclasses.dataclass
    class Apart:
        func_duration: float
        label: str
        activation_memory: int

    with pytest.raises(TypeError, match=r"missing \['activation_memory'\]"):
        check_record(Missing, ("func_duration", "activation_memory"))
    with pytest.raises(TypeError, match=r"declare each field in pytest_tlgraph/fields\.py"):
        check_record(Apart, ("func_duration", "activation_memory"))
    check_record(Missing, ("func_duration",))


def _sum(values: list[Any]) -> Any:
    if any(v is None for v in values):
        return None
    return math.fsum(values) if any(isinstance(v, float) for v in values) else sum(values)


@pytest.mark.parametrize("name", ["lstm_cell_loop", "gru_cell_loop"])
def test_rolled_layers_follow_each_fields_pass_rule(name: str) -> None:
    trace = _trace(name)
    layers = [layer for layer in trace.layers.values() if layer.num_passes > 1]
    assert layers and any(layer.has_function for layer in layers)
    for layer in layers:
        ops = [trace.op(label) for label in layer.ops]
        for field in (f for f in FIELDS if f.stored):
            per_pass = [getattr(op, field.name) for op in ops]
            value = getattr(layer, field.name)
            if field.passes == "sum":
                assert value == _sum(per_pass), (layer.label, field.name)
            elif field.passes == "each" and layer.has_function:
                assert value is None and layer.varying[field.name] == tuple(per_pass)
            elif all(v == per_pass[0] for v in per_pass):
                assert value == per_pass[0], (layer.label, field.name)
            else:
                assert value is None and layer.varying[field.name] == tuple(per_pass)


def _collapsed(trace: Trace, **options: Any) -> list[Any]:
    plan = build_plan(trace, **options)
    return [node.record for node in plan.nodes if isinstance(node.record, CollapsedRecord)]


@pytest.mark.parametrize("options", [{"depth": 1}, {"collapse": "max"}])
def test_boxes_and_segments_follow_each_fields_box_rule(options: Any) -> None:
    trace = _trace("resnet18_basic")
    records = [r for r in _collapsed(trace, **options) if not isinstance(r, FoldRecord)]
    assert records
    for record in records:
        ops = [trace.op(label) for label in record.members if trace.op(label).has_function]
        for field in FIELDS:
            if field.boxes == "n/a":
                assert not hasattr(record, field.name), field.name
            elif field.stored:
                assert getattr(record, field.name) == _sum([getattr(op, field.name) for op in ops])


def test_folds_follow_each_fields_fold_rule() -> None:
    trace = _trace("resnet18_basic")
    folds = [r for r in _collapsed(trace, collapse="auto") if isinstance(r, FoldRecord)]
    assert folds
    for fold in folds:
        for field in (f for f in FIELDS if f.stored):
            if field.folds == "first":
                assert getattr(fold, field.name) == getattr(fold.boxes[0], field.name)
            else:
                assert not hasattr(fold, field.name)


@pytest.mark.parametrize("field", FIELDS, ids=lambda f: f.name)
def test_a_source_reading_a_field_takes_its_declared_rules(field: Field) -> None:
    # param_count is a property, read through its builtin token.
    source = resolve_source(field.name if field.stored else "params", channel="color_by")
    assert source.field == field.name
    assert source.volatile is field.volatile
    assert source.additive is (field.boxes == "sum")
