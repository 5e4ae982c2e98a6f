"""``color_by``: min-max normalisation, ramp fills, page orientation, degenerate keys
(ENCODING.md §3.2, §3.5)."""

from __future__ import annotations

import dataclasses
import re

import pytest

from pytest_tlgraph import Trace
from pytest_tlgraph.draw.encoding.ramps import ramp_for_page
from pytest_tlgraph.draw.style import PAGES
from tests.models import without_pool_flops

_NODE = re.compile(r'^  ("(?:[^"\\]|\\.)*") \[(.*)\];$')
_LABEL = re.compile(r"^label=(<.*?>)(?:, |$)")
_ATTR = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*")')


def node_attrs(dot: str) -> dict[str, dict[str, str]]:
    """Node id -> attributes (values unquoted; the HTML label kept verbatim)."""
    out: dict[str, dict[str, str]] = {}
    for line in dot.splitlines():
        match = _NODE.match(line)
        if not match:
            continue
        body = match.group(2)
        label = _LABEL.match(body)
        attrs = {"label": label.group(1)} if label else {}
        rest = body[label.end() :] if label else body
        attrs.update({k: v[1:-1] for k, v in _ATTR.findall(rest)})
        out[match.group(1)[1:-1]] = attrs
    return out


@pytest.mark.parametrize("page", ["light", "dark"])
def test_fill_is_the_ramp_sample_at_the_min_max_fraction(cnn: Trace, page: str) -> None:
    drawing = cnn.draw(color_by="flops", page=page)
    assert drawing.state is not None
    channel = drawing.state.channels["color_by"]
    finite = {op.label: float(op.flops_forward) for op in cnn.ops if op.flops_forward is not None}
    lo, hi = min(finite.values()), max(finite.values())
    assert channel.domain == (lo, hi)
    assert dict(channel.values) == finite
    ramp = ramp_for_page(page)
    attrs = node_attrs(drawing.dot)
    for node_id, value in finite.items():
        expected = ramp.sample((value - lo) / (hi - lo))
        assert channel.fills[node_id] == expected
        assert attrs[node_id]["fillcolor"] == expected
    assert channel.eligible == len(cnn.ops)
    assert channel.encoded == len(finite)


def test_light_page_runs_yellow_to_purple_and_dark_page_the_other_way(mlp: Trace) -> None:
    light = node_attrs(mlp.draw(color_by="flops").dot)
    dark = node_attrs(mlp.draw(color_by="flops", page="dark").dot)
    # linear_1 has the most forward FLOPs, the input record none.
    assert (light["input_1"]["fillcolor"], light["linear_1"]["fillcolor"]) == ("#FDE725", "#440154")
    assert (dark["input_1"]["fillcolor"], dark["linear_1"]["fillcolor"]) == ("#440154", "#FDE725")


def test_the_key_bar_is_sampled_from_the_page_ramp(mlp: Trace) -> None:
    for page in ("light", "dark"):
        key = node_attrs(mlp.draw(color_by="flops", page=page).dot)["tlgraph_key"]
        cells = re.findall(r'BGCOLOR="(#[0-9A-F]{6})"', key["label"])
        assert cells[0] == ramp_for_page(page).sample(0.0)
        assert cells[-1] == ramp_for_page(page).sample(1.0)
        assert len(cells) >= 5


def test_only_fill_and_text_colour_change_on_encoded_nodes(cnn: Trace) -> None:
    plain = node_attrs(cnn.draw().dot)
    encoded_drawing = cnn.draw(color_by="flops")
    encoded = node_attrs(encoded_drawing.dot)
    assert encoded_drawing.state is not None
    fills = encoded_drawing.state.channels["color_by"].fills
    assert fills  # the check below must have something to check
    for node_id, attrs in plain.items():
        if node_id in fills:
            channel = ("fillcolor", "fontcolor")
            assert {k: v for k, v in encoded[node_id].items() if k not in channel} == {
                k: v for k, v in attrs.items() if k not in channel
            }
        else:
            assert encoded[node_id] == attrs  # unencoded nodes keep their role fill


def test_unencoded_nodes_keep_their_role_fill(cnn: Trace) -> None:
    cnn = without_pool_flops(cnn)
    drawing = cnn.draw(color_by="flops")
    assert drawing.state is not None
    missing = [op.label for op in cnn.ops if op.flops_forward is None]
    assert missing, "the CNN has ops with no FLOP count (pooling)"
    attrs = node_attrs(drawing.dot)
    for label in missing:
        assert attrs[label]["fillcolor"] == PAGES["light"].fill("op")
    assert "n/a = unencoded" in drawing.state.notes


def _with_durations(trace: Trace, duration: float | None) -> Trace:
    ops = tuple(
        dataclasses.replace(op, func_duration=duration if op.has_function else 0.0)
        for op in trace.ops
    )
    return dataclasses.replace(trace, ops=ops)


def test_constant_domain_draws_one_line_and_no_fills(mlp: Trace) -> None:
    # Every node reads 0.1 ms (inputs and outputs too): no range exists.
    ops = tuple(dataclasses.replace(op, func_duration=0.0001) for op in mlp.ops)
    trace = dataclasses.replace(mlp, ops=ops)
    drawing = trace.draw(color_by="time")
    assert drawing.nodes["tlgraph_key"].rows == ("time: all 0.1 ms",)
    assert drawing.state is not None
    channel = drawing.state.channels["color_by"]
    assert channel.fills == {} and channel.encoded == 0
    assert channel.domain == (0.0001, 0.0001)
    assert "BGCOLOR" not in drawing.dot
    plain = node_attrs(trace.draw().dot)
    attrs = node_attrs(drawing.dot)
    assert {k: attrs[k] for k in plain} == plain


def test_no_values_draws_one_line(mlp: Trace) -> None:
    drawing = _with_durations(mlp, None).draw(color_by="time")
    # Input and output records still read 0 ms; every real op reads n/a.
    assert drawing.nodes["tlgraph_key"].rows == ("time: all 0 ms",)
    nothing = mlp.draw(color_by=lambda record: None)
    assert nothing.nodes["tlgraph_key"].rows == ("callable <lambda>: no values",)
    assert nothing.state is not None
    assert nothing.state.channels["color_by"].domain is None
    assert nothing.state.notes == ("n/a = unencoded",)


def test_normalisation_uses_visible_nodes_only(cnn: Trace) -> None:
    # With the feature extractor boxed, its ops are off the page: the domain is taken
    # over the visible nodes, the box counting as the sum of its members.
    drawing = cnn.draw(color_by="bytes", depth=0)
    assert drawing.state is not None
    channel = drawing.state.channels["color_by"]
    expected = {}
    for node_id, node in drawing.nodes.items():
        if node.kind == "key":
            continue
        ops = [cnn.op(label) for label in node.members]
        if node.kind == "box":
            expected[node_id] = float(sum(op.activation_memory or 0 for op in ops))
        else:
            (op,) = ops
            expected[node_id] = float(op.activation_memory or 0)
    assert dict(channel.values) == expected
    assert channel.domain == (min(expected.values()), max(expected.values()))
    biggest_op = max(op.activation_memory or 0 for op in cnn.ops)
    assert channel.domain[1] != biggest_op  # the hidden conv outputs set no bound
