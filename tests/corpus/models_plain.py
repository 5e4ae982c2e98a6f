"""Plain-torch models whose layers pass many non-tensor arguments to torch.

* ``convnext_v2``: ConvNeXt V2 blocks (depthwise 7x7 conv, channels-last ``LayerNorm``,
  ``GELU``, global response normalization with ``torch.norm`` over the spatial dims,
  layer scale), three stages with ``LayerNorm``-and-conv downsampling between them.
* ``unet``: a two-level U-Net whose decoder blocks upsample (bilinear, then a transposed
  conv), ``F.pad`` the upsampled map to the skip's odd size and ``torch.cat`` it behind
  the skip connection.
* ``gnn_message_passing``: three graph convolutions over an ``edge_index`` of shape
  ``2 x E``: messages gathered with ``x[edge_index[0]]``, summed onto ``edge_index[1]``
  with ``index_add_`` and divided by in-degrees counted with ``scatter_add``.
"""

from __future__ import annotations

import itertools

import torch
import torch.nn.functional as F
from torch import nn

from tests.corpus.registry import Case, register

__all__ = ["GRN", "ConvNeXtV2", "GraphConv", "MessagePassingGNN", "UNet"]


class LayerNorm2d(nn.Module):
    """ConvNeXt's ``LayerNorm`` over the channels of an ``N x C x H x W`` map, written
    out (mean, variance, ``sqrt`` of the variance plus ``eps``) as the reference code does."""

    def __init__(self, channels: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(channels))
        self.bias = nn.Parameter(torch.zeros(channels))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        u = x.mean(1, keepdim=True)
        s = (x - u).pow(2).mean(1, keepdim=True)
        x = (x - u) / torch.sqrt(s + self.eps)
        return self.weight[:, None, None] * x + self.bias[:, None, None]


class GRN(nn.Module):
    """Global response normalization on a channels-last map: each channel's L2 norm over
    the spatial dims, divided by its mean over the channels (random ``gamma``/``beta``,
    not the reference zeros, so that the block's output depends on them)."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.gamma = nn.Parameter(0.5 * torch.randn(1, 1, 1, dim))
        self.beta = nn.Parameter(0.1 * torch.randn(1, 1, 1, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gx: torch.Tensor = torch.norm(x, p=2, dim=(1, 2), keepdim=True)
        nx = gx / (gx.mean(dim=-1, keepdim=True) + 1e-6)
        return self.gamma * (x * nx) + self.beta + x


class ConvNeXtV2Block(nn.Module):
    """One block: depthwise 7x7 conv, channels-last ``LayerNorm``, pointwise expansion,
    ``GELU``, ``GRN``, pointwise projection, layer scale, residual add."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.pwconv1 = nn.Linear(dim, 4 * dim)
        self.act = nn.GELU()
        self.grn = GRN(4 * dim)
        self.pwconv2 = nn.Linear(4 * dim, dim)
        self.layer_scale = nn.Parameter(0.5 + torch.rand(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shortcut = x
        x = self.dwconv(x).permute(0, 2, 3, 1)
        x = self.pwconv2(self.grn(self.act(self.pwconv1(self.norm(x)))))
        x = self.layer_scale * x
        return shortcut + x.permute(0, 3, 1, 2)


class ConvNeXtV2(nn.Module):
    """A patchify stem, three stages of :class:`ConvNeXtV2Block` with downsampling in
    between (``downsample_layers``/``stages`` as in the reference code), a pooled head."""

    def __init__(
        self, dims: tuple[int, ...] = (16, 24, 32), depths: tuple[int, ...] = (1, 2, 1)
    ) -> None:
        super().__init__()
        self.downsample_layers = nn.ModuleList(
            [nn.Sequential(nn.Conv2d(3, dims[0], kernel_size=4, stride=4), LayerNorm2d(dims[0]))]
        )
        for before, after in itertools.pairwise(dims):
            self.downsample_layers.append(
                nn.Sequential(LayerNorm2d(before), nn.Conv2d(before, after, 2, stride=2))
            )
        self.stages = nn.ModuleList(
            nn.Sequential(*(ConvNeXtV2Block(dim) for _ in range(depth)))
            for dim, depth in zip(dims, depths, strict=True)
        )
        self.norm = nn.LayerNorm(dims[-1], eps=1e-6)
        self.head = nn.Linear(dims[-1], 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for downsample, stage in zip(self.downsample_layers, self.stages, strict=True):
            x = stage(downsample(x))
        return self.head(self.norm(x.mean(dim=(-2, -1))))  # type: ignore[no-any-return]


@register("convnext_v2")
def convnext_v2() -> Case:
    """ConvNeXt V2 (three stages of 1, 2 and 1 blocks) on one 32x32 image."""
    return Case("convnext_v2", ConvNeXtV2(), (torch.randn(1, 3, 32, 32),))


class DoubleConv(nn.Sequential):
    """Two 3x3 conv, ``BatchNorm``, ``ReLU`` triples."""

    def __init__(self, in_channels: int, out_channels: int) -> None:
        super().__init__(
            nn.Conv2d(in_channels, out_channels, 3, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(inplace=True),
            nn.Conv2d(out_channels, out_channels, 3, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(inplace=True),
        )


class Down(nn.Module):
    """A 2x2 max pool, then :class:`DoubleConv`."""

    def __init__(self, in_channels: int, out_channels: int) -> None:
        super().__init__()
        self.pool = nn.MaxPool2d(2)
        self.conv = DoubleConv(in_channels, out_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(self.pool(x))  # type: ignore[no-any-return]


class Up(nn.Module):
    """Upsample (bilinear ``F.interpolate`` and a 1x1 conv, or a 2x2 transposed conv),
    pad to the skip's size, ``torch.cat([x, skip], dim=1)``, :class:`DoubleConv`."""

    def __init__(self, in_channels: int, out_channels: int, *, bilinear: bool) -> None:
        super().__init__()
        self.bilinear = bilinear
        self.up: nn.Module
        if bilinear:
            self.up = nn.Conv2d(in_channels, in_channels // 2, 1)
        else:
            self.up = nn.ConvTranspose2d(in_channels, in_channels // 2, 2, stride=2)
        self.conv = DoubleConv(in_channels, out_channels)

    def forward(self, x: torch.Tensor, skip: torch.Tensor) -> torch.Tensor:
        if self.bilinear:
            x = F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True)
        x = self.up(x)
        dy = skip.size(2) - x.size(2)
        dx = skip.size(3) - x.size(3)
        x = F.pad(x, (dx // 2, dx - dx // 2, dy // 2, dy - dy // 2))
        return self.conv(torch.cat([x, skip], dim=1))  # type: ignore[no-any-return]


class UNet(nn.Module):
    """``inc``, ``down1``, ``down2``, ``up1`` (bilinear), ``up2`` (transposed conv),
    ``outc``: on an 18x18 input the bottleneck is 4x4, so ``up1`` pads 8x8 to 9x9."""

    def __init__(self, channels: int = 3, classes: int = 2, base: int = 8) -> None:
        super().__init__()
        self.inc = DoubleConv(channels, base)
        self.down1 = Down(base, 2 * base)
        self.down2 = Down(2 * base, 4 * base)
        self.up1 = Up(4 * base, 2 * base, bilinear=True)
        self.up2 = Up(2 * base, base, bilinear=False)
        self.outc = nn.Conv2d(base, classes, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x1 = self.inc(x)
        x2 = self.down1(x1)
        x3 = self.down2(x2)
        return self.outc(self.up2(self.up1(x3, x2), x1))  # type: ignore[no-any-return]


@register("unet")
def unet() -> Case:
    """A two-level U-Net on one 18x18 image (odd skip sizes: the upsampled map is padded)."""
    return Case("unet", UNet(), (torch.randn(1, 3, 18, 18),))


class GraphConv(nn.Module):
    """Mean aggregation of transformed neighbour features plus a self term: messages
    ``x[edge_index[0]]`` summed onto ``edge_index[1]``, over in-degrees (at least 1)."""

    def __init__(self, in_dim: int, out_dim: int) -> None:
        super().__init__()
        self.message = nn.Linear(in_dim, out_dim)
        self.root = nn.Linear(in_dim, out_dim, bias=False)

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        src, dst = edge_index[0], edge_index[1]
        messages = self.message(x[src])
        summed = messages.new_zeros(x.size(0), messages.size(1)).index_add_(0, dst, messages)
        ones = torch.ones_like(dst, dtype=x.dtype)
        degree = torch.zeros(x.size(0), dtype=x.dtype).scatter_add(0, dst, ones)
        mean = summed / degree.clamp(min=1.0).unsqueeze(-1)
        return F.relu(self.root(x) + mean)


class MessagePassingGNN(nn.Module):
    """Three :class:`GraphConv` layers and a mean-pooled graph-level head."""

    def __init__(self, in_dim: int = 16, hidden: int = 24, layers: int = 3) -> None:
        super().__init__()
        dims = [in_dim] + [hidden] * layers
        self.convs = nn.ModuleList(GraphConv(a, b) for a, b in itertools.pairwise(dims))
        self.head = nn.Linear(hidden, 4)

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        for conv in self.convs:
            x = conv(x, edge_index)
        return self.head(x.mean(dim=0))  # type: ignore[no-any-return]


@register("gnn_message_passing")
def gnn_message_passing() -> Case:
    """A three-layer message-passing GNN on a random directed graph of 10 nodes, 24 edges."""
    edge_index = torch.randint(0, 10, (2, 24))
    return Case("gnn_message_passing", MessagePassingGNN(), (torch.randn(10, 16), edge_index))
