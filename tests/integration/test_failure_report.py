"""The failure a reviewer reads (REVIEW.md §2.2-§2.5) on real failures, in pytester."""

from __future__ import annotations

import json

import pytest
from PIL import Image

pytest_plugins = ["pytester"]

TESTS = """
import os
import torch
from torch import nn


class TwoBranches(nn.Module):
    def __init__(self):
        super().__init__()
        kernel = int(os.environ.get("TL_KERNEL", "3"))
        self.a = nn.Conv2d(3, 8, kernel, padding=kernel // 2)
        self.b = nn.Conv2d(3, 8, 3, padding=1)
        self.example_input_array = torch.zeros(1, 3, 8, 8)

    def forward(self, x):
        y = self.a(x)
        if self.a.kernel_size[0] == 7:  # the change also adds an op: the PNG grows
            y = torch.relu(y)
        return y + self.b(x)


def test_branches(tlgraph_snapshot):
    tlgraph_snapshot(TwoBranches(), color_by="flops")
"""


@pytest.fixture
def changed(project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A stored snapshot, then the kernel of branch a grown from 3 to 7 and a relu added."""
    project.makepyfile(test_graph=TESTS)
    project.runpytest("--snapshot-update").assert_outcomes(passed=1)
    monkeypatch.setenv("TL_KERNEL", "7")
    return project


def test_size_change_structural_diff_and_rescale(changed: pytest.Pytester) -> None:
    result = changed.runpytest("-rN")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    results = changed.path / "tlgraph-results" / "test_graph"
    # §2.3: the structural diff drawing, named in the message and first in the report.
    graphdiff = results / "test_branches-graphdiff.png"
    assert "structural diff drawing: tlgraph-results/test_graph/test_branches-graphdiff.png" in out
    assert Image.open(graphdiff).size[0] > 0
    record = json.loads(next((results.parent / ".records").glob("*.outcome")).read_text())
    assert "graphdiff" in record["images"] and "graphdiff_full" in record["images"]
    assert (results / "test_branches-graphdiff-full.png").is_file()
    html = (results.parent / "report.html").read_text()
    viewer, expected = '<div class="viewer graphdiff">', '<figure class="expected">'
    assert 0 < html.index(viewer) < html.index(expected)
    # §2.4: the rescale named once, with the nodes it alone recoloured.
    assert out.count("colour domain 0 FLOPs .. 27.6 KFLOPs -> 0 FLOPs .. ") == 1
    assert ": 2 nodes recoloured by the rescale alone" in out
    # ... and the summary lists the real change only (conv a's kernel), not conv b.
    assert "  relu_1: added relu\n" in out
    assert "  conv2d_1 @a: kernel_size (3, 3) -> (7, 7); padding (1, 1) -> (3, 3); " in out
    assert "conv2d_2:" not in out
    assert "conv2d_2" not in out.split("DOT diff")[0]
    # §2.2: the PNG's size changed, and still there is a diff image, on the union canvas.
    assert "PNG size changed: snapshot " in out
    expected = Image.open(results / "test_branches-expected.png").size
    actual = Image.open(results / "test_branches.png").size
    assert expected != actual
    diff = Image.open(results / "test_branches-diff.png")
    assert diff.size == (max(expected[0], actual[0]), max(expected[1], actual[1]))


def test_terminal_message_is_capped(changed: pytest.Pytester) -> None:
    out = changed.runpytest("-rN").stdout.str()
    message = out.split("= FAILURES =")[1].split("-- tlgraph --")[0]
    lines = message.splitlines()[2:]  # past pytest's own header lines
    assert max(len(line) for line in lines) <= 160
    assert "... (+" in message  # the key's 900-character table line, cut
    # The encoding state shows what changed against the snapshot, not every node.
    state = message.split("encoding state (received):")[1].split("PNG:")[0]
    assert "changed against the snapshot" in state
    assert "conv2d_1: " not in state  # the per-node listing stays in report.html
    html = (changed.path / "tlgraph-results" / "report.html").read_text()
    assert "conv2d_1: " in html and "... (+" not in html


def test_capture_error_shows_the_users_frame(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_graph="""
        import torch
        from tinymodels import MLP

        def test_wrong_shape(tlgraph_snapshot):
            tlgraph_snapshot(MLP(), torch.zeros(2, 5))
        """
    )
    result = project.runpytest("-rN")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "mat1 and mat2 shapes cannot be multiplied (2x5 and 8x16)" in out
    assert "return self.fc2(self.act(self.fc1(x)))" in out  # the user's forward
    assert "tlgraph_snapshot(MLP(), torch.zeros(2, 5))" in out  # the user's test line
    assert "pytest_tlgraph/" not in out  # no frame of the plugin's own
    assert len(out.splitlines()) < 80


def test_did_you_mean_in_a_test(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_graph="""
        from tinymodels import MLP

        def test_typo(tlgraph_snapshot):
            tlgraph_snapshot(MLP(), color_by="flop")
        """
    )
    result = project.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*color_by='flop' is neither*(did you mean 'flops'?)*"])
