"""The drawing schema read back exactly: for drawings of corpus models under several
option sets, the records the comparison reads from the DOT are the records the
drawing wrote (``read(draw(trace)) == records(trace)``), and every node and frame of
the drawing has one."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_tlgraph.diff.graph import read_graph, read_records
from pytest_tlgraph.draw import draw, schema_records
from pytest_tlgraph.schema import SCHEMA_VERSION
from tests.corpus.traces import corpus_trace

#: A CNN with residuals, HF transformers (folds under auto, plumbing segments), a
#: model whose folds draw as frames, a rolled recurrent loop.
MODELS = ("resnet18_basic", "gpt2", "olmo2", "distilled_heads", "lstm_cell_loop")
OPTIONS: dict[str, dict[str, Any]] = {
    "plain": {},
    "depth1": {"depth": 1},
    "auto": {"collapse": "auto"},
    "max": {"collapse": "max"},
    "flops": {"color_by": "flops"},
    "size-bytes": {"size_by": "bytes", "depth": 2},
    "rolled": {"view": "rolled", "collapse": "auto"},
}


@pytest.mark.parametrize("options", list(OPTIONS), ids=list(OPTIONS))
@pytest.mark.parametrize("model", MODELS)
def test_records_read_back_are_the_records_written(model: str, options: str) -> None:
    trace = corpus_trace(model)
    opts = OPTIONS[options]
    drawing = draw(trace, **opts)
    written = schema_records(trace, **opts)
    assert read_records(drawing.dot) == written
    nodes, clusters = written
    # Every drawn node and frame is described, and each collapsed node by its members.
    assert [n.id for n in nodes] == [n for n in drawing.nodes if n != "tlgraph_key"]
    assert len(clusters) == len(drawing.clusters)
    for record in nodes:
        if record.kind in ("box", "fold", "segment"):
            assert record.members, record
            assert record.signature is not None, record
        if record.kind == "fold":
            assert record.count is not None and record.count >= 2, record
    graph = read_graph(drawing.dot)
    assert graph.schema == SCHEMA_VERSION
    for record in nodes:
        node = graph.nodes[record.id]
        assert (node.kind, node.address, node.type, node.members) == (
            record.kind,
            record.address,
            record.type,
            record.members,
        )


def test_the_subset_draws_every_kind() -> None:
    """The models and options above cover every kind of node and frame the schema has."""
    kinds: set[str] = set()
    frames: set[str] = set()
    numbered = False
    for model in MODELS:
        for opts in OPTIONS.values():
            nodes, clusters = schema_records(corpus_trace(model), **opts)
            kinds.update(n.kind for n in nodes)
            frames.update(c.kind for c in clusters)
            numbered = numbered or any(n.call_number for n in nodes)
    assert kinds == {"op", "box", "fold", "segment", "input", "output"}
    assert frames == {"module", "fold"}
    assert numbered  # a module called more than once carries its call number
