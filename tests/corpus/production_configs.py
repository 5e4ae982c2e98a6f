"""Full-size production configs built on the meta device: no download, no memory.

The config values are those the models ship with (hidden size, layers, heads, experts),
written here so nothing is fetched. Built in bfloat16, the dtype they run in (torch's
grouped-mm meta kernel, which the mixture-of-experts layers call, takes only bfloat16).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

__all__ = ["PRODUCTION", "Production", "build_production", "meta_inputs"]


@dataclass(frozen=True)
class Production:
    """A production config: its ``transformers`` classes, values and decoder layers."""

    config_class: str
    model_class: str
    values: dict[str, Any]
    layers: int
    layer_class: str


PRODUCTION: dict[str, Production] = {
    "llama-3-8b": Production(
        "LlamaConfig",
        "LlamaForCausalLM",
        {
            "vocab_size": 128256, "hidden_size": 4096, "intermediate_size": 14336,
            "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
            "max_position_embeddings": 8192, "rope_theta": 500000.0, "rms_norm_eps": 1e-5,
        },
        32,
        "LlamaDecoderLayer",
    ),
    "mixtral-8x7b": Production(
        "MixtralConfig",
        "MixtralForCausalLM",
        {
            "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336,
            "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
            "num_local_experts": 8, "num_experts_per_tok": 2,
            "max_position_embeddings": 32768, "rope_theta": 1e6, "rms_norm_eps": 1e-5,
        },
        32,
        "MixtralDecoderLayer",
    ),
    "deepseek-v3": Production(
        "DeepseekV3Config",
        "DeepseekV3ForCausalLM",
        {
            "vocab_size": 129280, "hidden_size": 7168, "intermediate_size": 18432,
            "moe_intermediate_size": 2048, "num_hidden_layers": 61,
            "first_k_dense_replace": 3, "num_attention_heads": 128,
            "num_key_value_heads": 128, "n_routed_experts": 256, "n_shared_experts": 1,
            "num_experts_per_tok": 8, "n_group": 8, "topk_group": 4, "q_lora_rank": 1536,
            "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
            "v_head_dim": 128, "max_position_embeddings": 163840,
        },
        61,
        "DeepseekV3DecoderLayer",
    ),
}  # fmt: skip

#: Tokens of the meta forward: the drawing and the fold counts do not depend on it.
SEQ = 16


def build_production(name: str) -> torch.nn.Module:
    """The full-size model of ``name`` on the meta device, in eval mode."""
    import transformers

    spec = PRODUCTION[name]
    config = getattr(transformers, spec.config_class)(**spec.values, use_cache=False)
    with torch.device("meta"):
        model = getattr(transformers, spec.model_class)(config).to(torch.bfloat16)
    return model.eval()  # type: ignore[no-any-return]


def meta_inputs() -> tuple[tuple[torch.Tensor], dict[str, Any]]:
    """Token ids and a ready 4-D attention mask on the meta device.

    A 4-D mask is used as given: from token ids alone ``transformers`` builds the mask
    itself and asks whether it is all ones, a value no meta tensor holds.
    """
    ids = torch.zeros(1, SEQ, dtype=torch.long, device="meta")
    mask = torch.zeros(1, 1, SEQ, SEQ, dtype=torch.bfloat16, device="meta")
    return (ids,), {"attention_mask": mask}
