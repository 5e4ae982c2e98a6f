"""MobileNetV3-small in plain torch, with torchvision's module names and classes.

* ``mobilenet_v3_small``: torchvision's ``mobilenet_v3_small`` layout at a quarter of its
  widths: ``features.0`` a ``Conv2dNormActivation`` stem, ``features.1``-``features.11``
  ``InvertedResidual`` blocks (``block.N``: the 1x1 expansion, the depthwise conv, a
  ``SqueezeExcitation`` with ``fc1``/``fc2``, the 1x1 projection), ``features.12`` the last
  1x1 conv, ``avgpool``, and ``classifier = Sequential(Linear, Hardswish, Dropout(0.2),
  Linear)``. ``extra_dropout=`` puts another ``Dropout`` in front of the classifier's
  ``Dropout(0.2)`` (a same-type layer inserted, ``tests/corpus/changes.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import torch
from torch import nn

from tests.corpus.registry import Case, register

__all__ = [
    "Conv2dNormActivation",
    "InvertedResidual",
    "MobileNetV3",
    "SqueezeExcitation",
    "mobilenet_v3_small_case",
]

Layer = Callable[..., nn.Module]


def _make_divisible(value: float, divisor: int = 8) -> int:
    """torchvision's channel rounding: the nearest multiple of ``divisor``, never more
    than 10% below ``value``."""
    new_value = max(divisor, int(value + divisor / 2) // divisor * divisor)
    if new_value < 0.9 * value:
        new_value += divisor
    return new_value


class Conv2dNormActivation(nn.Sequential):
    """torchvision's ``Conv2dNormActivation``: conv (no bias), norm, activation as the
    children ``0``, ``1``, ``2`` (no activation where ``activation_layer`` is None)."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int = 3,
        stride: int = 1,
        groups: int = 1,
        norm_layer: Layer = nn.BatchNorm2d,
        activation_layer: Layer | None = nn.ReLU,
    ) -> None:
        layers: list[nn.Module] = [
            nn.Conv2d(
                in_channels,
                out_channels,
                kernel_size,
                stride,
                padding=(kernel_size - 1) // 2,
                groups=groups,
                bias=False,
            ),
            norm_layer(out_channels),
        ]
        if activation_layer is not None:
            layers.append(activation_layer(inplace=True))
        super().__init__(*layers)


class SqueezeExcitation(nn.Module):
    """torchvision's ``SqueezeExcitation``: ``input * hardsigmoid(fc2(relu(fc1(pool))))``."""

    def __init__(self, input_channels: int, squeeze_channels: int) -> None:
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(input_channels, squeeze_channels, 1)
        self.fc2 = nn.Conv2d(squeeze_channels, input_channels, 1)
        self.activation = nn.ReLU()
        self.scale_activation = nn.Hardsigmoid()

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        scale: torch.Tensor = self.avgpool(input)
        scale = self.activation(self.fc1(scale))
        scale = self.scale_activation(self.fc2(scale))
        return scale * input


@dataclass(frozen=True)
class BlockConfig:
    """One row of torchvision's ``InvertedResidualConfig`` (dilation 1), widths scaled."""

    input_channels: int
    kernel: int
    expanded_channels: int
    out_channels: int
    use_se: bool
    use_hs: bool
    stride: int

    @staticmethod
    def scaled(
        width_mult: float,
        input_channels: int,
        kernel: int,
        expanded_channels: int,
        out_channels: int,
        use_se: bool,
        activation: str,
        stride: int,
    ) -> BlockConfig:
        """The row at ``width_mult`` of its channels (``activation``: "RE" or "HS")."""

        def adjust(channels: int) -> int:
            return _make_divisible(channels * width_mult, 8)

        return BlockConfig(
            adjust(input_channels),
            kernel,
            adjust(expanded_channels),
            adjust(out_channels),
            use_se,
            activation == "HS",
            stride,
        )


class InvertedResidual(nn.Module):
    """torchvision's MobileNetV3 ``InvertedResidual``: ``block`` = expand (where the width
    changes), depthwise, squeeze-excitation (where used), project; a residual add where
    the stride is 1 and the width stays."""

    def __init__(self, cnf: BlockConfig, norm_layer: Layer) -> None:
        super().__init__()
        self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels
        activation: Layer = nn.Hardswish if cnf.use_hs else nn.ReLU
        layers: list[nn.Module] = []
        if cnf.expanded_channels != cnf.input_channels:
            layers.append(
                Conv2dNormActivation(
                    cnf.input_channels,
                    cnf.expanded_channels,
                    kernel_size=1,
                    norm_layer=norm_layer,
                    activation_layer=activation,
                )
            )
        layers.append(
            Conv2dNormActivation(
                cnf.expanded_channels,
                cnf.expanded_channels,
                kernel_size=cnf.kernel,
                stride=cnf.stride,
                groups=cnf.expanded_channels,
                norm_layer=norm_layer,
                activation_layer=activation,
            )
        )
        if cnf.use_se:
            squeeze_channels = _make_divisible(cnf.expanded_channels // 4, 8)
            layers.append(SqueezeExcitation(cnf.expanded_channels, squeeze_channels))
        layers.append(
            Conv2dNormActivation(
                cnf.expanded_channels,
                cnf.out_channels,
                kernel_size=1,
                norm_layer=norm_layer,
                activation_layer=None,
            )
        )
        self.block = nn.Sequential(*layers)
        self.out_channels = cnf.out_channels

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        result: torch.Tensor = self.block(input)
        if self.use_res_connect:
            result += input
        return result


def _small_settings(width_mult: float) -> tuple[list[BlockConfig], int]:
    """torchvision's ``mobilenet_v3_small`` rows and last channel at ``width_mult``."""
    rows = [
        (16, 3, 16, 16, True, "RE", 2),
        (16, 3, 72, 24, False, "RE", 2),
        (24, 3, 88, 24, False, "RE", 1),
        (24, 5, 96, 40, True, "HS", 2),
        (40, 5, 240, 40, True, "HS", 1),
        (40, 5, 240, 40, True, "HS", 1),
        (40, 5, 120, 48, True, "HS", 1),
        (48, 5, 144, 48, True, "HS", 1),
        (48, 5, 288, 96, True, "HS", 2),
        (96, 5, 576, 96, True, "HS", 1),
        (96, 5, 576, 96, True, "HS", 1),
    ]
    settings = [BlockConfig.scaled(width_mult, *row) for row in rows]
    return settings, _make_divisible(1024 * width_mult, 8)


class MobileNetV3(nn.Module):
    """torchvision's ``MobileNetV3`` (``features``, ``avgpool``, ``classifier``), with
    ``extra_dropout``: a ``Dropout(extra_dropout)`` in front of the classifier's
    ``Dropout(0.2)``."""

    def __init__(
        self,
        width_mult: float = 0.25,
        num_classes: int = 10,
        extra_dropout: float | None = None,
    ) -> None:
        super().__init__()
        settings, last_channel = _small_settings(width_mult)
        norm_layer = partial(nn.BatchNorm2d, eps=0.001, momentum=0.01)
        first = settings[0].input_channels
        layers: list[nn.Module] = [
            Conv2dNormActivation(
                3,
                first,
                kernel_size=3,
                stride=2,
                norm_layer=norm_layer,
                activation_layer=nn.Hardswish,
            )
        ]
        layers += [InvertedResidual(cnf, norm_layer) for cnf in settings]
        lastconv_input = settings[-1].out_channels
        lastconv_output = 6 * lastconv_input
        layers.append(
            Conv2dNormActivation(
                lastconv_input,
                lastconv_output,
                kernel_size=1,
                norm_layer=norm_layer,
                activation_layer=nn.Hardswish,
            )
        )
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        dropouts = [] if extra_dropout is None else [nn.Dropout(extra_dropout)]
        self.classifier = nn.Sequential(
            nn.Linear(lastconv_output, last_channel),
            nn.Hardswish(inplace=True),
            *dropouts,
            nn.Dropout(p=0.2, inplace=True),
            nn.Linear(last_channel, num_classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.avgpool(self.features(x))
        return self.classifier(torch.flatten(x, 1))  # type: ignore[no-any-return]


def mobilenet_v3_small_case(extra_dropout: float | None = None) -> Case:
    """The MobileNetV3-small case (``extra_dropout``: see :class:`MobileNetV3`); seeded,
    so two calls build the same weights and inputs."""
    torch.manual_seed(0)
    model = MobileNetV3(extra_dropout=extra_dropout).eval()
    return Case("mobilenet_v3_small", model, (torch.randn(1, 3, 32, 32),))


@register("mobilenet_v3_small")
def mobilenet_v3_small() -> Case:
    """MobileNetV3-small (torchvision's layout and names, a quarter of its widths)."""
    return mobilenet_v3_small_case()
