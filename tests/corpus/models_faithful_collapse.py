"""Corpus models a collapsed drawing must stay faithful to, in plain torch.

* ``resnet18_basic``: torchvision's ResNet-18 (``BasicBlock`` x [2, 2, 2, 2], a 1x1
  downsample where the shape changes) at small widths; ``activation=`` builds the same
  model with another activation in every block (same shapes, params and op count),
  ``stem_kernel=`` another stem convolution, ``layers=`` other block counts per stage,
  ``block_kernel=`` other ``BasicBlock`` convolutions and ``base=`` another width (the
  changed models of ``tests/corpus/changes.py``).
* ``kv_attention``: attention with separate ``q_proj``, ``k_proj``, ``v_proj`` and
  ``out_proj`` (OPT's layout): the three projections read one input, side by side.
* ``distilled_heads``: a classifier with a distillation head,
  ``(head(x) + head_dist(x)) / 2`` (LeViT's and EfficientFormer's).
* ``opt``: OPT from transformers, a tiny config (separate k/v/q projections in a real
  decoder stack).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from tests.corpus.registry import Case, register

__all__ = ["BasicBlock", "DistilledHeads", "KVAttention", "ResNetBasic", "resnet18_basic_case"]

Activation = Callable[[], nn.Module]


def _relu() -> nn.Module:
    return nn.ReLU(inplace=True)


class BasicBlock(nn.Module):
    """torchvision's ``BasicBlock``: two 3x3 convs (``kernel`` x ``kernel``, same padding),
    a residual add, one activation module called twice."""

    expansion = 1

    def __init__(
        self,
        inplanes: int,
        planes: int,
        stride: int = 1,
        downsample: nn.Module | None = None,
        activation: Activation = _relu,
        kernel: int = 3,
    ) -> None:
        super().__init__()
        pad = kernel // 2
        self.conv1 = nn.Conv2d(inplanes, planes, kernel, stride=stride, padding=pad, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = activation()
        self.conv2 = nn.Conv2d(planes, planes, kernel, padding=pad, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)  # type: ignore[no-any-return]


class ResNetBasic(nn.Module):
    """torchvision's ``ResNet`` with ``BasicBlock`` and ``layers=[2, 2, 2, 2]`` (ResNet-18)
    at widths ``base, 2 base, 4 base, 8 base``."""

    def __init__(
        self,
        base: int = 8,
        num_classes: int = 10,
        activation: Activation = _relu,
        stem_kernel: int = 7,
        layers: tuple[int, int, int, int] = (2, 2, 2, 2),
        block_kernel: int = 3,
    ) -> None:
        super().__init__()
        self.inplanes = base
        self.activation = activation
        self.block_kernel = block_kernel
        self.conv1 = nn.Conv2d(3, base, stem_kernel, stride=2, padding=stem_kernel // 2, bias=False)
        self.bn1 = nn.BatchNorm2d(base)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(base, layers[0])
        self.layer2 = self._make_layer(base * 2, layers[1], stride=2)
        self.layer3 = self._make_layer(base * 4, layers[2], stride=2)
        self.layer4 = self._make_layer(base * 8, layers[3], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(base * 8, num_classes)

    def _make_layer(self, planes: int, blocks: int, stride: int = 1) -> nn.Sequential:
        downsample = None
        if stride != 1 or self.inplanes != planes:
            downsample = nn.Sequential(
                nn.Conv2d(self.inplanes, planes, 1, stride=stride, bias=False),
                nn.BatchNorm2d(planes),
            )
        kernel = self.block_kernel
        layers = [BasicBlock(self.inplanes, planes, stride, downsample, self.activation, kernel)]
        self.inplanes = planes
        layers += [
            BasicBlock(planes, planes, activation=self.activation, kernel=kernel)
            for _ in range(1, blocks)
        ]
        return nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))  # type: ignore[no-any-return]


def resnet18_basic_case(
    activation: Activation = _relu,
    stem_kernel: int = 7,
    *,
    layers: tuple[int, int, int, int] = (2, 2, 2, 2),
    block_kernel: int = 3,
    base: int = 8,
) -> Case:
    """The ResNet-18 case, with ``activation`` in every ``BasicBlock``, a
    ``stem_kernel`` x ``stem_kernel`` stem convolution, ``layers`` blocks per stage,
    ``block_kernel`` x ``block_kernel`` block convolutions and stage widths ``base`` to
    ``8 base``; seeded, so two calls build the same weights. The defaults build the
    corpus entry ``resnet18_basic``."""
    torch.manual_seed(0)
    model = ResNetBasic(
        base=base,
        activation=activation,
        stem_kernel=stem_kernel,
        layers=layers,
        block_kernel=block_kernel,
    ).eval()
    return Case("resnet18_basic", model, (torch.randn(1, 3, 32, 32),))


@register("resnet18_basic")
def resnet18_basic() -> Case:
    """ResNet-18 with BasicBlocks (torchvision's layout, small widths)."""
    return resnet18_basic_case()


class KVAttention(nn.Module):
    """Multi-head self-attention with separate q/k/v projections, as OPT writes it."""

    def __init__(self, dim: int = 16, heads: int = 2) -> None:
        super().__init__()
        self.heads = heads
        self.q_proj = nn.Linear(dim, dim)
        self.k_proj = nn.Linear(dim, dim)
        self.v_proj = nn.Linear(dim, dim)
        self.out_proj = nn.Linear(dim, dim)

    def _split(self, x: torch.Tensor) -> torch.Tensor:
        batch, length, dim = x.shape
        return x.view(batch, length, self.heads, dim // self.heads).transpose(1, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # OPT's order: the query scaled, then the key and value projections back to back.
        query = self.q_proj(x) * (x.shape[-1] // self.heads) ** -0.5
        key, value = self.k_proj(x), self.v_proj(x)
        query, key, value = self._split(query), self._split(key), self._split(value)
        weights = torch.softmax(query @ key.transpose(-1, -2), dim=-1)
        out = (weights @ value).transpose(1, 2).flatten(2)
        return self.out_proj(out)  # type: ignore[no-any-return]


class _KVModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attn = KVAttention()
        self.norm = nn.LayerNorm(16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x + self.attn(x))  # type: ignore[no-any-return]


@register("kv_attention")
def kv_attention() -> Case:
    """Self-attention with separate k/v/q projections fed from one input."""
    return Case("kv_attention", _KVModel(), (torch.randn(1, 5, 16),))


class DistilledHeads(nn.Module):
    """A classifier with a class head and a distillation head on one feature vector:
    ``(head(x) + head_dist(x)) / 2`` (LeViT, EfficientFormer, DeiT at inference)."""

    def __init__(self, dim: int = 16, num_classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Linear(8, dim), nn.GELU(), nn.Linear(dim, dim))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, num_classes)
        self.head_dist = nn.Linear(dim, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.norm(self.stem(x)).mean(1)
        return (self.head(x) + self.head_dist(x)) / 2  # type: ignore[no-any-return]


@register("distilled_heads")
def distilled_heads() -> Case:
    """A class head and a distillation head averaged."""
    return Case("distilled_heads", DistilledHeads(), (torch.randn(1, 4, 8),))


@register("opt", transformer=True)
def opt() -> Case:
    """OPT (separate k/v/q projections) from a tiny config, random weights."""
    from transformers import OPTConfig, OPTModel

    config = OPTConfig(
        vocab_size=96, hidden_size=32, ffn_dim=64, num_hidden_layers=2,
        num_attention_heads=4, max_position_embeddings=64, word_embed_proj_dim=32,
        use_cache=False,
    )  # fmt: skip
    return Case("opt", OPTModel(config), (torch.randint(0, 96, (1, 8)),))
