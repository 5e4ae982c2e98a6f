"""The drawn key: compact lines only, no wording about how it was computed (§3.5)."""

from __future__ import annotations

import functools
import re
from typing import Any

import pytest
import torch

from pytest_tlgraph import Trace
from pytest_tlgraph.capture import capture
from pytest_tlgraph.draw.encoding.units import format_time
from tests.models import CNN, BareLoop, RecurrentCell, Shrink, seeded

FORBIDDEN = ("sqrt", "linear", "min-max", "coverage", "transform", "scale")
TIME_BAR = re.compile(r"^time: (\d+(?:\.\d+)? ms) \[bar\] (\d+(?:\.\d+)? ms)$")


def test_time_key_is_one_bar_line_with_both_ends(mlp: Trace) -> None:
    (line,) = mlp.draw(color_by="time").nodes["tlgraph_key"].rows
    match = TIME_BAR.match(line)
    assert match, line
    durations = [op.func_duration for op in mlp.ops if op.func_duration is not None]
    assert match.groups() == (format_time(min(durations)), format_time(max(durations)))


def test_every_channel_adds_exactly_one_line_in_channel_order() -> None:
    trace = capture(seeded(RecurrentCell()), torch.randn(2, 8), magnitudes=True)
    rows = trace.draw(stack_by=True, size_by="bytes", color_by="flops").nodes["tlgraph_key"].rows
    assert len(rows) == 3
    assert rows[0].startswith("forward FLOPs: ") and " [bar] " in rows[0]
    assert rows[1] == "size: output bytes, all 64 B"  # every tensor here is 2x8 float32
    assert rows[2] == "aligned: same pass_number"


def test_key_node_is_one_plaintext_node_outside_every_cluster(cnn: Trace) -> None:
    drawing = cnn.draw(color_by="flops", size_by="bytes")
    key_lines = [ln for ln in drawing.dot.splitlines() if '"tlgraph_key"' in ln]
    # One node statement, and its pin to the top rank of the bottom-up drawing.
    assert len(key_lines) == 2 and key_lines[1] == '  { rank=max; "tlgraph_key"; }'
    assert key_lines[0].startswith('  "tlgraph_key" [label=<<TABLE')
    assert 'shape="plaintext"' in key_lines[0]
    assert "->" not in key_lines[0]
    node = drawing.nodes["tlgraph_key"]
    assert node.kind == "key" and node.members == () and node.module is None
    assert not any("tlgraph_key" in edge for edge in drawing.edges)


def test_show_legend_false_drops_the_key_and_nothing_else(cnn: Trace) -> None:
    shown = cnn.draw(color_by="flops", size_by="bytes")
    hidden = cnn.draw(color_by="flops", size_by="bytes", show_legend=False)
    assert "tlgraph_key" not in hidden.nodes and "tlgraph_key" not in hidden.dot
    kept = [ln for ln in shown.dot.splitlines() if '"tlgraph_key"' not in ln]
    assert kept == hidden.dot.splitlines()
    assert hidden.state == shown.state


@functools.cache
def _trace(model: str) -> Trace:
    if model == "loop":
        return capture(BareLoop(), torch.randn(2, 4), magnitudes=True)
    if model == "cnn":
        return capture(seeded(CNN()), torch.randn(1, 3, 8, 8), magnitudes=True)
    return capture(seeded(RecurrentCell()), torch.randn(2, 8), magnitudes=True)


@pytest.mark.parametrize(
    "options",
    [
        {"color_by": "flops"},
        {"color_by": "time", "page": "dark"},
        {"size_by": "bytes"},
        {"size_by": "dims", "size_scale": "linear"},
        {"size_by": "flops", "size_scale": "sqrt", "color_by": "magnitude"},
        {"stack_by": True},
        {"color_by": lambda r: r.index, "stack_by": "pass_number"},
        {"color_by": "bytes", "depth": 0},
        {"color_by": "flops", "collapse": "max"},
        {"color_by": "time", "view": "rolled"},
    ],
)
@pytest.mark.parametrize("model", ["loop", "cnn", "recurrent"])
def test_no_transform_coverage_or_scale_wording_in_the_dot(
    model: str, options: dict[str, Any]
) -> None:
    trace = _trace(model)
    if "stack_by" in options and options["stack_by"] is True and model == "cnn":
        options = {**options, "stack_by": "pass_number"}
    plain = trace.draw(**{k: v for k, v in options.items() if k in ("view", "depth", "collapse")})
    encoded = trace.draw(**options)
    ids = set(plain.nodes) | set(encoded.nodes)

    def wording(dot: str) -> str:
        # Node ids repeat in rank groups; what matters is text, not identifiers.
        return re.sub(r'"([^"]*)"', lambda m: '""' if m[1] in ids else m[0], dot).lower()

    text, base = wording(encoded.dot), wording(plain.dot)
    for word in FORBIDDEN:
        # Model text may contain a word (a linear layer): the channels must add none.
        assert text.count(word) == base.count(word), (word, options)


def test_a_model_without_linear_layers_has_none_of_the_words_at_all() -> None:
    trace = capture(Shrink(), torch.randn(2, 16), magnitudes=True)
    drawing = trace.draw(color_by="bytes", size_by="dims", size_scale="linear")
    assert "tlgraph_key" in drawing.nodes
    for word in FORBIDDEN:
        assert word not in drawing.dot.lower()


def test_callable_names_are_escaped_in_the_key_and_caption(mlp: Trace) -> None:
    class Hostile:
        __name__ = 'a<b>&"c'

        def __call__(self, record: Any) -> float:
            return float(record.index)

    drawing = mlp.draw(color_by=Hostile(), stack_by=Hostile())
    assert drawing.nodes["tlgraph_key"].rows[0] == 'callable a<b>&"c: 0 [bar] 4'
    assert "callable a&lt;b&gt;&amp;&quot;c" in drawing.dot
    assert "a<b>" not in drawing.dot
    assert "stacked by: callable a&lt;b&gt;&amp;&quot;c" in drawing.dot
