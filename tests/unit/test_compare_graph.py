"""Reading canonical DOT back into the comparison's graph model
(:func:`~pytest_tlgraph.diff.graph.read_graph`), checked against real
drawings."""

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
from pytest_tlgraph.diff.dotparse import DotParseError, parse_gv
from pytest_tlgraph.diff.graph import GraphModel, read_graph
from pytest_tlgraph.draw import build_plan
from pytest_tlgraph.draw.dot import DotGraph, NodeStatement, emit, html_label
from pytest_tlgraph.draw.plan import Cluster
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
    graph = read_graph(drawing.dot)
    nodes, edges, clusters = drawn_data(drawing)
    nodes.pop("tlgraph_key", None)  # the key draws the channels, not the model
    assert _rows(graph) == nodes
    assert graph.edges == tuple(e for e in edges if "tlgraph_key" not in e)
    assert sorted(c.title for c in graph.clusters.values()) == sorted(clusters)


@pytest.mark.parametrize("view", ["unrolled", "rolled"])
def test_each_node_reads_back_in_its_innermost_cluster(view: str) -> None:
    trace = capture(seeded(ResidualMLP(blocks=2)), torch.zeros(2, 32))
    plan = build_plan(trace, view=view)
    graph = read_graph(trace.draw(view=view).dot)
    cluster_of = {node_id: node.cluster for node_id, node in graph.nodes.items()}
    assert cluster_of == {node.id: node.cluster for node in plan.nodes}
    assert any(cluster is not None for cluster in cluster_of.values())
    # The cluster path runs outermost first, through each cluster's parent.
    for node_id, node in graph.nodes.items():
        path = graph.cluster_path(node_id)
        assert path == (() if node.cluster is None else (*path[:-1], node.cluster))
        for outer, inner in itertools.pairwise(path):
            assert graph.clusters[inner].parent == outer


def test_hostile_module_names_survive_the_round_trip() -> None:
    drawing = capture(HostileNames(), torch.zeros(1, 4)).draw()
    rows = [row for rows in _rows(read_graph(drawing.dot)).values() for row in rows]
    assert '@blocks.a<b&c"d' in rows
    assert "@blocks.e>f'g\\h" in rows


def test_the_key_reads_as_its_plain_lines() -> None:
    drawing = capture(MLP(), torch.zeros(2, 8)).draw(color_by="flops", size_by="bytes")
    key = read_graph(drawing.dot).key_rows
    assert key == drawing.nodes["tlgraph_key"].rows
    assert any(" [bar] " in line for line in key)


def _rows(graph: GraphModel) -> dict[str, tuple[str, ...]]:
    return {node_id: node.rows for node_id, node in graph.nodes.items()}


_TEXT = st.text(st.characters(codec="utf-8"), max_size=12)
#: Node ids without a character that quote() writes as a visible escape (see
#: test_an_id_with_a_control_character_reads_back_as_its_escape).
_ID = st.text(st.characters(codec="utf-8", categories=("L", "N", "P", "S", "Zs")), max_size=12)


@settings(max_examples=60, deadline=None)
@given(
    nodes=st.dictionaries(_ID, st.lists(_TEXT, min_size=1, max_size=4), min_size=1, max_size=5),
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
        node_defaults={"shape": "box"},
        edge_defaults={"color": "black"},
        nodes=statements,
        edges=list(itertools.pairwise(ids)),
        clusters=[Cluster("c", "addr", title, None)],
        cluster_attrs={"c": {"label": html_label([f"@addr ({title})"])}},
    )
    parsed = read_graph(emit(graph))
    # Read back as drawn: line breaks in labels are spaces, control characters escapes.
    line_breaks = str.maketrans({"\n": " ", "\r": " "})
    expected = {
        visible(key): tuple(visible(r.translate(line_breaks)) for r in rows)
        for key, rows in nodes.items()
    }
    assert _rows(parsed) == expected
    assert parsed.edges == tuple((visible(a), visible(b)) for a, b in itertools.pairwise(ids))
    titles = tuple(c.title for c in parsed.clusters.values())
    assert titles == (visible(f"@addr ({title})".translate(line_breaks)),)


def test_an_id_with_a_control_character_reads_back_as_drawn() -> None:
    graph = DotGraph(
        graph_attrs={},
        node_defaults={"shape": "box"},
        edge_defaults={"color": "black"},
        nodes=[
            NodeStatement("a\x1fb", None, {"label": html_label(["t"], [0])}),
            NodeStatement("ax1fb", None, {"label": html_label(["u"], [0])}),
        ],
        edges=[("a\x1fb", "ax1fb")],
        clusters=[],
        cluster_attrs={},
    )
    text = emit(graph)
    assert visible("a\x1fb") in text  # written as its visible escape
    assert list(read_graph(text).nodes) == ["a\x1fb", "ax1fb"]
    assert emit(parse_gv(text).graph) == text


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
        read_graph(text)
