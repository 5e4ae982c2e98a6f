"""No drawn node without an edge on any corpus model, in every view (issue 24, item 2;
issue 30, item 6): an op reading a buffer is wired to what consumes it or not drawn
(its buffer on its consumer's params row), and a dead-end run of plumbing joins a
segment that has an edge, or, with none in its module or around it (Jamba's and
Perceiver's mask checks, islands that feed nothing), is drawn op by op."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_tlgraph.draw import build_plan
from tests.corpus import names
from tests.corpus.traces import corpus_trace

DRAWINGS: dict[str, dict[str, Any]] = {
    "full": {},
    "depth1": {"depth": 1},
    "depth2": {"depth": 2},
    "auto": {"collapse": "auto"},
    "auto-depth1": {"collapse": "auto", "depth": 1},
    "max": {"collapse": "max"},
    "rolled": {"view": "rolled"},
    "rolled-depth1": {"view": "rolled", "depth": 1},
    "rolled-auto": {"view": "rolled", "collapse": "auto"},
}


@pytest.mark.parametrize("name", names())
def test_every_drawn_node_has_an_edge(name: str) -> None:
    trace = corpus_trace(name)
    alone = {}
    for key, options in DRAWINGS.items():
        plan = build_plan(trace, **options)
        if len(plan.nodes) < 2:
            continue  # a drawing of one node has nothing to connect it to
        touched = {end for edge in plan.edges for end in edge}
        found = [node.id for node in plan.nodes if node.id not in touched]
        if found:
            alone[key] = found
    assert alone == {}, f"{name}: nodes without an edge {alone}"
