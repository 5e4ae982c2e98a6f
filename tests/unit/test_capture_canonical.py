"""Calls the model orders by hashing get one canonical order (issue 30, item 9)."""

from __future__ import annotations

import torch
from torch import nn

from pytest_tlgraph import capture
from pytest_tlgraph.trace import Trace


class Rotary(nn.Module):
    """One buffer per kind, read by the call for that kind (Gemma3's rotary embedding)."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("full_freq", torch.arange(4.0), persistent=False)
        self.register_buffer("sliding_freq", torch.arange(4.0) + 1, persistent=False)

    def forward(self, x: torch.Tensor, kind: str) -> torch.Tensor:
        return (x * getattr(self, f"{kind}_freq")).cos()


class Model(nn.Module):
    """Calls ``rotary`` for each kind in ``order``, then uses both."""

    def __init__(self, order: tuple[str, ...], chained: bool = False) -> None:
        super().__init__()
        self.rotary = Rotary()
        self.order = order
        self.chained = chained

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: dict[str, torch.Tensor] = {}
        for kind in self.order:
            source = out[self.order[0]] if self.chained and out else x
            out[kind] = self.rotary(source, kind)
        return out["full"] + 2 * out["sliding"]


def _trace(order: tuple[str, ...], chained: bool = False) -> Trace:
    return capture(Model(order, chained), (torch.randn(2, 4),))


def _constants(trace: Trace, label: str) -> list[str]:
    """The buffers (non-persistent: drawn as ``const`` records) that op ``label`` reads."""
    return [
        arg.text
        for parent in trace.op(label).parents
        if trace.op(parent).func == "const"
        for arg in trace.op(parent).call
        if arg.name == "buffer"
    ]


def test_independent_calls_of_one_module_draw_in_one_order_whatever_order_they_ran() -> None:
    first, second = _trace(("full", "sliding")), _trace(("sliding", "full"))
    assert first.draw().dot == second.draw().dot
    assert first.draw(collapse="auto").dot == second.draw(collapse="auto").dot
    # The call reading full_freq comes first: its ops, labels and call number.
    call = next(c for c in second.modules if c.key == ("rotary", 1))
    assert [name for label in call.ops for name in _constants(second, label)] == [
        "rotary.full_freq"
    ]
    assert [op.index for op in second.ops] == list(range(len(second.ops)))
    mul = second.op("mul_1:1")
    assert _constants(second, "mul_1:1") == ["rotary.full_freq"]
    assert mul.parents == ("input_1", "const_1")
    # The constants are labelled in the canonical order of their readers too.
    assert _constants(second, "mul_1:2") == ["rotary.sliding_freq"]
    assert second.op("mul_1:2").parents == ("input_1", "const_2")
    assert second.op("mul_2").parents == ("cos_1:2",)  # 2 * out["sliding"]


def test_calls_that_read_one_another_keep_the_order_they_ran_in() -> None:
    # The second call reads the first's output: the order is the model's, not hashing's.
    trace = _trace(("sliding", "full"), chained=True)
    first = next(c for c in trace.modules if c.key == ("rotary", 1))
    assert _constants(trace, first.ops[0]) == ["rotary.sliding_freq"]
