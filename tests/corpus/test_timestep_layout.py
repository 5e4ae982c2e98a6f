"""The timestep diagram (``stack_by=True, direction="leftright"``) read from the
renderer's own layout: every edge inside a pass points down its column, the columns
run left to right in pass order, and a tall drawing's key sits at its top."""

from __future__ import annotations

import re
import shlex
import subprocess

import pytest
import torch

from examples.models import RecurrentTagger
from pytest_tlgraph import capture
from pytest_tlgraph.draw import Drawing
from pytest_tlgraph.render import _pure_executable
from pytest_tlgraph.trace import Trace
from tests.corpus import build

#: The corpus's recurrent models with more than one op per pass (a fused cell stepped in
#: a loop, ``lstm_cell_loop``, is one op per pass: nothing to stack).
RECURRENT = ["script_lstm", "attn_decoder", "gate_gru_tagger"]
DPI = 96


def _trace(name: str) -> Trace:
    case = build(name)
    return capture(case.model, case.inputs, kwargs=case.kwargs)


def _layout(drawing: Drawing) -> tuple[float, dict[str, tuple[float, float]]]:
    """The drawing's height and each node's centre (inches, y up) as graphviz-pure
    lays it out (``-Tplain``)."""
    plain = subprocess.run(
        [_pure_executable(), "-Tplain"], input=drawing.dot, capture_output=True,
        text=True, check=True,
    ).stdout  # fmt: skip
    height, pos = 0.0, {}
    for line in plain.splitlines():
        fields = shlex.split(line)
        if fields[0] == "graph":
            height = float(fields[3])
        elif fields[0] == "node":
            pos[fields[1]] = (float(fields[2]), float(fields[3]))
    return height, pos


def _passes(drawing: Drawing) -> dict[str, int]:
    assert drawing.state is not None
    groups = drawing.state.channels["stack_by"].groups
    return {node: int(value) for value, ids in groups.items() for node in ids}


@pytest.mark.parametrize("name", [*RECURRENT, "recurrent_tagger"])
def test_every_edge_inside_a_pass_points_down_its_column(name: str) -> None:
    trace = (
        capture(RecurrentTagger(), torch.randn(2, 4, 6)) if name == "recurrent_tagger"
        else _trace(name)
    )  # fmt: skip
    drawing = trace.draw(stack_by=True, direction="leftright")
    _, pos = _layout(drawing)
    pass_of = _passes(drawing)
    inside = [(a, b) for a, b in drawing.edges if a in pass_of and pass_of[a] == pass_of.get(b)]
    assert len(inside) >= 10
    upward = [(a, b) for a, b in inside if pos[b][1] >= pos[a][1]]
    assert upward == [], f"{name}: edges inside a pass not pointing down: {upward}"
    # The columns run left to right in pass order.
    columns = sorted(set(pass_of.values()))
    centres = [
        sum(pos[n][0] for n, p in pass_of.items() if p == c)
        / sum(1 for p in pass_of.values() if p == c)
        for c in columns
    ]
    assert centres == sorted(centres), f"{name}: columns out of pass order: {centres}"


@pytest.mark.parametrize("options", [{"color_by": "flops"},
                                     {"stack_by": True, "direction": "leftright"}])  # fmt: skip
def test_a_tall_drawings_key_is_at_its_top(options: dict[str, object]) -> None:
    drawing = _trace("script_lstm").draw(**options)
    height, pos = _layout(drawing)
    assert height * DPI > 1500  # taller than a screen
    key_y = pos["tlgraph_key"][1]
    assert (height - key_y) * DPI < 150, f"key {(height - key_y) * DPI:.0f} px below the top"


def test_the_key_pin_and_layout_edges_read_back_as_no_data() -> None:
    from pytest_tlgraph.diff.dotparse import parse_gv
    from pytest_tlgraph.diff.graph import read_graph
    from pytest_tlgraph.draw.dot import emit

    drawing = _trace("gate_gru_tagger").draw(stack_by=True, direction="leftright")
    graph = read_graph(drawing.dot)
    assert set(graph.edges) == set(drawing.edges)
    assert re.search(r'\[style="invis"\];', drawing.dot)
    keyed_dot = _trace("gate_gru_tagger").draw(color_by="flops").dot
    keyed = read_graph(keyed_dot)
    assert keyed.key_rows and "tlgraph_key" not in keyed.nodes
    # Read back and written again, both drawings are the same bytes.
    for dot in (drawing.dot, keyed_dot):
        assert emit(parse_gv(dot).graph) == dot
