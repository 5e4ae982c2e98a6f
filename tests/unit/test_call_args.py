"""Every argument counts: the non-tensor arguments of each call, operand order, dtypes
and grad mode are in the DOT, drawn where a reviewer looks, and read back by the story."""

from __future__ import annotations

import re
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from pytest_tlgraph import capture
from pytest_tlgraph.diff.view.comparison import compare
from pytest_tlgraph.diff.view.story import story_lines
from pytest_tlgraph.trace import Trace


class _Block(nn.Module):
    """One block whose every computed-with value a variant can change."""

    def __init__(self, variant: str = "") -> None:
        super().__init__()
        self.variant = variant
        self.proj = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        v = self.variant
        q = self.proj(x)
        a = F.scaled_dot_product_attention(q[None], x[None], x[None], is_causal=v != "causal")[0]
        a = F.gelu(a, approximate="tanh" if v == "gelu" else "none")
        a = a * (0.25 if v == "scale" else 0.5)
        c = torch.cat([x, a] if v == "order" else [a, x], dim=1)
        c = c.softmax(dim=0 if v == "dim" else -1)
        c = F.pad(c, (0, 2) if v == "pad" else (2, 0))
        c = c[:, 1:] if v == "index" else c[:, :-1]
        if v == "grad":
            with torch.no_grad():
                c = c * 2
        else:
            c = c * 2
        c = c.to(torch.bfloat16 if v == "dtype" else torch.float16).float()
        return (c + (1e-5 if v == "eps" else 1e-6)).narrow(1, 0, 8)


class _Model(nn.Module):
    def __init__(self, variant: str = "") -> None:
        super().__init__()
        self.blocks = nn.Sequential(_Block(), _Block(variant), _Block())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.blocks(x)


_X = torch.randn(3, 8)


def _trace(variant: str = "") -> Trace:
    torch.manual_seed(0)
    return capture(_Model(variant), (_X.clone(),))


def _rows(trace: Trace, label: str) -> tuple[str, ...]:
    return trace.draw().nodes[label].rows


def _middle(trace: Trace, func: str) -> str:
    """The label of ``func``'s op in the middle block."""
    [op] = [o for o in trace.ops if o.func == func and o.module == "blocks.1"]
    return op.label


def test_each_argument_is_named_by_the_signature_and_defaults_are_left_out() -> None:
    trace = _trace("gelu")
    calls = {op.label: {a.name: a.text for a in op.call} for op in trace.ops}
    gelu = _middle(trace, "gelu")
    assert calls[gelu] == {"self": "in1", "approximate": "tanh"}
    # The same function at its declared default: the argument is left out.
    assert calls["gelu_1"] == {"self": "in1"}
    sdpa = calls[_middle(trace, "scaled_dot_product_attention")]
    assert sdpa == {"query": "in1", "key": "in2", "value": "in3", "is_causal": "True"}
    assert calls[_middle(trace, "softmax")] == {"self": "in1", "dim": "-1"}
    assert calls[_middle(trace, "cat")] == {"tensors": "[in1, in2]", "dim": "1"}
    assert calls[_middle(trace, "pad")] == {"input": "in1", "pad": "(2, 0)"}
    getitems = [calls[op.label]["idx"] for op in trace.ops if op.func == "getitem"][5:10]
    assert getitems == ["None", "None", "None", "0", "(:, :-1)"]


def test_values_are_written_canonically() -> None:
    class Scalars(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x * 1 + x * 1.0 + x * True + x * 0.1 + x * -0.0 + x * float("inf")

    trace = capture(Scalars(), (torch.randn(2),))
    others = [a.text for op in trace.ops if op.func == "mul" for a in op.call if a.name == "other"]
    # A Scalar is written by its value: ``1``, ``1.0`` and ``True`` multiply alike.
    assert others == ["1", "1", "1", "0.1", "-0.0", "inf"]


def test_the_default_label_shows_the_arguments_a_reviewer_checks() -> None:
    trace = _trace()
    assert _rows(trace, _middle(trace, "gelu"))[2:] == ()  # at its default: nothing to say
    assert "is_causal=True" in _rows(trace, _middle(trace, "scaled_dot_product_attention"))
    assert "dim=-1" in _rows(trace, _middle(trace, "softmax"))
    assert "pad=(2, 0)" in _rows(trace, _middle(trace, "pad"))
    muls = [op.label for op in trace.ops if op.func == "mul" and op.module == "blocks.1"]
    assert [_rows(trace, m)[2] for m in muls] == ["· * 0.5", "· * 2"]
    assert _rows(trace, _middle(trace, "add"))[2] == "· + 1e-06"


@pytest.mark.parametrize(
    ("code", "row"),
    [(lambda x: 1 - x, "1 - ·"), (lambda x: x**2, "· ** 2"), (lambda x: 2 / x, "2 / ·"),
     (lambda x: x / 4, "· / 4"), (lambda x: x - 3, "· - 3")],
    ids=["rsub", "pow", "rdiv", "div", "sub"],
)  # fmt: skip
def test_a_scalar_operand_reads_on_one_row(code: Any, row: str) -> None:
    class Arith(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return code(x)  # type: ignore[no-any-return]

    trace = capture(Arith(), (torch.randn(2) + 5,))
    [op] = [op for op in trace.ops if op.has_function]
    assert trace.draw().nodes[op.label].rows[2] == row


def test_a_size_the_output_shape_states_is_left_out_of_the_row_but_kept_in_the_dot() -> None:
    class Views(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x.view(-1, 4).reshape(2, 2, 4).expand(3, 2, 2, 4)

    drawing = capture(Views(), (torch.randn(16),)).draw()
    for label in ("view_1", "reshape_1", "expand_1"):
        assert not any("=" in row for row in drawing.nodes[label].rows), label
    assert 'tl_call="self=in1, size=(-1, 4)"' in drawing.dot


def test_a_dtype_other_than_the_default_floating_one_is_named_on_the_shape_row() -> None:
    trace = _trace()
    cast = next(op.label for op in trace.ops if op.func == "to" and op.module == "blocks.1")
    assert _rows(trace, cast)[1] == "3x17, f16, 102 B"
    assert _rows(trace, _middle(trace, "softmax"))[1] == "3x16, 192 B"
    # The cast's dtype argument is the one the shape row names: not said twice.
    assert len(_rows(trace, cast)) == 2
    try:
        torch.set_default_dtype(torch.float64)
        wide = capture(nn.Linear(2, 2), (torch.randn(1, 2),))
    finally:
        torch.set_default_dtype(torch.float32)
    assert wide.draw().nodes["linear_1"].rows[1] == "1x2, 16 B"


def test_in_edges_of_an_op_whose_inputs_are_not_interchangeable_carry_their_position() -> None:
    dot = _trace().draw().dot
    cat = _middle(_trace(), "cat")
    numbered = re.findall(rf'"([^"]+)" -> "{cat}" \[[^]]*label="(\d)"', dot)
    assert [n for _, n in numbered] == ["1", "2"]
    # add is commutative: its in-edges carry none.
    assert not re.search(r'-> "add_\d+" \[[^]]*label=', dot)


def test_a_block_under_no_grad_is_marked_and_a_forward_under_no_grad_is_not() -> None:
    trace = _trace("grad")
    marked = [op.label for op in trace.ops if op.grad_mode is not None]
    assert marked == [[op.label for op in trace.ops if op.func == "mul"][3]]
    assert trace.draw().nodes[marked[0]].rows[-1] == "no_grad"
    with torch.no_grad():
        quiet = capture(_Model("grad"), (_X.clone(),))
    assert all(op.grad_mode is None for op in quiet.ops)


def test_a_device_argument_naming_the_capture_device_is_left_out() -> None:
    class Positions(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            # Read from ``x``: a call on constants alone is folded into a ``const``.
            return x + torch.full_like(x, 2.0, device=x.device)

    trace = capture(Positions(), (torch.randn(2, 3),))
    [full] = [op for op in trace.ops if op.func == "full_like"]
    assert {a.name for a in full.call} == {"self", "fill_value"}
    assert full.flops_forward == 0


@pytest.mark.parametrize(
    ("variant", "full", "depth1"),
    [
        ("causal", "scaled_dot_product_attention_2 @blocks.1: is_causal True -> (default)",
         "@blocks.1 (_Block): inside: scaled_dot_product_attention is_causal True -> (default)"),
        ("gelu", "gelu_2 @blocks.1: approximate (default) -> tanh",
         "@blocks.1 (_Block): inside: gelu approximate (default) -> tanh"),
        ("scale", "mul_3 @blocks.1: other 0.5 -> 0.25",
         "@blocks.1 (_Block): inside: mul other 0.5 -> 0.25"),
        ("dim", "softmax_2 @blocks.1: dim -1 -> 0",
         "@blocks.1 (_Block): inside: softmax dim -1 -> 0"),
        ("pad", "pad_2 @blocks.1: pad (2, 0) -> (0, 2)",
         "@blocks.1 (_Block): inside: pad pad (2, 0) -> (0, 2)"),
        ("index", "getitem_10 @blocks.1: idx (:, :-1) -> (:, 1:)",
         "@blocks.1 (_Block): inside: getitem idx (:, :-1) -> (:, 1:)"),
        ("eps", "add_2 @blocks.1: other 1e-06 -> 1e-05",
         "@blocks.1 (_Block): inside: add other 1e-06 -> 1e-05"),
        ("dtype", "to_2 @blocks.1: dtype float16 -> bfloat16",
         "@blocks.1 (_Block): inside: to dtype float16 -> bfloat16"),
        ("grad", "mul_4 @blocks.1: now runs under no_grad",
         "@blocks.1 (_Block): inside: mul now runs under no_grad"),
        ("order", "cat_2 @blocks.1: inputs reordered (mul_3, narrow_1) -> (narrow_1, mul_3)",
         None),
    ],
    ids=lambda v: v if isinstance(v, str) and " " not in v else "",
)  # fmt: skip
def test_each_kind_of_change_fails_and_the_story_names_node_address_and_argument(
    variant: str, full: str, depth1: str | None
) -> None:
    before, after = _trace(), _trace(variant)
    assert story_lines(compare(before.draw().dot, after.draw().dot)) == [full]
    for options in ({"depth": 1}, {"collapse": "auto"}, {"view": "rolled"}):
        assert before.draw(**options).dot != after.draw(**options).dot, options
    if depth1 is not None:
        lines = story_lines(compare(before.draw(depth=1).dot, after.draw(depth=1).dot))
        assert lines == [depth1]


def test_the_same_model_twice_or_with_other_weights_draws_the_same() -> None:
    first = _trace().draw().dot
    torch.manual_seed(1)
    reseeded = capture(_Model(), (_X.clone(),)).draw().dot
    assert first == _trace().draw().dot == reseeded


def test_vector_norms_and_reductions_have_flops() -> None:
    class Norms(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            n = torch.linalg.vector_norm(x, dim=(1,), keepdim=True)
            return n + x.median(dim=1, keepdim=True).values + x.nanmean(dim=1, keepdim=True)

    trace = capture(Norms(), (torch.randn(2, 8),))
    flops = {op.func: op.flops_forward for op in trace.ops if op.has_function}
    assert flops["linalg_vector_norm"] == 2 * 16
    assert flops["median"] == 16 and flops["nanmean"] == 16


def test_two_outputs_of_one_op_swapped_change_the_call() -> None:
    class Grid(nn.Module):
        def __init__(self, swap: bool) -> None:
            super().__init__()
            self.swap = swap

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            a, b = torch.meshgrid(x, x, indexing="ij")
            return torch.stack((b, a) if self.swap else (a, b))

    x = torch.arange(3.0)
    before, after = capture(Grid(False), (x,)), capture(Grid(True), (x,))
    [stack] = [op for op in before.ops if op.func == "stack"]
    # A sequence of tensors is written one way, a tuple as a list: ``stack((a, b))``.
    assert [a.text for a in stack.call] == ["[in1[0], in1[1]]"]
    lines = story_lines(compare(before.draw().dot, after.draw().dot))
    assert lines == ["stack_1: tensors [in1[0], in1[1]] -> [in1[1], in1[0]]"]


def test_a_stored_drawing_without_call_arguments_says_so_first() -> None:
    """A baseline drawn before 0.4 (no ``tl_call``, no numbered edge) against this
    version's drawing of the same model: the first line names the cause."""
    received = _trace().draw().dot
    stored = re.sub(r', tl_call="[^"]*"', "", received)
    stored = re.sub(r' \[label="[\d,]+"[^]]*\]', "", stored)
    lines = story_lines(compare(stored, received))
    assert lines[0].startswith("the stored drawing has no call arguments, as drawn before 0.4")
    # Between two drawings of this version the line never appears.
    assert story_lines(compare(received, _trace("dim").draw().dot)) == [
        "softmax_2 @blocks.1: dim -1 -> 0"
    ]


def test_two_ops_swapped_inside_a_box_read_as_one_order_change() -> None:
    def model(swap: bool) -> nn.Module:
        torch.manual_seed(0)
        layers = [nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU()]
        if swap:
            layers = [layers[0], layers[2], layers[1]]
        return nn.Sequential(nn.Sequential(*layers), nn.Conv2d(8, 8, 1)).eval()

    x = torch.randn(1, 3, 8, 8)
    before, after = (capture(model(s), (x,)).draw(depth=0).dot for s in (False, True))
    assert story_lines(compare(before, after)) == [
        # The box's members name their modules: the same line as every other view.
        "order changed in @0: 1, 2 -> 2, 1"
    ]


def test_a_call_spelled_another_way_draws_the_same() -> None:
    class Listed(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.cat([x, x * 2], dim=-1)

    class Tupled(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.cat((x, x * 2), -1)

    x = torch.randn(2, 3)
    # The root's class name is on the drawing (``tl_type``): compare what differs else.
    listed = capture(Listed(), (x,)).draw().dot.replace("Listed", "M")
    assert listed == capture(Tupled(), (x,)).draw().dot.replace("Tupled", "M")


def test_tensor_names_number_parents_by_their_in_edges_few_or_many() -> None:
    """A call's tensors are named by their parent's place among the op's parents, the
    same whether the call has a few parents (found by a scan) or many (a table)."""
    from pytest_tlgraph.capture.callargs import tensor_names

    assert tensor_names((7, 5, 99, "blk.weight", (2, 3), ()), [5, 7], "blk") == [
        "in2", "in1", "in?", "param weight", "const 2x3", "const scalar",
    ]  # fmt: skip
    many = list(range(100, 112))
    sources = (*reversed(many), ("slot", 103, 1), 5, "w")
    expected = [f"in{i}" for i in range(12, 0, -1)] + ["in4[1]", "in?", "param w"]
    assert tensor_names(sources, many, "") == expected
    assert tensor_names((("slot", 9, 0),), [1, 2], "") == ["in?[0]"]
