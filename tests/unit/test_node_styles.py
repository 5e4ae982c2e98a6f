"""The ``attention_node_mode`` preset (ENCODING.md §5.5) on real attention modules."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from pytest_tlgraph import capture
from pytest_tlgraph.draw import Drawing, Node, style
from pytest_tlgraph.draw.node_styles import attention_node_mode, is_attention_module


class _ManualAttention(nn.Module):
    """Scores by hand: q @ k^T, scaled, softmax, @ v."""

    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.q, self.k, self.v = nn.Linear(dim, dim), nn.Linear(dim, dim), nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.q(x), self.k(x), self.v(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        return scores.softmax(dim=-1) @ v


class _FusedAttention(nn.Module):
    """Projections, then ``F.scaled_dot_product_attention``."""

    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        return self.out(F.scaled_dot_product_attention(q, k, v))


class _Block(nn.Module):
    """Attention under ``attn``, and an MLP whose matmul must stay plain."""

    def __init__(self, attention: nn.Module, dim: int = 8) -> None:
        super().__init__()
        self.attn = attention
        self.mlp = nn.Sequential(nn.Linear(dim, 16), nn.GELU(), nn.Linear(16, dim))
        self.w = nn.Parameter(torch.randn(dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(x)
        return self.mlp(x) @ self.w


class _MHABlock(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.mixer = nn.MultiheadAttention(dim, 2, batch_first=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.mixer(x, x, x, need_weights=False)[0]


def _styled(model: nn.Module, **options: object) -> tuple[Drawing, Drawing]:
    torch.manual_seed(0)
    trace = capture(model, torch.randn(2, 5, 8))
    return trace.draw(**options), trace.draw(node_spec_fn=attention_node_mode, **options)


def _highlighted(plain: Drawing, styled: Drawing) -> set[str]:
    return {k for k in plain.nodes if styled.nodes[k].rows != plain.nodes[k].rows}


def _node_line(drawing: Drawing, node_id: str) -> str:
    return next(line for line in drawing.dot.splitlines() if line.startswith(f'  "{node_id}" ['))


def test_manual_attention_scores_and_softmax_stand_out() -> None:
    plain, styled = _styled(_Block(_ManualAttention()))
    assert _highlighted(plain, styled) == {"matmul_1", "softmax_1", "matmul_2"}
    # The MLP's matmul (outside any attention module) and the projections stay plain.
    assert styled.nodes["matmul_3"] == plain.nodes["matmul_3"]
    assert _node_line(styled, "linear_1") == _node_line(plain, "linear_1")
    line = _node_line(styled, "softmax_1")
    assert 'color="#C2410C"' in line
    assert 'penwidth="2"' in line
    assert style.PAGES["light"].fill("op") not in line


def test_labels_trimmed_to_title_and_shape() -> None:
    plain, styled = _styled(_Block(_ManualAttention()))
    # Inside the @attn cluster the node needs no module row.
    assert plain.nodes["softmax_1"].rows == ("softmax_1", "2x5x5, 200 B", "dim=-1")
    assert styled.nodes["softmax_1"].rows == ("softmax_1", "2x5x5")
    assert "<B>softmax_1</B><BR/>2x5x5>" in _node_line(styled, "softmax_1")


def test_scaled_dot_product_attention_stands_out() -> None:
    plain, styled = _styled(_Block(_FusedAttention()))
    assert _highlighted(plain, styled) == {"scaled_dot_product_attention_1"}
    assert styled.nodes["scaled_dot_product_attention_1"].rows == (
        "scaled_dot_product_attention_1",
        "2x5x8",
    )


def test_multihead_attention_stands_out_under_any_name() -> None:
    plain, styled = _styled(_MHABlock())
    assert _highlighted(plain, styled) == {"multi_head_attention_forward_1"}
    # The batch-first transposes around it are not attention.
    for node_id, node in plain.nodes.items():
        if node_id.startswith("transpose"):
            assert styled.nodes[node_id] == node


def test_rolled_view_and_dark_page() -> None:
    plain, styled = _styled(_Block(_ManualAttention()), view="rolled", page="dark")
    assert _highlighted(plain, styled) == {"matmul_1", "softmax_1", "matmul_2"}
    line = _node_line(styled, "softmax_1")
    assert style.PAGES["dark"].fill("layer") not in line
    assert 'color="#FDBA74"' in line  # a light border reads on the dark fill


def test_other_nodes_are_left_alone() -> None:
    spec = {"rows": ["relu_1", "2x5x8, 320 B"], "bold_rows": [0], "fillcolor": "#F3F4F6"}
    node = Node("op", ("relu_1", "2x5x8, 320 B"), ("relu_1",), "attn")
    assert attention_node_mode(node, dict(spec)) is None
    for kind in ("input", "output", "segment"):
        assert attention_node_mode(Node(kind, (), ("softmax_1",), "attn"), dict(spec)) is None


def test_a_channel_fill_is_kept_and_the_border_marks_the_node() -> None:
    node = Node("op", ("softmax_1", "2x5x5, 200 B"), ("softmax_1",), "blocks.0.attn")
    spec = {"rows": list(node.rows), "bold_rows": [0], "fillcolor": "#440154"}
    changed = attention_node_mode(node, spec)
    assert changed is not None
    assert changed["fillcolor"] == "#440154"
    assert changed["color"] == "#FDBA74"  # light border on a dark ramp colour
    assert spec["rows"] == ["softmax_1", "2x5x5, 200 B"]  # the input spec is not mutated


def test_collapsed_attention_boxes_are_styled_untrimmed() -> None:
    rows = ("@blocks.0.self_attn (MultiheadAttention)", "2x5x8", "num_heads=2")
    spec = {"rows": list(rows), "bold_rows": [0], "fillcolor": style.PAGES["light"].fill("box")}
    changed = attention_node_mode(Node("box", rows, ("transpose_1",), "blocks.0.self_attn"), spec)
    assert changed is not None and changed["rows"] == list(rows)
    mlp = Node("box", rows, ("linear_1",), "blocks.0.mlp")
    assert attention_node_mode(mlp, spec) is None


def test_attention_module_names() -> None:
    for address in ("attn", "blocks.3.self_attn", "unet.attn1", "layer.attention", "enc.mha"):
        assert is_attention_module(address), address
    for address in ("", None, "mlp", "blocks.0.attn_dropout_rate_x", "pattern"):
        assert not is_attention_module(address), address
