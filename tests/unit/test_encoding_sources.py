"""Value sources and value rules (ENCODING.md §3, §3.1) on real captured models."""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any

import pytest
import torch

from pytest_tlgraph import EncodingRefusal, Layer, Op, Trace
from pytest_tlgraph.capture import capture
from tests.models import MLP, RecurrentCell, seeded

BYTES = re.compile(r"^\d+(\.\d+)? (B|KB|MB)$")
FLOPS = re.compile(r"^\d+(\.\d+)? (FLOPs|KFLOPs|MFLOPs)$")
MS = re.compile(r"^\d+(\.\d+)? ms$")


@pytest.fixture(scope="module")
def mlp_backward() -> Trace:
    return capture(seeded(MLP()), torch.randn(2, 8), backward=True, magnitudes=True)


def key(trace: Trace, **options: Any) -> tuple[str, ...]:
    return trace.draw(**options).nodes["tlgraph_key"].rows


def sig_digits(text: str) -> int:
    return len(text.replace("-", "").replace(".", "").lstrip("0").split("e")[0])


# --- builtin tokens: key names and units -------------------------------------------------


def test_bytes_key_reads_output_bytes_with_binary_units(mlp: Trace) -> None:
    # Outputs are 2x4 float32 (32 B); the hidden layer is 2x16 float32 (128 B).
    assert key(mlp, color_by="bytes") == ("output bytes: 32 B [bar] 128 B",)
    assert key(mlp, size_by="bytes") == ("size: output bytes, 32 B ... 128 B",)


def test_flops_key_reads_forward_flops_with_decimal_units(mlp: Trace) -> None:
    # fc1: 2 * batch 2 * 8 in * 16 out = 512; inputs and outputs count 0.
    assert key(mlp, color_by="flops") == ("forward FLOPs: 0 FLOPs [bar] 512 FLOPs",)


def test_flops_key_switches_to_kflops_on_a_cnn(cnn: Trace) -> None:
    first_conv = next(op for op in cnn.ops if op.func == "conv2d")
    assert first_conv.flops_forward == 2 * (8 * 8 * 8) * 3 * 3 * 3  # 27648
    (line,) = key(cnn, color_by="flops")
    low, high = line.removeprefix("forward FLOPs: ").split(" [bar] ")
    assert low == "0 FLOPs"
    assert FLOPS.match(high) and high.endswith("KFLOPs")
    biggest = max(op.flops_forward or 0 for op in cnn.ops)
    assert float(high.split()[0]) == pytest.approx(biggest / 1000, rel=5e-3)


def test_time_key_reads_milliseconds_with_three_significant_digits(mlp: Trace) -> None:
    (line,) = key(mlp, color_by="time")
    name, rest = line.split(": ", 1)
    low, high = rest.split(" [bar] ")
    assert name == "time"
    assert low == "0 ms"  # input and output records take no time
    assert MS.match(high) and sig_digits(high.removesuffix(" ms")) <= 3
    slowest = max(op.func_duration or 0.0 for op in mlp.ops)
    assert float(high.removesuffix(" ms")) == pytest.approx(slowest * 1000, rel=5e-3)


def test_magnitude_key_reads_four_significant_digits(mlp: Trace) -> None:
    (line,) = key(mlp, color_by="magnitude")
    name, rest = line.split(": ", 1)
    low, high = rest.split(" [bar] ")
    assert name == "magnitude"
    values = [op.magnitude for op in mlp.ops if op.magnitude is not None]
    for text, expected in ((low, min(values)), (high, max(values))):
        assert sig_digits(text) <= 4
        assert float(text) == pytest.approx(expected, rel=5e-4)


def test_grad_norm_key_needs_a_backward_capture(mlp: Trace, mlp_backward: Trace) -> None:
    (line,) = key(mlp_backward, color_by="grad_norm")
    assert line.startswith("grad norm: ") and " [bar] " in line
    # Input and output records carry no gradient: their nodes read n/a.
    state = mlp_backward.draw(color_by="grad_norm").state
    assert state is not None and "n/a = unencoded" in state.notes
    assert key(mlp, color_by="grad_norm") == ("grad norm: no values",)


def test_dims_is_size_only_and_reads_output_numel(mlp: Trace) -> None:
    # Non-batch numel: 2x8 -> 8, 2x16 -> 16, 2x4 -> 4.
    drawing = mlp.draw(size_by="dims")
    assert drawing.nodes["tlgraph_key"].rows == ("size: output numel, 4 ... 16",)
    assert drawing.state is not None
    assert dict(drawing.state.channels["size_by"].values) == {
        "input_1": 8.0, "linear_1": 16.0, "relu_1": 16.0, "linear_2": 4.0, "output_1": 4.0,
    }  # fmt: skip
    with pytest.raises(EncodingRefusal) as info:
        mlp.draw(color_by="dims")
    assert info.value.code == "encoding_source_invalid"
    assert "size_by='dims'" in info.value.remedy


def test_dims_of_rank_one_or_scalar_output_is_one() -> None:
    class Reduce(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x.sum(dim=1).mean()

    trace = capture(Reduce(), torch.randn(3, 5))
    values = trace.draw(size_by="dims").state.channels["size_by"].values  # type: ignore[union-attr]
    assert values["input_1"] == 5.0
    assert values["sum_1"] == 1.0  # shape (3,): rank 1
    assert values["mean_1"] == 1.0  # a scalar


def test_field_names_name_themselves_with_four_significant_digits(mlp: Trace) -> None:
    (line,) = key(mlp, color_by="flops_total")
    # fc1 forward 512 + backward 2x512 = 1536.
    assert line == "flops_total: 0 [bar] 1536"
    (line,) = key(mlp, color_by="activation_memory")
    assert line == "activation_memory: 32 [bar] 128"


def test_unknown_source_refuses_with_the_valid_choices(mlp: Trace) -> None:
    for bad in ("speed", "", 3, True):
        with pytest.raises(EncodingRefusal) as info:
            mlp.draw(color_by=bad)
        assert info.value.code == "encoding_source_invalid"
        assert "flops" in info.value.remedy and "callable" in info.value.remedy
    with pytest.raises(EncodingRefusal) as info:
        mlp.draw(size_by="speed")
    assert info.value.code == "encoding_source_invalid"
    assert "size_by='speed'" in str(info.value)


# --- callables --------------------------------------------------------------------------


def test_callable_is_named_and_called_once_per_node_with_the_op(mlp: Trace) -> None:
    calls: Counter[str] = Counter()
    seen: list[Any] = []

    def out_features(record: Op) -> float | None:
        calls[record.label] += 1
        seen.append(record)
        return float(record.shape[-1]) if record.shape else None

    drawing = mlp.draw(color_by=out_features, size_by=out_features)
    assert calls == Counter({op.label: 1 for op in mlp.ops})  # inputs and outputs included
    assert all(isinstance(r, Op) for r in seen)
    assert drawing.nodes["tlgraph_key"].rows == (
        "callable out_features: 4 [bar] 16",
        "size: callable out_features, 4 ... 16",
    )


def test_callable_shared_by_all_three_channels_is_still_called_once(mlp: Trace) -> None:
    calls: Counter[str] = Counter()

    def by_module(record: Op) -> float:
        calls[record.label] += 1
        return float(len(record.module))

    mlp.draw(color_by=by_module, size_by=by_module, stack_by=by_module)
    assert set(calls.values()) == {1}
    calls.clear()
    mlp.draw(color_by=by_module)  # a new draw calls again, once
    assert set(calls.values()) == {1} and len(calls) == len(mlp.ops)


def test_rolled_callable_receives_the_layer() -> None:
    trace = capture(seeded(RecurrentCell()), torch.randn(2, 8))
    seen: dict[str, Any] = {}

    def passes(record: Layer) -> float:
        seen[record.label] = record
        return float(record.num_passes)

    drawing = trace.draw(view="rolled", color_by=passes)
    assert set(seen) == set(trace.layers)
    assert all(isinstance(r, Layer) for r in seen.values())
    assert drawing.nodes["tlgraph_key"].rows == ("callable passes: 1 [bar] 3",)


def test_lambda_keeps_its_name(mlp: Trace) -> None:
    assert key(mlp, color_by=lambda r: r.index) == ("callable <lambda>: 0 [bar] 4",)


# --- value rules --------------------------------------------------------------------------


@pytest.mark.parametrize("missing", [None, math.nan, math.inf, -math.inf])
def test_missing_or_non_finite_values_leave_the_node_unencoded(mlp: Trace, missing: Any) -> None:
    def value(record: Op) -> float | None:
        return missing if record.func == "relu" else float(record.index)

    drawing = mlp.draw(color_by=value, size_by=value)
    assert drawing.state is not None
    color, size = drawing.state.channels["color_by"], drawing.state.channels["size_by"]
    assert "relu_1" not in color.values and "relu_1" not in color.fills
    assert "relu_1" not in size.sizes
    assert color.encoded == size.encoded == len(mlp.ops) - 1
    assert drawing.state.notes.count("n/a = unencoded") == 1
    plain = mlp.draw()
    relu_line = next(ln for ln in drawing.dot.splitlines() if ln.startswith('  "relu_1"'))
    assert relu_line == next(ln for ln in plain.dot.splitlines() if ln.startswith('  "relu_1"'))


@pytest.mark.parametrize(
    ("bad", "shown"),
    [(True, "bool"), ("fast", "str"), (torch.ones(3), "3 elements"), ([1.0], "list")],
)
def test_non_numbers_refuse_value_invalid(mlp: Trace, bad: Any, shown: str) -> None:
    for channel in ("color_by", "size_by"):
        with pytest.raises(EncodingRefusal) as info:
            mlp.draw(**{channel: lambda record: bad})
        assert info.value.code == "encoding_value_invalid"
        assert shown in info.value.cause and "input_1" in info.value.cause


def test_one_element_tensor_counts_as_its_item(mlp: Trace) -> None:
    as_tensor = mlp.draw(color_by=lambda r: torch.tensor([[float(r.index)]]))
    as_float = mlp.draw(color_by=lambda r: float(r.index))
    assert as_tensor.dot == as_float.dot
    assert as_tensor.state is not None
    assert as_tensor.state.channels["color_by"].values["output_1"] == 4.0


def test_raising_callable_refuses_with_the_exception_chained(mlp: Trace) -> None:
    def broken(record: Op) -> float:
        if record.func == "relu":
            raise KeyError("no such stat")
        return 1.0

    for channel in ("color_by", "size_by", "stack_by"):
        with pytest.raises(EncodingRefusal) as info:
            mlp.draw(**{channel: broken})
        assert info.value.code == "encoding_callable_error"
        assert isinstance(info.value.__cause__, KeyError)
        assert "callable broken" in info.value.cause and "relu_1" in info.value.cause
        assert info.value.remedy


def test_refusal_is_a_value_error_stating_cause_and_remedy(mlp: Trace) -> None:
    with pytest.raises(ValueError) as info:
        mlp.draw(color_by="nope")
    refusal = info.value
    assert isinstance(refusal, EncodingRefusal)
    assert refusal.cause in str(refusal) and refusal.remedy in str(refusal)
