"""The real changes of tests/corpus/changes.py (issue 23's test data): every variant
builds and runs, the options that build them leave the default models unchanged, and each
"after" differs from its "before" in exactly the intended way at the model level."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from pytest_tlgraph import capture
from tests.corpus.changes import CHANGES
from tests.corpus.models_faithful_collapse import BasicBlock, resnet18_basic_case
from tests.corpus.models_mobilenet import (
    Conv2dNormActivation,
    InvertedResidual,
    SqueezeExcitation,
    mobilenet_v3_small_case,
)
from tests.corpus.registry import Case, build

BLOCKS = [f"layer{i}.{j}" for i in range(1, 5) for j in range(2)]
BLOCK_CONVS = {f"{block}.{conv}" for block in BLOCKS for conv in ("conv1", "conv2")}


def _modules(model: nn.Module) -> dict[str, str]:
    """Every submodule by qualified name: its class and its own constructor args."""
    return {
        name: f"{type(module).__name__}({module.extra_repr()})"
        for name, module in model.named_modules()
    }


def _get(case: Case, name: str) -> nn.Module:
    """Submodule ``name`` of the case's model."""
    return case.model.get_submodule(name)


def _conv(case: Case, name: str) -> nn.Conv2d:
    """Convolution ``name`` of the case's model."""
    conv = _get(case, name)
    assert isinstance(conv, nn.Conv2d), name
    return conv


def _delta(before: Case, after: Case) -> tuple[set[str], set[str], set[str]]:
    """The submodules added, removed and changed (class or args) from before to after."""
    old, new = _modules(before.model), _modules(after.model)
    changed = {name for name in old.keys() & new.keys() if old[name] != new[name]}
    return set(new) - set(old), set(old) - set(new), changed


def _dot(case: Case, **options: object) -> str:
    return capture(case.model, case.inputs, kwargs=case.kwargs or None).draw(**options).dot


@pytest.mark.parametrize("name", list(CHANGES))
def test_both_sides_build_fresh_and_run_on_the_same_inputs(name: str) -> None:
    before, after = CHANGES[name]()
    again, _ = CHANGES[name]()
    assert before.model is not again.model
    for key, value in before.model.state_dict().items():
        assert torch.equal(value, again.model.state_dict()[key]), key
    assert len(before.inputs) == len(after.inputs) == 1
    assert torch.equal(before.inputs[0], after.inputs[0])
    assert before.inputs[0] is not after.inputs[0]
    with torch.no_grad():
        assert before.run().shape == after.run().shape == (1, 10)
    assert not before.model.training and not after.model.training


@pytest.mark.parametrize("name", list(CHANGES))
def test_the_two_sides_draw_differently(name: str) -> None:
    before, after = CHANGES[name]()
    assert _dot(before) != _dot(after)


@pytest.mark.parametrize("options", [{}, {"collapse": "auto"}, {"depth": 2}])
def test_the_options_at_their_defaults_draw_the_corpus_resnet(options: dict[str, object]) -> None:
    plain = resnet18_basic_case()
    spelled = resnet18_basic_case(
        lambda: nn.ReLU(inplace=True), 7, layers=(2, 2, 2, 2), block_kernel=3, base=8
    )
    assert _modules(spelled.model) == _modules(plain.model)
    assert _dot(spelled, **options) == _dot(plain, **options)
    assert _dot(build("resnet18_basic"), **options) == _dot(plain, **options)


def test_the_before_sides_are_the_corpus_entries() -> None:
    corpus = {
        "resnet18_basic": build("resnet18_basic"),
        "mobilenet_v3_small": build("mobilenet_v3_small"),
    }
    for name, change in CHANGES.items():
        before, _ = change()
        entry = corpus[before.name]
        assert _modules(before.model) == _modules(entry.model), name
        assert torch.equal(before.inputs[0], entry.inputs[0]), name
    assert _dot(mobilenet_v3_small_case()) == _dot(corpus["mobilenet_v3_small"])


def test_block_inserted_adds_a_third_basic_block_to_layer1_and_nothing_else() -> None:
    before, after = CHANGES["block_inserted"]()
    count = [sum(isinstance(m, BasicBlock) for m in c.model.modules()) for c in (before, after)]
    assert count == [8, 9]
    added, removed, changed = _delta(before, after)
    parts = ("conv1", "bn1", "relu", "conv2", "bn2")
    assert added == {"layer1.2", *(f"layer1.2.{part}" for part in parts)}
    assert (removed, changed) == (set(), set())
    assert [len(getattr(after.model, f"layer{i}")) for i in range(1, 5)] == [3, 2, 2, 2]
    assert _get(after, "layer1.2").downsample is None


def test_same_type_inserted_puts_a_dropout_in_front_of_the_classifiers_dropout() -> None:
    before, after = CHANGES["same_type_inserted"]()

    def layout(case: Case) -> list[str]:
        return [_modules(child)[""] for child in _get(case, "classifier").children()]

    assert layout(before) == [
        "Linear(in_features=144, out_features=256, bias=True)",
        "Hardswish()",
        "Dropout(p=0.2, inplace=True)",
        "Linear(in_features=256, out_features=10, bias=True)",
    ]
    assert len(list(_get(after, "classifier").children())) == 5
    inserted = "Dropout(p=0.1, inplace=False)"
    assert layout(after) == [*layout(before)[:2], inserted, *layout(before)[2:]]
    # Everything in front of the classifier is the same model, weights and all.
    assert _modules(_get(after, "features")) == _modules(_get(before, "features"))
    old, new = _get(before, "features").state_dict(), _get(after, "features").state_dict()
    for key, value in old.items():
        assert torch.equal(value, new[key]), key


def test_the_mobilenet_follows_torchvisions_names() -> None:
    model = build("mobilenet_v3_small").model
    modules = dict(model.named_modules())
    assert isinstance(modules["features.0"], Conv2dNormActivation)
    assert isinstance(modules["features.12"], Conv2dNormActivation)
    blocks = [f"features.{i}" for i in range(1, 12)]
    assert all(isinstance(modules[name], InvertedResidual) for name in blocks)
    with_se = [name for name in blocks if isinstance(modules[f"{name}.block.2"], SqueezeExcitation)]
    assert with_se == [f"features.{i}" for i in range(4, 12)]
    se = modules["features.1.block.1"]
    assert isinstance(se, SqueezeExcitation)
    assert {"features.1.block.1.fc1", "features.1.block.1.fc2"} <= modules.keys()
    # Depthwise convs: features.N.block.1.0 where the block expands, groups = channels.
    depthwise = modules["features.4.block.1.0"]
    assert isinstance(depthwise, nn.Conv2d)
    assert depthwise.groups == depthwise.in_channels == depthwise.out_channels
    assert depthwise.kernel_size == (5, 5)
    assert {"avgpool", "classifier"} <= modules.keys()
    # A residual add where the stride is 1 and the width stays; at a quarter width 40 and
    # 48 both round to 16 channels, so features.7 has one too (as torchvision's would).
    residual = [name for name in blocks if modules[name].use_res_connect]
    assert residual == [f"features.{i}" for i in (3, 5, 6, 7, 8, 10, 11)]


def test_activation_swapped_changes_every_block_activation_and_not_the_stem() -> None:
    before, after = CHANGES["activation_swapped"]()
    added, removed, changed = _delta(before, after)
    assert (added, removed) == (set(), set())
    assert changed == {f"{block}.relu" for block in BLOCKS}
    modules = _modules(after.model)
    assert {modules[name] for name in changed} == {"SiLU(inplace=True)"}
    assert {_modules(before.model)[name] for name in changed} == {"ReLU(inplace=True)"}
    assert modules["relu"] == "ReLU(inplace=True)"


def test_kernel_changed_makes_every_block_conv_5x5_and_nothing_else() -> None:
    before, after = CHANGES["kernel_changed"]()
    added, removed, changed = _delta(before, after)
    assert (added, removed, changed) == (set(), set(), BLOCK_CONVS)
    for name in BLOCK_CONVS:
        conv = _conv(after, name)
        assert (conv.kernel_size, conv.padding) == ((5, 5), (2, 2)), name
    assert _conv(after, "conv1").kernel_size == (7, 7)
    assert _conv(after, "layer2.0.downsample.0").kernel_size == (1, 1)


def test_width_changed_doubles_every_width_and_keeps_the_layout() -> None:
    before, after = CHANGES["width_changed"]()
    added, removed, changed = _delta(before, after)
    assert (added, removed) == (set(), set())
    weighted = (nn.Conv2d, nn.BatchNorm2d, nn.Linear)
    modules = dict(before.model.named_modules())
    assert changed == {name for name, m in modules.items() if isinstance(m, weighted)}
    assert (_conv(before, "conv1").out_channels, _conv(after, "conv1").out_channels) == (8, 16)
    assert [_get(case, "fc").in_features for case in (before, after)] == [64, 128]
    assert _conv(after, "layer4.1.conv2").out_channels == 128


def test_stem_kernel_changed_changes_the_stem_conv_only() -> None:
    before, after = CHANGES["stem_kernel_changed"]()
    assert _delta(before, after) == (set(), set(), {"conv1"})
    conv = _conv(after, "conv1")
    assert (conv.kernel_size, conv.padding) == ((5, 5), (2, 2))
    assert _conv(before, "conv1").kernel_size == (7, 7)
