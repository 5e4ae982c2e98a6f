"""Whole-sequence RNN FLOPs by formula: equal to torch's counter on the decomposition."""

from __future__ import annotations

import sys
import warnings

import pytest
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence
from torch.utils.flop_counter import FlopCounterMode

from pytest_tlgraph.capture import capture
from pytest_tlgraph.capture.flops import RNN_FUNCS

flops = sys.modules["pytest_tlgraph.capture.flops"]

CONFIGS = {
    "lstm": lambda: nn.LSTM(6, 5),
    "lstm 2 layers bidirectional": lambda: nn.LSTM(6, 5, num_layers=2, bidirectional=True),
    "lstm projections": lambda: nn.LSTM(6, 8, num_layers=2, proj_size=3, bidirectional=True),
    "lstm batch first no bias": lambda: nn.LSTM(6, 5, batch_first=True, bias=False),
    "gru 3 layers": lambda: nn.GRU(6, 5, num_layers=3),
    "gru bidirectional batch first": lambda: nn.GRU(6, 4, bidirectional=True, batch_first=True),
    "rnn tanh": lambda: nn.RNN(6, 5, num_layers=2),
    "rnn relu bidirectional": lambda: nn.RNN(6, 5, nonlinearity="relu", bidirectional=True),
}


def _torch_count(model: nn.Module, x: object) -> int:
    """torch's counter on the non-fused RNN path (its table lists no oneDNN kernel)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with torch.backends.mkldnn.flags(enabled=False), FlopCounterMode(display=False) as c:
            model(x)
    return int(c.get_total_flops())


def _recurrent_flops(model: nn.Module, x: object) -> int:
    trace = capture(model, (x,))  # one argument, even a PackedSequence (a tuple)
    (op,) = [op for op in trace.ops if op.func in RNN_FUNCS]
    assert op.flops_forward is not None
    return op.flops_forward


@pytest.mark.filterwarnings("ignore:LSTM with projections is not supported with oneDNN")
@pytest.mark.parametrize("name", sorted(CONFIGS))
@pytest.mark.parametrize("packed", [False, True])
def test_the_formula_equals_torchs_counter(name: str, packed: bool) -> None:
    torch.manual_seed(0)
    model = CONFIGS[name]().eval()
    batch_first = bool(getattr(model, "batch_first", False))
    x = torch.randn(3, 7, 6) if batch_first else torch.randn(7, 3, 6)
    inputs: object = x
    if packed:
        inputs = pack_padded_sequence(x, [7, 5, 2], batch_first=batch_first)
    assert _recurrent_flops(model, inputs) == _torch_count(model, inputs)


def test_no_replay_runs_for_a_recurrent_call(monkeypatch: pytest.MonkeyPatch) -> None:
    # The replay's fused-kernel fallback runs the decomposition on meta tensors, whose
    # first run in a process imports sympy: a recurrent call never reaches it.
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("an RNN call was replayed")

    monkeypatch.setattr(flops, "_replay", refuse)
    model = nn.LSTM(6, 5, num_layers=2, bidirectional=True).eval()
    assert _recurrent_flops(model, torch.randn(7, 3, 6)) > 0


def test_a_call_of_an_unexpected_form_is_not_counted_by_formula() -> None:
    assert flops.rnn_flops((torch.randn(2, 3),), {}) is None
    assert flops.rnn_flops((torch.randn(7, 3, 6), None, [torch.randn(4)], True, 1), {}) == 0
    assert flops.rnn_flops((torch.randn(7, 6), None, [1, 2], True, 1), {}) is None
