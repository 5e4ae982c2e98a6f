"""Hugging Face ``transformers`` models from tiny configs with random weights."""

from __future__ import annotations

from typing import Any

import torch

from tests.corpus.registry import Case, register

_VOCAB = 96
_SEQ = 8
_SMALL: dict[str, Any] = {"vocab_size": _VOCAB}
#: The attention of the configs that take it: ``F.scaled_dot_product_attention``.
_SDPA: dict[str, Any] = {"attn_implementation": "sdpa"}


def _ids(length: int = _SEQ) -> torch.Tensor:
    return torch.randint(0, _VOCAB, (1, length))


def _decoder(config_name: str, model_name: str, **extra: Any) -> Any:
    import transformers

    defaults: dict[str, Any] = {
        "vocab_size": _VOCAB,
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "max_position_embeddings": 64,
        "use_cache": False,
    }
    config = getattr(transformers, config_name)(**{**defaults, **extra})
    return getattr(transformers, model_name)(config)


@register("bert", transformer=True)
def bert() -> Case:
    """BERT encoder with its pooler."""
    from transformers import BertConfig, BertModel

    config = BertConfig(
        vocab_size=_VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=64, max_position_embeddings=64,
    )  # fmt: skip
    return Case("bert", BertModel(config), (_ids(),))


@register("gpt2", transformer=True)
def gpt2() -> Case:
    """GPT-2 with its language-model head (``Conv1D`` projections: ``addmm``)."""
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(
        vocab_size=_VOCAB,
        n_embd=32,
        n_layer=2,
        n_head=4,
        n_positions=64,
        use_cache=False,
        bos_token_id=1,
        eos_token_id=2,
    )
    return Case("gpt2", GPT2LMHeadModel(config), (_ids(),))


@register("t5", transformer=True)
def t5() -> Case:
    """T5 encoder-decoder with decoder inputs (relative position bias, RMS-style norm)."""
    from transformers import T5Config, T5ForConditionalGeneration

    config = T5Config(
        vocab_size=_VOCAB, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2,
        num_heads=4, use_cache=False,
    )  # fmt: skip
    model = T5ForConditionalGeneration(config)
    return Case("t5", model, (_ids(),), {"decoder_input_ids": _ids(4)})


@register("llama", transformer=True)
def llama() -> Case:
    """Llama: RMSNorm, rotary embeddings, grouped-query attention, SwiGLU."""
    return Case("llama", _decoder("LlamaConfig", "LlamaForCausalLM"), (_ids(),))


@register("mistral", transformer=True)
def mistral() -> Case:
    """Mistral (sliding-window attention config)."""
    model = _decoder("MistralConfig", "MistralForCausalLM", sliding_window=4)
    return Case("mistral", model, (_ids(),))


@register("qwen2", transformer=True)
def qwen2() -> Case:
    """Qwen2 (biased query/key/value projections)."""
    return Case("qwen2", _decoder("Qwen2Config", "Qwen2ForCausalLM"), (_ids(),))


@register("mixtral", transformer=True)
def mixtral() -> Case:
    """Mixtral: a sparse mixture of experts in every layer."""
    model = _decoder(
        "MixtralConfig", "MixtralForCausalLM", num_local_experts=4, num_experts_per_tok=2
    )
    return Case("mixtral", model, (_ids(),))


@register("vit", transformer=True)
def vit() -> Case:
    """ViT on one 32x32 image in 8x8 patches."""
    from transformers import ViTConfig, ViTModel

    config = ViTConfig(
        image_size=32, patch_size=8, num_channels=3, hidden_size=32, num_hidden_layers=2,
        num_attention_heads=4, intermediate_size=64,
    )  # fmt: skip
    return Case("vit", ViTModel(config), (torch.randn(1, 3, 32, 32),))


@register("whisper", transformer=True)
def whisper() -> Case:
    """Whisper: a convolutional audio encoder and a text decoder."""
    from transformers import WhisperConfig, WhisperModel

    config = WhisperConfig(
        vocab_size=_VOCAB, d_model=32, encoder_layers=1, decoder_layers=1,
        encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
        decoder_ffn_dim=64, num_mel_bins=16, max_source_positions=16,
        max_target_positions=16, use_cache=False, pad_token_id=0, bos_token_id=1,
        eos_token_id=2, decoder_start_token_id=1, begin_suppress_tokens=None,
        suppress_tokens=None,
    )  # fmt: skip
    features = torch.randn(1, 16, 32)  # two frames per encoder position
    return Case("whisper", WhisperModel(config), (features,), {"decoder_input_ids": _ids(4)})


@register("mamba", transformer=True)
def mamba() -> Case:
    """Mamba: a selective state-space model (the sequential reference path)."""
    from transformers import MambaConfig, MambaModel

    config = MambaConfig(
        vocab_size=_VOCAB, hidden_size=32, state_size=8, num_hidden_layers=2, expand=2,
        conv_kernel=4, use_cache=False,
    )  # fmt: skip
    return Case("mamba", MambaModel(config), (_ids(),))


@register("roberta", transformer=True)
def roberta() -> Case:
    """RoBERTa: position ids from the padding mask (``ne``, ``int``, ``cumsum``)."""
    from transformers import RobertaConfig, RobertaModel

    config = RobertaConfig(
        vocab_size=_VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=64, max_position_embeddings=64, pad_token_id=1,
    )  # fmt: skip
    return Case("roberta", RobertaModel(config), (_ids(),))


@register("gemma2", transformer=True)
def gemma2() -> Case:
    """Gemma2: alternating sliding and global attention, logit soft-capping."""
    model = _decoder(
        "Gemma2Config", "Gemma2ForCausalLM", head_dim=8, sliding_window=4,
        pad_token_id=0, bos_token_id=2, eos_token_id=1,
    )  # fmt: skip
    return Case("gemma2", model, (_ids(),))


@register("qwen2_moe", transformer=True)
def qwen2_moe() -> Case:
    """Qwen2-MoE: routed experts beside a gated shared expert."""
    model = _decoder(
        "Qwen2MoeConfig", "Qwen2MoeForCausalLM", moe_intermediate_size=16,
        shared_expert_intermediate_size=32, num_experts=4, num_experts_per_tok=2,
    )  # fmt: skip
    return Case("qwen2_moe", model, (_ids(),))


# Not yet in the per-depth FLOP check: its MoE block runs ``scatter_``, uncounted today.
@register("deepseek_v3", transformer=True)
def deepseek_v3() -> Case:
    """DeepSeek-V3: latent (low-rank) attention, one dense then one grouped-routed MoE
    layer with a shared expert."""
    model = _decoder(
        "DeepseekV3Config", "DeepseekV3ForCausalLM",
        moe_intermediate_size=16, n_shared_experts=1, n_routed_experts=4, n_group=2,
        topk_group=1, num_experts_per_tok=2, first_k_dense_replace=1, kv_lora_rank=16,
        q_lora_rank=16, qk_rope_head_dim=4, v_head_dim=8, qk_nope_head_dim=4,
        pad_token_id=0,
    )  # fmt: skip
    return Case("deepseek_v3", model, (_ids(),))


@register("falcon", transformer=True)
def falcon() -> Case:
    """Falcon (new decoder architecture): grouped key/value heads, parallel attention and
    MLP, GELU, rotary embeddings, SDPA attention."""
    from transformers import FalconConfig, FalconForCausalLM

    config = FalconConfig(
        vocab_size=_VOCAB, hidden_size=32, ffn_hidden_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_kv_heads=2, new_decoder_architecture=True,
        num_ln_in_parallel_attn=2, max_position_embeddings=64, use_cache=False,
        bos_token_id=1, eos_token_id=2, **_SDPA,
    )  # fmt: skip
    return Case("falcon", FalconForCausalLM(config), (_ids(),))


@register("granite", transformer=True)
def granite() -> Case:
    """Granite: a Llama layout with embedding, residual, attention and logit multipliers
    (Python-scalar ``mul``/``div`` in every layer)."""
    model = _decoder(
        "GraniteConfig", "GraniteForCausalLM", embedding_multiplier=12.0,
        residual_multiplier=0.22, attention_multiplier=0.0625, logits_scaling=8.0,
        attn_implementation="sdpa",
    )  # fmt: skip
    return Case("granite", model, (_ids(),))


@register("stablelm", transformer=True)
def stablelm() -> Case:
    """StableLM: LayerNorm, partial rotary embeddings (a quarter of each head),
    biased query/key/value projections, SDPA attention."""
    model = _decoder(
        "StableLmConfig", "StableLmForCausalLM", partial_rotary_factor=0.25,
        use_qkv_bias=True, attn_implementation="sdpa", bos_token_id=1, eos_token_id=2,
    )  # fmt: skip
    return Case("stablelm", model, (_ids(),))


@register("electra", transformer=True)
def electra() -> Case:
    """ELECTRA discriminator encoder: a 16-wide embedding projected to the 32-wide
    encoder, GELU, SDPA attention."""
    from transformers import ElectraConfig, ElectraModel

    config = ElectraConfig(
        vocab_size=_VOCAB, embedding_size=16, hidden_size=32, num_hidden_layers=2,
        num_attention_heads=4, intermediate_size=64, max_position_embeddings=64,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, **_SDPA,
    )  # fmt: skip
    return Case("electra", ElectraModel(config), (_ids(),))


@register("olmo2", transformer=True)
def olmo2() -> Case:
    """OLMo2: RMSNorm after attention and MLP (not before), and on queries and keys."""
    model = _decoder(
        "Olmo2Config", "Olmo2ForCausalLM", attn_implementation="sdpa", pad_token_id=0,
        bos_token_id=1, eos_token_id=2,
    )  # fmt: skip
    return Case("olmo2", model, (_ids(),))


@register("cohere", transformer=True)
def cohere() -> Case:
    """Cohere: one LayerNorm (no bias) feeding parallel attention and MLP, interleaved
    rotary embeddings, scaled logits."""
    model = _decoder(
        "CohereConfig", "CohereForCausalLM", logit_scale=0.0625, attn_implementation="sdpa",
        pad_token_id=0, bos_token_id=1, eos_token_id=2,
    )  # fmt: skip
    return Case("cohere", model, (_ids(),))


@register("dpt", transformer=True)
def dpt() -> Case:
    """DPT depth estimation: a ViT encoder, a neck reassembling four of its hidden states
    at 16x16, 8x8, 4x4 and 2x2, fused coarse to fine by residual conv units."""
    from transformers import DPTConfig, DPTForDepthEstimation

    config = DPTConfig(
        image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=4,
        num_attention_heads=4, intermediate_size=64, backbone_out_indices=[0, 1, 2, 3],
        neck_hidden_sizes=[8, 16, 32, 32], fusion_hidden_size=16,
        reassemble_factors=[4, 2, 1, 0.5], head_in_index=-1,
    )  # fmt: skip
    return Case("dpt", DPTForDepthEstimation(config), (torch.randn(1, 3, 32, 32),))


@register("perceiver", transformer=True)
def perceiver() -> Case:
    """Perceiver: latents cross-attend to the input, then attend to themselves (no
    attention mask: the model builds its own of ones)."""
    from transformers import PerceiverConfig, PerceiverModel

    config = PerceiverConfig(
        num_latents=8, d_latents=32, d_model=16, num_blocks=1,
        num_self_attends_per_block=2, num_self_attention_heads=2,
        num_cross_attention_heads=1,
    )  # fmt: skip
    return Case("perceiver", PerceiverModel(config), (), {"inputs": torch.randn(1, 6, 16)})


@register("jamba", transformer=True)
def jamba() -> Case:
    """Jamba: Mamba layers interleaved with attention layers, a mixture of experts in
    every other layer (the reference PyTorch scan)."""
    model = _decoder(
        "JambaConfig", "JambaForCausalLM", num_experts=2, num_experts_per_tok=1,
        expert_layer_period=2, expert_layer_offset=1, attn_layer_period=2,
        attn_layer_offset=1, mamba_d_state=4, mamba_d_conv=2, mamba_expand=2,
        mamba_dt_rank=4, num_hidden_layers=4,
    )  # fmt: skip
    return Case("jamba", model, (_ids(),))


# Not yet in the per-depth FLOP check: ``_weight_norm`` is uncounted today.
