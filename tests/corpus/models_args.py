"""Layers whose constructor args, FLOPs or output names a drawing must not lose: the
patterns of diffusers, torchvision, timm and DeepSeek models, in plain torch (their own
libraries do not load here), and HuBERT from ``transformers``."""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from tests.corpus.registry import Case, register


# -- an upsampling decoder (diffusers' AutoencoderKL decoder, UNet's Upsample2D) ------
class _ResnetBlock(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.norm1 = nn.GroupNorm(4, channels)
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.norm2 = nn.GroupNorm(4, channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.conv1(F.silu(self.norm1(x)))
        return x + self.conv2(F.silu(self.norm2(h)))


class _Upsample2D(nn.Module):
    """``F.interpolate`` then a convolution, as diffusers' ``Upsample2D``."""

    def __init__(self, channels: int, mode: str) -> None:
        super().__init__()
        self.mode = mode
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.mode == "nearest":
            x = F.interpolate(x, scale_factor=2.0, mode="nearest")
        else:
            x = F.interpolate(x, scale_factor=2.0, mode=self.mode, align_corners=False)
        return self.conv(x)


class UpsamplingDecoder(nn.Module):
    """A latent decoder: residual blocks, a nearest and a bilinear upsampling stage."""

    def __init__(self, latent: int = 4, channels: int = 16) -> None:
        super().__init__()
        self.conv_in = nn.Conv2d(latent, channels, 3, padding=1)
        self.mid = _ResnetBlock(channels)
        self.up = nn.ModuleList(
            [
                nn.Sequential(_ResnetBlock(channels), _Upsample2D(channels, "nearest")),
                nn.Sequential(_ResnetBlock(channels), _Upsample2D(channels, "bilinear")),
            ]
        )
        self.norm_out = nn.GroupNorm(4, channels)
        self.conv_out = nn.Conv2d(channels, 3, 3, padding=1)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        x = self.mid(self.conv_in(z))
        for stage in self.up:
            x = stage(x)
        return self.conv_out(F.silu(self.norm_out(x)))


@register("upsampling_decoder")
def upsampling_decoder() -> Case:
    """A diffusers-style decoder: ``F.interpolate`` nearest and bilinear."""
    return Case("upsampling_decoder", UpsamplingDecoder(), (torch.randn(1, 4, 4, 4),))


# -- reflect-padded convolutions (CycleGAN, pix2pix, style transfer) ------------------
class ReflectConvs(nn.Module):
    """Convolutions padded by ``reflect``, ``replicate`` and ``circular``."""

    def __init__(self) -> None:
        super().__init__()
        self.reflect = nn.Conv2d(3, 8, 3, padding=1, padding_mode="reflect")
        self.replicate = nn.Conv2d(8, 8, 3, padding=1, padding_mode="replicate")
        self.circular = nn.Conv1d(8, 8, 3, padding=1, padding_mode="circular")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.replicate(torch.relu(self.reflect(x)))
        return self.circular(x.flatten(2))


@register("reflect_convs")
def reflect_convs() -> Case:
    """``Conv2d(padding_mode="reflect")`` and its siblings: a ``pad`` op each."""
    return Case("reflect_convs", ReflectConvs(), (torch.randn(1, 3, 6, 6),))


# -- embeddings and batch norms whose non-default args change what they compute -------
class NormalisedLookup(nn.Module):
    """An ``Embedding(max_norm=1.0)`` beside a plain one; batch norms with their running
    statistics' ``momentum`` changed, switched off, or a cumulative average."""

    def __init__(self) -> None:
        super().__init__()
        self.tokens = nn.Embedding(20, 8, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True)
        self.positions = nn.Embedding(6, 8, sparse=True)
        self.norm_momentum = nn.BatchNorm1d(6, momentum=0.3)
        self.norm_batch_stats = nn.BatchNorm1d(6, track_running_stats=False)
        self.norm_average = nn.BatchNorm1d(6, momentum=None)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.tokens(ids) + self.positions(torch.arange(ids.shape[1]))
        return self.norm_average(self.norm_batch_stats(self.norm_momentum(x)))


@register("normalised_lookup")
def normalised_lookup() -> Case:
    """``Embedding(max_norm=...)`` and ``BatchNorm1d(momentum=..., track_running_stats=...)``."""
    return Case("normalised_lookup", NormalisedLookup(), (torch.randint(0, 20, (2, 6)),))


# -- GoogLeNet's NamedTuple output with two auxiliary heads ---------------------------
class GoogLeNetOutputs(NamedTuple):
    """torchvision's ``GoogLeNetOutputs``."""

    logits: torch.Tensor
    aux_logits2: torch.Tensor | None
    aux_logits1: torch.Tensor | None


class _AuxHead(nn.Module):
    def __init__(self, channels: int, classes: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(channels, 8, 1)
        self.fc = nn.Linear(8, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.adaptive_avg_pool2d(torch.relu(self.conv(x)), 1)
        return self.fc(torch.flatten(x, 1))


class GoogLeNetLike(nn.Module):
    """A stem, two stages each tapped by an auxiliary classifier, and the main head."""

    def __init__(self, classes: int = 5) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.stage3 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.aux1 = _AuxHead(16, classes)
        self.stage4 = nn.Conv2d(16, 16, 3, stride=2, padding=1)
        self.aux2 = _AuxHead(16, classes)
        self.fc = nn.Linear(16, classes)

    def forward(self, x: torch.Tensor) -> GoogLeNetOutputs:
        x = self.stage3(torch.relu(self.stem(x)))
        aux1 = self.aux1(x)
        x = self.stage4(x)
        aux2 = self.aux2(x)
        logits = self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))
        return GoogLeNetOutputs(logits, aux2, aux1)


@register("googlenet_outputs")
def googlenet_outputs() -> Case:
    """A ``NamedTuple`` output: ``logits``, ``aux_logits2``, ``aux_logits1``."""
    return Case("googlenet_outputs", GoogLeNetLike(), (torch.randn(1, 3, 16, 16),))


# -- ConvNeXt with torchvision's and timm's LayerNorm subclasses ----------------------
class LayerNorm2d(nn.LayerNorm):
    """torchvision's ``LayerNorm2d``: channels-first input, permuted around the norm."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.permute(0, 2, 3, 1)
        x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        return x.permute(0, 3, 1, 2)


class TimmLayerNorm(nn.LayerNorm):
    """timm's ``LayerNorm``: its own forward around ``F.layer_norm``."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)


class _CNBlock(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = TimmLayerNorm(dim, eps=1e-6)
        self.pwconv1 = nn.Linear(dim, 4 * dim)
        self.act = nn.GELU()
        self.pwconv2 = nn.Linear(4 * dim, dim)
        self.gamma = nn.Parameter(torch.full((dim,), 1e-6))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.dwconv(x).permute(0, 2, 3, 1)
        y = self.pwconv2(self.act(self.pwconv1(self.norm(y))))
        return x + (self.gamma * y).permute(0, 3, 1, 2)


class ConvNeXtLike(nn.Module):
    """A patchify stem with ``LayerNorm2d``, two blocks, a downsampling layer."""

    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, dim, 4, stride=4), LayerNorm2d(dim, eps=1e-6))
        self.stage1 = _CNBlock(dim)
        self.downsample = nn.Sequential(LayerNorm2d(dim), nn.Conv2d(dim, 2 * dim, 2, stride=2))
        self.stage2 = _CNBlock(2 * dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.stage2(self.downsample(self.stage1(self.stem(x))))


@register("convnext_layernorm2d")
def convnext_layernorm2d() -> Case:
    """ConvNeXt blocks: ``LayerNorm2d`` (permute -> layer_norm -> permute), timm's
    ``LayerNorm``, depthwise 7x7 convolutions."""
    return Case("convnext_layernorm2d", ConvNeXtLike(), (torch.randn(1, 3, 16, 16),))


# -- MaxViT's grid attention: swapaxes, moveaxis, meshgrid, as_tensor ------------------
class GridAttention(nn.Module):
    """Attention over a grid partition with a relative position bias, as MaxViT's."""

    def __init__(self, dim: int = 8, grid: int = 2, heads: int = 2) -> None:
        super().__init__()
        self.grid, self.heads = grid, heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.bias_table = nn.Parameter(torch.randn((2 * grid - 1) ** 2, heads))

    def _relative_index(self) -> torch.Tensor:
        coords = torch.stack(
            torch.meshgrid(torch.arange(self.grid), torch.arange(self.grid), indexing="ij")
        ).flatten(1)
        rel = (coords[:, :, None] - coords[:, None, :]).moveaxis(0, -1) + (self.grid - 1)
        offset = torch.as_tensor([2 * self.grid - 1, 1])
        return (rel * offset).sum(-1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, c, h, w = x.shape
        g = self.grid
        # (B, C, H, W) -> grid cells of g x g strided tokens: (B * cells, g * g, C).
        cells = x.view(b, c, g, h // g, g, w // g).swapaxes(2, 3).swapaxes(4, 5)
        tokens = cells.moveaxis(1, -1).reshape(-1, g * g, c)
        q, k, v = self.qkv(tokens).chunk(3, dim=-1)
        q, k, v = (t.unflatten(-1, (self.heads, -1)).swapaxes(1, 2) for t in (q, k, v))
        bias = self.bias_table[self._relative_index()].permute(2, 0, 1)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1]) + bias
        out = (scores.softmax(-1) @ v).swapaxes(1, 2).flatten(2)
        out = self.proj(out).view(b, h // g, w // g, g, g, c)
        return out.permute(0, 5, 3, 1, 4, 2).reshape(b, c, h, w)


@register("grid_attention")
def grid_attention() -> Case:
    """MaxViT-style grid attention: every layout op is a view or a move."""
    return Case("grid_attention", nn.Sequential(GridAttention(), GridAttention()),
                (torch.randn(1, 8, 4, 4),))  # fmt: skip


# -- DeepSeek-V3's routed mixture of experts: scatter_, gather, index_add_ -------------
class RoutedExperts(nn.Module):
    """Group-limited top-k routing into experts, summed back with ``index_add_``."""

    def __init__(self, dim: int = 8, experts: int = 4, groups: int = 2, top_k: int = 2) -> None:
        super().__init__()
        self.groups, self.top_k = groups, top_k
        self.gate = nn.Linear(dim, experts, bias=False)
        self.experts = nn.ModuleList(nn.Linear(dim, dim) for _ in range(experts))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        tokens = x.flatten(0, 1)
        scores = self.gate(tokens).sigmoid()
        per_group = scores.view(tokens.shape[0], self.groups, -1).amax(-1)
        group_idx = per_group.topk(1, dim=-1).indices
        group_mask = torch.zeros_like(per_group).scatter_(1, group_idx, 1)
        mask = group_mask.repeat_interleave(scores.shape[-1] // self.groups, dim=-1)
        masked = scores.masked_fill(mask == 0, 0.0)
        indices = masked.topk(self.top_k, dim=-1).indices
        weights = scores.gather(1, indices)
        out = torch.zeros_like(tokens)
        for expert_id, expert in enumerate(self.experts):
            token_idx, slot = torch.where(indices == expert_id)
            routed = expert(tokens[token_idx]) * weights[token_idx, slot, None]
            out.index_add_(0, token_idx, routed)
        return out.view_as(x)


@register("routed_experts")
def routed_experts() -> Case:
    """A DeepSeek-V3-style router: ``scatter_``, ``gather`` and ``index_add_``."""
    return Case("routed_experts", RoutedExperts(), (torch.randn(2, 3, 8),))


# -- HuBERT: a weight-normalised convolutional position embedding --------------------
@register("hubert", transformer=True)
def hubert() -> Case:
    """HuBERT: a convolutional feature encoder and a weight-normed positional conv."""
    from transformers import HubertConfig, HubertModel

    config = HubertConfig(
        hidden_size=32, num_hidden_layers=1, num_attention_heads=4, intermediate_size=64,
        conv_dim=(16, 16), conv_stride=(5, 2), conv_kernel=(10, 3),
        num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4,
    )  # fmt: skip
    return Case("hubert", HubertModel(config), (torch.randn(1, 400),))
