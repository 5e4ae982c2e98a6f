"""Module names from every code point class always give DOT that is valid, one
statement a line, reads back unchanged and renders."""

from __future__ import annotations

import unicodedata

import torch
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from pytest_tlgraph.capture import capture
from pytest_tlgraph.render import render_png
from tests.drawn import reads_back
from tests.models import NamedBlocks as Blocks
from tests.robustness.strategies import module_names


@settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(st.lists(module_names(), min_size=1, max_size=3, unique=True))
def test_any_module_name_gives_valid_dot(names: list[str]) -> None:
    try:
        model = Blocks(names)
    except KeyError:  # the name of an existing attribute ("training", "forward", ...)
        assume(False)
        raise
    drawing = capture(model, torch.zeros(1, 2)).draw()
    dot = drawing.dot
    dot.encode("utf-8")
    assert dot.splitlines() == dot.split("\n")[:-1]
    assert not any(unicodedata.category(c) in ("Cc", "Cs") and c not in "\t\n" for c in dot)
    assert reads_back(drawing)
    assert render_png(dot, renderer="pure").startswith(b"\x89PNG")
