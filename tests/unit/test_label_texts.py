"""``node_texts`` is ``node_rows`` as plain data, on every node kind and option set;
``html_label`` escapes exactly the rows that need it."""

from __future__ import annotations

import dataclasses
from types import MappingProxyType
from typing import Any

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from pytest_tlgraph import capture
from pytest_tlgraph.capture.signatures import recorded_defaults
from pytest_tlgraph.constructors import ModuleArgs
from pytest_tlgraph.draw import build_plan, node_rows, node_texts
from pytest_tlgraph.draw.dot import html_escape, html_label
from pytest_tlgraph.draw.labels import args_row
from pytest_tlgraph.errors import EncodingRefusal
from pytest_tlgraph.options import DrawOptions
from pytest_tlgraph.trace import Trace
from tests.models import CNN, HostileNames, RecurrentCell, ResidualMLP, Shrink, seeded

_OPTIONS: list[dict[str, Any]] = [
    {},
    {"view": "rolled"},
    {"collapse": "auto"},
    {"collapse": "max", "view": "rolled"},
    {"depth": 1},
    {"show_saved_for_backward": True},
    {"show_saved_for_backward": True, "view": "rolled"},
    {"show_redundant_args": True},
    {"node_label_fields": ["op", "shape", "args", "pass", "flops"]},
]


def _traces() -> dict[str, Trace]:
    return {
        "cnn": capture(seeded(CNN()), torch.randn(2, 3, 8, 8)),
        "recurrent": capture(seeded(RecurrentCell()), torch.randn(2, 8)),
        "residual": capture(seeded(ResidualMLP(blocks=3)), torch.randn(2, 32)),
        "shrink": capture(Shrink(), torch.randn(2, 8)),
        "hostile": capture(seeded(HostileNames()), torch.randn(2, 4)),
    }


_TRACES = _traces()


@pytest.mark.parametrize("options", _OPTIONS, ids=repr)
@pytest.mark.parametrize("name", sorted(_TRACES))
def test_texts_are_the_rows_texts_and_bold_indices(name: str, options: dict[str, Any]) -> None:
    trace = _TRACES[name]
    draw = {k: v for k, v in options.items() if k not in ("view", "depth", "collapse")}
    opts = DrawOptions.from_kwargs(**draw)
    plan = build_plan(
        trace,
        view=options.get("view", "unrolled"),
        depth=options.get("depth"),
        collapse=options.get("collapse"),
    )
    kinds = set()
    for node in plan.nodes:
        kinds.add(node.kind)
        for attached in (trace, None):
            rows = node_rows(node, trace=attached, options=opts)
            texts, bold = node_texts(node, trace=attached, options=opts)
            assert texts == tuple(r.text for r in rows)
            assert bold == tuple(i for i, r in enumerate(rows) if r.bold)
    assert "input" in kinds and "output" in kinds


def test_texts_refuse_an_unknown_token_like_rows() -> None:
    trace = _TRACES["cnn"]
    node = build_plan(trace).nodes[1]
    opts = DrawOptions.from_kwargs(node_label_fields=["shape", "colour"])
    with pytest.raises(EncodingRefusal) as refused:
        node_texts(node, trace=trace, options=opts)
    assert refused.value.code == "node_label_field_invalid"


def test_an_op_without_module_args_gets_no_args_row_even_detached() -> None:
    trace = _TRACES["recurrent"]
    plan = build_plan(trace)
    tanh = next(n for n in plan.nodes if n.id == "tanh_1:1")
    texts, _ = node_texts(tanh, trace=None, options=DrawOptions())
    assert texts == ("tanh_1:1", "2x8, 64 B")
    linear = next(n for n in plan.nodes if n.id == "linear_1:1")
    detached, _ = node_texts(linear, trace=None, options=DrawOptions())
    attached, _ = node_texts(linear, trace=trace, options=DrawOptions())
    # Detached, nothing can be checked: the redundant in/out features come back.
    assert "in_features=8, out_features=8, bias=True" in detached
    # Attached, the sizes are proven by the shapes and bias=True is the default.
    assert not any("=" in text for text in attached if not text.startswith("params:"))


def _reference_label(rows: list[str], bold: set[int]) -> str:
    parts = [
        f"<B>{html_escape(t)}</B>" if i in bold else html_escape(t) for i, t in enumerate(rows)
    ]
    return "<" + "<BR/>".join(parts) + ">"


@given(
    rows=st.lists(st.text(alphabet=st.sampled_from("ab 1x<>&\"'\n\r@."), max_size=6), max_size=5),
    bold=st.sets(st.integers(min_value=0, max_value=5)),
)
def test_html_label_escapes_like_escaping_every_row(rows: list[str], bold: set[int]) -> None:
    assert html_label(rows, bold) == _reference_label(rows, bold)


_EQUAL_VALUES_OF_OTHER_TYPES = [
    1, True, 1.0, (1, 1), (True, True), (1.0, 1), ((1, 1), (1,)), ((True, True), (1,)), "1",
    0.0, -0.0, 0, False, (0.0, 1), (-0.0, 1), (0, 1),
]  # fmt: skip


def _pool_texts(**changes: Any) -> tuple[Any, tuple[str, ...]]:
    """The CNN's ``max_pool2d_1`` record with ``changes``, and its default label texts."""
    trace = _TRACES["cnn"]
    pool = next(n for n in build_plan(trace).nodes if n.id == "max_pool2d_1")
    record = dataclasses.replace(pool.record, **changes)
    texts, _ = node_texts(
        dataclasses.replace(pool, record=record), trace=trace, options=DrawOptions()
    )
    return record, texts


def test_args_rows_read_each_value_as_its_type_however_often_drawn() -> None:
    for _ in range(2):  # the second round reads every row from the memo
        for value in _EQUAL_VALUES_OF_OTHER_TYPES:
            args = MappingProxyType({"kernel_size": value, "stride": 2})
            _, texts = _pool_texts(module_args=args)
            expected = args_row(args, family="torch", input_shape=None, output_shape=None)
            assert expected is not None and expected in texts, (value, texts)


def test_args_rows_of_the_same_values_keep_their_names_and_module_apart() -> None:
    for _ in range(2):  # the second round reads every row from the memo
        for names in (("kernel_size", "stride"), ("stride", "kernel_size"), ("a", "b")):
            for module_type in ("MaxPool2d", "AvgPool2d"):
                # Each class's defaults as capture records them: the memo keeps rows read
                # against different defaults apart.
                defaults = recorded_defaults(module_type)
                args = ModuleArgs(dict(zip(names, (3, 2), strict=True)), module_type, defaults)
                record, texts = _pool_texts(module_args=args, module_type=module_type)
                expected = args_row(args, family=record.module_family, input_shape=None,
                                    output_shape=None)  # fmt: skip
                assert expected is not None and expected in texts, (names, module_type)


@pytest.mark.parametrize("show_redundant", [False, True])
def test_a_memoised_args_row_still_follows_its_shapes(show_redundant: bool) -> None:
    # Every Linear of the model has the same args: drawn with and without the check,
    # the memoised rows keep the two apart, and a row drawn again is the row drawn first.
    trace = _TRACES["residual"]
    plan = build_plan(trace)
    options = DrawOptions(show_redundant_args=show_redundant)
    rows = {
        node.id: node_texts(node, trace=trace, options=options)[0]
        for node in plan.nodes
        if node.kind == "op" and node.record.module_family == "linear"
    }
    for node in plan.nodes:
        if node.id in rows:
            again, _ = node_texts(node, trace=trace, options=options)
            assert again == rows[node.id]
    shown = {any("in_features" in t for t in texts) for texts in rows.values()}
    assert shown == ({True} if show_redundant else {False})


class _Knob:
    """A value whose text changes while it stays the same object."""

    def __init__(self) -> None:
        self.position = 1

    def __str__(self) -> str:
        return f"knob{self.position}"


def test_an_args_row_of_an_object_is_written_from_its_current_text() -> None:
    trace = _TRACES["cnn"]
    pool = next(n for n in build_plan(trace).nodes if n.id == "max_pool2d_1")
    knob = _Knob()
    args = MappingProxyType({"kernel_size": (knob,)})
    node = dataclasses.replace(pool, record=dataclasses.replace(pool.record, module_args=args))
    first, _ = node_texts(node, trace=trace, options=DrawOptions())
    knob.position = 2
    second, _ = node_texts(node, trace=trace, options=DrawOptions())
    assert "kernel_size=(knob1,)" in first and "kernel_size=(knob2,)" in second
