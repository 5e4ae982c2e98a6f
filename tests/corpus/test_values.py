"""Values a model keeps in tensors count, and a drawing never depends on what ran before
it, on the corpus families made for it (issue 39): GPT-NeoX's rotary base, a DDPM
noise schedule, a dynamically quantized MLP, BEiT's cached relative position index."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch import nn

from pytest_tlgraph import capture
from pytest_tlgraph.diff.view.comparison import compare
from pytest_tlgraph.diff.view.story import story_lines
from tests.corpus.models_values import (
    DDPMLoop,
    Schedule,
    beit_model,
    neox_model,
    quantized_mlp,
)
from tests.corpus.value_mutations import clear_caches

_VIEWS: tuple[dict[str, Any], ...] = ({}, {"collapse": "auto"}, {"depth": 1})


def _dots(model: nn.Module, *inputs: Any) -> list[str]:
    trace = capture(model.eval(), inputs)
    return [trace.draw(**view).dot for view in _VIEWS]


def _seeded(seed: int, build: Any, *args: Any) -> nn.Module:
    torch.manual_seed(seed)
    return build(*args)  # type: ignore[no-any-return]


def test_a_rotary_base_changes_every_view_and_a_retrain_none() -> None:
    ids = torch.randint(0, 96, (1, 8))
    base = _dots(_seeded(0, neox_model, 10000.0), ids)
    other_base = _dots(_seeded(0, neox_model, 20000.0), ids)
    retrained = _dots(_seeded(1, neox_model, 10000.0), ids)
    assert all(a != b for a, b in zip(base, other_base, strict=True))
    assert retrained == base
    line = story_lines(compare(base[0], other_base[0]))[0]
    assert line.startswith("const_") and "(constant, " in line and ": values changed (#" in line


def test_a_noise_schedule_on_a_scheduler_object_changes_every_view() -> None:
    x = torch.randn(2, 8)
    base = _dots(_seeded(0, lambda: DDPMLoop(Schedule(beta_end=0.02))), x)
    changed = _dots(_seeded(0, lambda: DDPMLoop(Schedule(beta_end=0.04))), x)
    reseeded = _dots(_seeded(3, lambda: DDPMLoop(Schedule(beta_end=0.02))), x)
    assert all(a != b for a, b in zip(base, changed, strict=True))
    assert reseeded == base


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_per_tensor_and_per_channel_quantization_draw_differently() -> None:
    from torch.ao.quantization import per_channel_dynamic_qconfig

    x = torch.randn(2, 8)
    per_tensor = _dots(_seeded(0, quantized_mlp), x)
    per_channel = _dots(_seeded(0, quantized_mlp, per_channel_dynamic_qconfig), x)
    assert all(a != b for a, b in zip(per_tensor, per_channel, strict=True))
    assert _dots(_seeded(1, quantized_mlp), x) == per_tensor


def test_beit_draws_the_same_cold_and_warm_in_one_process() -> None:
    """The first BEiT forward in a process computes its relative position index under
    an LRU cache shared by every instance; every later one receives it."""
    x = torch.randn(1, 3, 32, 32)
    model = _seeded(0, beit_model)
    assert clear_caches(model) > 0
    cold_trace = capture(model.eval(), (x,))
    warm_trace = capture(_seeded(0, beit_model).eval(), (x,))
    for view in _VIEWS:
        assert cold_trace.draw(**view).dot == warm_trace.draw(**view).dot
    # The index is one constant, read by the bias of each layer.
    consts = [op for op in warm_trace.ops if op.func == "const"]
    assert len(consts) == 1 and consts[0].shape == (289,)
    assert not any(op.func in ("meshgrid", "arange") for op in cold_trace.ops)
