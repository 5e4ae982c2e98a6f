"""The diff drawing with context (issue 23, item 5): which nodes the structural diff
drawing keeps around a change, and which unchanged stretches become one grey node."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_tlgraph import capture
from pytest_tlgraph.diff.dotparse import parse_gv
from pytest_tlgraph.diff.view.context import (
    CONTEXT_HOPS,
    ContextView,
    UnchangedRun,
    context_view,
    run_label,
)
from tests.corpus import build

Edges = list[tuple[str, str]]


def chain(count: int, prefix: str = "n") -> tuple[list[str], Edges]:
    """``n1 -> n2 -> ... -> n<count>``."""
    order = [f"{prefix}{i}" for i in range(1, count + 1)]
    return order, list(pairwise(order))


def span(first: int, last: int, prefix: str = "n") -> tuple[str, ...]:
    return tuple(f"{prefix}{i}" for i in range(first, last + 1))


def test_the_context_is_two_hops() -> None:
    assert CONTEXT_HOPS == 2


def test_one_change_in_a_chain_keeps_two_hops_each_side() -> None:
    order, edges = chain(10)
    view = context_view(order, edges, {}, {}, {"n5"})
    assert view.kept == span(3, 7)
    assert view.runs == (
        UnchangedRun("unchanged_1", span(1, 2), None),
        UnchangedRun("unchanged_2", span(8, 10), None),
    )
    assert view.edges == (
        ("unchanged_1", "n3"),
        ("n3", "n4"),
        ("n4", "n5"),
        ("n5", "n6"),
        ("n6", "n7"),
        ("n7", "unchanged_2"),
    )
    assert view.clusters == ()
    assert view.drawn_as("n1") == view.drawn_as("n2") == "unchanged_1"
    assert view.drawn_as("n5") == "n5"


def test_hops_are_read_undirected_and_can_be_chosen() -> None:
    order, edges = chain(10)
    assert context_view(order, edges, {}, {}, {"n5"}, hops=0).kept == ("n5",)
    assert context_view(order, edges, {}, {}, {"n5"}, hops=1).kept == span(4, 6)
    # Three hops leave n1 alone: it is kept as itself (no grey "1 unchanged").
    assert context_view(order, edges, {}, {}, {"n5"}, hops=3).kept == span(1, 8)


def test_anchors_are_kept_without_context_of_their_own() -> None:
    order, edges = chain(20)
    view = context_view(order, edges, {}, {}, {"n10"}, anchors=("n1", "n20"))
    assert view.kept == ("n1", *span(8, 12), "n20")
    assert [run.members for run in view.runs] == [span(2, 7), span(13, 19)]
    assert view.edges[0] == ("n1", "unchanged_1")
    assert view.edges[-1] == ("unchanged_2", "n20")


def test_two_changes_far_apart_give_two_islands_and_three_runs() -> None:
    order, edges = chain(30)
    view = context_view(order, edges, {}, {}, {"n10", "n20"})
    assert view.kept == (*span(8, 12), *span(18, 22))
    assert [run.members for run in view.runs] == [span(1, 7), span(13, 17), span(23, 30)]
    assert [run.id for run in view.runs] == ["unchanged_1", "unchanged_2", "unchanged_3"]
    assert ("n12", "unchanged_2") in view.edges
    assert ("unchanged_2", "n18") in view.edges
    assert len(view.edges) == 4 + 4 + 4  # two islands of 4 edges, four edges to runs


def test_a_single_hidden_node_in_its_drawn_cluster_is_kept_as_itself() -> None:
    # n6 lies three hops from both changes: a grey "1 unchanged" would take its room.
    order, edges = chain(20)
    view = context_view(order, edges, {}, {}, {"n3", "n9"})
    assert view.kept == span(1, 11)
    assert [run.members for run in view.runs] == [span(12, 20)]
    # Two hidden nodes in a row stay a run.
    view = context_view(order, edges, {}, {}, {"n3", "n10"})
    assert [run.members for run in view.runs] == [span(6, 7), span(13, 20)]


def test_a_single_hidden_node_of_an_undrawn_cluster_stays_a_run() -> None:
    # n4 sits alone in a cluster that keeps nothing: drawing it would draw the cluster,
    # so it is "1 unchanged" in the top level.
    order, edges = chain(8)
    view = context_view(order, edges, {"n4": "c"}, {"c": None}, {"n1", "n7"})
    assert view.kept == (*span(1, 3), *span(5, 8))
    assert view.runs == (UnchangedRun("unchanged_1", ("n4",), None),)
    assert view.clusters == ()
    assert run_label(view.runs[0], {}) == "1 unchanged\nn4"


RESIDUAL = ["x", "conv1", "bn1", "relu1", "conv2", "bn2", "add", "relu2"]
RESIDUAL_EDGES = [
    ("x", "conv1"),
    ("conv1", "bn1"),
    ("bn1", "relu1"),
    ("relu1", "conv2"),
    ("conv2", "bn2"),
    ("bn2", "add"),
    ("x", "add"),
    ("add", "relu2"),
]


def residual_graph() -> tuple[list[str], Edges, dict[str, str | None]]:
    """A chain ``p1..p6 -> x``, a residual block on ``x`` in ``cluster_block``, then
    ``relu2 -> q1..q6``."""
    before, before_edges = chain(6, "p")
    after, after_edges = chain(6, "q")
    order = [*before, *RESIDUAL, *after]
    edges = [*before_edges, ("p6", "x"), *RESIDUAL_EDGES, ("relu2", "q1"), *after_edges]
    block: dict[str, str | None] = dict.fromkeys(RESIDUAL[1:], "cluster_block")
    return order, edges, block


def test_a_residual_block_keeps_the_skip_edge_to_the_runs() -> None:
    order, edges, block = residual_graph()
    view = context_view(order, edges, block, {"cluster_block": None}, {"conv2"}, hops=1)
    assert view.kept == ("relu1", "conv2", "bn2")
    runs = {run.members: run for run in view.runs}
    assert set(runs) == {
        (*span(1, 6, "p"), "x"),
        ("conv1", "bn1"),
        ("add", "relu2"),
        span(1, 6, "q"),
    }
    assert runs["conv1", "bn1"].cluster == runs["add", "relu2"].cluster == "cluster_block"
    assert runs[span(1, 6, "q")].cluster is None
    before, into, out_of = (view.drawn_as(n) for n in ("x", "conv1", "add"))
    assert (before, into) in view.edges
    assert (before, out_of) in view.edges  # the skip edge x -> add
    assert (out_of, view.drawn_as("q1")) in view.edges
    assert view.clusters == ("cluster_block",)


def test_a_residual_block_at_two_hops_reaches_the_add() -> None:
    order, edges, block = residual_graph()
    view = context_view(order, edges, block, {"cluster_block": None}, {"conv2"})
    # bn1, relu1, bn2, add by distance; conv1 and relu2 alone in the drawn block.
    assert view.kept == tuple(RESIDUAL[1:])
    assert [run.members for run in view.runs] == [(*span(1, 6, "p"), "x"), span(1, 6, "q")]


def test_parallel_edges_into_one_run_are_drawn_once_and_inner_edges_vanish() -> None:
    order = ["k", "h1", "h2", "h3"]
    edges = [("k", "h1"), ("k", "h2"), ("h1", "h2"), ("h2", "h3"), ("k", "h1")]
    view = context_view(order, edges, {}, {}, {"k"}, hops=0)
    assert view.runs == (UnchangedRun("unchanged_1", ("h1", "h2", "h3"), None),)
    assert view.edges == (("k", "unchanged_1"),)


CLUSTERS: dict[str, str | None] = {
    "A": None,
    "A.1": "A",
    "A.1.x": "A.1",
    "A.2": "A",
    "B": None,
}


def nested_graph() -> tuple[list[str], Edges, dict[str, str | None]]:
    order, edges = chain(12)
    cluster_of: dict[str, str | None] = {
        "n2": "A",
        "n3": "A.1",
        "n4": "A.1.x",
        "n5": "A.1.x",
        "n6": "A.1",
        "n7": "A.2",
        "n8": "A",
        "n10": "B",
        "n11": "B",
    }
    return order, edges, cluster_of


def test_nested_clusters_that_keep_nothing_go_undrawn() -> None:
    order, edges, cluster_of = nested_graph()
    view = context_view(order, edges, cluster_of, CLUSTERS, {"n11"}, hops=1)
    assert view.kept == ("n10", "n11", "n12")
    assert view.clusters == ("B",)
    # A, A.1, A.1.x and A.2 keep nothing: their nodes join the top level's run.
    assert view.runs == (UnchangedRun("unchanged_1", span(1, 9), None),)


def test_an_undrawn_inner_cluster_gives_its_nodes_to_the_nearest_drawn_ancestor() -> None:
    order, edges, cluster_of = nested_graph()
    view = context_view(order, edges, cluster_of, CLUSTERS, {"n2"}, hops=0)
    assert view.kept == ("n1", "n2")  # n1 is alone at the top level
    assert view.clusters == ("A",)
    assert view.runs == (
        UnchangedRun("unchanged_1", span(3, 8), "A"),
        UnchangedRun("unchanged_2", span(9, 12), None),
    )
    # A kept node deep inside draws every cluster around it, in the given order.
    view = context_view(order, edges, cluster_of, CLUSTERS, {"n4"}, hops=0)
    assert view.clusters == ("A", "A.1", "A.1.x")
    # n1, n2, n3, n5 and n6 are each alone in their own drawn cluster: kept as themselves.
    assert [(run.members, run.cluster) for run in view.runs] == [
        (("n7", "n8"), "A"),  # n7's A.2 is not drawn: it joins A
        (span(9, 12), None),  # B is not drawn
    ]
    assert view.kept == span(1, 6)


def test_nothing_changed_hides_everything_but_the_anchors() -> None:
    order, edges, cluster_of = nested_graph()
    view = context_view(order, edges, cluster_of, CLUSTERS, ())
    assert view.kept == ()
    assert view.clusters == ()
    assert view.edges == ()
    assert view.runs == (UnchangedRun("unchanged_1", tuple(order), None),)
    view = context_view(order, edges, cluster_of, CLUSTERS, (), anchors=["n1", "n12"])
    assert view.kept == ("n1", "n12")
    assert [run.members for run in view.runs] == [span(2, 11)]
    assert view.edges == (("n1", "unchanged_1"), ("unchanged_1", "n12"))
    assert context_view([], [], {}, {}, ()) == ContextView((), (), (), ())


def test_a_run_id_never_takes_a_node_id() -> None:
    order = ["unchanged_1", "a", "b", "c", "unchanged_3", "d", "e"]
    edges = [("unchanged_1", "a"), ("a", "b"), ("b", "c"), ("c", "unchanged_3"), ("d", "e")]
    view = context_view(order, edges, {}, {}, {"b"}, hops=0)
    assert [run.id for run in view.runs] == ["unchanged_2", "unchanged_4", "unchanged_5"]
    assert view.edges == (("unchanged_2", "b"), ("b", "unchanged_4"))
    assert view.drawn_as("d") == "unchanged_5"


def test_a_long_chain_with_one_change_is_five_nodes_and_two_runs() -> None:
    order, edges = chain(5_000)
    view = context_view(order, edges, {}, {}, {"n2500"}, anchors=("n1", "n5000"))
    assert view.kept == ("n1", *span(2498, 2502), "n5000")
    assert [len(run.members) for run in view.runs] == [2496, 2497]
    assert len(view.edges) == 4 + 4


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: context_view(["a", "a"], [], {}, {}, ()), "'a' is listed twice"),
        (lambda: context_view(["a"], [("a", "z")], {}, {}, ()), "an edge names 'z'"),
        (lambda: context_view(["a"], [], {}, {}, {"z"}), "changed names 'z'"),
        (lambda: context_view(["a"], [], {}, {}, (), anchors=["z"]), "anchors names 'z'"),
        (lambda: context_view(["a"], [], {"a": "c"}, {}, ()), "in cluster 'c', which is not"),
        (lambda: context_view(["a"], [], {}, {"c": "d"}, ()), "cluster 'd', parent of 'c'"),
        (
            lambda: context_view(["a"], [], {}, {"c": "d", "d": "c"}, ()),
            "its own ancestor",
        ),
        (lambda: context_view(["a"], [], {}, {}, (), hops=-1), "hops=-1"),
    ],
)
def test_bad_input_is_refused_in_one_line(call: Callable[[], object], message: str) -> None:
    with pytest.raises(ValueError, match=message) as raised:
        call()
    assert "\n" not in str(raised.value)


def test_drawn_as_refuses_an_unknown_id() -> None:
    order, edges = chain(3)
    with pytest.raises(KeyError, match="'z' is not a node of this view"):
        context_view(order, edges, {}, {}, {"n1"}).drawn_as("z")


def test_a_run_has_members() -> None:
    with pytest.raises(ValueError, match="no members"):
        UnchangedRun("unchanged_1", (), None)


def test_run_label_counts_and_spans() -> None:
    members = ("conv2d_3", *(f"x{i}" for i in range(21)), "relu_7:2")
    run = UnchangedRun("unchanged_1", members, None)
    assert run_label(run, {}) == "23 unchanged\nconv2d_3 .. relu_7:2"
    assert run_label(run, {"conv2d_3": "stem conv"}) == "23 unchanged\nstem conv .. relu_7:2"
    assert run_label(UnchangedRun("unchanged_2", ("add__4",), "c"), {}) == "1 unchanged\nadd__4"
    many = UnchangedRun("unchanged_3", tuple(f"n{i}" for i in range(1234)), None)
    assert run_label(many, {}) == "1,234 unchanged\nn0 .. n1233"


# The corpus: one change in a real ResNet-18 drawing.


def test_one_change_in_resnet18_draws_a_dozen_nodes() -> None:
    case = build("resnet18_basic")
    graph = parse_gv(capture(case.model, case.inputs, kwargs=case.kwargs).draw().dot).graph
    order = [node.id for node in graph.nodes]
    heads = {head for _, head in graph.edges}
    tails = {tail for tail, _ in graph.edges}
    anchors = [n for n in order if n not in heads or n not in tails]
    assert anchors == ["input_1", "output_1"]
    view = context_view(
        order,
        graph.edges,
        {node.id: node.cluster for node in graph.nodes},
        {cluster.id: cluster.parent for cluster in graph.clusters},
        {"conv2d_10"},
        anchors=anchors,
    )
    assert len(order) == 71
    assert len(view.kept) + len(view.runs) <= 15
    assert {"conv2d_10", "input_1", "output_1"} <= set(view.kept)
    members = [*view.kept, *(m for run in view.runs for m in run.members)]
    assert sorted(members) == sorted(order)
    assert len(members) == len(set(members))
    run_of = {m: run.id for run in view.runs for m in run.members}
    for tail, head in graph.edges:
        ends = (view.drawn_as(tail), view.drawn_as(head))
        assert ends in view.edges or (tail in run_of and run_of[tail] == run_of.get(head))
    # conv2d_10 is in layer2.1: that block and its stage are drawn, nothing else.
    assert view.clusters == ("cluster_layer2#1", "cluster_layer2.1#1")
    assert [run.cluster for run in view.runs] == [None, "cluster_layer2#1", None]
    assert run_label(view.runs[1], {}) == "9 unchanged\nconv2d_6 .. relu_4:2"


# Properties on random graphs.


@st.composite
def diff_graphs(
    draw: st.DrawFn,
) -> tuple[list[str], Edges, dict[str, str | None], dict[str, str | None], set[str], set[str], int]:
    count = draw(st.integers(0, 24))
    order = [f"v{i}" for i in range(count)]
    pairs = st.tuples(st.integers(0, max(count - 1, 0)), st.integers(0, max(count - 1, 0)))
    raw = draw(st.lists(pairs, max_size=3 * count)) if count else []
    edges = [(order[min(a, b)], order[max(a, b)]) for a, b in raw]
    cluster_count = draw(st.integers(0, 6))
    clusters = [f"c{i}" for i in range(cluster_count)]
    parents: dict[str, str | None] = {}
    for i, cluster in enumerate(clusters):
        parent = draw(st.integers(-1, i - 1))
        parents[cluster] = clusters[parent] if parent >= 0 else None
    choice = st.sampled_from([None, *clusters])
    cluster_of = {node: draw(choice) for node in order}
    changed = set(draw(st.lists(st.sampled_from(order), max_size=4))) if order else set()
    anchors = set(draw(st.lists(st.sampled_from(order), max_size=2))) if order else set()
    return order, edges, cluster_of, parents, changed, anchors, draw(st.integers(0, 3))


def distances(order: Sequence[str], edges: Edges, sources: set[str]) -> dict[str, int]:
    neighbours: dict[str, set[str]] = {n: set() for n in order}
    for a, b in edges:
        neighbours[a].add(b)
        neighbours[b].add(a)
    found = dict.fromkeys(sources, 0)
    queue = deque(sources)
    while queue:
        node = queue.popleft()
        for other in neighbours[node]:
            if other not in found:
                found[other] = found[node] + 1
                queue.append(other)
    return found


def upstream(edges: Edges, node: str) -> set[str]:
    """The nodes with a path to ``node``."""
    found: set[str] = set()
    stack = [node]
    while stack:
        head = stack.pop()
        for a, b in edges:
            if b == head and a not in found:
                found.add(a)
                stack.append(a)
    return found


def cycles(nodes: Sequence[str], edges: Sequence[tuple[str, str]]) -> bool:
    """True when ``edges`` hold a directed cycle (Kahn's order leaves a node)."""
    waiting = dict.fromkeys(nodes, 0)
    for _, b in edges:
        waiting[b] += 1
    ready = [n for n, count in waiting.items() if count == 0]
    done = 0
    while ready:
        node = ready.pop()
        done += 1
        for a, b in edges:
            if a == node:
                waiting[b] -= 1
                if waiting[b] == 0:
                    ready.append(b)
    return done != len(nodes)


def ancestors(cluster: str | None, parents: Mapping[str, str | None]) -> list[str]:
    out = []
    while cluster is not None:
        out.append(cluster)
        cluster = parents[cluster]
    return out


@settings(max_examples=200, deadline=None)
@given(diff_graphs())
def test_properties_on_random_graphs(
    graph: tuple[
        list[str], Edges, dict[str, str | None], dict[str, str | None], set[str], set[str], int
    ],
) -> None:
    order, edges, cluster_of, parents, changed, anchors, hops = graph
    view = context_view(order, edges, cluster_of, parents, changed, hops=hops, anchors=anchors)
    run_of = {m: run for run in view.runs for m in run.members}
    # A partition: every node is kept or in one run, each once, in order.
    members = [*view.kept, *run_of]
    assert sorted(members) == sorted(order) and len(members) == len(order)
    assert list(view.kept) == [n for n in order if n in set(view.kept)]
    for run in view.runs:
        assert list(run.members) == [n for n in order if n in set(run.members)]
    assert [run.id for run in view.runs] == [f"unchanged_{i + 1}" for i in range(len(view.runs))]
    # Kept: the changes, the anchors and their context; beyond it only lone nodes.
    near = distances(order, edges, changed)
    assert changed | anchors <= set(view.kept)
    assert {n for n, d in near.items() if d <= hops} <= set(view.kept)
    drawn = {c for n in view.kept for c in ancestors(cluster_of[n], parents)}
    assert set(view.clusters) == drawn
    assert list(view.clusters) == [c for c in parents if c in drawn]
    for node in view.kept:
        if near.get(node, hops + 1) <= hops or node in anchors:
            continue
        # A lone unchanged node kept as itself: its own cluster is drawn.
        assert cluster_of[node] in drawn or cluster_of[node] is None
    # Runs: in their nearest drawn cluster, connected, maximal.
    for run in view.runs:
        for member in run.members:
            path = ancestors(cluster_of[member], parents)
            home = next((c for c in path if c in drawn), None)
            assert run.cluster == home
        if len(run.members) == 1:
            assert cluster_of[run.members[0]] != run.cluster
        inner = [(a, b) for a, b in edges if run_of.get(a) is run and run_of.get(b) is run]
        reach = distances(list(run.members), inner, {run.members[0]})
        assert set(reach) == set(run.members)
    # Never both sides of a kept node, or of a node drawn in another cluster: no path
    # from one member to another passes outside its run.
    drawn_in = {n: run.cluster for n, run in run_of.items()} | {n: cluster_of[n] for n in view.kept}
    for run in view.runs:
        members = set(run.members)
        for member in run.members:
            outside = {
                n for n in upstream(edges, member)
                if n not in members and upstream(edges, n) & members
            }  # fmt: skip
            assert not outside, (run, member, outside)
        assert all(drawn_in[m] == run.cluster for m in members)
    # Maximal where nothing is kept: each connected stretch of one cluster is one run.
    if not view.kept:
        for a, b in edges:
            if a != b and run_of[a].cluster == run_of[b].cluster:
                assert run_of[a] is run_of[b]
    # Acyclic: a run never stands on both sides of a kept node (the graph is acyclic).
    assert not cycles(list(view.kept) + [run.id for run in view.runs], view.edges)
    # Edges: every edge through drawn_as, each once, no self loop.
    expected = {(view.drawn_as(a), view.drawn_as(b)) for a, b in edges}
    assert set(view.edges) == {(a, b) for a, b in expected if a != b}
    assert len(set(view.edges)) == len(view.edges)
