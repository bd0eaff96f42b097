"""The estimator on a complete plan: its arithmetic, its range and its refusals."""

from __future__ import annotations

from dataclasses import replace

import pytest

from optimizer.errors import InvalidInput
from optimizer.performance.errors import PlanInfeasible
from optimizer.performance.estimator import estimate
from optimizer.performance.plan import ParallelPlan
from optimizer.workload.pipeline_layout import pipeline_layout
from optimizer.workload.presets import preset
from tests.estimator_fixtures import cluster

LLAMA8 = preset("llama3-8b")
PLAN = ParallelPlan(tensor=2, pipeline=2, data=16, virtual_pipeline=2, micro_batch_size=1)


def test_breakdown_adds_up_to_the_step_time() -> None:
    e = estimate(LLAMA8, cluster(64), PLAN)
    b = e.breakdown
    # issue 14 added the optimizer update and the per-step and per-micro-batch overheads.
    assert e.step_time_s == pytest.approx(
        b.compute_s
        + b.pipeline_bubble_s
        + b.exposed_communication_s
        + b.host_cpu_overhead_s
        + b.optimizer_step_s
        + b.step_overhead_s
        + b.micro_batch_overhead_s
    )


def test_training_time_is_steps_times_step_time() -> None:
    e = estimate(LLAMA8, cluster(64), PLAN)
    # issue 14: steps x step time is the productive time; failures, checkpoints and restarts
    # stretch it into the training time by the goodput factor (tests/test_goodput*.py).
    assert e.productive_training_time_hours == pytest.approx(e.steps * e.step_time_s / 3600)
    assert e.training_time_hours == pytest.approx(e.productive_training_time_hours / e.goodput)
    assert e.steps == pytest.approx(LLAMA8.training_tokens / (512 * 8192))


def test_range_brackets_the_expected_time() -> None:
    e = estimate(LLAMA8, cluster(64, fabric="ethernet", nic_gbps_per_node=400), PLAN)
    assert e.training_time_hours_low < e.training_time_hours < e.training_time_hours_high


def test_hardware_flops_exceed_model_flops_only_by_recomputation() -> None:
    full = estimate(preset("llama3-8b", activation_recompute="full"), cluster(64), PLAN)
    assert full.hardware_tflops_per_gpu > full.model_tflops_per_gpu
    assert full.mfu == pytest.approx(full.model_tflops_per_gpu / 989.4)


def test_pipeline_bubble_follows_narayanan_1f1b_formula() -> None:
    """Bubble = (p - 1) / (v m) of the ideal time (Narayanan et al. SC'21 sec. 2.2)."""
    e = estimate(LLAMA8, cluster(64), PLAN)
    m = 512 // 16
    b = e.breakdown
    # issue 14: the 1.7-layer output layer puts 17 + 15 layers on the stages, so the first
    # stage's two chunks are 9 + 8 layers and the bubble passes 9-layer chunks (x 18/17).
    imbalance = pipeline_layout(LLAMA8, 2, 2).chunk_imbalance
    assert imbalance == pytest.approx(18 / 17)
    assert b.pipeline_bubble_s == pytest.approx(
        (2 - 1) / (2 * m) * imbalance * (b.compute_s + b.tensor_parallel_s + b.all_to_all_s)
    )


def test_fp8_is_faster_than_bf16_on_hopper() -> None:
    bf16 = estimate(LLAMA8, cluster(64), PLAN)
    fp8 = estimate(preset("llama3-8b", precision="fp8"), cluster(64), PLAN)
    assert fp8.step_time_s < bf16.step_time_s


def test_fp8_on_a_gpu_without_fp8_names_the_field() -> None:
    with pytest.raises(InvalidInput, match=r"workload.precision"):
        estimate(preset("llama3-8b", precision="fp8"), cluster(64, gpu="A100"), PLAN)


def test_fp8_on_a_hopper_without_its_fp8_peak_asks_for_the_peak() -> None:
    """An H100 request without gpu_peak_fp8_tflops was told 'H100 has no
    gpu_peak_fp8_tflops', as if the GPU had no FP8; the request lacks the figure."""
    c = replace(cluster(64), gpu_peak_fp8_tflops=None)
    with pytest.raises(InvalidInput, match=r"workload.precision") as err:
        estimate(preset("llama3-8b", precision="fp8"), c, PLAN)
    assert "expected cluster.gpu_peak_fp8_tflops" in str(err.value)
    assert "or precision bf16" in str(err.value)


@pytest.mark.parametrize(
    ("plan", "field"),
    [
        (ParallelPlan(2, 2, 8), "parallelism"),  # 32 != 64 GPUs
        (ParallelPlan(3, 1, 21), "parallelism"),  # 63 != 64 GPUs
        (ParallelPlan(64, 1, 1), "parallelism.tensor"),  # 64 does not divide 32 heads
        (ParallelPlan(1, 64, 1), "parallelism.pipeline"),  # more stages than layers
        # issue 14: uneven chunks are allowed, and the end stages may give a chunk to the
        # embedding and the output layer; 2 stages x 18 chunks need 36 > 32 + 2 layers
        (ParallelPlan(1, 2, 32, virtual_pipeline=18), "parallelism.virtual_pipeline"),
        (ParallelPlan(1, 1, 64, micro_batch_size=3), "parallelism.micro_batch_size"),
        (ParallelPlan(1, 1, 64, zero_stage=4), "parallelism.zero_stage"),
        (ParallelPlan(1, 1, 64, expert=2), "parallelism.expert"),  # dense model
    ],
)
def test_impossible_plans_name_their_field(plan: ParallelPlan, field: str) -> None:
    with pytest.raises(InvalidInput, match=field):
        estimate(LLAMA8, cluster(64), plan)


def test_a_plan_that_does_not_fit_memory_is_infeasible() -> None:
    with pytest.raises(PlanInfeasible, match="GB"):
        estimate(preset("llama3-70b"), cluster(64), ParallelPlan(1, 1, 64, zero_stage=0))


def test_unknown_fabric_names_the_field() -> None:
    with pytest.raises(InvalidInput, match=r"cluster.fabric"):
        estimate(LLAMA8, cluster(64, fabric="omnipath"), PLAN)


def test_zero_bandwidth_names_the_field() -> None:
    with pytest.raises(InvalidInput, match=r"cluster.nic_gbps_per_node"):
        cluster(64, nic_gbps_per_node=0.0)


def test_expert_parallel_all_to_all_appears_only_for_moe() -> None:
    moe = estimate(
        preset("mixtral-8x7b"), cluster(64), ParallelPlan(1, 1, 64, expert=8, zero_stage=3)
    )
    dense = estimate(LLAMA8, cluster(64), ParallelPlan(1, 1, 64))
    assert moe.breakdown.all_to_all_s > 0 == dense.breakdown.all_to_all_s


def test_tensor_parallelism_beyond_a_node_uses_the_network() -> None:
    # 16 K/V heads: Llama 3 70B's 8 split over at most 8 tensor ranks (test_tensor_split.py)
    w = preset("llama3-70b", kv_heads=16)
    inside = estimate(w, cluster(64), ParallelPlan(8, 2, 4))
    across = estimate(w, cluster(64), ParallelPlan(16, 1, 4))
    assert across.breakdown.tensor_parallel_s > 2 * inside.breakdown.tensor_parallel_s
