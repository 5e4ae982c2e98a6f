"""Real changes on corpus models: each entry builds a model before and after one edit.

The structural comparison is tested on these (issue 23): a block inserted in a ResNet
stage, a same-type layer inserted in front of one of its kind, an activation swapped, a
kernel changed in every block, a width change, a stem kernel change. Every factory builds
both sides fresh and seeded; the two sides read the same input tensor values.

    from tests.corpus.changes import CHANGES
    before, after = CHANGES["block_inserted"]()
"""

from __future__ import annotations

from collections.abc import Callable

from torch import nn

from tests.corpus.models_faithful_collapse import resnet18_basic_case
from tests.corpus.models_mobilenet import mobilenet_v3_small_case
from tests.corpus.registry import Case

__all__ = ["CHANGES", "Change"]

#: A factory of one change: the case before and the case after it.
Change = Callable[[], tuple[Case, Case]]


def _pair(before: Case, after: Case, label: str) -> tuple[Case, Case]:
    """``before`` and ``after``, the after side named ``label`` and reading a copy of the
    before side's inputs (building a different model draws other random numbers)."""
    after.name = f"{before.name}[{label}]"
    after.inputs = tuple(x.clone() for x in before.inputs)
    return before, after


def block_inserted() -> tuple[Case, Case]:
    """ResNet-18 whose ``layer1`` grows from 2 ``BasicBlock`` s to 3."""
    return _pair(resnet18_basic_case(), resnet18_basic_case(layers=(3, 2, 2, 2)), "layer1 x3")


def same_type_inserted() -> tuple[Case, Case]:
    """MobileNetV3-small with a ``Dropout(0.1)`` in front of the classifier's
    ``Dropout(0.2)``."""
    return _pair(mobilenet_v3_small_case(), mobilenet_v3_small_case(extra_dropout=0.1), "+dropout")


def activation_swapped() -> tuple[Case, Case]:
    """ResNet-18 with ``ReLU`` -> ``SiLU`` in every ``BasicBlock`` (the stem keeps its
    ReLU)."""
    after = resnet18_basic_case(lambda: nn.SiLU(inplace=True))
    return _pair(resnet18_basic_case(), after, "silu")


def kernel_changed() -> tuple[Case, Case]:
    """ResNet-18 whose ``BasicBlock`` convolutions are 5x5 (padding 2) in every block."""
    return _pair(resnet18_basic_case(), resnet18_basic_case(block_kernel=5), "block kernel 5")


def width_changed() -> tuple[Case, Case]:
    """ResNet-18 with base width 8 -> 16 (every stage twice as wide)."""
    return _pair(resnet18_basic_case(), resnet18_basic_case(base=16), "base 16")


def stem_kernel_changed() -> tuple[Case, Case]:
    """ResNet-18 with a 5x5 stem convolution (padding 2) instead of 7x7 (padding 3)."""
    return _pair(resnet18_basic_case(), resnet18_basic_case(stem_kernel=5), "stem kernel 5")


#: Every change by name, in the order of issue 23's "Done when".
CHANGES: dict[str, Change] = {
    "block_inserted": block_inserted,
    "same_type_inserted": same_type_inserted,
    "activation_swapped": activation_swapped,
    "kernel_changed": kernel_changed,
    "width_changed": width_changed,
    "stem_kernel_changed": stem_kernel_changed,
}
