"""Rows a reviewer can read (REVIEW.md §1.4, §1.6), on the real-model corpus: ``@module``
relative to the innermost drawn cluster, 80-character rows wrapped at argument
boundaries, salient args only, and a module's args on the op that is its computation."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_tlgraph.draw import build_plan
from pytest_tlgraph.draw.plan import ROW_WIDTH, relative_address, wrap_row
from tests.corpus import names
from tests.corpus.traces import corpus_trace

ALL = [n for n in names() if n not in ("sequential_2000", "deep_chain_1000")]


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("options", [{}, {"depth": 2}, {"collapse": "auto"}])
def test_no_row_repeats_its_cluster_and_none_is_over_80(name: str, options: dict[str, int]) -> None:
    trace = corpus_trace(name)
    drawing = trace.draw(**options)
    plan = build_plan(trace, **options)
    scope = {c.id: c.scope for c in plan.clusters}
    for node in plan.nodes:
        rows = drawing.nodes[node.id].rows
        if node.cluster is not None and node.kind in ("op", "layer") and node.module:
            within = scope[node.cluster]
            assert node.within == within
            # At the root of a fold (``within == ""``) every address is already relative.
            assert not within or not any(r.startswith(f"@{within}") for r in rows), (
                node.id, rows,
            )  # fmt: skip
        for row in rows[1:]:
            # Only a single value longer than the width may stand alone on its line.
            assert len(row) <= ROW_WIDTH or ", " not in row.rstrip(","), (node.id, row)


def test_bert_rows_are_relative_to_their_cluster() -> None:
    drawing = corpus_trace("bert").draw()
    assert "@encoder.layer.0.attention.self (BertSelfAttention)" in drawing.clusters
    query = drawing.nodes["linear_1"]
    assert query.module == "encoder.layer.0.attention.self.query"
    assert query.rows[-1] == "@query"
    # A node whose module is the cluster's own gets no module row at all.
    view = drawing.nodes["view_1"]
    assert view.module == "encoder.layer.0.attention.self"
    assert not view.rows[-1].startswith("@")


def test_lstm_params_row_wraps_at_argument_boundaries() -> None:
    rows = corpus_trace("lstm_bidirectional").draw().nodes["lstm_1"].rows
    params = [r for r in rows if "weight_" in r or "bias_" in r]
    assert len(params) >= 4
    assert all(len(r) <= ROW_WIDTH for r in rows)
    joined = " ".join(params)
    assert "weight_ih_l0 96x16" in joined and "bias_hh_l1_reverse 96" in joined
    # Salient args: the layer's sizes and what differs from LSTM's defaults.
    args = " ".join(r for r in rows if "=" in r)
    assert "hidden_size=24" in args and "bidirectional=True" in args
    assert "proj_size" not in args and "dropout" not in args and "bias=" not in args


def test_redundant_args_come_back_on_request() -> None:
    rows = corpus_trace("lstm_bidirectional").draw(show_redundant_args=True).nodes["lstm_1"].rows
    args = " ".join(r for r in rows if "=" in r)
    assert "proj_size=0" in args and "bias=True" in args


@pytest.mark.parametrize("name", ["mha_need_weights", "mha_no_weights", "nn_transformer"])
def test_attention_args_sit_on_the_attention_op(name: str) -> None:
    drawing = corpus_trace(name).draw()
    holders = [k for k, n in drawing.nodes.items() if any("num_heads=" in r for r in n.rows)]
    assert holders
    assert all(k.startswith("multi_head_attention_forward") for k in holders), holders


def test_whisper_convolutions_show_their_geometry_only() -> None:
    drawing = corpus_trace("whisper").draw()
    conv_rows = [r for k, n in drawing.nodes.items() if k.startswith("conv1d") for r in n.rows]
    assert "kernel_size=(3,), stride=(2,), padding=(1,)" in conv_rows
    assert not any("dilation" in r or "groups" in r for r in conv_rows)


@given(st.lists(st.sampled_from(["a=1", "kernel_size=(3, 3)", "x" * 90, "name=(1, (2, 3))"])))
def test_wrap_never_splits_a_value(parts: list[str]) -> None:
    text = ", ".join(parts)
    lines = wrap_row(text)
    assert " ".join(lines) == text
    for line in lines:
        assert len(line) <= ROW_WIDTH or line.rstrip(",") in parts


def test_relative_address() -> None:
    assert relative_address("a.b.c", "a.b") == "c"
    assert relative_address("a.b", "a.b") is None
    assert relative_address("a.bc", "a.b") == "a.bc"
    assert relative_address("a.b", None) == "a.b"
