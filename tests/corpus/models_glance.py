"""Decoders whose auto drawings test the architecture at a glance: Gemma3 (sliding and
full attention layers, two rotary embeddings, scaled embeddings) and Phi-3 (fused
query/key/value and gate/up projections), each from a tiny ``transformers`` config with
random weights, never downloaded."""

from __future__ import annotations

from tests.corpus.hf_models import _decoder, _ids
from tests.corpus.registry import Case, register


@register("gemma3", transformer=True)
def gemma3() -> Case:
    """Gemma3's text decoder: one sliding-window and one full-attention layer."""
    model = _decoder(
        "Gemma3TextConfig",
        "Gemma3ForCausalLM",
        head_dim=8,
        sliding_window=4,
        layer_types=["sliding_attention", "full_attention"],
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=2,
    )
    return Case("gemma3", model, (_ids(),))


@register("phi3", transformer=True)
def phi3() -> Case:
    """Phi-3: fused ``qkv_proj`` and ``gate_up_proj``, RMSNorm, rotary embeddings."""
    model = _decoder(
        "Phi3Config", "Phi3ForCausalLM", pad_token_id=0, bos_token_id=1, eos_token_id=2
    )
    return Case("phi3", model, (_ids(),))
