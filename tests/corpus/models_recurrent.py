"""Recurrent models unrolled in Python loops, written in plain torch after public code.

* ``script_lstm``: the LSTM of PyTorch's ``benchmarks/fastrnns/custom_lstms.py``
  (``LSTMCell``: ``mm`` of input and hidden state with the transposed weights, the
  biases added, ``chunk(4, 1)`` into the gates, ``sigmoid``/``tanh``; ``LSTMLayer``:
  the cell stepped over ``unbind(0)`` of a time-major sequence, outputs ``stack``-ed),
  two layers stacked.
* ``attn_decoder``: the decoder of PyTorch's "NLP From Scratch: Translation with a
  Sequence to Sequence Network and Attention" tutorial (``AttnDecoderRNN`` with
  Bahdanau attention: embedding, additive attention over the encoder outputs, the
  context concatenated to the embedded token, a ``GRU`` step, a linear head with
  ``log_softmax``), fed its own greedy ``topk`` choice for a fixed number of steps
  after an ``EncoderRNN`` (embedding and ``GRU``) reads the source.
* ``gate_gru_tagger``: a GRU cell with its gates written out as in ``torch.nn.GRUCell``'s
  documented equations (reset, update and new gates from two ``Linear`` maps), run
  over a batch-first sequence with a per-step output projection (a tagger).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from tests.corpus.registry import Case, register

__all__ = ["AttnDecoderRNN", "BahdanauAttention", "EncoderRNN", "GateGRUCell", "ScriptLSTM"]


class ScriptLSTMCell(nn.Module):
    """``custom_lstms.LSTMCell``: one step, its four gates from one ``mm`` pair."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.weight_ih = nn.Parameter(torch.randn(4 * hidden_size, input_size))
        self.weight_hh = nn.Parameter(torch.randn(4 * hidden_size, hidden_size))
        self.bias_ih = nn.Parameter(torch.randn(4 * hidden_size))
        self.bias_hh = nn.Parameter(torch.randn(4 * hidden_size))

    def forward(
        self, x: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor]
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        hx, cx = state
        gates = (
            torch.mm(x, self.weight_ih.t())
            + self.bias_ih
            + torch.mm(hx, self.weight_hh.t())
            + self.bias_hh
        )
        ingate, forgetgate, cellgate, outgate = gates.chunk(4, 1)
        ingate = torch.sigmoid(ingate)
        forgetgate = torch.sigmoid(forgetgate)
        cellgate = torch.tanh(cellgate)
        outgate = torch.sigmoid(outgate)
        cy = (forgetgate * cx) + (ingate * cellgate)
        hy = outgate * torch.tanh(cy)
        return hy, (hy, cy)


class ScriptLSTM(nn.Module):
    """Two ``custom_lstms.LSTMLayer``s stacked, stepped together over a time-major
    sequence so that every layer's passes advance in lockstep."""

    def __init__(self, input_size: int = 6, hidden_size: int = 8) -> None:
        super().__init__()
        self.layer0 = ScriptLSTMCell(input_size, hidden_size)
        self.layer1 = ScriptLSTMCell(hidden_size, hidden_size)
        self.hidden_size = hidden_size

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        zeros = x.new_zeros(x.shape[1], self.hidden_size)
        state0 = state1 = (zeros, zeros)
        outputs = []
        for step in x.unbind(0):
            out0, state0 = self.layer0(step, state0)
            out1, state1 = self.layer1(out0, state1)
            outputs.append(out1)
        return torch.stack(outputs)


class EncoderRNN(nn.Module):
    """The tutorial's encoder: embedding, dropout-free, one batch-first ``GRU``."""

    def __init__(self, vocab: int, hidden: int) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab, hidden)
        self.gru = nn.GRU(hidden, hidden, batch_first=True)

    def forward(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        output, hidden = self.gru(self.embedding(tokens))
        return output, hidden


class BahdanauAttention(nn.Module):
    """The tutorial's additive attention: ``Va(tanh(Wa(query) + Ua(keys)))``."""

    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.Wa = nn.Linear(hidden, hidden)
        self.Ua = nn.Linear(hidden, hidden)
        self.Va = nn.Linear(hidden, 1)

    def forward(self, query: torch.Tensor, keys: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
        weights = F.softmax(scores.squeeze(2).unsqueeze(1), dim=-1)
        context = torch.bmm(weights, keys)
        return context, weights


class AttnDecoderRNN(nn.Module):
    """The tutorial's ``AttnDecoderRNN``, greedy-decoding ``steps`` tokens from SOS."""

    def __init__(self, vocab: int = 20, hidden: int = 8, steps: int = 3) -> None:
        super().__init__()
        self.encoder = EncoderRNN(vocab, hidden)
        self.embedding = nn.Embedding(vocab, hidden)
        self.attention = BahdanauAttention(hidden)
        self.gru = nn.GRU(2 * hidden, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab)
        self.steps = steps

    def forward(self, source: torch.Tensor) -> torch.Tensor:
        keys, hidden = self.encoder(source)
        token = source.new_zeros(source.shape[0], 1)  # SOS
        outputs = []
        for _ in range(self.steps):
            embedded = self.embedding(token)
            context, _ = self.attention(hidden.permute(1, 0, 2), keys)
            output, hidden = self.gru(torch.cat((embedded, context), dim=2), hidden)
            logits = self.out(output)
            outputs.append(logits)
            token = logits.topk(1)[1].squeeze(-1).detach()
        return F.log_softmax(torch.cat(outputs, dim=1), dim=-1)


class GateGRUCell(nn.Module):
    """A GRU cell with ``torch.nn.GRUCell``'s documented gates written out."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.ih = nn.Linear(input_size, 3 * hidden_size)
        self.hh = nn.Linear(hidden_size, 3 * hidden_size)

    def forward(self, x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        i_r, i_z, i_n = self.ih(x).chunk(3, dim=-1)
        h_r, h_z, h_n = self.hh(h).chunk(3, dim=-1)
        r = torch.sigmoid(i_r + h_r)
        z = torch.sigmoid(i_z + h_z)
        n = torch.tanh(i_n + r * h_n)
        return (1 - z) * n + z * h


class GRUTagger(nn.Module):
    """The written-out GRU cell over a batch-first sequence, tagging every step."""

    def __init__(self, features: int = 6, hidden: int = 8, tags: int = 3) -> None:
        super().__init__()
        self.cell = GateGRUCell(features, hidden)
        self.tag = nn.Linear(hidden, tags)
        self.hidden = hidden

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x.new_zeros(x.shape[0], self.hidden)
        tags = []
        for t in range(x.shape[1]):
            h = self.cell(x[:, t], h)
            tags.append(self.tag(h))
        return torch.stack(tags, dim=1)


@register("script_lstm")
def script_lstm() -> Case:
    """Two stacked written-out LSTM layers over 4 time steps of a batch of 2."""
    return Case("script_lstm", ScriptLSTM(), (torch.randn(4, 2, 6),))


@register("attn_decoder")
def attn_decoder() -> Case:
    """The attention decoder greedy-decoding 3 tokens after a 5-token source."""
    return Case("attn_decoder", AttnDecoderRNN(), (torch.randint(1, 20, (2, 5)),))


@register("gate_gru_tagger")
def gate_gru_tagger() -> Case:
    """The written-out GRU cell tagging 4 steps of a batch of 2."""
    return Case("gate_gru_tagger", GRUTagger(), (torch.randn(2, 4, 6),))
