"""Defect 8 of issue 14: FP8 and MoE pay what they cost.

FP8 GEMMs reach a lower fraction of their doubled peak than BF16 ones and every FP8 GEMM
input is cast (Transformer Engine); NVIDIA NeMo measures 1.3-1.5x end-to-end over BF16 on
H100 for GPT-3 175B and Llama (main predicted 1.58x; 1.51x now, with the FP8 GEMMs'
efficiency fitted on llm-foundry's H100 FP8 table). MoE pays its router, token
permutation and the busiest expert (main timed an MoE step as its active FLOPs).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from optimizer.performance.compute import (
    GEMM_BYTES,
    MOE_PERMUTE_PASSES,
    compute_s_per_token,
)
from optimizer.performance.estimator import estimate
from optimizer.performance.plan import ParallelPlan, PartialPlan
from optimizer.performance.planner import plan_and_estimate
from optimizer.performance.validation import HGX_H100, cluster_for
from optimizer.workload.model import Workload
from optimizer.workload.presets import preset

H100_HBM_BYTES_PER_S = 3.35e12


def test_fp8_speeds_gpt3_175b_on_h100_up_within_the_published_range() -> None:
    """NeMo's GPT-3 175B recipe on 128 H100 (t 4, p 8, v 6, micro-batch 1): FP8 over BF16
    within the 1.3-1.5x NVIDIA publishes for this class of model, to within 0.05: the blog's
    range is a round figure for many models, not a measurement of this plan, and the FP8 GEMM
    efficiency fitted on llm-foundry's H100 FP8 table (tests/test_fp8_fit.py) puts this
    GEMM-bound model at 1.51x. Main's 1.58x (no casts, BF16's efficiency) stays outside."""
    w = preset("gpt3-175b")
    c = cluster_for(HGX_H100, 128)
    plan = PartialPlan(tensor=4, pipeline=8, virtual_pipeline=6, micro_batch_size=1)
    bf16 = plan_and_estimate(w, c, plan)
    fp8 = plan_and_estimate(replace(w, precision="fp8"), c, plan)
    assert 1.3 <= bf16.step_time_s / fp8.step_time_s <= 1.55


def test_fp8_pays_cast_passes_on_top_of_bf16_element_wise_work() -> None:
    w = preset("llama3-8b")
    _, bf16_elementwise_s = compute_s_per_token(w, 1, 1, "H100", 989.4, 1978.9)
    _, fp8_elementwise_s = compute_s_per_token(
        replace(w, precision="fp8"), 1, 1, "H100", 989.4, 1978.9
    )
    assert fp8_elementwise_s > 1.1 * bf16_elementwise_s


def _mixtral_and_dense_equivalent() -> tuple[Workload, Workload]:
    """Mixtral 8x7B and the dense model with the same active FLOPs per token (one FFN as
    wide as its two active experts; the router is the only difference)."""
    moe = preset("mixtral-8x7b")
    dense = replace(moe, experts=1, experts_per_token=1, ffn_hidden_size=2 * moe.ffn_hidden_size)
    assert dense.active_parameters == pytest.approx(moe.active_parameters, rel=1e-3)
    return moe, dense


def test_an_moe_step_takes_longer_than_its_dense_equivalent_active_flops() -> None:
    moe, dense = _mixtral_and_dense_equivalent()
    c = cluster_for(HGX_H100, 64)
    plan = ParallelPlan(tensor=2, pipeline=4, data=8, expert=8, zero_stage=1, micro_batch_size=1)
    moe_est = estimate(moe, c, plan)
    dense_est = estimate(dense, c, replace(plan, expert=1))
    assert moe_est.breakdown.compute_s > 1.1 * dense_est.breakdown.compute_s
    assert moe_est.step_time_s > dense_est.step_time_s


def test_expert_parallel_ranks_wait_for_the_busiest_expert() -> None:
    """The same tokens per expert: with 8-way expert parallelism the expert GEMMs take the
    busiest rank's share (capacity factor ~1.2), without it every rank runs all experts."""
    moe, _ = _mixtral_and_dense_equivalent()
    alone, _ = compute_s_per_token(moe, 8, 1, "H100", 989.4, None, 1)
    spread, _ = compute_s_per_token(moe, 1, 1, "H100", 989.4, None, 8)
    assert moe.busiest_expert_load(1) == 1.0
    assert spread > alone * 1.1


def test_moe_pays_token_permutation_at_hbm_speed() -> None:
    """Permute and unpermute k copies of each token's hidden vector, forward and backward:
    at least that many more element-wise bytes than the dense equivalent."""
    moe, dense = _mixtral_and_dense_equivalent()
    _, moe_s = compute_s_per_token(moe, 1, 1, "H100", 989.4, None)
    _, dense_s = compute_s_per_token(dense, 1, 1, "H100", 989.4, None)
    permutation_bytes = (
        MOE_PERMUTE_PASSES * 2 * GEMM_BYTES * moe.experts_per_token * moe.hidden_size * moe.layers
    )
    assert moe_s - dense_s >= permutation_bytes / H100_HBM_BYTES_PER_S
