"""``size_by`` and ``size_scale``: label-aware node area (ENCODING.md §3.3)."""

from __future__ import annotations

import dataclasses
import math
import re
import statistics
from typing import Any

import pytest
import torch

from pytest_tlgraph import EncodingRefusal, Op, Trace
from pytest_tlgraph.capture import capture
from pytest_tlgraph.draw.dot import html_escape
from pytest_tlgraph.draw.fontmetrics import estimate_label_box
from tests.models import BareLoop

_SIZE = re.compile(r'"([^"]+)" \[.*width="(\d+\.\d{3})", height="(\d+\.\d{3})", fixedsize="false"')
TOL = 0.002  # both sides are rounded to 3 decimals


def emitted_sizes(dot: str) -> dict[str, tuple[float, float]]:
    return {m[1]: (float(m[2]), float(m[3])) for m in _SIZE.finditer(dot)}


@pytest.fixture(scope="module")
def loop() -> Trace:
    # mul_1:k and sigmoid_1:k for k = 1..4: two label widths, one label height.
    return capture(BareLoop(), torch.randn(2, 8))


def squared_pass(record: Op) -> float | None:
    return float(record.pass_number**2) if record.has_function else None


def test_sizes_are_emitted_as_three_decimal_minimums(loop: Trace) -> None:
    drawing = loop.draw(size_by=squared_pass)
    sizes = emitted_sizes(drawing.dot)
    assert drawing.state is not None
    state_sizes = drawing.state.channels["size_by"].sizes
    assert set(sizes) == set(state_sizes) == {op.label for op in loop.ops if op.has_function}
    assert sizes == dict(state_sizes)
    assert 'fixedsize="true"' not in drawing.dot
    for node_id in ("input_1", "output_1"):  # None: unencoded, no size at all
        line = next(ln for ln in drawing.dot.splitlines() if ln.startswith(f'  "{node_id}"'))
        assert "width=" not in line and "fixedsize" not in line


def test_area_is_four_times_the_base_at_the_largest_value(loop: Trace) -> None:
    sizes = emitted_sizes(loop.draw(size_by=squared_pass).dot)
    for stem in ("mul_1", "sigmoid_1"):
        (w1, h1), (w4, h4) = sizes[f"{stem}:1"], sizes[f"{stem}:4"]
        assert w4 == pytest.approx(2 * w1, abs=TOL)
        assert h4 == pytest.approx(2 * h1, abs=TOL)
        assert w4 * h4 == pytest.approx(4 * w1 * h1, rel=0.01)


@pytest.mark.parametrize(
    ("scale", "factor"),
    [
        # values k^2: sqrt gives k, normalised (k - 1) / 3, so each side grows by sqrt(k)
        ("sqrt", lambda k: math.sqrt(k)),
        # linear: normalised (k^2 - 1) / 15, each side grows by sqrt(1 + 3 f)
        ("linear", lambda k: math.sqrt(1 + 3 * (k * k - 1) / 15)),
    ],
)
def test_scale_transforms_before_normalising(loop: Trace, scale: str, factor: Any) -> None:
    drawing = loop.draw(size_by=squared_pass, size_scale=scale)
    sizes = emitted_sizes(drawing.dot)
    base_w, base_h = sizes["mul_1:1"]
    for k in (2, 3):
        w, h = sizes[f"mul_1:{k}"]
        assert w == pytest.approx(base_w * factor(k), abs=TOL)
        assert h == pytest.approx(base_h * factor(k), abs=TOL)
    assert drawing.state is not None
    assert drawing.state.channels["size_by"].transform == scale
    assert drawing.state.channels["size_by"].domain == (1.0, 16.0)


def test_default_scale_is_sqrt(loop: Trace) -> None:
    assert (
        loop.draw(size_by=squared_pass).dot
        == loop.draw(size_by=squared_pass, size_scale="sqrt").dot
    )


def _box(rows: tuple[str, ...]) -> tuple[float, float]:
    w, h = estimate_label_box([html_escape(r) for r in rows], fontsize=10, bold_first=True)
    return max(w, 0.75), max(h, 0.5)  # Graphviz never draws a node below 0.75 x 0.5


def test_base_is_the_median_label_box_and_long_labels_start_from_their_own(mlp: Trace) -> None:
    plain = mlp.draw()
    drawing = mlp.draw(size_by="bytes")
    sizes = emitted_sizes(drawing.dot)
    boxes = {node_id: _box(plain.nodes[node_id].rows) for node_id in sizes}
    base_w = statistics.median(w for w, _ in boxes.values())
    base_h = statistics.median(h for _, h in boxes.values())
    # linear_1 carries the long args row: wider and taller than the median label.
    assert boxes["linear_1"][0] > base_w and boxes["linear_1"][1] > base_h
    lo, hi = math.sqrt(32), math.sqrt(128)
    for node_id, (w, h) in sizes.items():
        value = mlp.op(node_id).activation_memory
        assert value is not None
        grow = math.sqrt(1 + 3 * (math.sqrt(value) - lo) / (hi - lo))
        own_w, own_h = boxes[node_id]
        assert w == pytest.approx(max(own_w, base_w) * grow, abs=TOL)
        assert h == pytest.approx(max(own_h, base_h) * grow, abs=TOL)
    # The smallest-value nodes with typical labels share the base exactly.
    assert sizes["output_1"] == pytest.approx((base_w, base_h), abs=TOL / 2)


def test_one_long_label_does_not_inflate_the_others(loop: Trace) -> None:
    def mul_pass(record: Op) -> float | None:
        return float(record.pass_number) if record.func == "mul" else None

    before = emitted_sizes(loop.draw(size_by=mul_pass).dot)
    # Give mul_1:2 a long module row: only its own node may grow.
    ops = tuple(
        dataclasses.replace(op, module="encoder.layers.0.attention.projection")
        if op.label == "mul_1:2"
        else op
        for op in loop.ops
    )
    long_trace = dataclasses.replace(loop, ops=ops)
    after = emitted_sizes(long_trace.draw(size_by=mul_pass).dot)
    assert {k: v for k, v in after.items() if k != "mul_1:2"} == {
        k: v for k, v in before.items() if k != "mul_1:2"
    }
    own_w, own_h = _box(long_trace.draw().nodes["mul_1:2"].rows)
    grow = math.sqrt(1 + 3 * (math.sqrt(2) - 1) / (2 - 1))
    assert after["mul_1:2"][0] == pytest.approx(own_w * grow, abs=TOL)
    assert after["mul_1:2"][1] == pytest.approx(own_h * grow, abs=TOL)
    assert after["mul_1:2"][0] > 1.5 * before["mul_1:2"][0]


def test_node_spec_fn_width_and_height_win(mlp: Trace) -> None:
    def pin(node: Any, spec: dict[str, Any]) -> dict[str, Any] | None:
        if node.rows[0] != "relu_1":
            return None
        return {**spec, "width": "3.000", "height": "2.000"}

    drawing = mlp.draw(size_by="bytes", node_spec_fn=pin)
    sizes = emitted_sizes(drawing.dot)
    assert sizes["relu_1"] == (3.0, 2.0)
    assert sizes["linear_2"] == emitted_sizes(mlp.draw(size_by="bytes").dot)["linear_2"]


def test_key_line_names_quantity_and_range(mlp: Trace) -> None:
    assert mlp.draw(size_by="bytes").nodes["tlgraph_key"].rows == (
        "size: output bytes, 32 B ... 128 B",
    )
    assert mlp.draw(size_by="bytes", size_scale="linear").nodes["tlgraph_key"].rows == (
        "size: output bytes, 32 B ... 128 B",
    )


def test_constant_size_domain_sizes_nothing(mlp: Trace) -> None:
    drawing = mlp.draw(size_by=lambda record: 7)
    assert drawing.nodes["tlgraph_key"].rows == ("size: callable <lambda>, all 7",)
    assert emitted_sizes(drawing.dot) == {}
    nothing = mlp.draw(size_by=lambda record: None)
    assert nothing.nodes["tlgraph_key"].rows == ("size: callable <lambda>, no values",)


def test_sqrt_of_a_negative_value_refuses(mlp: Trace) -> None:
    def signed(record: Op) -> float:
        return float(record.index) - 2.0

    with pytest.raises(EncodingRefusal) as info:
        mlp.draw(size_by=signed)
    assert info.value.code == "encoding_value_invalid"
    assert "-2.0" in info.value.cause and "input_1" in info.value.cause
    assert "linear" in info.value.remedy
    drawing = mlp.draw(size_by=signed, size_scale="linear")  # linear takes negatives
    assert drawing.nodes["tlgraph_key"].rows == ("size: callable signed, -2 ... 2",)


def test_unknown_scale_refuses_before_reading_any_value(mlp: Trace) -> None:
    calls: list[str] = []

    def value(record: Op) -> float:
        calls.append(record.label)
        return 1.0

    with pytest.raises(EncodingRefusal) as info:
        mlp.draw(size_by=value, size_scale="log")
    assert info.value.code == "encoding_scale_invalid"
    assert "'log'" in info.value.cause and "'sqrt'" in info.value.remedy
    assert calls == []


def test_size_scale_without_size_by_refuses(mlp: Trace) -> None:
    for extra in ({}, {"color_by": "bytes"}):
        with pytest.raises(EncodingRefusal) as info:
            mlp.draw(size_scale="linear", **extra)
        assert info.value.code == "size_scale_requires_size_by"
        assert "size_by" in info.value.remedy
