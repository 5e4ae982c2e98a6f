"""Real changes on corpus models: each entry builds a model before and after one edit.

The structural comparison is tested on these: a block inserted in a ResNet stage, a
same-type layer inserted in front of one of its kind, an activation swapped, a kernel
changed in every block, a width change, a stem kernel change (:data:`CHANGES`); and the
edits that move things around (:data:`MOVES`): a block inserted at a stage's head or in
its middle, a block removed, two blocks swapped, a fold broken by one changed
repetition (a ResNet stage, a Llama decoder and OLMo2's), a fold's count changed, a box with
parameters moved to another address, two layers run in the other order, and q/k/v
projections moved into a helper that runs them in another order. Every factory builds
both sides fresh and seeded; the two sides read the same input tensor values.

    from tests.corpus.changes import CHANGES
    before, after = CHANGES["block_inserted"]()
"""

from __future__ import annotations

import copy
import types
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from tests.corpus.models_faithful_collapse import resnet18_basic_case
from tests.corpus.models_mobilenet import mobilenet_v3_small_case
from tests.corpus.registry import Case, build

__all__ = ["CHANGES", "MOVES", "Change"]

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


def _forward(module: nn.Module, forward: Callable[..., Any]) -> None:
    """Run ``module`` with ``forward`` (the model's code edited, its weights kept)."""
    module.forward = types.MethodType(forward, module)  # type: ignore[method-assign]


def head_inserted() -> tuple[Case, Case]:
    """ResNet-18 with a copy of ``layer1.1`` (a ``BasicBlock`` of ``layer1``'s width) in
    front of ``layer2.0``: every block of ``layer2`` moves one index on."""
    after = resnet18_basic_case()
    stage = after.model.layer2
    stage.insert(0, copy.deepcopy(after.model.layer1[1]))
    return _pair(resnet18_basic_case(), after, "layer2 head insert")


def middle_inserted() -> tuple[Case, Case]:
    """ResNet-18 with a copy of ``layer2.1`` inserted between ``layer2.0`` and it."""
    after = resnet18_basic_case()
    after.model.layer2.insert(1, copy.deepcopy(after.model.layer2[1]))
    return _pair(resnet18_basic_case(), after, "layer2 middle insert")


def block_removed() -> tuple[Case, Case]:
    """ResNet-18 without ``layer3.1``."""
    after = resnet18_basic_case()
    del after.model.layer3[1]
    return _pair(resnet18_basic_case(), after, "no layer3.1")


def _gelu_second_block() -> Case:
    case = resnet18_basic_case()
    case.model.layer1[1].relu = nn.GELU()
    return case


def blocks_swapped() -> tuple[Case, Case]:
    """ResNet-18 whose ``layer1.1`` runs GELU, before and after ``layer1.0`` and
    ``layer1.1`` swap places."""
    after = _gelu_second_block()
    stage = after.model.layer1
    stage[0], stage[1] = stage[1], stage[0]
    return _pair(_gelu_second_block(), after, "layer1 swapped")


def fold_broken() -> tuple[Case, Case]:
    """ResNet-18 with four blocks in ``layer1`` (auto folds them), the third running
    GELU in the after side."""
    after = resnet18_basic_case(layers=(4, 2, 2, 2))
    after.model.layer1[2].relu = nn.GELU()
    return _pair(resnet18_basic_case(layers=(4, 2, 2, 2)), after, "layer1.2 gelu")


def fold_count_changed() -> tuple[Case, Case]:
    """ResNet-18 with four blocks in ``layer1``, then three."""
    before = resnet18_basic_case(layers=(4, 2, 2, 2))
    return _pair(before, resnet18_basic_case(layers=(3, 2, 2, 2)), "layer1 x3")


def _llama(layers: int = 4) -> Case:
    import transformers

    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=96, hidden_size=32, intermediate_size=64, num_hidden_layers=layers,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
        use_cache=False, attn_implementation="sdpa",
    )  # fmt: skip
    model = transformers.LlamaForCausalLM(config).eval()
    torch.manual_seed(1)
    return Case(f"llama_x{layers}", model, (torch.randint(0, 96, (1, 8)),))


def decoder_fold_broken() -> tuple[Case, Case]:
    """A four-layer Llama whose third decoder layer's MLP runs GELU instead of SiLU."""
    after = _llama()
    after.model.model.layers[2].mlp.act_fn = nn.GELU()
    return _pair(_llama(), after, "layers.2 gelu")


def olmo2_fold_broken() -> tuple[Case, Case]:
    """OLMo2 (the corpus entry, two decoder layers) whose second layer's MLP runs GELU."""
    after = build("olmo2")
    after.model.model.layers[1].mlp.act_fn = nn.GELU()
    return _pair(build("olmo2"), after, "layers.1 gelu")


def box_moved() -> tuple[Case, Case]:
    """ResNet-18 with an ``Identity`` in front of ``layer2``'s blocks: they keep their
    content and parameters and move one index on (the Identity runs no op)."""
    after = resnet18_basic_case()
    after.model.layer2.insert(0, nn.Identity())
    return _pair(resnet18_basic_case(), after, "identity in layer2")


def order_swapped() -> tuple[Case, Case]:
    """ResNet-18 whose stem runs ReLU before BatchNorm."""
    after = resnet18_basic_case()

    def forward(self: nn.Module, x: torch.Tensor) -> torch.Tensor:
        m: Any = self
        x = m.maxpool(m.bn1(m.relu(m.conv1(x))))
        x = m.layer4(m.layer3(m.layer2(m.layer1(x))))
        return m.fc(torch.flatten(m.avgpool(x), 1))  # type: ignore[no-any-return]

    _forward(after.model, forward)
    return _pair(resnet18_basic_case(), after, "relu before bn")


def helper_refactored() -> tuple[Case, Case]:
    """OPT-style attention whose q/k/v projections move into a helper that runs them
    value first: the same dataflow, its ops in another order."""
    after = build("kv_attention")
    attention: Any = after.model.attn

    def project(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        value = attention._split(attention.v_proj(x))
        key = attention._split(attention.k_proj(x))
        query = attention.q_proj(x) * (x.shape[-1] // attention.heads) ** -0.5
        return attention._split(query), key, value

    def forward(self: nn.Module, x: torch.Tensor) -> torch.Tensor:
        query, key, value = project(x)
        weights = torch.softmax(query @ key.transpose(-1, -2), dim=-1)
        out = (weights @ value).transpose(1, 2).flatten(2)
        return attention.out_proj(out)  # type: ignore[no-any-return]

    _forward(attention, forward)
    return _pair(build("kv_attention"), after, "qkv helper")


#: The edits that move things around, by name.
MOVES: dict[str, Change] = {
    "head_inserted": head_inserted,
    "middle_inserted": middle_inserted,
    "block_removed": block_removed,
    "blocks_swapped": blocks_swapped,
    "fold_broken": fold_broken,
    "decoder_fold_broken": decoder_fold_broken,
    "olmo2_fold_broken": olmo2_fold_broken,
    "fold_count_changed": fold_count_changed,
    "box_moved": box_moved,
    "order_swapped": order_swapped,
    "helper_refactored": helper_refactored,
}
