"""Graph snapshots of the model zoo: ``python -m pytest examples``.

Every call compares the canonical DOT byte for byte with ``__snapshots__/test_zoo/`` and
the PNG drawn by graphviz-pure pixel by pixel. After an intended architecture change,
review the failure report (or ``tlgraph-results/report.html``) and accept the new
drawings with ``python -m pytest examples --snapshot-update``.
"""

from __future__ import annotations

import pytest
import torch

from examples.models import ConvNet, MnistMLP, RecurrentTagger, TinyTransformer


def test_mlp(tlgraph_snapshot):
    model = MnistMLP()
    drawing = tlgraph_snapshot(model)  # inputs: model.example_input_array
    assert drawing.state is None  # a plain draw has no channel
    tlgraph_snapshot(model, name="flops", color_by="flops")
    tlgraph_snapshot(model, name="bytes", size_by="bytes")
    # Wall-clock time differs on every run: the snapshot keeps its structure only
    # (fills and key ends masked); the measured picture goes to tlgraph-results/.
    timed = tlgraph_snapshot(model, name="time", color_by="time")
    assert timed.state is not None
    assert any("masked" in note for note in timed.state.notes)


def test_convnet(tlgraph_snapshot):
    model = ConvNet()
    tlgraph_snapshot(model)
    tlgraph_snapshot(model, name="flops", color_by="flops")
    tlgraph_snapshot(model, torch.zeros(1, 3, 64, 64), name="blocks-64px", depth=0)


@pytest.mark.tlgraph(page="dark")
def test_convnet_dark_page(tlgraph_snapshot):
    tlgraph_snapshot(ConvNet(), color_by="flops", size_by="bytes")


def test_recurrent(tlgraph_snapshot):
    model, sequence = RecurrentTagger(), torch.zeros(2, 4, 6)
    drawing = tlgraph_snapshot(
        model, sequence, name="timesteps", stack_by=True, direction="leftright"
    )
    assert drawing.state is not None
    assert sorted(drawing.state.channels["stack_by"].groups) == [1, 2, 3, 4]
    rolled = tlgraph_snapshot(model, sequence, name="rolled", view="rolled")
    assert rolled.nodes["linear_1"].rows[0] == "linear_1 (x4)"


def test_transformer(tlgraph_snapshot):
    model = TinyTransformer()
    folded = tlgraph_snapshot(model, name="folded", collapse="max", color_by="flops")
    titles = [node.rows[0] for node in folded.nodes.values()]
    assert "x4 @blocks.0-3 (TransformerBlock)" in titles
    tlgraph_snapshot(model, name="blocks", depth=0)
