"""Corpus families whose behaviour lives in tensors that are not learned: a rotary base
(GPT-NeoX's ``inv_freq``), a DDPM noise schedule on a plain scheduler object, a
dynamically quantized model, and BEiT's relative position index kept in a cache shared
by every instance (issue 39)."""

from __future__ import annotations

import warnings
from typing import Any

import torch
from torch import nn

from tests.corpus.registry import Case, register

_VOCAB = 96


def neox_model(rope_theta: float = 10000.0) -> nn.Module:
    """A tiny GPT-NeoX (partial rotary) whose rotary base is ``rope_theta``."""
    from transformers import GPTNeoXConfig, GPTNeoXForCausalLM

    config = GPTNeoXConfig(
        vocab_size=_VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, max_position_embeddings=64, rotary_pct=0.5, use_cache=False,
        rope_theta=rope_theta, attn_implementation="sdpa",
    )  # fmt: skip
    rope = getattr(config, "rope_parameters", None)
    if isinstance(rope, dict):  # where transformers reads the base from
        rope["rope_theta"] = rope_theta
    return GPTNeoXForCausalLM(config)


@register("gpt_neox_rotary", transformer=True)
def gpt_neox_rotary() -> Case:
    """GPT-NeoX: partial rotary embeddings from a non-persistent ``inv_freq``."""
    return Case("gpt_neox_rotary", neox_model(), (torch.randint(0, _VOCAB, (1, 8)),))


class Schedule:
    """A linear DDPM noise schedule, held on a plain object (as diffusers' schedulers
    hold theirs), never registered on a module."""

    def __init__(self, steps: int = 50, beta_end: float = 0.02) -> None:
        self.betas = torch.linspace(1e-4, beta_end, steps)
        self.alphas = 1.0 - self.betas
        self.alphas_cumprod = torch.cumprod(self.alphas, dim=0)


class Denoiser(nn.Module):
    """A small noise predictor conditioned on the step through a sinusoidal embedding."""

    def __init__(self, width: int = 16) -> None:
        super().__init__()
        self.inp = nn.Linear(8, width)
        self.time = nn.Linear(width, width)
        self.out = nn.Linear(width, 8)
        half = width // 2
        self.register_buffer(
            "freqs", torch.exp(-torch.arange(half) * (4.0 / half)), persistent=False
        )

    def forward(self, x: torch.Tensor, step: torch.Tensor) -> torch.Tensor:
        angles = step.float()[:, None] * self.freqs[None]
        embedding = torch.cat([angles.sin(), angles.cos()], dim=-1)
        return self.out(torch.relu(self.inp(x) + self.time(embedding)))  # type: ignore[no-any-return]


class DDPMLoop(nn.Module):
    """A DDPM sampling loop in plain torch: the schedule read at each step, one factor
    read out of it with ``.item()``."""

    def __init__(
        self, schedule: Schedule | None = None, steps: tuple[int, ...] = (3, 2, 1)
    ) -> None:
        super().__init__()
        self.denoiser = Denoiser()
        self.schedule = schedule if schedule is not None else Schedule()
        self.steps = steps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = self.schedule
        for t in self.steps:
            step = torch.full((x.shape[0],), t, dtype=torch.long)
            eps = self.denoiser(x, step)
            coef = s.betas[t] / (1 - s.alphas_cumprod[t]).sqrt()
            scale = s.alphas[t].rsqrt().item()
            x = (x - coef * eps) * scale
        return x


@register("ddpm_loop")
def ddpm_loop() -> Case:
    """A DDPM sampling loop whose noise schedule lives on a scheduler object."""
    return Case("ddpm_loop", DDPMLoop(), (torch.randn(2, 8),))


def quantized_mlp(qconfig: Any = None) -> nn.Module:
    """An MLP dynamically quantized (int8 weights, per tensor unless ``qconfig`` says
    otherwise)."""
    from torch.ao.quantization import default_dynamic_qconfig, quantize_dynamic

    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                          nn.Linear(32, 4)).eval()  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return quantize_dynamic(model, {nn.Linear: qconfig or default_dynamic_qconfig})  # type: ignore[no-any-return]


@register("quantized_mlp")
def quantized() -> Case:
    """An MLP under ``torch.ao.quantization.quantize_dynamic``."""
    return Case("quantized_mlp", quantized_mlp(), (torch.randn(2, 8),))


def beit_model() -> nn.Module:
    """A tiny BEiT with relative position bias (its index from a shared cache)."""
    from transformers import BeitConfig, BeitModel

    config = BeitConfig(
        image_size=32, patch_size=8, num_channels=3, hidden_size=32, num_hidden_layers=2,
        num_attention_heads=4, intermediate_size=64, use_relative_position_bias=True,
        use_mask_token=False,
    )  # fmt: skip
    return BeitModel(config)


@register("beit", transformer=True)
def beit() -> Case:
    """BEiT: a relative position index built under an LRU cache shared by every
    instance (the first forward computes it, every later one receives it)."""
    return Case("beit", beit_model(), (torch.randn(1, 3, 32, 32),))
