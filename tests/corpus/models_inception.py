"""Inception v3 in plain torch: torchvision's ``Inception3`` module for module (its
``BasicConv2d``, ``InceptionA``..``InceptionE`` and ``InceptionAux`` with their branch
names, ``Mixed_5b``..``Mixed_7c``), since torchvision's wheel does not load here.

Every channel count is torchvision's divided by :data:`SHRINK` (the ratios kept), and
the input is 75x75, the smallest torchvision accepts, so the whole capture stays fast;
the auxiliary classifier runs only in training, as in torchvision.
"""

from __future__ import annotations

from typing import Any, Final

import torch
import torch.nn.functional as F
from torch import nn

from tests.corpus.registry import Case, register

__all__ = ["SHRINK", "Inception3", "inception_v3"]

#: torchvision's channel counts are divided by this.
SHRINK: Final = 8


def _c(channels: int) -> int:
    return channels // SHRINK


class BasicConv2d(nn.Module):
    """Convolution (no bias), batch norm (eps 0.001), ReLU."""

    def __init__(self, in_channels: int, out_channels: int, **kwargs: Any) -> None:
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, bias=False, **kwargs)
        self.bn = nn.BatchNorm2d(out_channels, eps=0.001)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``relu(bn(conv(x)))``."""
        return F.relu(self.bn(self.conv(x)), inplace=True)


class InceptionA(nn.Module):
    """Four branches: 1x1, 5x5, double 3x3, average pool; concatenated."""

    def __init__(self, in_channels: int, pool_features: int) -> None:
        super().__init__()
        self.branch1x1 = BasicConv2d(in_channels, _c(64), kernel_size=1)
        self.branch5x5_1 = BasicConv2d(in_channels, _c(48), kernel_size=1)
        self.branch5x5_2 = BasicConv2d(_c(48), _c(64), kernel_size=5, padding=2)
        self.branch3x3dbl_1 = BasicConv2d(in_channels, _c(64), kernel_size=1)
        self.branch3x3dbl_2 = BasicConv2d(_c(64), _c(96), kernel_size=3, padding=1)
        self.branch3x3dbl_3 = BasicConv2d(_c(96), _c(96), kernel_size=3, padding=1)
        self.branch_pool = BasicConv2d(in_channels, pool_features, kernel_size=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The branches side by side along the channels."""
        branch1x1 = self.branch1x1(x)
        branch5x5 = self.branch5x5_2(self.branch5x5_1(x))
        branch3x3dbl = self.branch3x3dbl_3(self.branch3x3dbl_2(self.branch3x3dbl_1(x)))
        branch_pool = self.branch_pool(F.avg_pool2d(x, kernel_size=3, stride=1, padding=1))
        return torch.cat([branch1x1, branch5x5, branch3x3dbl, branch_pool], 1)


class InceptionB(nn.Module):
    """Grid reduction: strided 3x3, strided double 3x3, max pool; concatenated."""

    def __init__(self, in_channels: int) -> None:
        super().__init__()
        self.branch3x3 = BasicConv2d(in_channels, _c(384), kernel_size=3, stride=2)
        self.branch3x3dbl_1 = BasicConv2d(in_channels, _c(64), kernel_size=1)
        self.branch3x3dbl_2 = BasicConv2d(_c(64), _c(96), kernel_size=3, padding=1)
        self.branch3x3dbl_3 = BasicConv2d(_c(96), _c(96), kernel_size=3, stride=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The branches side by side along the channels."""
        branch3x3 = self.branch3x3(x)
        branch3x3dbl = self.branch3x3dbl_3(self.branch3x3dbl_2(self.branch3x3dbl_1(x)))
        branch_pool = F.max_pool2d(x, kernel_size=3, stride=2)
        return torch.cat([branch3x3, branch3x3dbl, branch_pool], 1)


class InceptionC(nn.Module):
    """Factorised 7x7 branches (1x7 then 7x1), 1x1 and average pool; concatenated."""

    def __init__(self, in_channels: int, channels_7x7: int) -> None:
        super().__init__()
        c7 = channels_7x7
        self.branch1x1 = BasicConv2d(in_channels, _c(192), kernel_size=1)
        self.branch7x7_1 = BasicConv2d(in_channels, c7, kernel_size=1)
        self.branch7x7_2 = BasicConv2d(c7, c7, kernel_size=(1, 7), padding=(0, 3))
        self.branch7x7_3 = BasicConv2d(c7, _c(192), kernel_size=(7, 1), padding=(3, 0))
        self.branch7x7dbl_1 = BasicConv2d(in_channels, c7, kernel_size=1)
        self.branch7x7dbl_2 = BasicConv2d(c7, c7, kernel_size=(7, 1), padding=(3, 0))
        self.branch7x7dbl_3 = BasicConv2d(c7, c7, kernel_size=(1, 7), padding=(0, 3))
        self.branch7x7dbl_4 = BasicConv2d(c7, c7, kernel_size=(7, 1), padding=(3, 0))
        self.branch7x7dbl_5 = BasicConv2d(c7, _c(192), kernel_size=(1, 7), padding=(0, 3))
        self.branch_pool = BasicConv2d(in_channels, _c(192), kernel_size=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The branches side by side along the channels."""
        branch1x1 = self.branch1x1(x)
        branch7x7 = self.branch7x7_3(self.branch7x7_2(self.branch7x7_1(x)))
        branch7x7dbl = self.branch7x7dbl_1(x)
        branch7x7dbl = self.branch7x7dbl_2(branch7x7dbl)
        branch7x7dbl = self.branch7x7dbl_3(branch7x7dbl)
        branch7x7dbl = self.branch7x7dbl_4(branch7x7dbl)
        branch7x7dbl = self.branch7x7dbl_5(branch7x7dbl)
        branch_pool = self.branch_pool(F.avg_pool2d(x, kernel_size=3, stride=1, padding=1))
        return torch.cat([branch1x1, branch7x7, branch7x7dbl, branch_pool], 1)


class InceptionD(nn.Module):
    """Grid reduction: strided 3x3, factorised 7x7 then strided 3x3, max pool."""

    def __init__(self, in_channels: int) -> None:
        super().__init__()
        self.branch3x3_1 = BasicConv2d(in_channels, _c(192), kernel_size=1)
        self.branch3x3_2 = BasicConv2d(_c(192), _c(320), kernel_size=3, stride=2)
        self.branch7x7x3_1 = BasicConv2d(in_channels, _c(192), kernel_size=1)
        self.branch7x7x3_2 = BasicConv2d(_c(192), _c(192), kernel_size=(1, 7), padding=(0, 3))
        self.branch7x7x3_3 = BasicConv2d(_c(192), _c(192), kernel_size=(7, 1), padding=(3, 0))
        self.branch7x7x3_4 = BasicConv2d(_c(192), _c(192), kernel_size=3, stride=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The branches side by side along the channels."""
        branch3x3 = self.branch3x3_2(self.branch3x3_1(x))
        branch7x7x3 = self.branch7x7x3_1(x)
        branch7x7x3 = self.branch7x7x3_2(branch7x7x3)
        branch7x7x3 = self.branch7x7x3_3(branch7x7x3)
        branch7x7x3 = self.branch7x7x3_4(branch7x7x3)
        branch_pool = F.max_pool2d(x, kernel_size=3, stride=2)
        return torch.cat([branch3x3, branch7x7x3, branch_pool], 1)


class InceptionE(nn.Module):
    """Expanded filter bank: 1x1, split 1x3/3x1 branches, average pool."""

    def __init__(self, in_channels: int) -> None:
        super().__init__()
        self.branch1x1 = BasicConv2d(in_channels, _c(320), kernel_size=1)
        self.branch3x3_1 = BasicConv2d(in_channels, _c(384), kernel_size=1)
        self.branch3x3_2a = BasicConv2d(_c(384), _c(384), kernel_size=(1, 3), padding=(0, 1))
        self.branch3x3_2b = BasicConv2d(_c(384), _c(384), kernel_size=(3, 1), padding=(1, 0))
        self.branch3x3dbl_1 = BasicConv2d(in_channels, _c(448), kernel_size=1)
        self.branch3x3dbl_2 = BasicConv2d(_c(448), _c(384), kernel_size=3, padding=1)
        self.branch3x3dbl_3a = BasicConv2d(_c(384), _c(384), kernel_size=(1, 3), padding=(0, 1))
        self.branch3x3dbl_3b = BasicConv2d(_c(384), _c(384), kernel_size=(3, 1), padding=(1, 0))
        self.branch_pool = BasicConv2d(in_channels, _c(192), kernel_size=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The branches side by side along the channels."""
        branch1x1 = self.branch1x1(x)
        branch3x3 = self.branch3x3_1(x)
        branch3x3 = torch.cat([self.branch3x3_2a(branch3x3), self.branch3x3_2b(branch3x3)], 1)
        branch3x3dbl = self.branch3x3dbl_2(self.branch3x3dbl_1(x))
        branch3x3dbl = torch.cat(
            [self.branch3x3dbl_3a(branch3x3dbl), self.branch3x3dbl_3b(branch3x3dbl)], 1
        )
        branch_pool = self.branch_pool(F.avg_pool2d(x, kernel_size=3, stride=1, padding=1))
        return torch.cat([branch1x1, branch3x3, branch3x3dbl, branch_pool], 1)


class InceptionAux(nn.Module):
    """The auxiliary classifier on ``Mixed_6e`` (training only)."""

    def __init__(self, in_channels: int, num_classes: int) -> None:
        super().__init__()
        self.conv0 = BasicConv2d(in_channels, _c(128), kernel_size=1)
        self.conv1 = BasicConv2d(_c(128), _c(768), kernel_size=5)
        self.fc = nn.Linear(_c(768), num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Pool, two convolutions, pool, classify."""
        x = self.conv1(self.conv0(F.avg_pool2d(x, kernel_size=5, stride=3)))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, (1, 1)), 1))


class Inception3(nn.Module):
    """torchvision's ``Inception3`` (``transform_input=False``), channels shrunk."""

    def __init__(self, num_classes: int = 10, aux_logits: bool = True) -> None:
        super().__init__()
        self.aux_logits = aux_logits
        self.Conv2d_1a_3x3 = BasicConv2d(3, _c(32), kernel_size=3, stride=2)
        self.Conv2d_2a_3x3 = BasicConv2d(_c(32), _c(32), kernel_size=3)
        self.Conv2d_2b_3x3 = BasicConv2d(_c(32), _c(64), kernel_size=3, padding=1)
        self.maxpool1 = nn.MaxPool2d(kernel_size=3, stride=2)
        self.Conv2d_3b_1x1 = BasicConv2d(_c(64), _c(80), kernel_size=1)
        self.Conv2d_4a_3x3 = BasicConv2d(_c(80), _c(192), kernel_size=3)
        self.maxpool2 = nn.MaxPool2d(kernel_size=3, stride=2)
        self.Mixed_5b = InceptionA(_c(192), pool_features=_c(32))
        self.Mixed_5c = InceptionA(_c(256), pool_features=_c(64))
        self.Mixed_5d = InceptionA(_c(288), pool_features=_c(64))
        self.Mixed_6a = InceptionB(_c(288))
        self.Mixed_6b = InceptionC(_c(768), channels_7x7=_c(128))
        self.Mixed_6c = InceptionC(_c(768), channels_7x7=_c(160))
        self.Mixed_6d = InceptionC(_c(768), channels_7x7=_c(160))
        self.Mixed_6e = InceptionC(_c(768), channels_7x7=_c(192))
        self.AuxLogits = InceptionAux(_c(768), num_classes) if aux_logits else None
        self.Mixed_7a = InceptionD(_c(768))
        self.Mixed_7b = InceptionE(_c(1280))
        self.Mixed_7c = InceptionE(_c(2048))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.dropout = nn.Dropout(p=0.5)
        self.fc = nn.Linear(_c(2048), num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The stem, the eleven Mixed blocks, pool and classify (the auxiliary head
        only in training)."""
        x = self.maxpool1(self.Conv2d_2b_3x3(self.Conv2d_2a_3x3(self.Conv2d_1a_3x3(x))))
        x = self.maxpool2(self.Conv2d_4a_3x3(self.Conv2d_3b_1x1(x)))
        x = self.Mixed_6a(self.Mixed_5d(self.Mixed_5c(self.Mixed_5b(x))))
        x = self.Mixed_6e(self.Mixed_6d(self.Mixed_6c(self.Mixed_6b(x))))
        if self.AuxLogits is not None and self.training:
            self.AuxLogits(x)
        x = self.Mixed_7c(self.Mixed_7b(self.Mixed_7a(x)))
        x = self.dropout(self.avgpool(x))
        return self.fc(torch.flatten(x, 1))


@register("inception_v3")
def inception_v3() -> Case:
    """Inception v3 at an eighth of torchvision's widths on one 75x75 image."""
    return Case("inception_v3", Inception3(), (torch.randn(1, 3, 75, 75),))
