"""Traces of the shared test models that many unit test modules draw from.

Module-scoped: each test module captures its own (a ``Trace`` is frozen, so tests cannot
disturb one another), and a module may define a fixture of the same name to override one.
"""

from __future__ import annotations

import pytest
import torch

from pytest_tlgraph import Trace
from pytest_tlgraph.capture import capture
from tests.models import CNN, MLP, RecurrentCell, seeded


@pytest.fixture(scope="module")
def mlp() -> Trace:
    """``MLP`` on a batch of two."""
    return capture(seeded(MLP()), torch.randn(2, 8), magnitudes=True)


@pytest.fixture(scope="module")
def cnn() -> Trace:
    """``CNN`` (train mode) on one 3x8x8 image."""
    return capture(seeded(CNN()), torch.randn(1, 3, 8, 8), magnitudes=True)


@pytest.fixture(scope="module")
def recurrent() -> Trace:
    """``RecurrentCell`` on a batch of two, with its backward pass."""
    return capture(seeded(RecurrentCell()), torch.randn(2, 8), backward=True, magnitudes=True)
