"""Reading canonical DOT back into plain data, checked against real drawings."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from pytest_tlgraph import capture
from pytest_tlgraph.controls import visible
from pytest_tlgraph.draw import build_plan
from pytest_tlgraph.draw.dot import DotGraph, NodeStatement, emit, html_label
from pytest_tlgraph.draw.plan import Cluster
from pytest_tlgraph.snapshots.graphdata import DotParseError, parse_dot
from tests.drawn import drawn_data
from tests.models import CNN, MLP, HostileNames, RecurrentCell, ResidualMLP, seeded

DRAWS: list[tuple[str, nn.Module, Any, dict[str, Any]]] = [
    ("mlp", MLP(), torch.zeros(2, 8), {}),
    ("mlp-rolled-dark", MLP(), torch.zeros(2, 8), {"view": "rolled", "page": "dark"}),
    ("mlp-flops", MLP(), torch.zeros(2, 8), {"color_by": "flops"}),
    ("cnn-bytes", CNN(), torch.zeros(1, 3, 8, 8), {"size_by": "bytes"}),
    ("cnn-depth0", CNN(), torch.zeros(1, 3, 8, 8), {"depth": 0, "color_by": "flops"}),
    ("residual-max", ResidualMLP(blocks=3), torch.zeros(2, 32), {"collapse": "max"}),
    ("residual-d1", ResidualMLP(blocks=2), torch.zeros(2, 32), {"depth": 1, "view": "rolled"}),
    ("rnn-stack", RecurrentCell(), torch.zeros(2, 8), {"stack_by": True}),
    ("hostile", HostileNames(), torch.zeros(1, 4), {"node_label_fields": ["name", "module"]}),
]


@pytest.mark.parametrize(
    ("model", "inputs", "options"), [d[1:] for d in DRAWS], ids=[d[0] for d in DRAWS]
)
def test_parsed_dot_equals_the_drawn_data(
    model: nn.Module, inputs: Any, options: dict[str, Any]
) -> None:
    drawing = capture(seeded(model), inputs).draw(**options)
    parsed = parse_dot(drawing.dot)
    nodes, edges, clusters = drawn_data(drawing)
    assert dict(parsed.nodes) == nodes
    assert parsed.edges == edges
    assert sorted(parsed.clusters) == sorted(clusters)


@pytest.mark.parametrize("view", ["unrolled", "rolled"])
def test_each_node_reads_back_in_its_innermost_cluster(view: str) -> None:
    trace = capture(seeded(ResidualMLP(blocks=2)), torch.zeros(2, 32))
    plan = build_plan(trace, view=view)
    parsed = parse_dot(trace.draw(view=view).dot)
    assert dict(parsed.cluster_of) == {node.id: node.cluster for node in plan.nodes}
    assert any(cluster is not None for cluster in parsed.cluster_of.values())


def test_hostile_module_names_survive_the_round_trip() -> None:
    drawing = capture(HostileNames(), torch.zeros(1, 4)).draw()
    rows = [row for rows in parse_dot(drawing.dot).nodes.values() for row in rows]
    assert '@blocks.a<b&c"d' in rows
    assert "@blocks.e>f'g\\h" in rows


def test_the_key_reads_as_its_plain_lines() -> None:
    drawing = capture(MLP(), torch.zeros(2, 8)).draw(color_by="flops", size_by="bytes")
    key = parse_dot(drawing.dot).nodes["tlgraph_key"]
    assert key == drawing.nodes["tlgraph_key"].rows
    assert any(" [bar] " in line for line in key)


_TEXT = st.text(st.characters(codec="utf-8"), max_size=12)


@settings(max_examples=60, deadline=None)
@given(
    nodes=st.dictionaries(_TEXT, st.lists(_TEXT, min_size=1, max_size=4), min_size=1, max_size=5),
    title=_TEXT,
)
def test_any_emitted_graph_parses_back(nodes: dict[str, list[str]], title: str) -> None:
    ids = list(nodes)
    statements = [
        NodeStatement(node_id, "c" if i % 2 else None, {"label": html_label(rows, [0])})
        for i, (node_id, rows) in enumerate(nodes.items())
    ]
    graph = DotGraph(
        graph_attrs={"label": html_label(["caption"])},
        node_defaults={},
        edge_defaults={},
        nodes=statements,
        edges=list(itertools.pairwise(ids)),
        clusters=[Cluster("c", "addr", title, None)],
        cluster_attrs={"c": {"label": html_label([f"@addr ({title})"])}},
    )
    parsed = parse_dot(emit(graph))
    # Read back as drawn: line breaks in labels are spaces, control characters escapes.
    line_breaks = str.maketrans({"\n": " ", "\r": " "})
    expected = {
        visible(key): tuple(visible(r.translate(line_breaks)) for r in rows)
        for key, rows in nodes.items()
    }
    assert dict(parsed.nodes) == expected
    assert parsed.edges == tuple((visible(a), visible(b)) for a, b in itertools.pairwise(ids))
    assert parsed.clusters == (visible(f"@addr ({title})".translate(line_breaks)),)


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("digraph G {\n}\n", 1),
        ("digraph tlgraph {\n  what is this;\n}\n", 2),
        ('digraph tlgraph {\n  "a" [label=<<B>a</B>];\n}\n', 2),
        ('digraph tlgraph {\n  "a" [label=<<B>a</B>>];\n', 2),
        ('digraph tlgraph {\n  "a" [label=<<B>a</B>>, color="red"];\n}\nextra\n', 4),
    ],
)
def test_text_that_is_not_canonical_dot_names_the_line(text: str, line: int) -> None:
    with pytest.raises(DotParseError, match=rf"^line {line}:"):
        parse_dot(text)
