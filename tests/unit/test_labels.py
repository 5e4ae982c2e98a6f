"""Node label rows (ENCODING.md §5.1-§5.3) on real torch modules."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from pytest_tlgraph import EncodingRefusal, capture
from pytest_tlgraph.draw import build_plan, node_rows
from pytest_tlgraph.draw.labels import LABEL_FIELDS, dtype_name
from pytest_tlgraph.options import DrawOptions
from pytest_tlgraph.trace import Trace


def _mlp() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))


def _trace_mlp(**kwargs: bool) -> Trace:
    return capture(_mlp(), torch.randn(2, 4, requires_grad=kwargs.get("grad", False)))


class _Tanh3(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(3):
            x = torch.tanh(x)
        return x


class _Square(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * x


class _Product(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a * b


class _HalfProduct(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[:, :2] * x[:, 2:]


class _Sum(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a + b


# -- default rows --------------------------------------------------------------------


def test_default_rows_in_spec_order() -> None:
    trace = _trace_mlp(grad=True)
    rows = trace.draw(show_saved_for_backward=True).nodes["linear_2"].rows
    # linear saves its input (the 2x8 relu output, 64 B) and its 3x8 weight (96 B).
    assert rows == (
        "linear_2",
        "2x3, 24 B",
        "saved for backward: 2 tensors, 160 B",
        "params: weight 3x8, bias 3",
        "@2",
    )


def test_rolled_title_counts_passes() -> None:
    trace = capture(_Tanh3(), torch.randn(2, 4))
    rolled = trace.draw(view="rolled")
    assert rolled.nodes["tanh_1"].rows[:2] == ("tanh_1 (x3)", "2x4, 32 B")
    assert rolled.nodes["input_1"].rows[0] == "x"  # named by its forward argument
    assert trace.draw().nodes["tanh_1:2"].rows[0] == "tanh_1:2"


def test_title_is_the_only_bold_row() -> None:
    dot = _trace_mlp().draw().dot
    assert dot.count("<B>") == 5  # input, three ops, output
    assert "<B>linear_1</B><BR/>2x8, 64 B" in dot


# -- field selectors -----------------------------------------------------------------


def test_every_token_renders_its_row() -> None:
    trace = _trace_mlp()
    drawing = trace.draw(node_label_fields=list(LABEL_FIELDS))
    op = trace.op("linear_1")
    assert drawing.nodes["linear_1"].rows == (
        "linear_1",
        "linear",
        "2x8",
        "float32",
        "64 B",
        "params: weight 8x4, bias 8",
        "@0",
        "pass 1/1",
        f"{op.flops_forward} FLOPs",
    )
    # Input records have no function: no op, pass, flops, args or module rows.
    assert drawing.nodes["input_1"].rows == ("input", "2x4", "float32", "32 B")


def test_fields_replace_the_default_rows_in_the_given_order() -> None:
    drawing = _trace_mlp().draw(node_label_fields=["shape", "name"])
    assert drawing.nodes["relu_1"].rows == ("2x8", "relu_1")
    assert "<B>relu_1</B>" in drawing.dot  # the name row stays bold wherever it sits


def test_pass_and_rolled_tokens() -> None:
    trace = capture(_Tanh3(), torch.randn(2, 4))
    unrolled = trace.draw(node_label_fields=["name", "pass", "bytes", "flops"])
    assert unrolled.nodes["tanh_1:2"].rows[:3] == ("tanh_1:2", "pass 2/3", "32 B")
    rolled = trace.draw(view="rolled", node_label_fields=["name", "pass", "bytes"])
    assert rolled.nodes["tanh_1"].rows == ("tanh_1 (x3)", "3 passes", "32 B per pass")


def test_a_picker_that_yields_nothing_keeps_the_title() -> None:
    drawing = _trace_mlp().draw(node_label_fields=["args"])
    assert drawing.nodes["relu_1"].rows == ("relu_1",)
    # Every arg of linear_1 is proven by its shapes or at its default.
    assert drawing.nodes["linear_1"].rows == ("linear_1",)


@pytest.mark.parametrize("bad", ["colour", "Shape", "", 3])
def test_unknown_token_refuses_with_cause_and_remedy(bad: object) -> None:
    with pytest.raises(EncodingRefusal) as info:
        _trace_mlp().draw(node_label_fields=["name", bad])
    assert info.value.code == "node_label_field_invalid"
    assert repr(bad) in info.value.cause
    for token in LABEL_FIELDS:
        assert token in info.value.remedy


# -- dtype ---------------------------------------------------------------------------


def test_dtype_row_on_half_precision_model() -> None:
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU()).half()
    trace = capture(model, torch.randn(2, 4).half())
    drawing = trace.draw(node_label_fields=["name", "shape", "dtype"])
    assert drawing.nodes["linear_1"].rows == ("linear_1", "2x8", "float16")
    assert drawing.nodes["input_1"].rows == ("input", "2x4", "float16")


class _MixedPrecision(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(x).to(torch.bfloat16).float()


def test_dtype_row_shows_where_precision_changes() -> None:
    drawing = capture(_MixedPrecision(), torch.randn(1, 4)).draw(node_label_fields=["dtype"])
    assert [node.rows[-1] for node in drawing.nodes.values()] == [
        "float32",
        "float32",
        "bfloat16",
        "float32",
        "float32",
    ]


class _Casts(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        outs = [x.to(dtype) for dtype in (torch.float16, torch.float64)]
        return outs[0].float() + outs[1].float()


def test_no_dtype_row_without_a_single_dtype() -> None:
    trace = capture(_Casts(), torch.randn(3))
    assert trace.layers["to_1"].dtype is None  # the passes disagree
    rows = trace.draw(view="rolled", node_label_fields=["name", "dtype"]).nodes["to_1"].rows
    assert rows == ("to_1 (x2)",)
    unrolled = trace.draw(node_label_fields=["name", "dtype"])
    assert unrolled.nodes["to_1:1"].rows == ("to_1:1", "float16")
    assert dtype_name(None) is None
    assert dtype_name(torch.int64) == "int64"


# -- saved for backward --------------------------------------------------------------


def _saved_rows(trace: Trace, **options: object) -> dict[str, str]:
    drawing = trace.draw(show_saved_for_backward=True, **options)
    return {
        node_id: row
        for node_id, node in drawing.nodes.items()
        for row in node.rows
        if row.startswith("saved for backward")
    }


def test_same_tensor_twice_counts_once() -> None:
    # mul saves both operands for backward; they are one storage of 3*4 float32.
    trace = capture(_Square(), torch.randn(3, 4, requires_grad=True))
    assert _saved_rows(trace) == {"mul_1": "saved for backward: 1 tensor, 48 B"}


def test_two_operands_count_twice() -> None:
    a, b = torch.randn(3, 4, requires_grad=True), torch.randn(3, 4, requires_grad=True)
    trace = capture(_Product(), (a, b))
    assert _saved_rows(trace) == {"mul_1": "saved for backward: 2 tensors, 96 B"}


def test_views_of_one_storage_count_once() -> None:
    trace = capture(_HalfProduct(), torch.randn(3, 4, requires_grad=True))
    # Both saved operands are views of the input's 48-byte storage.
    assert _saved_rows(trace) == {"mul_1": "saved for backward: 1 tensor, 48 B"}


def test_an_op_that_saves_nothing_gets_no_row() -> None:
    a, b = torch.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)
    trace = capture(_Sum(), (a, b))
    assert trace.op("add_1").num_autograd_tensors == 0
    assert _saved_rows(trace) == {}


def test_no_grad_capture_makes_no_claim() -> None:
    with torch.no_grad():
        trace = _trace_mlp(grad=True)
    assert all(op.num_autograd_tensors is None for op in trace.ops)
    assert _saved_rows(trace) == {}


def test_rolled_row_totals_across_passes() -> None:
    trace = capture(_Tanh3(), torch.randn(2, 4, requires_grad=True))
    # tanh saves its 32-byte result on each of the three passes.
    unrolled = _saved_rows(trace)
    assert set(unrolled.values()) == {"saved for backward: 1 tensor, 32 B"}
    assert len(unrolled) == 3
    rolled = _saved_rows(trace, view="rolled")
    assert rolled == {"tanh_1": "saved for backward: 3 tensors, 96 B (total across passes)"}


def test_saved_row_is_opt_in_and_never_injected_into_pickers() -> None:
    trace = _trace_mlp(grad=True)
    plain = trace.draw()
    assert not any("saved for backward" in r for n in plain.nodes.values() for r in n.rows)
    picked = trace.draw(show_saved_for_backward=True, node_label_fields=["name", "shape"])
    assert not any("saved for backward" in r for n in picked.nodes.values() for r in n.rows)


# -- plain draws and detached records ------------------------------------------------


@pytest.mark.parametrize("view", ["unrolled", "rolled"])
def test_every_label_option_at_its_default_is_the_plain_draw(view: str) -> None:
    trace = capture(_Tanh3(), torch.randn(2, 4, requires_grad=True))
    plain = trace.draw(view=view).dot
    explicit = trace.draw(
        view=view,
        node_label_fields=None,
        show_saved_for_backward=False,
        show_redundant_args=False,
        node_spec_fn=None,
    ).dot
    assert explicit == plain
    again = capture(_Tanh3(), torch.randn(2, 4, requires_grad=True)).draw(view=view).dot
    assert again == plain


def test_detached_records_show_every_arg() -> None:
    trace = _trace_mlp()
    node = next(n for n in build_plan(trace).nodes if n.id == "linear_1")
    attached = node_rows(node, trace=trace, options=DrawOptions())
    detached = node_rows(node, trace=None, options=DrawOptions())
    assert [r.text for r in attached][2] == "params: weight 8x4, bias 8"
    assert [r.text for r in detached][2] == "in_features=4, out_features=8, bias=True"


def test_defaults_text_is_written_once_per_distinct_args_and_keeps_types_apart() -> None:
    """``tl_defaults`` is memoised per distinct set of args: a second call with equal
    args reads what the first wrote, while values equal in Python but written
    differently (``1`` and ``True``, ``0.0`` and ``-0.0``) never share a text."""
    from pytest_tlgraph.constructors import Defaults, ModuleArgs
    from pytest_tlgraph.draw.labels import defaults_text

    defaults = Defaults({"eps": 0.0, "affine": True})

    def written(values: dict[str, object]) -> str | None:
        return defaults_text(ModuleArgs(values, "Norm", defaults))

    assert written({"eps": 0.0, "affine": True}) == "eps=0.0, affine=True"
    assert written({"eps": 0.0, "affine": True}) == "eps=0.0, affine=True"
    # ``1`` is not the default ``True`` (another type), ``-0.0`` keeps its sign.
    assert written({"eps": -0.0, "affine": 1}) == "eps=-0.0"
    assert written({"eps": -0.0, "affine": True}) == "eps=-0.0, affine=True"
    assert written({"eps": 0.5, "affine": False}) is None
    # Args without recorded defaults hide nothing, whatever was written before.
    assert defaults_text(ModuleArgs({"eps": 0.0, "affine": True}, "Norm", None)) is None
