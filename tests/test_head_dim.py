"""Attention heads wider than hidden_size / heads (``workload.head_dim``).

Qwen3-30B-A3B gives 32 heads of 128 to a 2,048-wide model, GPT-OSS 64 heads of 64 to a
2,880-wide one (their Hugging Face config.json, ``head_dim``). Before the field, such a model
could not be stated: its Q, K, V and output projections, its attention scores and their
activations were timed at h / heads a head, half of Qwen3's.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from optimizer.errors import InvalidInput
from optimizer.performance.compute import compute_s_per_token
from optimizer.performance.estimator import estimate
from optimizer.performance.plan import ParallelPlan
from optimizer.performance.validation import HGX_H100, cluster_for
from optimizer.workload.flops import attention_score_flops_per_token_layer
from optimizer.workload.memory import memory_per_gpu
from tests.estimator_fixtures import qwen3_30b

QWEN3_30B_PARAMETERS = 30.5e9  # Qwen3 technical report, arXiv:2505.09388, Table 2


QWEN3 = qwen3_30b()
NARROW = replace(QWEN3, head_dim=0)  # what a request without the field described


def test_the_stated_heads_give_qwen3s_published_parameter_count() -> None:
    assert QWEN3.head_dim == 128
    assert QWEN3.parameters == pytest.approx(QWEN3_30B_PARAMETERS, rel=0.002)
    assert NARROW.parameters < 0.99 * QWEN3_30B_PARAMETERS


def test_attention_scores_scale_with_heads_times_head_dim() -> None:
    wide = attention_score_flops_per_token_layer(QWEN3)

    assert wide == pytest.approx(2 * attention_score_flops_per_token_layer(NARROW))


def test_a_head_dim_of_hidden_over_heads_changes_nothing() -> None:
    stated = replace(NARROW, head_dim=2048 // 32)
    plan = ParallelPlan(tensor=2, pipeline=2, data=8, expert=8)
    kernels = (1, 2, "H100", 989.4, None, 8)

    assert stated.parameters == NARROW.parameters
    assert compute_s_per_token(stated, *kernels) == compute_s_per_token(NARROW, *kernels)
    assert memory_per_gpu(stated, plan) == memory_per_gpu(NARROW, plan)


def test_wider_heads_take_longer_and_more_memory() -> None:
    plan = ParallelPlan(tensor=2, pipeline=2, data=8, expert=8)
    c = cluster_for(HGX_H100, 32)

    assert estimate(QWEN3, c, plan).step_time_s > estimate(NARROW, c, plan).step_time_s
    wide_gb = memory_per_gpu(QWEN3, plan).activations_gb
    assert wide_gb > memory_per_gpu(NARROW, plan).activations_gb


def test_with_a_head_dim_heads_need_not_divide_the_hidden_size() -> None:
    with pytest.raises(InvalidInput) as raised:
        replace(NARROW, hidden_size=2000)

    assert raised.value.field == "workload.attention_heads"
    assert "head_dim" in str(raised.value)
    assert replace(QWEN3, hidden_size=2000).query_width == 32 * 128


def test_a_negative_head_dim_is_refused_naming_it() -> None:
    with pytest.raises(InvalidInput) as raised:
        replace(QWEN3, head_dim=-128)

    assert raised.value.field == "workload.head_dim"
