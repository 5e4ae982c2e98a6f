"""What a snapshot can see on the corpus (issue 21, items 3, 5, 6, 7): every non-default
constructor arg, the args row on the op the family names, a FLOP count on every op and
so on every box, and named-tuple outputs titled by field."""

from __future__ import annotations

import inspect
import re
from typing import Any

import pytest
import torch
from torch import nn

from pytest_tlgraph import capture
from pytest_tlgraph.draw import build_plan
from pytest_tlgraph.draw.collapse import COLLAPSED_KINDS
from pytest_tlgraph.draw.suppression import FAMILY_TABLE
from pytest_tlgraph.trace import Trace
from tests.corpus import names
from tests.corpus.traces import corpus_trace


def _args_rows(trace: Trace, **options: Any) -> dict[str, str]:
    """Node id -> its args row (wrapped lines joined), for every node that has one."""
    rows = {
        node_id: " ".join(
            row for row in node.rows if "=" in row and not row.startswith(("params:", "@"))
        )
        for node_id, node in trace.draw(**options).nodes.items()
    }
    return {node_id: row for node_id, row in rows.items() if row}


def _names(row: str) -> list[str]:
    return [part.split("=", 1)[0] for part in row.replace(", ", ",").split(",") if "=" in part]


# -- item 3: every non-default constructor arg -----------------------------------------
def test_an_embedding_with_max_norm_draws_differently_from_a_plain_one() -> None:
    ids = torch.tensor([[1, 2, 3]])
    torch.manual_seed(0)
    plain = capture(nn.Embedding(10, 4), ids).draw().dot
    torch.manual_seed(0)
    normed = capture(nn.Embedding(10, 4, max_norm=1.0), ids).draw().dot
    assert plain != normed
    # A default is recorded (tl_defaults), never drawn: only the row differs.
    assert "max_norm=1.0<BR/>" in normed and "max_norm=None" in plain
    assert "max_norm" not in re.sub(r' tl_defaults="[^"]*",', "", plain)


def test_embedding_and_batch_norm_args_that_change_the_computation_are_shown() -> None:
    rows = _args_rows(corpus_trace("normalised_lookup"))
    assert rows["embedding_1"] == (
        "num_embeddings=20, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True"
    )
    assert rows["embedding_2"] == "num_embeddings=6, sparse=True"
    norms = [rows[k] for k in sorted(rows) if k.startswith("batch_norm")]
    assert norms == ["momentum=0.3", "track_running_stats=False", "momentum=None"]


def test_reflect_padding_is_on_the_conv_and_its_pad_belongs_to_the_conv() -> None:
    trace = corpus_trace("reflect_convs")
    rows = _args_rows(trace)
    assert rows["conv2d_1"] == "kernel_size=(3, 3), padding=(1, 1), padding_mode=reflect"
    assert rows["conv2d_2"].endswith("padding_mode=replicate")
    assert rows["conv1d_1"].endswith("padding_mode=circular")
    pads = [op for op in trace.ops if op.func == "pad"]
    assert [op.module for op in pads] == ["reflect", "replicate", "circular"]
    drawing = trace.draw()
    assert "@reflect (Conv2d)" in drawing.clusters  # the pad is drawn in the conv's cluster
    assert drawing.nodes["pad_1"].module == "reflect"
    # Collapsed, the conv's box stands for its pad too.
    boxes = trace.draw(depth=0).nodes
    assert boxes["@reflect#1"].members == ("pad_1", "conv2d_1")


def test_show_redundant_args_shows_every_arg_the_signature_names() -> None:
    trace = corpus_trace("reflect_convs")
    full = _args_rows(trace, show_redundant_args=True)
    assert _names(full["conv2d_1"]) == [
        "in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation",
        "groups", "bias", "padding_mode",
    ]  # fmt: skip
    lookup = _args_rows(corpus_trace("normalised_lookup"), show_redundant_args=True)
    assert _names(lookup["embedding_2"]) == [
        "num_embeddings", "embedding_dim", "padding_idx", "max_norm", "norm_type",
        "scale_grad_by_freq", "sparse",
    ]  # fmt: skip
    assert _names(lookup["batch_norm_1"]) == [
        "num_features", "eps", "momentum", "affine", "track_running_stats", "bias",
    ]  # fmt: skip


def _signature_defaults(cls: type) -> dict[str, Any]:
    for klass in cls.__mro__:
        init = vars(klass).get("__init__")
        if init is None:
            continue
        params = [
            p
            for p in list(inspect.signature(init).parameters.values())[1:]
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]
        if params:
            return {p.name: p.default for p in params}
    return {}


def _at_default(value: Any, default: Any) -> bool:
    if isinstance(value, tuple) and isinstance(default, int) and not isinstance(default, bool):
        return all(v == default for v in value)
    return value == default and type(value) is type(default)


@pytest.mark.parametrize(
    "name", ["reflect_convs", "normalised_lookup", "convnext_layernorm2d", "upsampling_decoder",
             "googlenet_outputs", "mha_need_weights", "lstm_bidirectional", "whisper"],
)  # fmt: skip
def test_an_arg_left_out_is_a_checked_duplicate_or_at_its_default(name: str) -> None:
    trace = corpus_trace(name)
    shown, full = _args_rows(trace), _args_rows(trace, show_redundant_args=True)
    assert full
    for node_id, row in full.items():
        op = trace.op(node_id)
        if op.module_args is None:
            continue  # a function's own arguments: tests/unit/test_call_args.py checks them
        torch_class = getattr(nn, op.module_args.torch_class)  # type: ignore[union-attr]
        defaults = _signature_defaults(torch_class)
        kept = set(_names(shown.get(node_id, "")))
        candidates = {c.arg for c in FAMILY_TABLE.get(op.module_family or "", ())}
        for arg in set(_names(row)) - kept:
            value = op.module_args[arg]  # type: ignore[index]
            assert arg in candidates or _at_default(value, defaults[arg]), (node_id, arg)


# -- item 7: the args row on the op the family names -----------------------------------
def test_layernorm_subclasses_put_their_args_on_layer_norm() -> None:
    trace = corpus_trace("convnext_layernorm2d")
    holders = [op for op in trace.ops if op.module_args is not None]
    norms = [op for op in holders if op.module_type in ("LayerNorm2d", "TimmLayerNorm")]
    assert len(norms) == 4 and all(op.func == "layer_norm" for op in norms)
    assert not any(op.func == "permute" for op in holders)
    rows = _args_rows(trace)
    stem_norm = next(op.label for op in norms if op.module == "stem.1")
    # eps=1e-06 differs from nn.LayerNorm's default; elementwise_affine=True does not,
    # and normalized_shape=(8,) is proven by the layer_norm op's own trailing dim.
    assert rows[stem_norm] == "eps=1e-06"
    assert not any("elementwise_affine" in row for row in rows.values())
    full = _args_rows(trace, show_redundant_args=True)
    assert full[stem_norm] == "normalized_shape=(8,), eps=1e-06, elementwise_affine=True, bias=True"


def test_a_layernorm_subclass_box_hides_defaults_and_keeps_its_sizes() -> None:
    # The call's own output is channels-first: nothing is suppressed against it.
    rows = _args_rows(corpus_trace("convnext_layernorm2d"), depth=1)
    assert rows["@stem.1#1"] == "normalized_shape=(8,), eps=1e-06"
    assert rows["@downsample.0#1"] == "normalized_shape=(8,)"


# -- item 5: a FLOP count on every op, so on every box ------------------------------------
@pytest.mark.parametrize("name", [n for n in names() if n != "sequential_2000"])
def test_every_corpus_op_has_a_flop_count(name: str) -> None:
    trace = corpus_trace(name)
    uncounted = sorted({op.func for op in trace.ops if op.flops_forward is None})
    assert uncounted == []


@pytest.mark.parametrize(
    ("name", "funcs"),
    [
        ("upsampling_decoder", {"interpolate"}),
        # Its ``meshgrid``/``as_tensor`` index table is a constant subgraph: one
        # ``const`` node (no FLOPs to count), see test_values.py.
        ("grid_attention", {"swapaxes", "moveaxis", "const"}),
        ("routed_experts", {"scatter_", "gather", "index_add_"}),
        ("hubert", {"_weight_norm"}),
    ],
)
def test_no_box_is_left_without_flops(name: str, funcs: set[str]) -> None:
    trace = corpus_trace(name)
    assert funcs <= {op.func for op in trace.ops}
    for options in ({"depth": 0}, {"depth": 1}, {"depth": 2}, {"collapse": "max"}):
        plan = build_plan(trace, **options)
        collapsed = [n for n in plan.nodes if n.kind in COLLAPSED_KINDS]
        assert collapsed or options != {"depth": 0}
        assert all(n.record.flops_forward is not None for n in collapsed), options


def test_decoder_counts_each_upsampling_by_its_taps() -> None:
    trace = corpus_trace("upsampling_decoder")
    nearest, bilinear = [op for op in trace.ops if op.func == "interpolate"]
    assert nearest.shape == (1, 16, 8, 8) and bilinear.shape == (1, 16, 16, 16)
    assert nearest.flops_forward == 16 * 8 * 8
    assert bilinear.flops_forward == 4 * 16 * 16 * 16


# -- item 6: named-tuple outputs ---------------------------------------------------------
def test_googlenet_outputs_are_titled_by_field() -> None:
    drawing = corpus_trace("googlenet_outputs").draw()
    titles = [drawing.nodes[f"output_{i}"].rows[0] for i in (1, 2, 3)]
    assert titles == ["logits", "aux_logits2", "aux_logits1"]
