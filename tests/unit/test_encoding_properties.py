"""Properties of the channels over real models and random option mixes:
strictly opt-in, and strictly presentation (ENCODING.md §2.1)."""

from __future__ import annotations

import functools
import re
from typing import Any

import pytest
import torch
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from pytest_tlgraph import Drawing, EncodingRefusal, Trace
from pytest_tlgraph.capture import capture
from tests.models import CNN, MLP, Interleaved, RecurrentCell, SharedModule, Shrink, seeded


@functools.cache
def traces() -> dict[str, Trace]:
    return {
        "mlp": capture(seeded(MLP()), torch.randn(2, 8), backward=True, magnitudes=True),
        "cnn": capture(seeded(CNN()), torch.randn(1, 3, 8, 8), magnitudes=True),
        "recurrent": capture(seeded(RecurrentCell()), torch.randn(2, 8), magnitudes=True),
        # Two modules alternating in one loop (A1 B1 A2 B2 A3 B3), then one after the other.
        "lockstep": capture(seeded(Interleaved("arb" * 3)), torch.randn(1, 4), magnitudes=True),
        "chained": capture(seeded(Interleaved("aaabbb")), torch.randn(1, 4), magnitudes=True),
        "shrink": capture(Shrink(), torch.randn(2, 16), magnitudes=True),
        "shared": capture(seeded(SharedModule()), torch.randn(2, 6), magnitudes=True),
    }


def by_index(record: Any) -> float:
    return float(getattr(record, "index", 0) or len(getattr(record, "label", "")))


def parity(record: Any) -> int | None:
    number = getattr(record, "pass_number", None)
    return None if number is None else number % 2


SOURCES = ["time", "bytes", "flops", "magnitude", "grad_norm", "flops_total", by_index]

base_options = st.fixed_dictionaries(
    {},
    optional={
        "view": st.sampled_from(["unrolled", "rolled"]),
        "direction": st.sampled_from(["bottomup", "topdown", "leftright"]),
        "page": st.sampled_from(["light", "dark"]),
        "depth": st.sampled_from([0, 1]),
        "collapse": st.sampled_from(["max", "auto"]),
        "show_legend": st.booleans(),
        "layout": st.sampled_from(["auto", "dot"]),
    },
).filter(lambda o: not ("depth" in o and "collapse" in o))

channel_options = st.fixed_dictionaries(
    {},
    optional={
        "color_by": st.sampled_from(SOURCES),
        "size_by": st.sampled_from([*SOURCES, "dims"]),
        "stack_by": st.sampled_from([True, "pass_number", parity]),
    },
).filter(bool)

# Refusals a valid mix may still meet: each names a real limit of the model or view.
EXPECTED_REFUSALS = {
    "size_by_rolled_varying",
    "stack_by_requires_unrolled",
    "stack_by_auto_underivable",
}

_STRIP_NODE_ATTRS = re.compile(r', (?:fontcolor|width|height|fixedsize)="[^"]*"')
_FILL = re.compile(r', fillcolor="#[0-9A-F]{6}"')


def strip(drawing: Drawing, fills: set[str]) -> str:
    """``drawing.dot`` without any channel attribute (and without the fill of the
    nodes in ``fills``, removed from both sides of a comparison)."""
    lines = []
    for line in drawing.dot.splitlines():
        if line.startswith(("  { rank=same;", '  "tlgraph_key" ', "  { rank=max;")):
            continue
        if line.endswith(' [style="invis"];'):  # orders the timestep diagram's columns
            continue
        if line.startswith("  graph ["):
            line = re.sub(r"<BR/>stacked by: [^<>]*", "", line)
            line = line.replace(' newrank="true",', "")
            # The timestep diagram is a top-to-bottom drawing of columns.
            line = re.sub(r' rankdir="[A-Z]{2}",', "", line)
        line = line.replace(' [constraint="false"];', ";").replace(', constraint="false"]', "]")
        match = re.match(r'^  "((?:[^"\\]|\\.)*)" \[', line)
        if match:
            line = _STRIP_NODE_ATTRS.sub("", line)
            if match[1] in fills:
                line = _FILL.sub("", line)
        lines.append(line)
    return "\n".join(lines)


def try_draw(trace: Trace, options: dict[str, Any]) -> Drawing:
    try:
        return trace.draw(**options)
    except EncodingRefusal as refusal:
        assert refusal.code in EXPECTED_REFUSALS, refusal
        assume(False)
        raise


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(
    name=st.sampled_from(sorted(traces())),
    base=base_options,
    off=st.fixed_dictionaries(
        {},
        optional={
            "color_by": st.sampled_from([None, False]),
            "size_by": st.sampled_from([None, False]),
            "stack_by": st.sampled_from([None, False]),
        },
    ),
)
def test_every_channel_off_is_the_plain_draw(
    name: str, base: dict[str, Any], off: dict[str, Any]
) -> None:
    trace = traces()[name]
    plain = trace.draw(**base)
    drawing = trace.draw(**base, **off)
    assert drawing.dot == plain.dot
    assert drawing.state is None
    assert "tlgraph_key" not in drawing.nodes


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(name=st.sampled_from(sorted(traces())), base=base_options, channels=channel_options)
def test_channels_are_presentation_only(
    name: str, base: dict[str, Any], channels: dict[str, Any]
) -> None:
    trace = traces()[name]
    encoded = try_draw(trace, {**base, **channels})
    plain = trace.draw(**base)
    state = encoded.state
    assert state is not None
    # The drawn graph as data: the same nodes, rows, members, edges and clusters.
    assert {k: v for k, v in encoded.nodes.items() if k != "tlgraph_key"} == dict(plain.nodes)
    assert encoded.edges == plain.edges
    assert encoded.clusters == plain.clusters
    # The DOT: removing the channel attributes leaves exactly the plain draw. Fills are
    # removed from the colour-encoded nodes only: every other node keeps its role fill.
    fills = set(state.channels["color_by"].fills) if "color_by" in state.channels else set()
    assert strip(encoded, fills) == strip(plain, fills)
    has_key = base.get("show_legend", True)
    assert ("tlgraph_key" in encoded.nodes) == has_key
    assert ('"tlgraph_key"' in encoded.dot) == has_key


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(name=st.sampled_from(sorted(traces())), base=base_options, channels=channel_options)
def test_describe_is_a_stable_function_of_the_draw(
    name: str, base: dict[str, Any], channels: dict[str, Any]
) -> None:
    trace = traces()[name]
    first = try_draw(trace, {**base, **channels})
    second = trace.draw(**base, **channels)
    assert first.dot == second.dot
    assert first.state is not None and second.state is not None
    assert first.state.describe() == second.state.describe() == first.state.describe()
    assert len(set(first.state.notes)) == len(first.state.notes)
    assert len(set(first.state.aggregation)) == len(first.state.aggregation)


@pytest.mark.parametrize("name", ["mlp", "cnn", "lockstep"])
def test_fill_attribute_is_the_only_difference_on_coloured_nodes(name: str) -> None:
    trace = traces()[name]
    encoded = trace.draw(color_by="flops")
    assert encoded.state is not None
    fills = set(encoded.state.channels["color_by"].fills)
    assert fills
    assert strip(encoded, set()) != strip(trace.draw(), set())  # the fills did change
    assert strip(encoded, fills) == strip(trace.draw(), fills)
