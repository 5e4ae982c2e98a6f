"""The structural comparison tells the true story of real changes (issue 23, items 1-5).

Each change of :mod:`tests.corpus.changes` is drawn before and after (full detail,
``color_by="flops"``, ``depth=2`` and ``collapse="auto"``), compared once, and its story
checked line by line: an inserted block is one line and nothing else changed, an
inserted same-type layer one added node, a swap one replacement with its edges
unchanged, a kernel change in every block one grouped line with full addresses, a
width change a few grouped lines. The diff drawing shows the changes in context.
"""

from __future__ import annotations

import functools
import io
import re

import pytest
import torch
from PIL import Image

from pytest_tlgraph import capture
from pytest_tlgraph.diff.view.comparison import Comparison, compare
from pytest_tlgraph.diff.view.drawing import draw_comparison
from pytest_tlgraph.diff.view.story import rewired_edges, story_lines
from tests.corpus.changes import CHANGES

_VIEWS = {
    "full": {},
    "flops": {"color_by": "flops"},
    "depth2": {"depth": 2},
    "auto": {"collapse": "auto"},
}


@functools.cache
def _dots(name: str, view: str) -> tuple[str, str]:
    before, after = CHANGES[name]()
    options = _VIEWS[view]
    return tuple(  # type: ignore[return-value]
        capture(case.model, case.inputs, kwargs=case.kwargs or None).draw(**options).dot
        for case in (before, after)
    )


@functools.cache
def _compared(name: str, view: str) -> Comparison:
    return compare(*_dots(name, view))


@pytest.mark.parametrize("view", ["full", "flops", "depth2"])
def test_an_inserted_block_is_one_line_and_nothing_else_changed(view: str) -> None:
    comparison = _compared("block_inserted", view)
    assert story_lines(comparison) == ["added @layer1.2 (BasicBlock): 7 ops"]
    assert not comparison.changed and not comparison.removed and not comparison.replaced
    # Its edges are its own: the block's and the two that now route through it.
    assert rewired_edges(comparison) == ([], [])
    assert {comparison.new.nodes[n].address.split(".")[:2] == ["layer1", "2"]
            for n in comparison.added} == {True}  # fmt: skip


def test_an_inserted_block_in_a_fold_reads_as_its_count() -> None:
    comparison = _compared("block_inserted", "auto")
    assert story_lines(comparison) == [
        "x2 -> x3 @layer1.0-2 (BasicBlock): block @layer1.2 added (7 ops)"
    ]


@pytest.mark.parametrize("view", ["full", "depth2", "flops"])
def test_a_layer_inserted_before_one_of_its_type_is_one_added_node(view: str) -> None:
    comparison = _compared("same_type_inserted", view)
    lines = story_lines(comparison)
    assert lines[0] == "added dropout_1 @classifier.2"
    assert len(comparison.added) == 1 and not comparison.removed
    # The Dropout(0.2) it was inserted in front of is the same node, one index later.
    assert not comparison.changed
    # The layers after it, one index on, moved with the insertion: no edit of their own.
    assert lines[1:] == []


def test_a_box_drawn_open_on_one_side_reads_as_redrawn() -> None:
    lines = story_lines(_compared("same_type_inserted", "auto"))
    # What auto drew otherwise because of the edit is a note on the edit's line.
    assert lines == [
        "added dropout_1 @classifier.2 (the view: @features.3.block (Sequential) "
        "drawn as one box (was 3 nodes in its frame))"
    ]
    assert not [line for line in lines if line.startswith("removed")]


@pytest.mark.parametrize("view", ["full", "flops"])
def test_a_swap_is_a_replacement_with_its_edges_unchanged(view: str) -> None:
    comparison = _compared("activation_swapped", view)
    assert story_lines(comparison) == ["replaced relu -> silu on 16 nodes @layer*.*.relu"]
    assert comparison.edges_added == comparison.edges_removed == ()
    assert not comparison.added and not comparison.removed
    first = comparison.replaced[0]
    assert first == ("relu_2:1", "silu_1:1")
    assert comparison.new.nodes[first[1]].address == "layer1.0.relu"


def test_a_swapped_box_is_a_replacement_too() -> None:
    lines = story_lines(_compared("activation_swapped", "depth2"))
    assert lines[0] == "replaced relu -> silu on 16 ops @layer*.*.relu"


def test_a_kernel_changed_in_every_block_is_one_line_with_full_addresses() -> None:
    comparison = _compared("kernel_changed", "full")
    assert story_lines(comparison) == [
        "16 nodes @layer*.*.conv*: kernel_size (3, 3) -> (5, 5); padding (1, 1) -> (2, 2); "
        "params weight *x*x3x3 -> *x*x5x5"
    ]
    addresses = {comparison.new.nodes[n].address for n in comparison.changed}
    assert len(addresses) == 16
    assert all(re.fullmatch(r"layer[1-4]\.[01]\.conv[12]", a) for a in addresses)


def test_one_change_names_the_node_and_its_full_address() -> None:
    assert story_lines(_compared("stem_kernel_changed", "full")) == [
        "conv2d_1 @conv1: kernel_size (7, 7) -> (5, 5); padding (3, 3) -> (2, 2); "
        "params weight 8x3x7x7 -> 8x3x5x5"
    ]
    assert story_lines(_compared("stem_kernel_changed", "depth2")) == [
        "@conv1 (Conv2d): inside: conv2d kernel_size (7, 7) -> (5, 5); padding (3, 3) -> "
        "(2, 2); params weight 8x3x7x7 -> 8x3x5x5"
    ]


def test_a_width_change_reads_as_a_few_grouped_lines() -> None:
    comparison = _compared("width_changed", "full")
    lines = story_lines(comparison)
    assert len(comparison.changed) >= 60
    assert len(lines) <= 20
    assert "4 nodes @layer1.*.conv*: params weight 8x8x3x3 -> 16x16x3x3" in lines
    assert (
        "16 nodes @layer2.*.*, @layer2.0.downsample.*, @layer2.*: shape 1x16x4x4 -> 1x32x4x4"
        in lines
    )
    # No node is named by an address relative to its cluster.
    for line in lines:
        for address in re.findall(r"@([\w.*]+)", line):
            assert address.split(".")[0] in {"*", "conv1", "bn1", "relu", "maxpool", "avgpool",
                                             "fc", "layer1", "layer2", "layer3", "layer4",
                                             "layer*"}, line  # fmt: skip


@pytest.mark.parametrize(
    ("name", "view", "most"),
    [("stem_kernel_changed", "full", 8), ("same_type_inserted", "full", 12),
     ("block_inserted", "full", 30)],
)  # fmt: skip
def test_the_diff_drawing_shows_the_changes_in_context(name: str, view: str, most: int) -> None:
    comparison = _compared(name, view)
    context = draw_comparison(comparison)
    whole = draw_comparison(comparison, context=None)
    changed = {n for n, s in comparison.node_statuses.items() if s != "unchanged"}
    assert changed <= set(context.nodes)  # every change is drawn
    runs = [n for n, node in context.nodes.items() if node.kind == "run"]
    assert runs and all(context.nodes[r].rows[0].endswith(" unchanged") for r in runs)
    assert len(context.nodes) - len(runs) <= most < len(whole.nodes)
    # The grey runs stand for exactly the unchanged nodes not drawn.
    hidden = sum(int(context.nodes[r].rows[0].split()[0]) for r in runs)
    assert hidden + len(context.nodes) - len(runs) == len(whole.nodes)


def test_one_change_in_a_150_node_model_fits_1600_by_2000_px() -> None:
    comparison = _compared("same_type_inserted", "full")
    assert len(comparison.new.nodes) >= 150
    with Image.open(io.BytesIO(draw_comparison(comparison).png(96))) as image:
        assert image.width <= 1600 and image.height <= 2000


def _bert(layers: int) -> tuple[str, ...]:
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=96, hidden_size=32, num_hidden_layers=layers, num_attention_heads=4,
        intermediate_size=64, max_position_embeddings=64,
    )  # fmt: skip
    ids = torch.arange(8).reshape(1, 8) % 96
    trace = capture(BertModel(config).eval(), (ids,))
    return tuple(trace.draw(**options).dot for options in ({"collapse": "auto"}, {"depth": 2}, {}))


def test_two_to_three_encoder_layers() -> None:
    (auto2, depth2, full2), (auto3, depth3, full3) = _bert(2), _bert(3)
    assert story_lines(compare(auto2, auto3)) == [
        "x2 -> x3 @encoder.layer.0-2 (BertLayer): block @encoder.layer.2 added (25 ops)"
    ]
    # The same edit in every view, counted in the model's ops.
    assert story_lines(compare(depth2, depth3)) == ["added @encoder.layer.2 (BertLayer): 25 ops"]
    assert story_lines(compare(full2, full3)) == ["added @encoder.layer.2 (BertLayer): 25 ops"]


def _gpt2(epsilon: float) -> str:
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    config = GPT2Config(
        vocab_size=96, n_embd=32, n_layer=2, n_head=4, n_positions=64, use_cache=False,
        bos_token_id=1, eos_token_id=2, layer_norm_epsilon=epsilon,
    )  # fmt: skip
    ids = torch.arange(8).unsqueeze(0)
    return capture(GPT2LMHeadModel(config).eval(), (ids,)).draw().dot


def test_an_eps_moved_off_its_default_reads_both_values_the_default_named() -> None:
    # GPT-2's LayerNorms take layer_norm_epsilon=1e-05, LayerNorm's own default: the
    # args row leaves it out, and the drawing records it (tl_defaults).
    before, after = _gpt2(1e-5), _gpt2(1e-6)
    lines = story_lines(compare(before, after))
    assert lines == [
        "5 nodes @transformer.h.*.ln_*, @transformer.ln_f: eps 1e-05 (default) -> 1e-06"
    ], lines
    back = story_lines(compare(after, before))
    assert back[0].endswith(": eps 1e-06 -> 1e-05 (default)"), back
