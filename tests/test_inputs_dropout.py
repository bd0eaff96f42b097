"""Dropout masks take activation memory only in models that have dropout (issue 14, defect 3).

Korthikanti et al. (2022, sec. 4.1) count a 1-byte mask per element of every dropout: h per
token after attention and after the FFN, and a s per token for the softmax dropout (with its
2-byte output) when the score matrix is kept. Llama, MPT, Mixtral and DeepSeek train without
dropout, so none of these bytes exist there.
"""

from __future__ import annotations

import pytest

from optimizer.performance.plan import ParallelPlan
from optimizer.workload.memory import (
    activation_bytes_per_layer,
    materialised_bytes_per_token_layer,
    memory_per_gpu,
)
from optimizer.workload.presets import preset


@pytest.mark.parametrize("name", ["llama3-8b", "llama3-70b", "mpt-7b", "mixtral-8x7b"])
def test_no_dropout_presets_say_so(name: str) -> None:
    assert preset(name).dropout is False


@pytest.mark.parametrize("name", ["gpt3-175b", "megatron-18.4b", "bert-large"])
def test_dropout_presets_keep_dropout(name: str) -> None:
    assert preset(name).dropout is True


def test_llama_activations_shrink_by_exactly_the_mask_bytes() -> None:
    without = preset("llama3-8b", activation_recompute="selective")
    with_dropout = preset("llama3-8b", activation_recompute="selective", dropout=True)
    micro_batch, tensor = 1, 4
    tokens_per_rank = micro_batch * without.sequence_length / tensor
    masks_per_token = without.hidden_size * (1 + without.experts_per_token)  # attention + FFN

    saved = activation_bytes_per_layer(
        with_dropout, micro_batch, tensor
    ) - activation_bytes_per_layer(without, micro_batch, tensor)

    assert saved == pytest.approx(masks_per_token * tokens_per_rank, rel=1e-12)


def test_kept_score_matrix_loses_the_softmax_dropout_share() -> None:
    base = preset("llama3-8b", flash_attention=False, activation_recompute="none")
    with_dropout = preset(
        "llama3-8b", flash_attention=False, activation_recompute="none", dropout=True
    )
    a, s, h = base.attention_heads, base.sequence_length, base.hidden_size

    saved = materialised_bytes_per_token_layer(
        with_dropout, attention_matrix=True
    ) - materialised_bytes_per_token_layer(base, attention_matrix=True)

    assert saved == pytest.approx(2 * h + 3 * a * s)  # masks h + h, softmax mask + output 3as


def test_dropout_frees_memory_per_gpu_of_a_llama_plan() -> None:
    plan = ParallelPlan(tensor=8, pipeline=4, data=8, micro_batch_size=1)
    lean = memory_per_gpu(preset("llama3-70b"), plan)
    padded = memory_per_gpu(preset("llama3-70b", dropout=True), plan)

    assert lean.activations_gb < padded.activations_gb
    assert lean.weights_gb == padded.weights_gb
