"""Captured corpus traces, each captured once per process (drawing tests share them)."""

from __future__ import annotations

import functools

from pytest_tlgraph import capture
from pytest_tlgraph.trace import Trace
from tests.corpus.registry import build

__all__ = ["corpus_trace"]


@functools.cache
def corpus_trace(name: str, *, magnitudes: bool = False) -> Trace:
    """The trace of corpus entry ``name``'s forward pass (``magnitudes``: measured)."""
    case = build(name)
    return capture(case.model, case.inputs, kwargs=case.kwargs, magnitudes=magnitudes)
