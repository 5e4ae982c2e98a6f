"""``did you mean`` on mistyped option values and names."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from pytest_tlgraph.capture import capture
from pytest_tlgraph.errors import EncodingRefusal
from pytest_tlgraph.suggest import did_you_mean


def test_close_values_are_suggested() -> None:
    assert did_you_mean("flop", ["flops", "bytes", "time"]) == " (did you mean 'flops'?)"
    assert did_you_mean("FLOPS", ["flops", "bytes"]) == " (did you mean 'flops'?)"
    assert did_you_mean("xyz", ["flops", "bytes"]) == ""
    assert did_you_mean(3, ["flops"]) == ""
    assert did_you_mean("auot", [None, "auto", "max"]) == " (did you mean 'auto'?)"


@pytest.mark.parametrize(
    ("options", "error", "suggestion"),
    [
        ({"color_by": "flop"}, EncodingRefusal, "did you mean 'flops'?"),
        ({"page": "drak"}, ValueError, "did you mean 'dark'?"),
        ({"colour_by": "flops"}, TypeError, "did you mean 'color_by'?"),
    ],
)
def test_draw_errors_suggest(options: dict[str, str], error: type, suggestion: str) -> None:
    trace = capture(nn.Linear(2, 2), torch.zeros(1, 2))
    with pytest.raises(error, match=suggestion.replace("?", r"\?")):
        trace.draw(**options)
