"""Full-size production configs on the meta device: capture, the auto drawing, FLOPs.

Each model is built once per module (the builds dominate: 8 B to 671 B parameters of
metadata, seconds each) and captured once.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from pytest_tlgraph import capture
from pytest_tlgraph.capture.flops import COUNTED_FUNCS
from pytest_tlgraph.trace import Trace
from tests.corpus.production_configs import PRODUCTION, build_production, meta_inputs

_built: dict[str, tuple[torch.nn.Module, Trace]] = {}


def production(name: str) -> tuple[torch.nn.Module, Trace]:
    """The meta model of ``name`` and its trace, built and captured once per process."""
    if name not in _built:
        model = build_production(name)
        args, kwargs = meta_inputs()
        _built[name] = (model, capture(model, args, kwargs=kwargs))
    return _built[name]


@pytest.mark.parametrize("name", sorted(PRODUCTION))
def test_a_production_config_captures_on_meta_without_reading_values(name: str) -> None:
    model, trace = production(name)
    assert all(p.is_meta for p in model.parameters())
    assert not trace.values and not trace.magnitudes
    assert all(op.magnitude is None and op.grad_norm is None for op in trace.ops)
    assert trace.param_count == sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize("name", sorted(PRODUCTION))
def test_the_auto_drawing_fits_and_folds_every_decoder_layer(name: str) -> None:
    _, trace = production(name)
    spec = PRODUCTION[name]
    drawing = trace.draw(collapse="auto")
    assert len(drawing.nodes) <= 60
    folds = []
    # Inner HTML tags (a bold count, a font) are dropped: the words are what counts.
    plain = re.sub(r"</?(?:b|i|u|font|br)\b[^<>]*>", " ", drawing.dot, flags=re.IGNORECASE)
    for label in re.findall(r"label=<([^<>]*)>", plain):
        span = re.search(rf"@model\.layers\.(\d+)-(\d+) \({spec.layer_class}\)", label)
        count = re.search(r"(?:^|\s)x(\d+)(?:\s|$)", label)
        if span and count:
            folds.append((int(count[1]), int(span[1]), int(span[2])))
    assert folds, drawing.dot
    # Every fold counts the layers it spans; together they hold every decoder layer.
    assert all(count == last - first + 1 for count, first, last in folds), folds
    covered = sorted(i for _, first, last in set(folds) for i in range(first, last + 1))
    drawn_alone = {int(i) for i in re.findall(r"@model\.layers\.(\d+)\b(?!-)", drawing.dot)}
    assert sorted({*covered, *drawn_alone}) == list(range(spec.layers)), (folds, drawn_alone)
    if name != "deepseek-v3":  # DeepSeek's first three layers are dense, the rest MoE
        assert (spec.layers, 0, spec.layers - 1) in folds


def _torch_flops(model: torch.nn.Module, args: Any, kwargs: Any) -> int:
    with FlopCounterMode(display=False) as counter:
        model(*args, **kwargs)
    return int(counter.get_total_flops())


@pytest.mark.parametrize("name", sorted(PRODUCTION))
def test_flops_equal_torchs_counter_on_the_same_meta_forward(name: str) -> None:
    model, trace = production(name)
    args, kwargs = meta_inputs()
    ours = sum(op.flops_forward or 0 for op in trace.ops if op.func in COUNTED_FUNCS)
    assert ours == _torch_flops(model, args, kwargs) > 0
