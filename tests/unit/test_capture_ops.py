"""Op fields (ENCODING.md §1, §1.1) on real torch modules: naming, order, edges,
shapes, modules, params and the per-op measurements."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from pytest_tlgraph import Op, Trace, capture
from tests.models import CNN, MLP, Branches, RecurrentCell, SharedModule, WithBuffer, seeded


def _funcs(trace: Trace) -> list[str]:
    return [op.func for op in trace.ops]


@pytest.fixture(scope="module")
def mlp_trace() -> Trace:
    torch.manual_seed(0)
    return capture(seeded(MLP()), torch.randn(2, 8))


# -- labels, layers, functions ---------------------------------------------------------
def test_mlp_ops_in_execution_order_with_inputs_first_and_outputs_last(mlp_trace: Trace) -> None:
    assert [op.label for op in mlp_trace.ops] == [
        "input_1", "linear_1", "relu_1", "linear_2", "output_1",
    ]  # fmt: skip
    assert [op.index for op in mlp_trace.ops] == list(range(5))
    assert _funcs(mlp_trace) == ["input", "linear", "relu", "linear", "output"]
    assert [op.has_function for op in mlp_trace.ops] == [False, True, True, True, False]


def test_layer_numbers_count_layers_of_one_func_in_order_of_first_appearance() -> None:
    class Mixed(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            a = torch.relu(x)
            b = torch.sigmoid(a)
            c = torch.relu(b)
            return torch.relu(c) + a

    trace = capture(Mixed(), torch.randn(3))
    assert [op.label for op in trace.ops][1:-1] == [
        "relu_1", "sigmoid_1", "relu_2", "relu_3", "add_1",
    ]  # fmt: skip
    assert all(op.label == op.layer for op in trace.ops)


def test_operators_are_named_by_their_function_and_non_tensor_calls_are_not_ops() -> None:
    class Operators(nn.Module):
        def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
            assert x.size(0) == 3 and x.dim() == 2 and len(x) == 3 and x.numel() == 9
            return x + x, 1 - x, x @ x, x[0], x / 2, -x, torch.add(x, x)

    trace = capture(Operators(), torch.randn(3, 3))
    inner = [op.func for op in trace.ops if op.has_function]
    assert inner == ["add", "sub", "matmul", "getitem", "div", "neg", "add"]


def test_multi_output_calls_are_one_op_reading_the_first_output() -> None:
    class Split(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            values, indices = torch.sort(x, dim=-1)
            return values + indices

    trace = capture(Split(), torch.randn(2, 5))
    sort = trace.op("sort_1")
    assert sort.dtype == "float32" and sort.shape == (2, 5)
    # Both outputs are its tensors: 2x5 float32 + 2x5 int64.
    assert sort.activation_memory == 10 * 4 + 10 * 8
    assert trace.op("add_1").parents == ("sort_1",)


def test_ops_returning_a_tensor_inside_torch_functions_are_one_op() -> None:
    # F.layer_norm calls several torch functions internally: only the outer call is seen.
    class Norm(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return F.layer_norm(x, (4,))

    assert _funcs(capture(Norm(), torch.randn(2, 4))) == ["input", "layer_norm", "output"]


# -- passes -----------------------------------------------------------------------------
def test_multi_pass_labels_carry_the_pass_and_every_op_knows_the_pass_count() -> None:
    trace = capture(RecurrentCell(steps=3), torch.randn(2, 8))
    linears = [op for op in trace.ops if op.layer == "linear_1"]
    assert [op.label for op in linears] == ["linear_1:1", "linear_1:2", "linear_1:3"]
    assert [op.pass_number for op in linears] == [1, 2, 3]
    assert {op.num_passes for op in linears} == {3}
    single = trace.op("input_1")
    assert (single.pass_number, single.num_passes) == (1, 1)


# -- edges ------------------------------------------------------------------------------
def test_parents_follow_argument_order_and_children_follow_execution_order() -> None:
    class Order(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            a = torch.sin(x)
            b = torch.cos(x)
            c = torch.sub(b, a)  # b first in the argument list
            d = torch.mul(a, b)
            return c + d

    trace = capture(Order(), torch.randn(4))
    assert trace.op("sub_1").parents == ("cos_1", "sin_1")
    assert trace.op("mul_1").parents == ("sin_1", "cos_1")
    assert trace.op("sin_1").children == ("sub_1", "mul_1")
    assert trace.op("input_1").children == ("sin_1", "cos_1")
    for op in trace.ops:
        for parent in op.parents:
            assert op.label in trace.op(parent).children


def test_a_tensor_read_twice_is_one_parent() -> None:
    trace = capture(Branches(), torch.randn(2, 4))
    assert trace.op("matmul_1").parents == ("linear_1", "T_1")
    square = capture(_Square(), torch.randn(3))
    assert square.op("mul_1").parents == ("input_1",)
    assert square.op("input_1").children == ("mul_1",)


class _Square(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * x


def test_in_place_ops_become_the_producer_of_their_tensor() -> None:
    class InPlace(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = x.clone()
            y.add_(1)
            return y.relu()

    trace = capture(InPlace(), torch.randn(3))
    assert trace.op("add__1").parents == ("clone_1",)
    assert trace.op("relu_1").parents == ("add__1",)


# -- shapes, dtypes ---------------------------------------------------------------------
def test_shape_and_dtype_are_plain_python_values(mlp_trace: Trace) -> None:
    linear = mlp_trace.op("linear_1")
    assert linear.shape == (2, 16) and type(linear.shape) is tuple
    assert all(type(d) is int for d in linear.shape)
    assert linear.dtype == "float32"


def test_half_precision_ops_record_their_dtype_and_bytes() -> None:
    model = seeded(MLP()).half()
    trace = capture(model, torch.randn(2, 8).half(), magnitudes=True)
    for op in trace.ops:
        assert op.dtype == "float16"
    assert trace.op("linear_1").activation_memory == 2 * 16 * 2
    magnitude = trace.op("linear_1").magnitude
    assert magnitude is not None and math.isfinite(magnitude)


def test_integer_outputs_have_a_dtype_but_no_magnitude() -> None:
    class Argmax(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x.argmax(dim=-1)

    op = capture(Argmax(), torch.randn(2, 5)).op("argmax_1")
    assert op.dtype == "int64" and op.shape == (2,)
    assert op.magnitude is None
    assert op.activation_memory == 2 * 8


# -- modules ----------------------------------------------------------------------------
def test_module_is_the_innermost_forward_and_module_calls_the_chain_from_the_root() -> None:
    trace = capture(CNN(), torch.randn(2, 3, 8, 8))
    conv = trace.op("conv2d_2")
    assert conv.module == "features.4"
    assert conv.module_calls == (("", 1), ("features", 1), ("features.4", 1))
    flatten = trace.op("flatten_1")
    assert flatten.module == "" and flatten.module_calls == (("", 1),)
    assert trace.op("input_1").module_calls == ()


def test_module_calls_count_each_call_of_a_shared_module() -> None:
    trace = capture(SharedModule(), torch.randn(2, 6))
    shared = [op for op in trace.ops if op.module == "shared"]
    assert [op.module_calls[-1] for op in shared] == [("shared", 1), ("shared", 2)]
    calls = [(c.address, c.call_number) for c in trace.modules]
    assert calls == [("", 1), ("shared", 1), ("other", 1), ("shared", 2)]
    assert trace.modules[3].ops == (shared[1].label,)
    assert trace.modules[3].parent == ("", 1) and trace.modules[3].depth == 1
    assert trace.modules[0].ops == tuple(op.label for op in trace.ops if op.has_function)


def test_module_args_sit_on_the_module_output_op_only() -> None:
    trace = capture(CNN().eval(), torch.randn(2, 3, 8, 8))
    conv = trace.op("conv2d_1")
    assert conv.module_args is not None
    assert conv.module_args["in_channels"] == 3 and conv.module_args["out_channels"] == 8
    assert conv.module_args["kernel_size"] == (3, 3)
    assert conv.module_type == "Conv2d" and conv.module_family == "conv"
    head = trace.op("linear_1")
    assert dict(head.module_args or {}) == {"in_features": 16, "out_features": 10, "bias": True}
    # flatten runs in the root forward (a user module): no args anywhere near it.
    assert trace.op("flatten_1").module_args is None
    assert trace.op("input_1").module_args is None


class _GatedBias(nn.Linear):
    """Hides its bias while disabled, through a __getattr__ of its own."""

    def __getattr__(self, name: str) -> Any:
        if name == "bias" and not self.__dict__.get("use_bias", True):
            return None
        return super().__getattr__(name)


def _gated(module: _GatedBias) -> nn.Module:
    module.use_bias = False
    return module


def _bias_property(module: nn.Module) -> nn.Module:
    """Give ``module`` a class whose ``bias`` property hides the registered bias."""
    hidden = type("BiasHidden", (type(module),), {"bias": property(lambda self: None)})
    module.__class__ = hidden
    return module


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda: nn.Linear(4, 2), True),
        (lambda: nn.Linear(4, 2, bias=False), False),
        (lambda: nn.Conv1d(4, 2, 1, bias=False), False),
        (lambda: _with_plain_bias(nn.Linear(4, 2, bias=False)), True),
        (lambda: _bias_property(nn.Linear(4, 2)), False),
        (lambda: _gated(_GatedBias(4, 2)), False),
    ],
    ids=["linear", "no bias", "conv no bias", "plain attribute", "property", "getattr"],
)
def test_the_bias_flag_reads_what_attribute_access_reads(
    make: Callable[[], nn.Module], expected: bool
) -> None:
    module = make()
    trace = capture(
        module, torch.randn(3, 4) if isinstance(module, nn.Linear) else torch.randn(1, 4, 5)
    )
    op = trace.ops[-2]
    assert op.module_args is not None
    assert op.module_args["bias"] is expected
    assert op.module_args["bias"] is (getattr(module, "bias", None) is not None)


def _with_plain_bias(module: nn.Module) -> nn.Module:
    """Shadow the registered (absent) bias with a plain instance attribute."""
    del module._parameters["bias"]
    module.__dict__["bias"] = torch.zeros(2)
    return module


def test_a_user_module_whose_output_comes_from_a_child_tags_nothing_of_its_own() -> None:
    trace = capture(MLP(), torch.randn(2, 8))
    # The root's output op is fc2's linear: it carries Linear args, not the MLP's.
    assert trace.op("linear_2").module == "fc2"
    assert trace.op("linear_2").module_type == "Linear"


# -- params -----------------------------------------------------------------------------
def test_params_list_name_shape_and_trainable_and_are_never_nodes(mlp_trace: Trace) -> None:
    assert mlp_trace.op("linear_1").params == (
        ("fc1.weight", (16, 8), True),
        ("fc1.bias", (16,), True),
    )
    assert mlp_trace.op("relu_1").params == ()
    labels = {op.label for op in mlp_trace.ops}
    assert not any("weight" in label or "bias" in label for label in labels)
    assert mlp_trace.op("linear_1").parents == ("input_1",)


def test_frozen_parameters_and_buffers_are_listed_as_not_trainable() -> None:
    trace = capture(WithBuffer(), torch.randn(2, 4))
    assert trace.op("add_1").params == (("offset", (4,), False),)
    assert trace.op("mul_1").params == (("frozen", (4,), False),)
    assert trace.op("add_1").parents == ("input_1",)
    assert [op.func for op in trace.ops] == ["input", "add", "mul", "output"]


def test_batch_norm_lists_its_running_statistics() -> None:
    op = capture(CNN().eval(), torch.randn(2, 3, 8, 8)).op("batch_norm_1")
    names = [name for name, _, _ in op.params]
    assert names == [
        "features.1.running_mean", "features.1.running_var",
        "features.1.weight", "features.1.bias",
    ]  # fmt: skip


def test_param_count_counts_every_parameter_element() -> None:
    model = CNN()
    assert capture(model, torch.randn(1, 3, 8, 8)).param_count == sum(
        p.numel() for p in model.parameters()
    )


# -- measurements -----------------------------------------------------------------------
def test_func_duration_is_positive_for_ops_and_zero_for_inputs_and_outputs(
    mlp_trace: Trace,
) -> None:
    for op in mlp_trace.ops:
        assert op.func_duration is not None
        assert op.func_duration > 0 if op.has_function else op.func_duration == 0.0


def test_func_duration_tracks_the_real_call() -> None:
    class Slow(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            # relu over 16 numbers against a 800x800 matmul (about 1 GFLOP): the gap is
            # three orders of magnitude, far beyond scheduling noise on a loaded machine.
            return torch.relu(x[:4, :4]).sum() + x @ x

    x = torch.randn(800, 800)
    capture(Slow(), x)  # the first capture of a process pays torch's lazy set-up
    durations = []
    for _ in range(3):
        trace = capture(Slow(), x)
        relu, matmul = trace.op("relu_1"), trace.op("matmul_1")
        assert matmul.func_duration is not None and relu.func_duration is not None
        durations.append((relu.func_duration, matmul.func_duration))
    assert sum(matmul > relu for relu, matmul in durations) >= 2


def test_activation_memory_is_bytes_of_the_outputs(mlp_trace: Trace) -> None:
    assert mlp_trace.op("input_1").activation_memory == 2 * 8 * 4
    assert mlp_trace.op("linear_1").activation_memory == 2 * 16 * 4
    assert mlp_trace.op("output_1").activation_memory == 2 * 4 * 4
    outputs = sum(op.activation_memory or 0 for op in mlp_trace.ops if op.has_function)
    assert outputs == (2 * 16 + 2 * 16 + 2 * 4) * 4


def test_magnitude_is_the_root_mean_square_of_the_output() -> None:
    class Scale(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x * 3.0

    x = torch.tensor([[1.0, -2.0], [3.0, 4.0]])
    trace = capture(Scale(), x, magnitudes=True)
    expected = math.sqrt((9 + 36 + 81 + 144) / 4)
    assert trace.op("mul_1").magnitude == pytest.approx(expected, rel=1e-6)
    assert trace.op("input_1").magnitude == pytest.approx(expected / 3, rel=1e-6)


def test_magnitude_of_half_outputs_does_not_overflow() -> None:
    class Big(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x + 0

    # 60000^2 overflows float16, the mean of squares must not.
    trace = capture(Big(), torch.full((8,), 60000.0, dtype=torch.float16), magnitudes=True)
    assert trace.op("add_1").magnitude == pytest.approx(60000.0)


def test_autograd_memory_counts_saved_tensors_deduplicated_by_storage() -> None:
    class Square(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = nn.Parameter(torch.ones(5))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = x * self.w  # saves x and w
            z = y * y  # saves y twice: one storage
            return torch.exp(z)  # saves its result

    # Both factors need a gradient, so the product saves both.
    trace = capture(Square(), torch.randn(5, requires_grad=True))
    mul, square, exp = trace.op("mul_1"), trace.op("mul_2"), trace.op("exp_1")
    assert (mul.num_autograd_tensors, mul.autograd_memory) == (2, 40)
    assert (square.num_autograd_tensors, square.autograd_memory) == (1, 20)
    assert (exp.num_autograd_tensors, exp.autograd_memory) == (1, 20)


def test_autograd_memory_is_none_without_a_graph() -> None:
    model = MLP()
    with torch.no_grad():
        trace = capture(model, torch.randn(2, 8))
    assert all(op.autograd_memory is None for op in trace.ops)
    assert all(op.num_autograd_tensors is None for op in trace.ops)
    model.requires_grad_(False)
    frozen = capture(model, torch.randn(2, 8))
    assert all(op.autograd_memory is None for op in frozen.ops)


def test_an_op_that_builds_a_graph_but_saves_nothing_reads_zero() -> None:
    class Add(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x + 1

    op = capture(Add(), torch.randn(3, requires_grad=True)).op("add_1")
    assert (op.autograd_memory, op.num_autograd_tensors) == (0, 0)


def test_model_saved_tensor_hooks_hide_the_measurement() -> None:
    class Checkpointed(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                return torch.tanh(self.fc(x))

    trace = capture(Checkpointed(), torch.randn(2, 4))
    assert trace.op("tanh_1").autograd_memory is None


def test_device_time_is_none_without_profile(mlp_trace: Trace) -> None:
    assert all(op.device_time is None for op in mlp_trace.ops)
    assert mlp_trace.device_join is None


def test_profile_opens_one_joinable_range_per_op(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_tlgraph.capture import profiler_join

    joins: list[profiler_join.DeviceTimeJoin] = []
    original = profiler_join.join_device_time

    def spy(events: Any, labels: Any) -> profiler_join.DeviceTimeJoin:
        joins.append(original(events, labels))
        return joins[-1]

    monkeypatch.setattr(profiler_join, "join_device_time", spy)
    trace = capture(MLP(), torch.randn(2, 8), profile=True)
    assert trace.device_join == "no_kernels"  # a CPU-only run
    (join,) = joins
    # Every op's range is in the profiler events: none missing, one label per op.
    assert join.missing == ()
    assert len(join.per_op) == sum(op.has_function for op in trace.ops)
    assert all(op.device_time is None for op in trace.ops)


def test_every_op_field_is_plain_python(mlp_trace: Trace) -> None:
    plain = (str, int, float, bool, tuple, type(None))
    for op in mlp_trace.ops:
        assert isinstance(op, Op)
        for name in Op.__dataclass_fields__:
            value = getattr(op, name)
            if name == "module_args" and value is not None:
                assert all(isinstance(v, plain) for v in value.values())
            else:
                assert isinstance(value, plain), (op.label, name, type(value))


def test_capture_rejects_what_is_not_a_module() -> None:
    with pytest.raises(TypeError, match=r"torch\.nn\.Module.*wrap"):
        capture(torch.relu, torch.randn(2))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"kwargs.*mapping"):
        capture(MLP(), torch.randn(2, 8), kwargs=[("x", 1)])  # type: ignore[arg-type]
