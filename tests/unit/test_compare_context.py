"""Which nodes the diff drawing with context draws
(:mod:`pytest_tlgraph.diff.view.context`): changes, a few hops around them,
the anchors, and each run of other unchanged nodes as one grey node."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_tlgraph.diff.view.context import (
    CONTEXT_HOPS,
    UnchangedRun,
    context_view,
    run_label,
)

ORDER = [f"n{i}" for i in range(10)]
EDGES = [(f"n{i}", f"n{i + 1}") for i in range(9)]


def test_a_change_keeps_its_hops_and_the_anchors_and_runs_stand_for_the_rest() -> None:
    view = context_view(ORDER, EDGES, {}, {}, {"n5"}, hops=1, anchors=["n0", "n9"])
    assert view.kept == ("n0", "n4", "n5", "n6", "n9")
    assert view.runs == (
        UnchangedRun("unchanged_1", ("n1", "n2", "n3"), None),
        UnchangedRun("unchanged_2", ("n7", "n8"), None),
    )
    # Edges follow their ends to what draws them.
    assert view.edges == (
        ("n0", "unchanged_1"), ("unchanged_1", "n4"), ("n4", "n5"), ("n5", "n6"),
        ("n6", "unchanged_2"), ("unchanged_2", "n9"),
    )  # fmt: skip
    assert view.drawn_as("n2") == "unchanged_1" and view.drawn_as("n5") == "n5"
    assert view.clusters == ()


def test_the_default_context_is_two_hops() -> None:
    view = context_view(ORDER, EDGES, {}, {}, {"n5"})
    assert CONTEXT_HOPS == 2
    assert view.kept == ("n3", "n4", "n5", "n6", "n7")


def test_a_frame_with_nothing_kept_is_not_drawn_and_its_nodes_go_to_the_parent() -> None:
    cluster_of = dict.fromkeys(ORDER[:4], "c") | dict.fromkeys(ORDER[4:7], "d")
    view = context_view(ORDER, EDGES, cluster_of, {"c": None, "d": None}, {"n8"}, hops=1,
                        anchors=["n0"])  # fmt: skip
    assert view.kept == ("n0", "n7", "n8", "n9")
    assert view.clusters == ("c",)  # d keeps nothing: not drawn
    assert view.runs == (
        UnchangedRun("unchanged_1", ("n1", "n2", "n3"), "c"),
        UnchangedRun("unchanged_2", ("n4", "n5", "n6"), None),
    )


def test_one_hidden_node_in_its_own_drawn_frame_is_drawn_as_itself() -> None:
    # n1 alone is hidden between two kept nodes: the grey node would take its room.
    view = context_view(ORDER[:3], EDGES[:2], {}, {}, {"n0", "n2"}, hops=0)
    assert view.kept == ("n0", "n1", "n2") and view.runs == ()


def test_a_run_id_never_takes_a_node_id() -> None:
    order = ["unchanged_1", "a", "b", "c"]
    edges = [("unchanged_1", "a"), ("a", "b"), ("b", "c")]
    view = context_view(order, edges, {}, {}, {"unchanged_1"}, hops=0)
    assert view.runs == (UnchangedRun("unchanged_2", ("a", "b", "c"), None),)


def test_nothing_changed_keeps_the_anchors_only() -> None:
    view = context_view(ORDER, EDGES, {}, {}, set(), anchors=["n0", "n9"])
    assert view.kept == ("n0", "n9")
    assert [run.members for run in view.runs] == [tuple(ORDER[1:9])]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"hops": -1}, "hops=-1: the context must be 0 or more edges"),
        ({"order": ["a", "a"]}, "node 'a' is listed twice in order"),
        ({"edges": [("a", "b")]}, "an edge names 'b', which is not in order"),
        ({"changed": {"q"}}, "changed names 'q', which is not in order"),
        ({"cluster_of": {"a": "x"}}, "node 'a' is in cluster 'x', which is not a key"),
        ({"cluster_parent": {"x": "y", "y": "x"}}, "cluster 'x' is its own ancestor"),
        ({"cluster_parent": {"x": "z"}}, "cluster 'z', parent of 'x', is not a key"),
    ],
)
def test_bad_input_is_one_clear_error(args: dict[str, Any], message: str) -> None:
    given: dict[str, Any] = {
        "order": ["a"], "edges": [], "cluster_of": {}, "cluster_parent": {}, "changed": set(),
        **args,
    }  # fmt: skip
    hops = given.pop("hops", CONTEXT_HOPS)
    with pytest.raises(ValueError, match=f"^{message}"):
        context_view(**given, hops=hops)


def test_run_label_names_the_count_and_the_span() -> None:
    run = UnchangedRun("unchanged_1", ("a", "b", "c"), None)
    assert run_label(run, {"a": "first"}) == "3 unchanged\nfirst .. c"
    assert run_label(UnchangedRun("u", ("a",), None), {}) == "1 unchanged\na"
    with pytest.raises(ValueError, match="has no members"):
        UnchangedRun("u", (), None)
    view = context_view(ORDER, EDGES, {}, {}, {"n0"}, hops=0)
    with pytest.raises(KeyError, match="'zz' is not a node of this view"):
        view.drawn_as("zz")
