"""Canonical DOT emission (ENCODING.md §2.1): quoting, escaping, fixed orders."""

from __future__ import annotations

import html
import random
import re
import shutil
import subprocess
import unicodedata
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_tlgraph.controls import visible
from pytest_tlgraph.draw.dot import (
    DotGraph,
    NodeStatement,
    attr_list,
    emit,
    html_escape,
    html_label,
    plain_node_attrs,
    quote,
)
from pytest_tlgraph.draw.plan import Cluster

_text = st.text(
    alphabet=st.characters() | st.sampled_from("\\\"'<>&{}[];|\n\x00\x1b"),
    max_size=12,
)


def _graph(**overrides: object) -> DotGraph:
    base: dict[str, object] = {
        "graph_attrs": {"rankdir": "BT"},
        "node_defaults": {"shape": "box"},
        "edge_defaults": {"color": "#000000"},
        "nodes": [
            NodeStatement("a", None, {"label": "<a>"}),
            NodeStatement("b", "cluster_m#1", {"label": "<b>"}),
            NodeStatement("c", "cluster_m.n#1", {"label": "<c>"}),
        ],
        "edges": [("a", "b"), ("b", "c")],
        "clusters": [
            Cluster("cluster_m#1", "m", "Block", None),
            Cluster("cluster_m.n#1", "m.n", "Linear", "cluster_m#1"),
        ],
        "cluster_attrs": {
            "cluster_m#1": {"label": "<@m (Block)>"},
            "cluster_m.n#1": {"label": "<@m.n (Linear)>"},
        },
    }
    base.update(overrides)
    return DotGraph(**base)  # type: ignore[arg-type]


def test_emit_writes_nodes_then_edges_then_clusters_outermost_first() -> None:
    text = emit(_graph())
    assert text == (
        "digraph tlgraph {\n"
        '  graph [rankdir="BT"];\n'
        '  node [shape="box"];\n'
        '  edge [color="#000000"];\n'
        '  "a" [label=<a>];\n'
        '  "b" [label=<b>];\n'
        '  "c" [label=<c>];\n'
        '  "a" -> "b";\n'
        '  "b" -> "c";\n'
        '  subgraph "cluster_m#1" {\n'
        "    graph [label=<@m (Block)>];\n"
        '    "b";\n'
        '    subgraph "cluster_m.n#1" {\n'
        "      graph [label=<@m.n (Linear)>];\n"
        '      "c";\n'
        "    }\n"
        "  }\n"
        "}\n"
    )


def test_rank_groups_and_extra_nodes_come_last() -> None:
    text = emit(
        _graph(
            rank_groups=[["a", "b"]],
            extra_nodes=[NodeStatement("key", None, {"label": "<k>", "shape": "plain"})],
        )
    )
    lines = text.splitlines()
    assert lines[-3] == '  { rank=same; "a"; "b"; }'
    assert lines[-2] == '  "key" [label=<k>, shape="plain"];'


@given(st.permutations(["tooltip", "label", "zeta", "fillcolor", "shape", "alpha", "width"]))
def test_attributes_are_written_in_one_fixed_order_whatever_the_dict_order(
    names: list[str],
) -> None:
    attrs = {name: "1" for name in names}
    assert attr_list(attrs) == (
        '[label="1", shape="1", fillcolor="1", width="1", tooltip="1", alpha="1", zeta="1"]'
    )


def test_values_have_fixed_formats() -> None:
    assert attr_list({"fixedsize": False, "width": 1.23456, "fontsize": 10}) == (
        '[fontsize="10", width="1.235", fixedsize=false]'
    )
    assert attr_list({"label": "<<B>x</B>>"}) == "[label=<<B>x</B>>]"
    assert attr_list({"tooltip": '<not "html">'}) == '[tooltip="<not \\"html\\">"]'


def test_attributes_set_to_none_are_left_out() -> None:
    assert attr_list({"label": "<x>", "fillcolor": None, "width": None}) == "[label=<x>]"
    assert attr_list({"fillcolor": None}) == "[]"


@given(_text)
def test_quote_always_quotes_and_round_trips(text: str) -> None:
    quoted = quote(text)
    assert quoted.startswith('"') and quoted.endswith('"')
    inner = quoted[1:-1]
    # No quote inside is left unescaped, so the string can never end early.
    assert re.search(r'(?<!\\)(\\\\)*"', inner) is None
    # Backslashes and quotes come back; control characters stay visible escapes.
    assert re.sub(r'\\([\\"])', r"\1", inner) == visible(text)
    assert not any(unicodedata.category(c) in ("Cc", "Cs") and c != "\t" for c in inner)


@given(_text)
def test_html_escape_leaves_no_markup_and_loses_only_line_breaks(text: str) -> None:
    escaped = html_escape(text)
    assert not set("<>\"'\n\r") & set(escaped)
    assert re.search(r"&(?!(amp|lt|gt|quot|#39);)", escaped) is None
    assert html.unescape(escaped) == visible(text.replace("\n", " ").replace("\r", " "))


def test_html_label_joins_rows_and_bolds_the_chosen_ones() -> None:
    assert html_label(["title", "a<b", "c"], bold_rows=[0]) == "<<B>title</B><BR/>a&lt;b<BR/>c>"
    assert html_label(["x & y"]) == "<x &amp; y>"


@pytest.mark.skipif(shutil.which("dot") is None, reason="needs Graphviz's dot")
@given(st.lists(_text, min_size=1, max_size=8, unique=True))
@settings(max_examples=15, deadline=None)
def test_any_ids_and_rows_give_dot_that_graphviz_parses_node_for_node(texts: list[str]) -> None:
    ids = [f"n{i}_{t}" for i, t in enumerate(texts)]
    nodes = [
        NodeStatement(i, None, {"label": html_label([t, t])})
        for i, t in zip(ids, texts, strict=True)
    ]
    edges = list(pairwise(ids))
    random.Random(0).shuffle(edges)
    text = emit(_graph(nodes=nodes, edges=edges, clusters=[], cluster_attrs={}))
    done = subprocess.run(["dot", "-Tplain"], input=text.encode(), capture_output=True)
    assert done.returncode == 0, done.stderr.decode()
    lines = done.stdout.decode().splitlines()
    assert sum(line.startswith("node ") for line in lines) == len(ids)
    assert sum(line.startswith("edge ") for line in lines) == len(edges)


@given(rows=st.lists(_text, min_size=1, max_size=4), fill=_text | st.sampled_from(["#F3F4F6"]))
def test_plain_node_attrs_write_what_attr_list_writes(rows: list[str], fill: str) -> None:
    label = html_label(rows, [0])
    assert plain_node_attrs(label, fill) == attr_list({"fillcolor": fill, "label": label})
    # A label that is no HTML-like label is quoted, as attr_list quotes it.
    assert plain_node_attrs(rows[0], fill) == attr_list({"label": rows[0], "fillcolor": fill})


def test_a_written_attribute_list_is_emitted_as_is() -> None:
    written = plain_node_attrs("<a>", "#FFFFFF")
    as_mapping = emit(
        _graph(nodes=[NodeStatement("a", None, {"label": "<a>", "fillcolor": "#FFFFFF"})])
    )
    as_text = emit(_graph(nodes=[NodeStatement("a", None, written)]))
    assert as_text == as_mapping
    assert '"a" [label=<a>, fillcolor="#FFFFFF"];' in as_text
