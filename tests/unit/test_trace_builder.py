"""``frozen_builder``: the fast constructor yields ordinary frozen records."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import Any

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from pytest_tlgraph import capture
from pytest_tlgraph.capture.raw import RawOp
from pytest_tlgraph.draw import Drawing, Node, build_plan
from pytest_tlgraph.draw.dot import DotGraph, NodeStatement
from pytest_tlgraph.draw.plan import Cluster, Plan, PlanNode
from pytest_tlgraph.trace import Layer, ModuleCall, Op, Trace, check_twin, freeze, frozen_builder
from tests.models import MLP, RecurrentCell, seeded


def _values(record: Any) -> list[Any]:
    return [getattr(record, f.name) for f in dataclasses.fields(record)]


def _records() -> list[Any]:
    """Real records of every frozen kind a draw builds in bulk."""
    trace = capture(seeded(RecurrentCell()), torch.randn(2, 8))
    plan = build_plan(trace)
    drawing = trace.draw()
    layer = next(layer for layer in trace.layers.values() if layer.num_passes > 1)
    cluster = Cluster("cluster_cell#1", "cell", "Linear", None)
    return [
        *trace.ops, layer, *trace.modules, *plan.nodes, *drawing.nodes.values(), cluster,
        NodeStatement("linear_1:1", None, {"label": "<x>"}), plan, drawing,
        DotGraph({"label": "<x>"}, "[]", {"color": "red"}, [], [("a", "b")], [cluster], {}),
    ]  # fmt: skip


@pytest.mark.parametrize("record", _records(), ids=lambda r: f"{type(r).__name__}")
def test_built_record_equals_the_constructed_one(record: Any) -> None:
    cls = type(record)
    built = frozen_builder(cls)(*_values(record))
    assert type(built) is cls
    assert built == record
    assert repr(built) == repr(record)
    try:
        expected: int | None = hash(record)
    except TypeError:  # a field holds a mapping proxy: neither one hashes
        expected = None
    if expected is None:
        with pytest.raises(TypeError):
            hash(built)
    else:
        assert hash(built) == expected


@pytest.mark.parametrize(
    "cls", [Op, Layer, ModuleCall, PlanNode, Node, NodeStatement, Cluster, Plan, Drawing, DotGraph]
)
def test_built_record_stays_frozen(cls: type[Any]) -> None:
    record = next(r for r in _records() if type(r) is cls)
    built = frozen_builder(cls)(*_values(record))
    first = dataclasses.fields(cls)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(built, first, "changed")
    with pytest.raises(dataclasses.FrozenInstanceError):
        delattr(built, first)
    assert getattr(built, first) == getattr(record, first)


def test_built_records_copy_pickle_and_replace_like_constructed_ones() -> None:
    trace = capture(seeded(MLP()), torch.randn(2, 8))
    op = trace.op("relu_1")
    assert op.module_args == {"inplace": False} and op.params == ()
    built = frozen_builder(Op)(*_values(op))
    assert pickle.loads(pickle.dumps(built)) == op
    assert copy.deepcopy(built) == op
    renamed = dataclasses.replace(built, label="renamed")
    assert type(renamed) is Op and renamed.label == "renamed" and built.label == op.label


def test_builder_keeps_defaults_and_keywords() -> None:
    build = frozen_builder(ModuleCall)
    assert build("fc1", 1, "Linear", 1, ("", 1), ("linear_1",)) == ModuleCall(
        "fc1", 1, "Linear", 1, ("", 1), ("linear_1",)
    )
    assert build(
        address="a", call_number=2, type_name="T", depth=0, parent=None, ops=()
    ) == ModuleCall("a", 2, "T", 0, None, ())
    with pytest.raises(TypeError):
        build("too", "few")


@dataclasses.dataclass(frozen=True, slots=True)
class _WithDefaults:
    record: str  # a field named like nothing the builder may use itself
    count: int = 3
    tags: list[str] = dataclasses.field(default_factory=list)


def test_builder_keeps_default_factories_and_fields_of_any_public_name() -> None:
    build = frozen_builder(_WithDefaults)
    first, second = build("a"), build("b")
    assert first == _WithDefaults("a") and first.tags == [] and first.tags is not second.tags
    assert build("a", 5, ["x"]) == _WithDefaults("a", 5, ["x"])
    assert build(record="r", tags=["t"]).record == "r"


@dataclasses.dataclass(frozen=True, slots=True)
class _KeywordOnly:
    a: int
    b: int = dataclasses.field(default=0, kw_only=True)


@dataclasses.dataclass(frozen=True, slots=True)
class _NotInInit:
    a: int
    b: int = dataclasses.field(default=0, init=False)


@pytest.mark.parametrize("cls", [_KeywordOnly, _NotInInit])
def test_builder_refuses_fields_that_are_no_plain_parameter(cls: type[Any]) -> None:
    with pytest.raises(TypeError, match="plain public __init__ parameter"):
        frozen_builder(cls)


@pytest.mark.parametrize("cls", [RawOp, Trace, int])
def test_builder_refuses_what_it_cannot_build(cls: type[Any]) -> None:
    # RawOp is not frozen; Trace computes a field in __post_init__; int is no dataclass.
    with pytest.raises(TypeError, match="frozen slotted dataclass"):
        frozen_builder(cls)


def test_builder_refuses_a_frozen_class_without_slots() -> None:
    @dataclasses.dataclass(frozen=True)
    class Plain:
        a: int

    with pytest.raises(TypeError, match="frozen slotted dataclass"):
        frozen_builder(Plain)


_texts = st.text(max_size=8)


@given(
    address=_texts,
    number=st.integers(min_value=1, max_value=10**6),
    type_name=_texts,
    depth=st.integers(min_value=0, max_value=50),
    ops=st.lists(_texts, max_size=4).map(tuple),
    family=st.none() | _texts,
)
def test_builder_matches_the_constructor_on_any_values(
    address: str, number: int, type_name: str, depth: int, ops: tuple[str, ...],
    family: str | None,
) -> None:  # fmt: skip
    args = (address, number, type_name, depth, None, ops, None, family)
    built = frozen_builder(ModuleCall)(*args)
    made = ModuleCall(*args)
    assert built == made and hash(built) == hash(made) and built.key == made.key


def test_recorder_records_are_twins_of_the_trace_records() -> None:
    from pytest_tlgraph.capture.raw import ModuleFrame

    check_twin(RawOp, Op)
    check_twin(ModuleFrame, ModuleCall)
    assert [f.name for f in dataclasses.fields(RawOp)] == [f.name for f in dataclasses.fields(Op)]
    frame = ModuleFrame("fc", 1, "Linear", 1, ("", 1))
    frame.ops = ("linear_1",)
    frozen = freeze(frame, ModuleCall)
    assert type(frozen) is ModuleCall and frozen == ModuleCall(
        "fc", 1, "Linear", 1, ("", 1), ("linear_1",)
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        frozen.ops = ()  # type: ignore[misc]


@dataclasses.dataclass(slots=True)
class _Shuffled:
    call_number: int
    address: str
    type_name: str
    depth: int
    parent: Any
    ops: tuple[str, ...]
    module_args: Any = None
    module_family: Any = None


@pytest.mark.parametrize(
    ("mutable", "frozen"), [(_Shuffled, ModuleCall), (RawOp, ModuleCall), (RawOp, RawOp)]
)
def test_check_twin_refuses_classes_whose_slots_differ(mutable: type, frozen: type) -> None:
    with pytest.raises(TypeError):
        check_twin(mutable, frozen)
