"""The cyclic collector is held off during a capture and a draw, and put back as it was."""

from __future__ import annotations

import gc

import pytest
import torch
from torch import nn

from pytest_tlgraph import capture
from pytest_tlgraph.collector import collector_paused
from pytest_tlgraph.errors import TraceError


class _Probe(nn.Module):
    """Notes whether the collector runs while its forward does."""

    def __init__(self, fail: bool = False) -> None:
        super().__init__()
        self.seen: list[bool] = []
        self.fail = fail

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.seen.append(gc.isenabled())
        if self.fail:
            raise ValueError("broken model")
        return x * 2


def test_capture_pauses_the_collector_and_turns_it_back_on() -> None:
    assert gc.isenabled()
    probe = _Probe()
    trace = capture(probe, torch.ones(2))
    assert probe.seen == [False]
    assert gc.isenabled()
    trace.draw()
    assert gc.isenabled()


def test_a_failing_capture_turns_the_collector_back_on() -> None:
    with pytest.raises(TraceError):
        capture(_Probe(fail=True), torch.ones(2))
    assert gc.isenabled()


def test_a_collector_the_caller_disabled_stays_disabled() -> None:
    gc.disable()
    try:
        capture(_Probe(), torch.ones(2)).draw()
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


@pytest.mark.parametrize("options", [{}, {"color_by": "flops"}, {"collapse": "auto"}])
def test_a_capture_and_a_drawing_leave_no_reference_cycles(options: dict[str, object]) -> None:
    # With the collector paused while they run, a cycle would outlive the stage with
    # every record it reaches until some later collection: all of it must be freed by
    # reference counting the moment it is dropped.
    from tests.models import CNN, seeded

    model, x = seeded(CNN()).eval(), torch.randn(2, 3, 16, 16)
    assert capture(model, x).draw(**options).dot  # warm: first-use caches are not garbage
    gc.collect()
    assert capture(model, x).draw(**options).dot
    assert gc.collect() == 0
