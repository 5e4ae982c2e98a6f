"""REVIEW.md §5 on the corpus: FLOPs equal torch's own counter, every module box of a
transformer has a FLOP count at every depth, ``params`` is numeric, hooks belong to the
hooked module."""

from __future__ import annotations

import contextlib
import sys
import warnings
from collections.abc import Iterator

import pytest
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.flop_counter import FlopCounterMode

from pytest_tlgraph import Trace, capture
from pytest_tlgraph.capture.flops import COUNTED_FUNCS
from pytest_tlgraph.capture.grouped_mm import grouped_mm_flop
from tests.corpus import TRANSFORMERS, Case, build, names

_traces: dict[str, tuple[Case, Trace]] = {}


def traced(name: str) -> tuple[Case, Trace]:
    """The corpus entry ``name`` and its trace, captured once per test process."""
    if name not in _traces:
        case = build(name)
        _traces[name] = (case, capture(case.model, case.inputs, kwargs=case.kwargs))
    return _traces[name]


@contextlib.contextmanager
def decomposed() -> Iterator[None]:
    """torch's math attention and its non-fused RNNs: the paths whose matmuls torch's
    counter sees (its table lists no fused CPU attention or oneDNN RNN kernel)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # oneDNN's note on TF32 for Intel GPUs
        with sdpa_kernel(SDPBackend.MATH), torch.backends.mkldnn.flags(enabled=False):
            yield


def torch_count(case: Case) -> int:
    # With autograd on, like the capture: under no_grad nn.Transformer takes its
    # native fast path, a different forward.
    # torch's module tracker names submodules recursively: room for the 1,000-deep chain.
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        with decomposed(), FlopCounterMode(display=False) as counter:
            case.run()
    finally:
        sys.setrecursionlimit(limit)
    return int(counter.get_total_flops())


@pytest.mark.parametrize("name", names())
def test_flops_equal_torchs_counter(name: str) -> None:
    case, trace = traced(name)
    measured = [op for op in trace.ops if op.func in COUNTED_FUNCS]
    assert all(op.flops_forward is not None for op in measured), name
    ours = sum(op.flops_forward or 0 for op in measured)
    assert ours == torch_count(case)


def test_attention_without_weights_keeps_its_score_and_value_matmuls() -> None:
    counts = []
    for name in ("mha_need_weights", "mha_no_weights"):
        _, trace = traced(name)
        (op,) = [op for op in trace.ops if op.func == "multi_head_attention_forward"]
        counts.append(op.flops_forward)
    # Same shapes, same matmuls: the fused kernel must not hide the score and value ones.
    assert counts[0] == counts[1]


def test_mixture_of_experts_counts_its_experts() -> None:
    _, trace = traced("mixtral")
    grouped = [op for op in trace.ops if op.func == "_grouped_mm"]
    assert grouped
    for op in grouped:
        assert op.flops_forward is not None and op.flops_forward > 0


def test_grouped_mm_formula_equals_a_loop_of_mm_over_the_groups() -> None:
    torch.manual_seed(0)
    tokens, experts = torch.randn(16, 16), torch.randn(3, 16, 8)
    ends = torch.tensor([5, 9, 16], dtype=torch.int32)
    with FlopCounterMode(display=False) as grouped:
        out = torch._grouped_mm(tokens, experts, offs=ends)
    start, parts = 0, []
    with FlopCounterMode(display=False) as loop:
        for group, end in enumerate(ends.tolist()):
            parts.append(torch.mm(tokens[start:end], experts[group]))
            start = end
    torch.testing.assert_close(out, torch.cat(parts))
    assert grouped.get_total_flops() == loop.get_total_flops() == 2 * 16 * 16 * 8
    # Batched groups: one product per group.
    a, b = torch.randn(3, 4, 16), torch.randn(3, 16, 8)
    with FlopCounterMode(display=False) as batched:
        torch._grouped_mm(a, b)
    assert batched.get_total_flops() == sum(2 * 4 * 16 * 8 for _ in range(3))
    assert grouped_mm_flop((16, 32), (32, 8)) == 2 * 16 * 32 * 8


@pytest.mark.parametrize("name", TRANSFORMERS)
def test_every_module_box_has_a_flop_count_at_every_depth(name: str) -> None:
    _, trace = traced(name)
    deepest = max(call.depth for call in trace.modules)
    drawings = [trace.draw(depth=d, color_by="flops") for d in range(deepest + 1)]
    drawings.append(trace.draw(collapse="max", color_by="flops"))
    for drawing in drawings:
        assert drawing.state is not None
        channel = drawing.state.channels["color_by"]
        assert channel.encoded == channel.eligible, [
            node for node in drawing.nodes if node not in channel.fills
        ]
        assert "n/a" not in drawing.dot


def test_the_key_shows_one_n_a_swatch_when_a_node_is_unencoded() -> None:
    case, _ = traced("gpt2")
    trace = capture(case.model, case.inputs, kwargs=case.kwargs, magnitudes=True)
    # Token ids are integers: they have no magnitude, every float output has one.
    drawing = trace.draw(color_by="magnitude")
    assert drawing.state is not None
    channel = drawing.state.channels["color_by"]
    assert 0 < channel.encoded < channel.eligible
    (row,) = drawing.nodes["tlgraph_key"].rows
    assert row.endswith(" [n/a]")
    assert drawing.dot.count("n/a") == 1


@pytest.mark.parametrize("name", ["llama", "bert"])
def test_params_is_the_parameter_count_each_box_uses(name: str) -> None:
    case, trace = traced(name)
    drawing = trace.draw(depth=3, color_by="params", size_by="params")
    assert drawing.state is not None
    values = drawing.state.channels["color_by"].values
    assert drawing.state.channels["size_by"].encoded == drawing.state.channels["size_by"].eligible
    boxes = {node_id: node for node_id, node in drawing.nodes.items() if node.kind == "box"}
    checked = 0
    for node_id, node in boxes.items():
        module = case.model.get_submodule(node.module or "")
        owned = sum(p.numel() for p in module.parameters())
        owned += sum(b.numel() for b in module.buffers())
        if owned:
            assert values[node_id] == owned, node_id
            checked += 1
    assert checked >= 4
    ops = [op for op in trace.ops if op.func in ("linear", "addmm")]
    assert all(op.param_count == sum(_numel(s) for _, s, _ in op.params) > 0 for op in ops)


def _numel(shape: tuple[int, ...]) -> int:
    count = 1
    for dim in shape:
        count *= dim
    return count


def test_ops_a_forward_hook_runs_belong_to_the_hooked_module() -> None:
    case = build("bert")
    layer = case.model.encoder.layer[0]

    def scale(module: torch.nn.Module, args: object, output: object) -> object:
        if isinstance(output, tuple):
            return (output[0] * 0.5, *output[1:])
        assert isinstance(output, torch.Tensor)
        return output * 0.5

    def shift(module: torch.nn.Module, args: tuple[object, ...]) -> tuple[object, ...]:
        hidden = args[0]
        assert isinstance(hidden, torch.Tensor)
        return (hidden + 1.0, *args[1:])

    handles = [layer.register_forward_hook(scale), layer.register_forward_pre_hook(shift)]
    try:
        trace = capture(case.model, case.inputs)
    finally:
        for handle in handles:
            handle.remove()
    hooked = [
        op for op in trace.ops if op.func in ("mul", "add") and op.module == "encoder.layer.0"
    ]
    assert [op.func for op in hooked] == ["add", "mul"]
    call = next(c for c in trace.modules if c.address == "encoder.layer.0")
    assert all(op.label in call.ops for op in hooked)
    assert "forward" not in vars(layer)
