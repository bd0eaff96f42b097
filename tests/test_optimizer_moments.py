"""Adam's moments stored in BF16 (workload.optimizer_moments; Megatron-Core's
--use-precision-aware-optimizer --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16; DeepSeek-V3
report, arXiv:2412.19437, sec. 3.3.3): 8 B of optimizer states a parameter instead of 12, a
lighter optimizer step and a smaller checkpoint (docs/performance-model.md, sec. 3)."""

from __future__ import annotations

import math

import pytest
from google.protobuf.json_format import ParseDict
from hypothesis import given, settings
from hypothesis import strategies as st

from optimizer._pb.procurement.v1 import estimate_pb2
from optimizer.api import estimate
from optimizer.errors import InvalidInput
from optimizer.performance.compute import optimizer_step_bytes
from optimizer.performance.errors import PlanInfeasible
from optimizer.performance.planner import plan_and_estimate
from optimizer.performance.validation import HGX_H100, cluster_for
from optimizer.workload.presets import preset

# Llama 3 8B on one HGX H100 node, every GPU holding an eighth of the model, nothing sharded
# by ZeRO: its optimizer states are 12 (or 8) bytes of each of the GPU's parameters.
ONE_NODE = {
    "workload": {"model": "llama3-8b"},
    "parallelism": {"tensor": 8, "pipeline": 1, "data": 1, "zero_stage": 0},
    "cluster": {
        "gpus": 8,
        "topology": "single_switch",
        "fabric": "infiniband",
        "nic_gbps_per_node": 3200,
        "gpu_model": "H100",
        "gpu_peak_tflops": 989.4,
        "gpu_memory_gb": 80,
        "intra_node_gbytes_per_s": 450,
    },
}


def _estimate(moments: str) -> estimate_pb2.EstimateResponse:
    spec = {**ONE_NODE, "workload": {**ONE_NODE["workload"], "optimizer_moments": moments}}
    return estimate(ParseDict(spec, estimate_pb2.EstimateRequest()))


def test_bf16_moments_hold_four_bytes_a_parameter_less() -> None:
    fp32, bf16 = _estimate("fp32"), _estimate("bf16")
    per_gpu_parameters = fp32.parameters / 8

    saved_gb = fp32.memory_per_gpu_gb - bf16.memory_per_gpu_gb

    assert saved_gb == pytest.approx(4 * per_gpu_parameters / 1e9, rel=1e-9)


def test_the_default_is_fp32_moments() -> None:
    assert (
        _estimate("fp32").memory_per_gpu_gb
        == estimate(ParseDict(ONE_NODE, estimate_pb2.EstimateRequest())).memory_per_gpu_gb
    )


def test_bf16_moments_move_22_bytes_a_parameter_in_the_optimizer_step_not_30() -> None:
    fp32 = optimizer_step_bytes(preset("llama3-8b"), 8, 1, 1, 1, 1, False)
    bf16 = optimizer_step_bytes(preset("llama3-8b", optimizer_moments="bf16"), 8, 1, 1, 1, 1, False)

    assert bf16 / fp32 == pytest.approx(22 / 30, rel=1e-12)


def test_a_checkpoint_with_bf16_moments_holds_10_bytes_a_parameter_not_14() -> None:
    assert preset("llama3-8b").checkpoint_bytes_per_parameter == 14
    assert preset("llama3-8b", optimizer_moments="bf16").checkpoint_bytes_per_parameter == 10


def test_a_smaller_checkpoint_loses_less_to_checkpoints_and_restarts() -> None:
    assert _estimate("bf16").goodput > _estimate("fp32").goodput


def test_the_value_is_read_in_any_case() -> None:
    assert _estimate("BF16").memory_per_gpu_gb == _estimate("bf16").memory_per_gpu_gb


def test_another_format_is_refused_naming_the_field() -> None:
    with pytest.raises(InvalidInput, match="expected one of fp32, bf16") as refused:
        _estimate("fp8")
    assert refused.value.field == "workload.optimizer_moments"


def test_deepseek_v3_keeps_its_moments_in_bf16_as_its_report_says() -> None:
    assert preset("deepseek-v3").optimizer_moments == "bf16"


@settings(max_examples=15, deadline=None)
@given(
    name=st.sampled_from(["llama3-8b", "mpt-30b", "llama3-70b", "mixtral-8x7b"]),
    gpus=st.sampled_from([16, 64, 256]),
    fabric=st.sampled_from(["infiniband", "roce", "ethernet"]),
)
def test_bf16_moments_never_make_the_best_plan_slower(name: str, gpus: int, fabric: str) -> None:
    """Less memory (more plans fit), a lighter optimizer step and a smaller checkpoint: the
    planner's best time with BF16 moments is never longer than with FP32 ones."""
    c = cluster_for(HGX_H100, gpus, "fat_tree", fabric, 1.0)
    times = {}
    for moments in ("fp32", "bf16"):
        w = preset(name, optimizer_moments=moments, global_batch_size=512)
        try:
            times[moments] = plan_and_estimate(w, c, why=False).training_time_hours
        except PlanInfeasible:
            times[moments] = math.inf

    assert times["bf16"] <= times["fp32"] * (1 + 1e-12)
