"""The reviewer's matrix: models with one knob per kind of edit, built before and after.

A GPT (own blocks, a stack of four), a 4-stage CNN, and T5 and Whisper from tiny
``transformers`` configs; each edit changes one thing in one place (block 2 of the GPT,
stage 2 of the CNN), and names the address a reviewer expects the story's first line
to name, with a word of what changed. :mod:`tests.corpus.test_reviewer_matrix` draws
each pair in three views and reads the first line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["EDITS", "Edit"]


class _Attn(nn.Module):
    def __init__(self, d: int, heads: int, cast: bool = False, nograd: bool = False) -> None:
        super().__init__()
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.heads, self.cast, self.nograd = heads, cast, nograd

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.cast:
            x = x.to(torch.bfloat16).to(torch.float32)
        b, t, d = x.shape
        q, k, v = (
            y.view(b, t, self.heads, d // self.heads).transpose(1, 2)
            for y in self.qkv(x).chunk(3, dim=-1)
        )
        with torch.set_grad_enabled(not self.nograd and torch.is_grad_enabled()):
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(b, t, d))


class _MLP(nn.Module):
    def __init__(self, d: int, width: int = 4, act: nn.Module | None = None, fc1: str = "fc1",
                 skip: bool = False, scale: bool = False, dead: bool = False,
                 norm: bool = False) -> None:  # fmt: skip
        super().__init__()
        self.fc1_name = fc1
        setattr(self, fc1, nn.Linear(d, width * d))
        self.act, self.fc2 = act or nn.GELU(), nn.Linear(width * d, d)
        self.norm = nn.LayerNorm(width * d) if norm else None
        self.skip, self.scale, self.dead = skip, scale, dead

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.act(getattr(self, self.fc1_name)(x))
        if self.norm is not None:
            h = self.norm(h)
        if self.scale:
            h = h * 0.5
        if self.dead:
            _ = h.mean(dim=1)  # computed and dropped
        y = self.fc2(h)
        return y + x if self.skip else y


class GPTBlock(nn.Module):
    """Pre-norm attention and MLP with residuals; each knob edits this block only."""

    def __init__(self, d: int, heads: int, eps: float = 1e-5, swap: bool = False,
                 no_res: bool = False, cast: bool = False, nograd: bool = False,
                 **mlp: Any) -> None:  # fmt: skip
        super().__init__()
        self.ln1, self.attn = nn.LayerNorm(d, eps=eps), _Attn(d, heads, cast, nograd)
        self.ln2, self.mlp = nn.LayerNorm(d), _MLP(d, **mlp)
        self.swap, self.no_res = swap, no_res

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.swap:
            x = x + self.mlp(self.ln2(x))
            return x + self.attn(self.ln1(x))
        a = self.attn(self.ln1(x))
        x = a if self.no_res else x + a
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    """A 4-block GPT whose block ``at`` takes the edit's knobs."""

    def __init__(self, n: int = 4, d: int = 32, heads: int = 4, at: int = 2,
                 **edit: Any) -> None:  # fmt: skip
        super().__init__()
        self.emb = nn.Embedding(50, d)
        own_heads = edit.pop("block_heads", heads)
        self.blocks = nn.ModuleList(
            GPTBlock(d, own_heads, **edit) if i == at else GPTBlock(d, heads) for i in range(n)
        )
        self.ln_f, self.head = nn.LayerNorm(d), nn.Linear(d, 50)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.emb(ids)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


class ConvBlock(nn.Module):
    """Conv, batch norm, activation; a residual when ``skip``."""

    def __init__(self, c: int, out: int, kernel: int = 3, eps: float = 1e-5,
                 act: type[nn.Module] = nn.ReLU, skip: bool = False, swap: bool = False,
                 dead: bool = False) -> None:  # fmt: skip
        super().__init__()
        self.conv = nn.Conv2d(c, out, kernel, padding=kernel // 2)
        self.bn, self.act = nn.BatchNorm2d(out, eps=eps), act()
        self.skip, self.swap, self.dead = skip and c == out, swap, dead

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.conv(x)
        y = self.bn(self.act(y)) if self.swap else self.act(self.bn(y))
        if self.dead:
            _ = y.amax(dim=(2, 3))  # computed and dropped
        return y + x if self.skip else y


class CNN(nn.Module):
    """Four stages of two blocks, pooled between; stage ``at`` takes the edit."""

    def __init__(self, at: int = 2, blocks: int = 2, width: int = 8, pool: str = "max",
                 extra: bool = False, cast: bool = False, **edit: Any) -> None:  # fmt: skip
        super().__init__()
        stages, c = [], 3
        for i in range(4):
            out = width * 2 ** min(i, 2)
            n = blocks if i == at else 2
            layers = [ConvBlock(c if j == 0 else out, out, **(edit if i == at else {}))
                      for j in range(n)]  # fmt: skip
            if extra and i == at:
                layers.append(nn.Dropout(0.1))
            stages.append(nn.Sequential(*layers))
            c = out
        self.stages = nn.ModuleList(stages)
        self.pool = nn.MaxPool2d(2) if pool == "max" else nn.AvgPool2d(2)
        self.cast, self.at = cast, at
        self.head = nn.Linear(c, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for i, stage in enumerate(self.stages):
            if self.cast and i == self.at:
                x = x.to(torch.bfloat16).to(torch.float32)
            x = stage(x)
            if i < 3:
                x = self.pool(x)
        return self.head(x.mean(dim=(2, 3)))


@dataclass(frozen=True)
class Edit:
    """One edit of one model: both sides' builders, the inputs, and what the story's
    first line must name (an address and a word of the change)."""

    model: str
    kind: str
    before: Callable[[], nn.Module]
    after: Callable[[], nn.Module]
    inputs: Callable[[], tuple[Any, ...]]
    address: str
    #: A word the first line must hold; several: any of them (a rename inside a box
    #: is kept only in the box's digest, so the line says the names inside changed).
    word: str | tuple[str, ...]
    kwargs: Callable[[], dict[str, Any]] = dict


def _ids() -> tuple[Any, ...]:
    return (torch.arange(8).reshape(1, 8),)


def _image() -> tuple[Any, ...]:
    return (torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(0)),)


def _gpt(name: str, address: str, word: str | tuple[str, ...], **edit: Any) -> Edit:
    return Edit("gpt", name, GPT, lambda: GPT(**edit), _ids, address, word)


def _cnn(name: str, address: str, word: str | tuple[str, ...], **edit: Any) -> Edit:
    return Edit("cnn", name, CNN, lambda: CNN(**edit), _image, address, word)


def _hf(model: str, name: str, address: str, word: str, **changed: Any) -> Edit:
    def build(**extra: Any) -> Callable[[], nn.Module]:
        def make() -> nn.Module:
            import transformers

            if model == "t5":
                config = transformers.T5Config(**{**_T5, **extra})
                return transformers.T5Model(config)
            config = transformers.WhisperConfig(**{**_WHISPER, **extra})
            return transformers.WhisperModel(config)

        return make

    if model == "t5":
        return Edit(model, name, build(), build(**changed), _ids, address, word,
                    lambda: {"decoder_input_ids": torch.arange(4).reshape(1, 4)})  # fmt: skip
    return Edit(model, name, build(), build(**changed), _features, address, word,
                lambda: {"decoder_input_ids": torch.arange(4).reshape(1, 4)})  # fmt: skip


def _features() -> tuple[Any, ...]:
    return (torch.randn(1, 16, 32, generator=torch.Generator().manual_seed(0)),)


_T5: dict[str, Any] = {
    "vocab_size": 50, "d_model": 32, "d_kv": 8, "d_ff": 64, "num_layers": 2,
    "num_decoder_layers": 2, "num_heads": 4, "use_cache": False,
}  # fmt: skip
_WHISPER: dict[str, Any] = {
    "vocab_size": 50, "d_model": 32, "encoder_layers": 2, "decoder_layers": 1,
    "encoder_attention_heads": 4, "decoder_attention_heads": 4, "encoder_ffn_dim": 64,
    "decoder_ffn_dim": 64, "num_mel_bins": 16, "max_source_positions": 16,
    "max_target_positions": 16, "use_cache": False, "pad_token_id": 0, "bos_token_id": 1,
    "eos_token_id": 2, "decoder_start_token_id": 1, "begin_suppress_tokens": None,
    "suppress_tokens": None,
}  # fmt: skip

#: Every edit of the matrix, by ``model/kind``.
EDITS: dict[str, Edit] = {
    f"{e.model}/{e.kind}": e
    for e in (
        _gpt("block_removed", "blocks.3", "removed", n=3),
        _gpt("block_inserted", "blocks.4", "added", n=5),
        _gpt("width", "blocks.2.mlp", "64", width=2),
        _gpt("activation", "blocks.2.mlp", "relu", act=nn.ReLU()),
        _gpt("eps", "blocks.2.ln1", "1e-06", eps=1e-6),
        _gpt("heads", "blocks.2.attn", "(1, 8, 2, 16)", block_heads=2),
        _gpt("cast", "blocks.2.attn", "bfloat16", cast=True),
        _gpt("skip_added", "blocks.2.mlp", "add", skip=True),
        _gpt("skip_removed", "blocks.2", "skip removed", no_res=True),
        _gpt("renamed", "blocks.", ("fc1 -> fc_in", "the names"), fc1="fc_in"),
        _gpt("grad_mode", "blocks.2.attn", "no_grad", nograd=True),
        _gpt("op_added", "blocks.2.mlp", "mul", scale=True),
        _gpt("unused", "blocks.2.mlp", "mean", dead=True),
        _gpt("layer_inserted", "blocks.2.mlp", ("LayerNorm", "layer_norm"), norm=True),
        _gpt("reordered", "blocks.2", "order changed", swap=True),
        Edit("cnn", "block_removed", lambda: CNN(blocks=3), CNN, _image, "stages.2.2",
             "removed"),
        _cnn("block_inserted", "stages.2.2", "added", blocks=3),
        _cnn("kernel", "stages.2", "(5, 5)", kernel=5),
        _cnn("activation", "stages.2", "gelu", act=nn.GELU),
        _cnn("eps", "stages.2", "0.001", eps=1e-3),
        _cnn("width", "stages", "16", width=16),
        _cnn("skip_added", "stages.2", "add", skip=True),
        _cnn("pool", "pool", "avg_pool2d", pool="avg"),
        _cnn("layer_inserted", "stages.2.2", ("Dropout", "dropout"), extra=True),
        _cnn("cast", "", "bfloat16", cast=True),
        _cnn("unused", "stages.2", "amax", dead=True),
        _cnn("reordered", "stages.2", "order changed", swap=True),
        _hf("t5", "block_removed", "encoder.block.1", "removed", num_layers=1),
        # A config edit changes every layer: the line names their pattern.
        _hf("t5", "width", "*.block.*", "128", d_ff=128),
        _hf("t5", "eps", "*.block.*", "1e-05", layer_norm_epsilon=1e-5),
        _hf("t5", "heads", "*.block.*", "16", num_heads=2, d_kv=16),
        _hf("whisper", "block_removed", "encoder.layers.1", "removed", encoder_layers=1),
        _hf("whisper", "width", "encoder.layers", "128", encoder_ffn_dim=128),
        _hf("whisper", "activation", "*.layers", "relu", activation_function="relu"),
    )
}
