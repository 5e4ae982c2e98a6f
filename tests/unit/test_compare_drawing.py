"""The structural diff drawing (REVIEW.md §2.3, :mod:`pytest_tlgraph.diff.view.drawing`)
and the .gv round trip it stands on.

Every case draws both graphs in the test (real models where it matters: BERT from a tiny
config), so the checks follow whatever rows the drawing stage writes.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch import nn

from pytest_tlgraph.capture import capture
from pytest_tlgraph.diff.dotparse import DotParseError, parse_attrs, parse_gv
from pytest_tlgraph.diff.view.comparison import compare
from pytest_tlgraph.diff.view.story import story_lines
from pytest_tlgraph.draw import Drawing
from pytest_tlgraph.draw.dot import emit
from pytest_tlgraph.snapshots import graph_diff
from tests.models import TwoBranches

transformers = pytest.importorskip("transformers")


def _bert_trace(**changes: Any) -> Any:
    config = {
        "vocab_size": 96, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
        "intermediate_size": 64, "max_position_embeddings": 64, **changes,
    }  # fmt: skip
    torch.manual_seed(0)
    model = transformers.BertModel(transformers.BertConfig(**config)).eval()
    ids = torch.randint(0, 96, (1, 8))
    return capture(model, (ids,))


def _bert(**changes: Any) -> Drawing:
    return _bert_trace(**changes).draw(depth=3)


@pytest.fixture(scope="module")
def bert_trace() -> Any:
    return _bert_trace()


@pytest.fixture(scope="module")
def bert(bert_trace: Any) -> Drawing:
    return bert_trace.draw(depth=3)


class Net(nn.Module):
    def __init__(self, hidden: int = 8, act: type[nn.Module] = nn.ReLU) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, hidden, 3, padding=1)
        self.head = nn.Sequential(nn.Linear(hidden, 4), act())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.conv(x).mean((-2, -1)))


def _net(x: torch.Tensor | None = None, **kwargs: Any) -> Any:
    torch.manual_seed(0)
    return capture(Net(**kwargs), x if x is not None else torch.randn(1, 3, 8, 8))


def _kinds(drawing: Drawing) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for node_id, node in drawing.nodes.items():
        out.setdefault(node.kind, []).append(node_id)
    return out


def _in_layer_2(diff: Drawing, node_id: str) -> bool:
    """Whether the node is drawn inside BERT's third layer: its @module row is relative
    to its innermost cluster, so the cluster chain says where it is (the diff marks an
    added or removed cluster's title with ``+ `` or ``- ``)."""
    parsed = parse_gv(diff.dot)
    cluster = {n.id: n.cluster for n in parsed.graph.nodes}[node_id]
    parents = {c.id: c.parent for c in parsed.graph.clusters}
    while cluster is not None:
        if parsed.titles[cluster].lstrip("+- ").startswith("@encoder.layer.2"):
            return True
        cluster = parents[cluster]
    return False


# --- the .gv round trip ---------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"color_by": "flops"},
        {"color_by": "flops", "size_by": "activation_memory", "page": "dark"},
        {"collapse": "auto"},
        {"collapse": "auto", "color_by": "flops"},
        {"depth": 1, "color_by": "flops"},
    ],
    ids=repr,
)
def test_stored_dot_round_trips(options: dict[str, Any], bert_trace: Any) -> None:
    for drawing in (_net().draw(**options), bert_trace.draw(**options)):
        assert emit(parse_gv(drawing.dot).graph) == drawing.dot


def test_round_trip_keeps_nodes_edges_and_clusters(bert: Drawing) -> None:
    parsed = parse_gv(bert.dot)
    assert [n.id for n in parsed.graph.nodes] == list(bert.nodes)
    assert list(parsed.graph.edges) == list(bert.edges)
    assert tuple(parsed.titles[c.id] for c in parsed.graph.clusters) == bert.clusters
    # Every clustered node's cluster exists, and nesting points at existing clusters.
    ids = {c.id for c in parsed.graph.clusters}
    assert {n.cluster for n in parsed.graph.nodes} - {None} <= ids
    assert {c.parent for c in parsed.graph.clusters} - {None} <= ids


def test_parse_attrs_forms_and_errors() -> None:
    parsed = parse_attrs('[label=<<B>a &lt;b&gt;</B>>, color="#1\\"x", fixedsize=true]')
    assert parsed == {"label": "<<B>a &lt;b&gt;</B>>", "color": '#1"x', "fixedsize": True}
    with pytest.raises(DotParseError, match="unterminated HTML label"):
        parse_attrs("[label=<<B>a]")
    with pytest.raises(DotParseError, match="unexpected value"):
        parse_attrs("[color=red]")


def test_damaged_text_names_side_and_line(bert: Drawing) -> None:
    with pytest.raises(DotParseError, match=r"old DOT: line 1: not a tlgraph drawing"):
        graph_diff("graph x {}", bert.dot)
    damaged = bert.dot.replace(" -> ", " => ", 1)
    with pytest.raises(DotParseError, match=r"new DOT: line \d+: not canonical tlgraph DOT"):
        graph_diff(bert.dot, damaged)
    with pytest.raises(DotParseError, match="not closed"):
        graph_diff(bert.dot.rsplit("}", 1)[0], bert.dot)


# --- the diff cases ---------------------------------------------------------------------


def test_identical_drawings_are_all_grey(bert: Drawing) -> None:
    diff = graph_diff(bert.dot, bert.dot, context=None)
    assert set(_kinds(diff)) == {"unchanged"}
    assert list(diff.nodes) == list(bert.nodes)
    statements = diff.dot.split("\n", 4)[4]  # past the caption, whose legend shows them
    assert "#1A7F37" not in statements and "#CF222E" not in statements
    # With context (the default) nothing changed, so only the inputs and outputs are
    # drawn, the rest one grey run.
    kinds = _kinds(graph_diff(bert.dot, bert.dot))
    assert set(kinds) == {"unchanged", "run"} and len(kinds["run"]) == 1
    assert kinds["unchanged"] == [n for n in bert.nodes if n.startswith(("input_", "output_"))]


def test_hidden_size_change_marks_rows(bert: Drawing) -> None:
    diff = graph_diff(bert.dot, _bert(hidden_size=48).dot, context=None)
    kinds = _kinds(diff)
    assert "added" not in kinds and "removed" not in kinds
    assert len(kinds["changed"]) >= 10 and kinds["unchanged"]
    # The embeddings' LayerNorm is a box like the layers' (same class, same detail).
    rows = diff.nodes["@embeddings.LayerNorm#1"].rows
    assert any(r.startswith("- ") and "1x8x32" in r for r in rows)
    assert any(r.startswith("+ ") and "1x8x48" in r for r in rows)
    assert rows[0] == "@LayerNorm (LayerNorm)"  # the title row stays the title
    # The input's rows did not change: it stays grey and unmarked.
    assert diff.nodes["input_1"].kind == "unchanged"
    assert not any(r.startswith(("- ", "+ ")) for r in diff.nodes["input_1"].rows)


def test_activation_change(bert: Drawing) -> None:
    new = _bert(hidden_act="relu").dot
    diff = graph_diff(bert.dot, new)
    kinds = _kinds(diff)
    assert "changed" not in kinds and "added" not in kinds and "removed" not in kinds
    replaced = [diff.nodes[n] for n in kinds["replaced"]]
    assert len(replaced) == 2  # one activation per layer, nothing else
    for node in replaced:
        assert any(r.startswith("- ") and "GELUActivation" in r for r in node.rows)
        assert any(r.startswith("+ ") and "ReLU" in r for r in node.rows)
    assert not any('color="#1A7F37"' in line or 'color="#CF222E"' in line
                   for line in diff.dot.splitlines() if " -> " in line)  # fmt: skip
    # The story names the function both activations compute, at their pattern.
    assert story_lines(compare(bert.dot, new)) == [
        "replaced gelu -> relu on 2 ops @encoder.layer.*.intermediate.intermediate_act_fn"
    ]


def test_added_layer_is_green_and_nothing_else_moves(bert: Drawing) -> None:
    deeper = _bert(num_hidden_layers=3)
    diff = graph_diff(bert.dot, deeper.dot, context=None)
    kinds = _kinds(diff)
    assert "removed" not in kinds and "changed" not in kinds
    assert kinds["added"] and all(_in_layer_2(diff, n) for n in kinds["added"])
    # Ops renumbered by the insertion (the pooler's linear) pair with their old selves.
    assert len(kinds["unchanged"]) == len(bert.nodes)
    assert "@encoder.layer.2 (BertLayer)" in diff.clusters
    added_edges = [line for line in diff.dot.splitlines() if 'color="#1A7F37"' in line]
    assert any(" -> " in line for line in added_edges)
    assert story_lines(compare(bert.dot, deeper.dot)) == [
        "added @encoder.layer.2 (BertLayer): 25 ops"
    ]
    # With context: the added layer and a few hops around it; the rest grey runs.
    context = _kinds(graph_diff(bert.dot, deeper.dot))
    assert context["added"] == kinds["added"] and context["run"]
    assert len(context["unchanged"]) < len(kinds["unchanged"])


def test_removed_layer_is_red_and_dashed(bert: Drawing) -> None:
    deeper = _bert(num_hidden_layers=3).dot
    diff = graph_diff(deeper, bert.dot)
    kinds = _kinds(diff)
    assert "added" not in kinds and "changed" not in kinds
    assert story_lines(compare(deeper, bert.dot)) == [
        "removed @encoder.layer.2 (BertLayer): 25 ops"
    ]
    assert kinds["removed"] and all(_in_layer_2(diff, n) for n in kinds["removed"])
    removed_line = next(
        line for line in diff.dot.splitlines() if line.startswith(f'  "{kinds["removed"][0]}" [')
    )
    assert "dashed" in removed_line and "#CF222E" in removed_line


def test_swapped_op_is_replaced_in_place() -> None:
    old, new = _net().draw(), _net(act=nn.GELU).draw()
    diff = graph_diff(old.dot, new.dot)
    # One violet node, - relu_1 / + gelu_1, where it was, with its edges unchanged.
    assert _kinds(diff) == {"unchanged": [n for n in new.nodes if n != "gelu_1"],
                            "replaced": ["gelu_1"]}  # fmt: skip
    assert diff.nodes["gelu_1"].rows[:2] == ("- relu_1", "+ gelu_1")
    order = list(diff.nodes)
    assert order.index("gelu_1") == order.index("linear_1") + 1
    assert diff.edges == new.edges
    comparison = compare(old.dot, new.dot)
    assert not comparison.edges_added and not comparison.edges_removed
    assert story_lines(comparison) == ["replaced relu_1 -> gelu_1 (@head.1)"]


def test_suppression_row_change() -> None:
    # Unbatched input: the channel axis cannot be checked, so in/out_channels show.
    batched = _net(torch.randn(1, 3, 8, 8)).draw()
    unbatched = _net(torch.randn(3, 8, 8)).draw()
    diff = graph_diff(batched.dot, unbatched.dot)
    rows = diff.nodes["conv2d_1"].rows
    assert diff.nodes["conv2d_1"].kind == "changed"
    assert any(r.startswith("+ ") and "in_channels=3" in r for r in rows)
    assert any(r.startswith("- ") and "in_channels" not in r and "=" in r for r in rows)


def test_recolouring_alone_is_not_marked() -> None:
    # A larger kernel in branch a costs more FLOPs: the colour domain moves, so branch
    # b's conv is recoloured although its rows stay the same.
    x = torch.randn(1, 3, 8, 8)
    old = capture(TwoBranches(3), x).draw(color_by="flops")
    new = capture(TwoBranches(7), x).draw(color_by="flops")
    recoloured = [
        n for n in new.nodes if n in old.nodes and n != "tlgraph_key"
        and new.nodes[n].rows == old.nodes[n].rows
        and _fill(new, n) != _fill(old, n)
    ]  # fmt: skip
    assert recoloured, "the case must recolour an unchanged node"
    diff = graph_diff(old.dot, new.dot, context=None)
    assert all(diff.nodes[n].kind == "unchanged" for n in recoloured)
    assert "tlgraph_key" not in diff.nodes
    comparison = compare(old.dot, new.dot)
    assert set(recoloured) <= set(comparison.recoloured)
    assert not set(comparison.recoloured) & set(comparison.changed)


def _fill(drawing: Drawing, node_id: str) -> object:
    return next(
        dict(n.attrs).get("fillcolor")  # type: ignore[arg-type]
        for n in parse_gv(drawing.dot).graph.nodes
        if n.id == node_id
    )


def test_the_diff_renders_with_a_legend(bert: Drawing) -> None:
    diff = graph_diff(bert.dot, _bert(num_hidden_layers=3, hidden_act="relu").dot)
    for word in ("added", "removed", "replaced", "changed", "unchanged"):
        assert f">{word}: " in diff.dot
    png = diff.png()
    assert png.startswith(b"\x89PNG")
    # The diff's own DOT is canonical too: it reads back.
    assert emit(parse_gv(diff.dot).graph) == diff.dot


class TwoActs(nn.Module):
    """Two ReLUs in their own modules: swapping the first renumbers the second."""

    def __init__(self, first: type[nn.Module] = nn.ReLU, width: int = 8) -> None:
        super().__init__()
        self.fc1, self.act1 = nn.Linear(4, 8), first()
        self.fc2, self.act2 = nn.Linear(8, width), nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act2(self.fc2(self.act1(self.fc1(x))))


def test_a_renumbered_op_pairs_by_its_module() -> None:
    # relu_1 at @act1 becomes gelu_1, so the ReLU at @act2 is renamed relu_2 -> relu_1:
    # the picture shows the swap at @act1 and the width change at @act2, not a ReLU that
    # moved from @act1 to @act2.
    torch.manual_seed(0)
    old = capture(TwoActs(), torch.randn(2, 4)).draw()
    new = capture(TwoActs(nn.GELU, width=6), torch.randn(2, 4)).draw()
    diff = graph_diff(old.dot, new.dot)
    swap = diff.nodes["gelu_1"]
    assert swap.kind == "replaced" and swap.rows[:2] == ("- relu_1", "+ gelu_1")
    assert "@act1" in swap.rows
    assert "relu_1 (old)" not in diff.nodes
    second = diff.nodes["relu_1"]
    assert second.kind == "changed" and "@act2" in second.rows
    assert not any("act1" in row for row in second.rows)
    assert "relu_2" not in diff.nodes
    assert ("linear_1", "gelu_1") in diff.edges and ("linear_2", "relu_1") in diff.edges
    comparison = compare(old.dot, new.dot)
    assert comparison.replaced == (("relu_1", "gelu_1"),)
    assert set(comparison.renumbered) == {("relu_1", "gelu_1"), ("relu_2", "relu_1")}
    assert story_lines(comparison)[0] == "replaced relu_1 -> gelu_1 (@act1)"


@pytest.mark.parametrize("options", [{"depth": 3}, {}], ids=["depth3", "full"])
def test_the_summary_tells_what_the_picture_shows_on_bert(options: dict[str, Any]) -> None:
    old = _bert_trace().draw(**options).dot
    new = _bert_trace(num_hidden_layers=3).draw(**options).dot
    diff = graph_diff(old, new, context=None)
    kinds = _kinds(diff)
    comparison = compare(old, new)
    assert comparison.added == tuple(kinds["added"])
    assert comparison.removed == () and not comparison.changed and not comparison.replaced
    # The story counts the model's ops, whatever the view draws of them.
    assert story_lines(comparison) == ["added @encoder.layer.2 (BertLayer): 25 ops"]
    if options:
        # The pooler's Linear is a box like the layers' Linears, named by its address:
        # the same, unchanged node with nothing to renumber.
        assert comparison.renumbered == ()
        assert diff.nodes["@pooler.dense#1"].kind == "unchanged"
        return
    # Ops after the new layer moved their numbers (the pooler's linear_13 is linear_19):
    # each is the same, unchanged node in the picture.
    assert comparison.renumbered
    assert all(diff.nodes[new].kind == "unchanged" for _, new in comparison.renumbered)
