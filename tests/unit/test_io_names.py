"""Named inputs and outputs (REVIEW.md §1.5): titles from the forward signature and the
output's structure; node ids and op labels stay ``input_1``, ``output_1``."""

from __future__ import annotations

from typing import Any, NamedTuple

import pytest
import torch
from torch import nn

from pytest_tlgraph import capture
from tests.corpus.traces import corpus_trace


def titles(trace: Any) -> dict[str, str]:
    drawing = trace.draw()
    return {k: n.rows[0] for k, n in drawing.nodes.items() if n.kind in ("input", "output")}


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("gpt2", {"input_1": "input_ids", "output_1": "logits"}),
        ("bert", {"input_1": "input_ids", "output_1": "last_hidden_state",
                  "output_2": "pooler_output"}),
        ("t5", {"input_1": "input_ids", "input_2": "decoder_input_ids", "output_1": "logits",
                "output_2": "encoder_last_hidden_state"}),
        ("transformer_encoder_layer", {"input_1": "src", "input_2": "src_key_padding_mask",
                                       "output_1": "output"}),
        ("lstm_bidirectional", {"input_1": "input", "output_1": "[0]", "output_2": "[1][0]",
                                "output_3": "[1][1]"}),
        ("dict_input", {"input_1": "batch.image", "input_2": "batch.text", "output_1": "output"}),
        ("dict_output", {"input_1": "x", "output_1": "logits", "output_2": "boxes"}),
    ],
)  # fmt: skip
def test_corpus_ends_are_named(name: str, expected: dict[str, str]) -> None:
    assert titles(corpus_trace(name)) == expected


class _Star(nn.Module):
    def forward(self, first: torch.Tensor, *rest: torch.Tensor, **extra: Any) -> Any:
        total = first + sum(rest) + extra["bias<&>"]
        return {"past": ((total, total * 2),), "out": total}


def test_star_args_kwargs_nested_paths_and_escaping() -> None:
    x = torch.randn(2)
    trace = capture(_Star(), (x, x, x), kwargs={"bias<&>": x})
    assert titles(trace) == {
        "input_1": "first", "input_2": "rest[0]", "input_3": "rest[1]", "input_4": "bias<&>",
        "output_1": "past[0][0]", "output_2": "past[0][1]", "output_3": "out",
    }  # fmt: skip
    drawing = trace.draw()
    assert '"input_4" [label=<<B>bias&lt;&amp;&gt;</B>' in drawing.dot
    # Ids and labels are API: unchanged.
    assert [op.label for op in trace.ops if not op.has_function] == [
        "input_1", "input_2", "input_3", "input_4", "output_1", "output_2", "output_3",
    ]  # fmt: skip
    assert trace.draw(view="rolled").nodes["output_3"].rows[0] == "out"


def test_picked_rows_use_the_name_too() -> None:
    trace = corpus_trace("gpt2")
    drawing = trace.draw(node_label_fields=["name", "shape"])
    assert drawing.nodes["input_1"].rows == ("input_ids", "1x8")


class _Pair(nn.Module):
    def forward(self, left: torch.Tensor, right: torch.Tensor) -> torch.Tensor:
        return left - right


def test_input_names_follow_the_forward_each_capture_calls() -> None:
    # The signature of a class's forward is read once; a forward set on one instance,
    # or a class whose forward was replaced, is read afresh.
    x = torch.randn(2)
    first = [titles(capture(_Pair(), (x, x)))[k] for k in ("input_1", "input_2")]
    assert first == ["left", "right"]
    patched = _Pair()
    patched.forward = lambda query, key: query * key  # type: ignore[method-assign]
    assert titles(capture(patched, (x, x)))["input_1"] == "query"
    assert titles(capture(_Pair(), (x, x)))["input_1"] == "left"

    class _Later(_Pair):
        pass

    def swapped(self: nn.Module, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a + b

    assert titles(capture(_Later(), (x, x)))["input_2"] == "right"
    _Later.forward = swapped  # type: ignore[method-assign,assignment]
    assert titles(capture(_Later(), (x, x)))["input_2"] == "b"


class _Heads(NamedTuple):
    logits: torch.Tensor
    aux: torch.Tensor


class _NamedOutputs(nn.Module):
    def forward(self, x: torch.Tensor, batch: _Heads) -> Any:
        top = (x * 2).max(dim=-1)  # torch.return_types.max: values, indices
        return [_Heads(x + 1, batch.aux * 3), top, (x - 1, x - 2)]


def test_named_tuples_are_titled_by_field_plain_tuples_by_position() -> None:
    x = torch.randn(2, 3)
    trace = capture(_NamedOutputs(), (x, _Heads(x, x)))
    assert titles(trace) == {
        "input_1": "x", "input_2": "batch.logits", "input_3": "batch.aux",
        "output_1": "[0].logits", "output_2": "[0].aux", "output_3": "[1].values",
        "output_4": "[1].indices", "output_5": "[2][0]", "output_6": "[2][1]",
    }  # fmt: skip
