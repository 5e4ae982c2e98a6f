"""torch's own layers and the input/output shapes real models use."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from tests.corpus.registry import Case, register


@register("nn_transformer")
def nn_transformer() -> Case:
    """``nn.Transformer`` (its attention runs ``need_weights=False``)."""
    model = nn.Transformer(
        d_model=32, nhead=4, num_encoder_layers=1, num_decoder_layers=1,
        dim_feedforward=64, dropout=0.0, batch_first=True,
    )  # fmt: skip
    return Case("nn_transformer", model, (torch.randn(2, 6, 32), torch.randn(2, 4, 32)))


@register("transformer_encoder_layer")
def transformer_encoder_layer() -> Case:
    """``nn.TransformerEncoderLayer`` with a padding mask."""
    model = nn.TransformerEncoderLayer(32, 4, dim_feedforward=64, dropout=0.0, batch_first=True)
    mask = torch.zeros(2, 6, dtype=torch.bool)
    mask[1, 4:] = True
    return Case("transformer_encoder_layer", model, (torch.randn(2, 6, 32),),
                {"src_key_padding_mask": mask})  # fmt: skip


class _Attention(nn.Module):
    def __init__(self, need_weights: bool) -> None:
        super().__init__()
        self.attn = nn.MultiheadAttention(32, 4, batch_first=True)
        self.need_weights = need_weights

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.attn(x, x, x, need_weights=self.need_weights)
        return out


@register("mha_need_weights")
def mha_need_weights() -> Case:
    """``nn.MultiheadAttention`` returning its averaged weights."""
    return Case("mha_need_weights", _Attention(True), (torch.randn(2, 10, 32),))


@register("mha_no_weights")
def mha_no_weights() -> Case:
    """``nn.MultiheadAttention(need_weights=False)``: the fused kernel path."""
    return Case("mha_no_weights", _Attention(False), (torch.randn(2, 10, 32),))


@register("lstm_bidirectional")
def lstm_bidirectional() -> Case:
    """A two-layer bidirectional ``LSTM``."""
    model = nn.LSTM(16, 24, num_layers=2, bidirectional=True, batch_first=True)
    return Case("lstm_bidirectional", model, (torch.randn(2, 5, 16),))


@register("gru_bidirectional")
def gru_bidirectional() -> Case:
    """A two-layer bidirectional ``GRU``."""
    model = nn.GRU(16, 24, num_layers=2, bidirectional=True, batch_first=True)
    return Case("gru_bidirectional", model, (torch.randn(2, 5, 16),))


class _CellLoop(nn.Module):
    def __init__(self, cell: nn.Module, steps: int = 4) -> None:
        super().__init__()
        self.cell = cell
        self.steps = steps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        state: Any = None
        for _ in range(self.steps):
            state = self.cell(x, state)
            x_out = state[0] if isinstance(state, tuple) else state
        return x_out


@register("lstm_cell_loop")
def lstm_cell_loop() -> Case:
    """An ``LSTMCell`` stepped four times."""
    return Case("lstm_cell_loop", _CellLoop(nn.LSTMCell(16, 32)), (torch.randn(4, 16),))


@register("gru_cell_loop")
def gru_cell_loop() -> Case:
    """A ``GRUCell`` stepped four times."""
    return Case("gru_cell_loop", _CellLoop(nn.GRUCell(16, 32)), (torch.randn(4, 16),))


@register("rnn_cell_loop")
def rnn_cell_loop() -> Case:
    """An ``RNNCell`` stepped four times."""
    return Case("rnn_cell_loop", _CellLoop(nn.RNNCell(16, 32)), (torch.randn(4, 16),))


class _Embeddings(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embedding = nn.Embedding(50, 16)
        self.bag = nn.EmbeddingBag(50, 16, mode="mean")
        self.head = nn.Linear(16, 4)

    def forward(self, ids: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        tokens = self.embedding(ids).mean(dim=1)
        bags = self.bag(ids.flatten(), offsets)
        return self.head(tokens + bags)


@register("embeddings")
def embeddings() -> Case:
    """``Embedding`` and ``EmbeddingBag`` feeding one head."""
    ids = torch.randint(0, 50, (2, 6))
    return Case("embeddings", _Embeddings(), (ids, torch.tensor([0, 6])))


class _HalfMLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.LayerNorm(32), nn.Linear(32, 8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self.net(x), dim=-1)


@register("half_precision")
def half_precision() -> Case:
    """A bfloat16 model on bfloat16 inputs."""
    return Case("half_precision", _HalfMLP().to(torch.bfloat16),
                (torch.randn(4, 16, dtype=torch.bfloat16),))  # fmt: skip


class _DictIn(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.image = nn.Conv2d(3, 4, 3, padding=1)
        self.text = nn.Linear(8, 4)

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        pooled = self.image(batch["image"]).mean(dim=(2, 3))
        return pooled * self.text(batch["text"])


@register("dict_input")
def dict_input() -> Case:
    """A model taking one dict of tensors."""
    batch = {"image": torch.randn(2, 3, 8, 8), "text": torch.randn(2, 8)}
    return Case("dict_input", _DictIn(), (batch,))


class _DictOut(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Linear(8, 16)
        self.cls = nn.Linear(16, 3)
        self.box = nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        h = torch.relu(self.body(x))
        return {"logits": self.cls(h), "boxes": torch.sigmoid(self.box(h))}


@register("dict_output")
def dict_output() -> Case:
    """A model returning a dict of heads."""
    return Case("dict_output", _DictOut(), (torch.randn(2, 8),))


class _NoParams(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.nn.functional.softmax(x @ x.transpose(-1, -2) / 4.0, dim=-1)
        return torch.cumsum(y, dim=-1).amax(dim=-1) + x.pow(2).mean()


@register("no_parameters")
def no_parameters() -> Case:
    """A model with no parameters at all."""
    return Case("no_parameters", _NoParams(), (torch.randn(2, 5, 4),))


@register("sequential_2000")
def sequential_2000() -> Case:
    """A flat ``Sequential`` of 2,000 ``Linear, ReLU`` pairs (4,000 module calls)."""
    layers: list[nn.Module] = []
    for _ in range(2000):
        layers += [nn.Linear(8, 8), nn.ReLU()]
    return Case("sequential_2000", nn.Sequential(*layers), (torch.randn(2, 8),))
