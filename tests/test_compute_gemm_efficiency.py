"""Defect 5 of issue 14: the compute model is shape-aware (optimizer/performance/compute.py).

A compute-bound GEMM runs at the generation's large-GEMM efficiency (no roofline docking); a
GEMM whose tiles spill into a second wave, or whose bytes outlast its FLOPs, is slower per
FLOP; the step pays Adam's update, a fixed per-step overhead and a straggler loss that grows
with the data-parallel group. Each test failed on main (one end-to-end constant per
generation times a smooth roofline I/(I + R), none of the step terms).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from optimizer.performance import calibration
from optimizer.performance.compute import (
    TILE_M,
    TILE_N,
    clear_caches,
    compute_s_per_token,
    gemm_seconds,
    split_k,
    wave_efficiency,
)
from optimizer.performance.estimator import estimate, overlapped_s
from optimizer.performance.plan import ParallelPlan
from optimizer.performance.validation import HGX_H100, SELENE, cluster_for
from optimizer.workload.flops import forward_flops_per_token, hardware_flops_per_step
from optimizer.workload.model import Workload

H100_PEAK_FLOPS = 989.4e12
H100_HBM_BYTES_PER_S = 3.35e12


def _dense(hidden: int, layers: int = 8, recompute: str = "selective") -> Workload:
    return Workload(
        name=f"dense-h{hidden}",
        layers=layers,
        hidden_size=hidden,
        ffn_hidden_size=4 * hidden,
        attention_heads=hidden // 128,
        kv_heads=hidden // 128,
        sequence_length=2048,
        vocab_size=51200,
        training_tokens=1e9,
        global_batch_size=512,
        activation_recompute=recompute,
    )


def test_a_compute_bound_model_runs_at_its_large_gemm_efficiency() -> None:
    """h = 12288 at 8 x 2048 tokens per micro-batch: every GEMM is far above the ridge point
    and fills whole waves, so at kernel efficiency 1 its GEMM FLOPs run at peak (less the
    main-loop term K / (K + k0), under 1% here) and attention at the attention efficiency
    (main docked everything by I / (I + R), about 10%)."""
    w = _dense(12288, recompute="none")
    tensor_core_s, _ = compute_s_per_token(w, 8, 1, "H100", 989.4, None)
    f = forward_flops_per_token(w)
    attention_flops = 4 * f.attention_scores  # forward, backward, recomputed in the backward
    gemm_flops = hardware_flops_per_step(w) / w.tokens_per_step - attention_flops
    expected_s = gemm_flops / H100_PEAK_FLOPS + attention_flops / (
        H100_PEAK_FLOPS * calibration.COMPUTE.attention_efficiency
    )
    assert tensor_core_s == pytest.approx(expected_s, rel=0.015)


def test_one_row_of_tiles_more_spills_into_another_wave() -> None:
    """66 x 10 = 660 tiles are 5 full waves of an H100's 132 SMs; one more row of output
    makes 670 tiles, 6 waves: 6/5 of the time for 1/8448 more work."""
    m, n, k = TILE_M * 66, TILE_N * 10, 8192
    full = gemm_seconds(m, n, k, H100_PEAK_FLOPS, H100_HBM_BYTES_PER_S, 132)
    spilled = gemm_seconds(m + 1, n, k, H100_PEAK_FLOPS, H100_HBM_BYTES_PER_S, 132)
    assert wave_efficiency(m, n, 132) == pytest.approx(1.0)
    assert spilled / full == pytest.approx(6 / 5, rel=1e-3)


def test_a_memory_bound_gemm_takes_its_bytes_at_hbm_speed() -> None:
    """A 16-column output (a router over 32k tokens) moves far more bytes than it
    computes."""
    m, n, k = 32768, 16, 4096
    seconds = gemm_seconds(m, n, k, H100_PEAK_FLOPS, H100_HBM_BYTES_PER_S, 132)
    assert seconds == pytest.approx(2 * (m * k + k * n + m * n) / H100_HBM_BYTES_PER_S)


def test_small_hidden_size_under_wide_tensor_parallelism_loses_efficiency() -> None:
    """h = 1024 split 8 ways leaves thin GEMMs (partial waves, memory-bound passes): more
    seconds per FLOP than h = 8192 unsplit."""

    def s_per_flop(w: Workload, tensor: int) -> float:
        tensor_core_s, _ = compute_s_per_token(w, 1, tensor, "H100", 989.4, None)
        return tensor_core_s / (hardware_flops_per_step(w) / w.tokens_per_step)

    assert s_per_flop(_dense(1024), 8) > 1.1 * s_per_flop(_dense(8192), 1)


def test_the_step_pays_adam_on_the_local_shard_at_hbm_speed() -> None:
    """30 B per local parameter (fp32 master, gradient and moments read; master, moments
    and the bf16 copy written), divided over the data-parallel group under ZeRO-1."""
    w = _dense(2048, layers=16)
    plan = ParallelPlan(tensor=1, pipeline=1, data=8, zero_stage=1, micro_batch_size=1)
    est = estimate(w, cluster_for(HGX_H100, 8), plan)
    expected_s = w.parameters / 8 * 30 / H100_HBM_BYTES_PER_S
    assert est.breakdown.optimizer_step_s == pytest.approx(expected_s)
    unsharded = estimate(w, cluster_for(HGX_H100, 8), replace(plan, zero_stage=0))
    assert unsharded.breakdown.optimizer_step_s == pytest.approx(8 * expected_s)


def test_every_step_pays_the_fitted_fixed_overhead() -> None:
    w = _dense(2048, layers=16)
    plan = ParallelPlan(tensor=1, pipeline=1, data=8, zero_stage=1, micro_batch_size=1)
    est = estimate(w, cluster_for(HGX_H100, 8), plan)
    assert est.breakdown.step_overhead_s == calibration.COMPUTE.step_overhead_s > 0
    b = est.breakdown
    assert est.step_time_s == pytest.approx(
        b.compute_s
        + b.pipeline_bubble_s
        + b.exposed_communication_s
        + b.host_cpu_overhead_s
        + b.optimizer_step_s
        + b.step_overhead_s
        + b.micro_batch_overhead_s
    )


def test_compute_per_replica_grows_with_log_of_the_data_parallel_group() -> None:
    """The same work per GPU over 16 or 256 replicas: the larger group waits longer for its
    slowest replica every step (Llama 3 sec. 3.3.4; MegaScale sec. 6), by the fitted share
    per doubling."""
    small = _dense(4096, layers=16)
    large = replace(small, global_batch_size=small.global_batch_size * 16)
    plan = ParallelPlan(tensor=1, pipeline=1, data=16, zero_stage=1, micro_batch_size=4)
    c_small = cluster_for(SELENE, 16)
    c_large = cluster_for(SELENE, 256)
    sc = estimate(small, c_small, plan).breakdown.compute_s
    large_compute = estimate(large, c_large, replace(plan, data=256)).breakdown.compute_s
    per_doubling = calibration.COMPUTE.straggler_per_doubling
    assert per_doubling > 0
    assert large_compute / sc == pytest.approx((1 + 8 * per_doubling) / (1 + 4 * per_doubling))


def test_a_gemm_with_fewer_tiles_than_sms_splits_k_to_fill_them() -> None:
    """BERT-Large's 2,048-token micro-batch against h = 1024: 64 tiles on 132 SMs. cuBLAS
    splits K in two rather than idle half the GPU, so the GEMM runs near a full wave."""
    m, n, k = 2048, 1024, 1024
    assert split_k(m, n, k, 132) == 2
    assert wave_efficiency(m, n, 132, splits=2) == pytest.approx(128 / 132)
    one_wave_s = 2 * m * n * k / (H100_PEAK_FLOPS * 128 / 132)
    k0 = calibration.COMPUTE.gemm_inner_overhead_elements
    expected_s = one_wave_s * (k / 2 + k0) / (k / 2)
    assert gemm_seconds(m, n, k, H100_PEAK_FLOPS, H100_HBM_BYTES_PER_S, 132) == pytest.approx(
        expected_s
    )


@pytest.fixture
def compute_constants_restored() -> Iterator[None]:
    saved = calibration.COMPUTE
    yield
    calibration.set_compute_constants(saved)
    clear_caches()


def test_element_wise_time_is_the_fitted_passes_over_the_materialised_bytes(
    compute_constants_restored: None,
) -> None:
    """issue 14 accuracy: the memory passes are a fitted constant, not the fused minimum of
    3; twice the passes, twice the element-wise seconds, the tensor-core seconds unchanged.
    A full recomputation repeats the forward's third of them (main: 3 + 1 fixed passes)."""
    w = _dense(2048)
    calibration.set_compute_constants(replace(calibration.COMPUTE, elementwise_passes=4.0))
    clear_caches()
    gemm_4, elementwise_4 = compute_s_per_token(w, 4, 1, "H100", 989.4, None)
    _, full_4 = compute_s_per_token(
        replace(w, activation_recompute="full"), 4, 1, "H100", 989.4, None
    )
    calibration.set_compute_constants(replace(calibration.COMPUTE, elementwise_passes=8.0))
    clear_caches()
    gemm_8, elementwise_8 = compute_s_per_token(w, 4, 1, "H100", 989.4, None)
    assert gemm_8 == gemm_4
    assert elementwise_8 == pytest.approx(2 * elementwise_4)
    assert full_4 == pytest.approx(4 / 3 * elementwise_4)


def test_overlapped_compute_slows_by_the_fitted_share(compute_constants_restored: None) -> None:
    """issue 14 accuracy: while a collective runs beside it, compute stretches by the fitted
    share of the overlap (main: a fixed 10 %); communication longer than the compute still
    sets the time."""
    calibration.set_compute_constants(replace(calibration.COMPUTE, overlap_compute_slowdown=0.3))
    assert overlapped_s(1.0, 0.5) == pytest.approx(1.0 + 0.3 * 0.5)
    assert overlapped_s(1.0, 2.0) == 2.0
