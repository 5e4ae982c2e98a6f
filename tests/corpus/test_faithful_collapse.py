"""Collapse is presentation only (issue 21, items 1 and 2), on corpus models.

* A change inside a box, fold or segment fails the DOT comparison even when every drawn
  row stays the same, and the structural summary and diff drawing name it.
* Folds are stacks: siblings fed from one input are never folded, real stacks still are.
* Full-detail drawings carry no signature (not one byte more).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from torch import nn

from pytest_tlgraph import capture
from pytest_tlgraph.diff.graph import read_graph
from pytest_tlgraph.diff.view.comparison import compare
from pytest_tlgraph.diff.view.drawing import CHANGED, UNCHANGED, graph_diff
from pytest_tlgraph.diff.view.story import every_change, recolour_line, story_lines
from pytest_tlgraph.draw.collapse.signature import read_signature
from pytest_tlgraph.render import render_png
from pytest_tlgraph.trace import Trace
from tests.corpus.models_faithful_collapse import resnet18_basic_case
from tests.corpus.registry import names
from tests.corpus.traces import corpus_trace

ROOT = Path(__file__).resolve().parents[2]
# What the drawing says of the ops a collapsed node hides (never drawn).
_COMMENT = re.compile(r', (?:comment|tl_inside|tl_members|tl_ops)="[^"]*"')
BLOCKS = [f"@layer{i}.{j}" for i in range(1, 5) for j in range(2)]


def _trace(activation: type[nn.Module] | None = None, stem_kernel: int = 7) -> Trace:
    case = resnet18_basic_case(activation or (lambda: nn.ReLU(inplace=True)), stem_kernel)
    return capture(case.model, case.inputs)


@pytest.fixture(scope="module")
def relu() -> Trace:
    return _trace()


@pytest.fixture(scope="module")
def gelu() -> Trace:
    return _trace(nn.GELU)


def _strip(dot: str) -> str:
    return _COMMENT.sub("", dot)


@pytest.mark.parametrize(
    "opts",
    [{"collapse": "auto"}, {"depth": 1}, {"collapse": "max"}, {"depth": 1, "view": "rolled"}],
    ids=["auto", "depth1", "max", "rolled-depth1"],
)
def test_an_activation_swapped_in_every_block_fails_the_dot_comparison(
    relu: Trace, gelu: Trace, opts: dict[str, Any]
) -> None:
    before, after = relu.draw(**opts).dot, gelu.draw(**opts).dot
    # Every drawn row is the same: only the signatures, member lists and hidden ops'
    # rows tell the two models apart.
    assert _strip(before) == _strip(after)
    assert before != after


def test_the_summary_names_the_change_inside_each_block(relu: Trace, gelu: Trace) -> None:
    comparison = compare(relu.draw(depth=1).dot, gelu.draw(depth=1).dot)
    # The same edit in eight blocks is one line, with the addresses' common pattern:
    # each box's members name their module, so the line names the ReLU and counts ops.
    assert story_lines(comparison) == ["replaced relu -> gelu on 16 ops @layer*.*.relu"]
    assert every_change(comparison) == [
        f"{block} (BasicBlock): inside: relu -> gelu (2 ops)" for block in BLOCKS
    ]
    assert not comparison.unchanged


def test_collapse_auto_names_the_fold_and_the_boxes(relu: Trace, gelu: Trace) -> None:
    comparison = compare(relu.draw(collapse="auto").dot, gelu.draw(collapse="auto").dot)
    changes = every_change(comparison)
    assert changes[0] == "x2 @layer1.0-1 (BasicBlock): inside: relu -> gelu (2 ops)"
    assert "@layer2.0 (BasicBlock): inside: relu -> gelu (2 ops)" in changes
    assert len(comparison.changed) == 7  # one fold of layer1's two blocks, six boxes
    assert story_lines(comparison) == ["replaced relu -> gelu on 16 ops @layer*.*.relu"]


def test_the_diff_drawing_paints_the_changed_blocks_amber(relu: Trace, gelu: Trace) -> None:
    diff = graph_diff(relu.draw(collapse="auto").dot, gelu.draw(collapse="auto").dot)
    changed = {k: n for k, n in diff.nodes.items() if n.kind == CHANGED}
    assert sorted(changed) == sorted(
        ["@layer1.0#1*2", *(f"{b}#1" for b in BLOCKS if not b.startswith("@layer1"))]
    )
    # Each box says what changed in it: the story's line for its edits, marked "»".
    assert all(
        n.rows[-1].startswith("» ") and "relu -> gelu" in n.rows[-1] for n in changed.values()
    )
    assert diff.nodes["linear_1"].kind == UNCHANGED


def test_flops_colouring_never_calls_a_changed_block_recoloured_by_the_rescale() -> None:
    # A smaller stem moves the FLOP colour domain: every node's fill may change.
    old = _trace().draw(collapse="auto", color_by="flops").dot
    new = _trace(nn.GELU, stem_kernel=5).draw(collapse="auto", color_by="flops").dot
    graphs = {"old": read_graph(old), "new": read_graph(new)}
    boxes = [k for k in graphs["new"].nodes if k.startswith("@layer")]
    assert len(boxes) == 7
    # Same rows, another fill: what 0.2 counted as recoloured by the rescale alone.
    assert all(graphs["old"].nodes[k].fill != graphs["new"].nodes[k].fill for k in boxes)
    assert all(graphs["old"].nodes[k].rows == graphs["new"].nodes[k].rows for k in boxes)
    comparison = compare(old, new)
    assert comparison.recoloured == ("batch_norm_1", "relu_1", "linear_1")
    assert set(boxes) <= set(comparison.changed)
    line = recolour_line(comparison)
    assert line is not None and line.endswith(": 3 nodes recoloured by the rescale alone")


@pytest.mark.parametrize("name", ["resnet18_basic", "gpt2"])  # boxes; a repeat-fold cluster
def test_the_signature_changes_no_pixel(name: str) -> None:
    dot = corpus_trace(name).draw(collapse="auto", color_by="flops").dot
    assert _strip(dot) != dot
    for renderer in ("pure", "system"):
        assert render_png(dot, renderer=renderer, dpi=96) == render_png(
            _strip(dot), renderer=renderer, dpi=96
        )


def test_the_signature_is_the_same_in_another_process(relu: Trace) -> None:
    code = (
        "from pytest_tlgraph import capture\n"
        "from tests.corpus.models_faithful_collapse import resnet18_basic_case\n"
        "case = resnet18_basic_case()\n"
        "print(capture(case.model, case.inputs).draw(collapse='auto').dot, end='')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
        env={"PYTHONPATH": str(ROOT), "PYTHONHASHSEED": "12345", "PATH": ""},
    )  # fmt: skip
    assert done.stdout == relu.draw(collapse="auto").dot


@pytest.mark.parametrize("name", names())
def test_full_detail_drawings_carry_no_signature_and_boxes_one_each(name: str) -> None:
    trace = corpus_trace(name)
    for opts in ({}, {"view": "rolled"}, {"color_by": "flops"}):
        assert "comment=" not in trace.draw(**opts).dot, opts
    for opts in ({"collapse": "auto"}, {"collapse": "max"}, {"depth": 1}):
        drawing = trace.draw(**opts)
        graph = read_graph(drawing.dot)
        signatures = {k: n.signature for k, n in graph.nodes.items() if n.signature is not None}
        collapsed = {k for k, n in drawing.nodes.items() if n.kind in ("box", "fold", "segment")}
        assert set(signatures) == collapsed, opts
        for node_id, text in signatures.items():
            signature = read_signature(text)
            assert signature is not None, text
            members = drawing.nodes[node_id].members
            assert signature.count <= len(members)


@pytest.mark.parametrize(
    ("name", "siblings"),
    [
        ("kv_attention", ("k_proj", "v_proj")),
        ("distilled_heads", ("head", "head_dist")),
        ("opt", ("k_proj", "v_proj")),
    ],
)
@pytest.mark.parametrize(
    "opts", [{"collapse": "auto"}, {"collapse": "max"}, {"depth": 0}, {"depth": 1}, {"depth": 2}]
)
def test_siblings_fed_from_one_input_never_fold(
    name: str, siblings: tuple[str, str], opts: dict[str, Any]
) -> None:
    drawing = corpus_trace(name).draw(**opts)
    folds = [n.rows[0] for n in drawing.nodes.values() if n.kind == "fold"]
    folded = [*folds, *(title for title in drawing.clusters if re.search(r" x\d+$", title))]
    assert not [title for title in folded if siblings[0] in title], folded


def test_the_two_heads_both_feed_their_add() -> None:
    # (head(x) + head_dist(x)) / 2: two linears read mean_1, the add reads both.
    drawing = corpus_trace("distilled_heads").draw(collapse="auto")
    assert sorted(t for s, t in drawing.edges if s == "mean_1") == ["linear_3", "linear_4"]
    assert sorted(s for s, t in drawing.edges if t == "add_1") == ["linear_3", "linear_4"]


@pytest.mark.parametrize(
    ("name", "opts", "title"),
    [
        ("opt", {"collapse": "auto"}, "x2 @decoder.layers.0-1 (OPTDecoderLayer)"),
        ("resnet18_basic", {"collapse": "auto"}, "x2 @layer1.0-1 (BasicBlock)"),
        ("sequential_2000", {"collapse": "auto"}, "x2000 @0-3999 (Linear, ReLU)"),
    ],
)
def test_real_stacks_still_fold(name: str, opts: dict[str, Any], title: str) -> None:
    drawing = corpus_trace(name).draw(**opts)
    titles = [*drawing.clusters, *(n.rows[0] for n in drawing.nodes.values())]
    assert title in titles
