"""Multi-head latent attention (MLA; DeepSeek-V2, Liu et al. arXiv:2405.04434, sec. 2.1;
Megatron-Core's MLASelfAttention): K and V up-projected per head from a latent, queries and
keys wider than values, the down-projections whole on every tensor rank. DeepSeek-V3's widths
from its config.json: kv_lora_rank 512, q_lora_rank 1536, qk_nope_head_dim 128,
qk_rope_head_dim 64, v_head_dim 128, 128 heads on h 7168."""

from __future__ import annotations

from dataclasses import replace

import pytest

from optimizer.errors import InvalidInput
from optimizer.performance.estimator import tensor_collective_share
from optimizer.workload.flops import attention_score_flops_per_token_layer, hardware_flops_per_step
from optimizer.workload.memory import activation_bytes_per_layer
from optimizer.workload.presets import PRESETS, preset

H, HEADS, Q_LORA, KV_LORA, NOPE, ROPE, V = 7168, 128, 1536, 512, 128, 64, 128


def test_deepseek_v3s_attention_has_its_published_weights() -> None:
    weights = (
        H * Q_LORA  # Q down
        + Q_LORA * HEADS * (NOPE + ROPE)  # Q up
        + H * (KV_LORA + ROPE)  # K/V down and the shared RoPE key
        + KV_LORA * HEADS * (NOPE + V)  # K/V up
        + HEADS * V * H  # output
    )

    assert preset("deepseek-v3").attention_parameters_per_layer == weights == 187_105_280


def test_multi_head_and_grouped_query_attention_keep_their_weights() -> None:
    """Q and O h x q each, K and V h x q x kv_ratio each, for every preset without MLA."""
    for w in (preset(name) for name in PRESETS):
        if w.latent_attention:
            continue
        h, q = w.hidden_size, w.attention_heads * w.head_width
        assert w.attention_parameters_per_layer == 2 * h * q * (1 + w.kv_ratio), w.name


def test_its_scores_are_as_wide_as_its_queries_and_keys_and_its_values() -> None:
    w = preset("deepseek-v3")
    causal_half = w.sequence_length / 2

    flops = attention_score_flops_per_token_layer(w)

    assert flops == pytest.approx(2 * causal_half * HEADS * ((NOPE + ROPE) + V))


def test_its_down_projections_are_whole_on_every_tensor_rank_and_its_up_projections_split() -> None:
    splits = [
        (p.out_width, p.in_width, p.split, p.up)
        for p in preset("deepseek-v3").attention_projections
    ]

    assert splits == [
        (Q_LORA, H, "duplicated", False),
        (HEADS * (NOPE + ROPE), Q_LORA, "column", True),
        (KV_LORA + ROPE, H, "duplicated", False),
        (HEADS * (NOPE + V), KV_LORA, "column", True),
        (H, HEADS * V, "row", False),
    ]


def test_its_tensor_ranks_gather_the_latents_not_the_hidden_state() -> None:
    attention = ((Q_LORA + KV_LORA + ROPE) / H + 1) / 2  # all-gather of the latents, RS of h

    assert tensor_collective_share(preset("deepseek-v3"), folded=False) == pytest.approx(
        (attention + 1) / 2
    )


def test_selective_recomputation_keeps_the_latents_and_not_every_heads_q_k_and_v() -> None:
    selective = preset("deepseek-v3", activation_recompute="selective")
    kept = replace(selective, activation_recompute="none")
    q_k_v = 2 * HEADS * ((NOPE + ROPE) * 2 + V)  # bf16, per token

    saved = activation_bytes_per_layer(kept, 1, 2) - activation_bytes_per_layer(selective, 1, 2)

    assert saved == pytest.approx(q_k_v * selective.sequence_length / 2)


def test_selective_recomputation_runs_the_up_projections_again() -> None:
    selective = preset("deepseek-v3", activation_recompute="selective")
    kept = replace(selective, activation_recompute="none")
    up = Q_LORA * HEADS * (NOPE + ROPE) + KV_LORA * HEADS * (NOPE + V)

    extra = hardware_flops_per_step(selective) - hardware_flops_per_step(kept)

    assert extra == pytest.approx(2 * up * selective.transformer_blocks * selective.tokens_per_step)


@pytest.mark.parametrize("field", ["q_lora_rank", "qk_rope_head_dim", "v_head_dim"])
def test_an_mla_width_without_the_kv_latent_is_refused_naming_it(field: str) -> None:
    with pytest.raises(InvalidInput) as e:
        preset("llama3-8b", **{field: 64})

    assert e.value.field == f"workload.{field}"
    assert "kv_lora_rank" in e.value.problem


def test_mla_with_grouped_kv_heads_is_refused_naming_the_field() -> None:
    with pytest.raises(InvalidInput) as e:
        preset("deepseek-v3", kv_heads=8)

    assert e.value.field == "workload.kv_heads"
