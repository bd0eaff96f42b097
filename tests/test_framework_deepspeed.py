"""DeepSpeed as the framework (issue 14, `workload.framework`).

DeepSpeed's PipelineEngine (Megatron-DeepSpeed, GPT-NeoX, MT-NLG) differs from Megatron-LM's
schedules in three ways the model keeps: it has no interleaving (1F1B, one chunk per stage), it
runs ZeRO stage 0 or 1 only (it asserts "ZeRO-2 and ZeRO-3 are incompatible with pipeline
parallelism"), and its stages run in lock-step, slower per micro-batch (the fitted
deepspeed_pipeline_efficiency: MT-NLG's 126 TFLOP/s against Megatron-LM's 159 on the same
Selene nodes and model). Its sends are split over the tensor ranks as Megatron's are
(``is_pipe_partitioned``), so they cost the same. A plan without a pipeline never meets the
engine. DeepSpeed's ZeRO-3 gathers parameters module by module under
stage3_max_live_parameters (default 1e9), not a layer at a time as FSDP does, which is what
lets its 1T run of 1,024 A100s fit in 80 GB.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from optimizer._pb.procurement.v1 import estimate_pb2
from optimizer.errors import InvalidInput
from optimizer.performance import calibration
from optimizer.performance.convert import workload_from_proto
from optimizer.performance.estimator import estimate, pipeline_traffic
from optimizer.performance.plan import ParallelPlan, PartialPlan
from optimizer.performance.planner import plan_and_estimate
from optimizer.workload.memory import DEEPSPEED_MAX_LIVE_PARAMETERS, memory_per_gpu
from optimizer.workload.presets import preset
from tests.estimator_fixtures import cluster

MEGATRON = preset("gpt3-175b")
DEEPSPEED = replace(MEGATRON, framework="deepspeed")
PIPELINED = ParallelPlan(tensor=8, pipeline=8, data=4, zero_stage=1, micro_batch_size=1)


def test_the_default_framework_is_megatron() -> None:
    assert preset("llama3-70b").framework == "megatron"


def test_the_request_field_is_read_in_any_case() -> None:
    w = workload_from_proto(estimate_pb2.Workload(model="gpt3-175b", framework=" DeepSpeed "))
    assert w.framework == "deepspeed"


def test_an_unknown_framework_is_refused_naming_the_field() -> None:
    with pytest.raises(InvalidInput) as err:
        workload_from_proto(estimate_pb2.Workload(model="gpt3-175b", framework="jax"))
    assert err.value.field == "workload.framework"
    assert "megatron, deepspeed" in str(err.value)


def test_deepspeed_splits_its_sends_over_the_tensor_ranks_as_megatron_does() -> None:
    assert pipeline_traffic(DEEPSPEED, PIPELINED, 8, 8) == pipeline_traffic(
        MEGATRON, PIPELINED, 8, 8
    )


def test_a_deepspeed_pipeline_computes_slower_by_the_fitted_efficiency() -> None:
    c = cluster(256, gpu="A100")
    fast = estimate(MEGATRON, c, PIPELINED).breakdown.compute_s
    slow = estimate(DEEPSPEED, c, PIPELINED).breakdown.compute_s
    efficiency = calibration.COMPUTE.deepspeed_pipeline_efficiency
    assert efficiency < 1.0
    assert slow == pytest.approx(fast / efficiency)


def test_without_a_pipeline_the_framework_changes_nothing() -> None:
    """DeepSpeed's ZeRO-3 data parallelism (the Azure runs) never meets the PipelineEngine."""
    c = cluster(64)
    plan = ParallelPlan(tensor=8, pipeline=1, data=8, zero_stage=3, micro_batch_size=1)
    w = preset("llama3-70b")
    assert (
        estimate(replace(w, framework="deepspeed"), c, plan).training_time_hours
        == estimate(w, c, plan).training_time_hours
    )


def test_the_planner_never_interleaves_a_deepspeed_pipeline() -> None:
    c = cluster(1024, gpu="A100")
    fixed = PartialPlan(tensor=8, pipeline=16)
    assert plan_and_estimate(MEGATRON, c, fixed).plan.virtual_pipeline > 1
    assert plan_and_estimate(DEEPSPEED, c, fixed).plan.virtual_pipeline == 1


@pytest.mark.parametrize(
    ("fixed", "field", "why"),
    [
        (PartialPlan(virtual_pipeline=2), "parallelism.virtual_pipeline", "one chunk per stage"),
        (
            PartialPlan(
                tensor=8, pipeline=8, data=4, virtual_pipeline=2, zero_stage=1, micro_batch_size=1
            ),
            "parallelism.virtual_pipeline",
            "one chunk per stage",
        ),
        (PartialPlan(pipeline=8, zero_stage=3), "parallelism.zero_stage", "incompatible"),
        (
            PartialPlan(tensor=8, pipeline=8, data=4, zero_stage=2, micro_batch_size=1),
            "parallelism.zero_stage",
            "incompatible",
        ),
    ],
    ids=["interleaved-partial", "interleaved-complete", "zero3-partial", "zero2-complete"],
)
def test_what_the_pipeline_engine_cannot_run_is_refused_naming_the_field(
    fixed: PartialPlan, field: str, why: str
) -> None:
    with pytest.raises(InvalidInput) as err:
        plan_and_estimate(DEEPSPEED, cluster(256, gpu="A100"), fixed)
    assert err.value.field == field
    assert "PipelineEngine" in str(err.value)
    assert why in str(err.value)


ZERO3 = ParallelPlan(tensor=1, pipeline=1, data=1024, zero_stage=3, micro_batch_size=1)


def test_deepspeed_zero3_holds_at_most_its_live_parameters_gathered() -> None:
    w = preset("megatron-1t")  # a layer of 7.9B parameters: FSDP holds two gathered
    fsdp = memory_per_gpu(w, ZERO3).weights_gb
    deepspeed = memory_per_gpu(replace(w, framework="deepspeed"), ZERO3).weights_gb
    sharded_gb = w.parameters * 2 / 1024 / 1e9
    assert deepspeed == pytest.approx(sharded_gb + 2 * DEEPSPEED_MAX_LIVE_PARAMETERS / 1e9)
    assert fsdp > deepspeed + 25


def test_deepspeed_zero3_of_a_small_model_gathers_what_fsdp_does() -> None:
    w = preset("llama3-8b")  # 0.2B parameters a layer, under the live cap
    plan = ParallelPlan(tensor=1, pipeline=1, data=64, zero_stage=3, micro_batch_size=1)
    assert memory_per_gpu(replace(w, framework="deepspeed"), plan) == memory_per_gpu(w, plan)


def test_the_planner_never_pipelines_a_deepspeed_job_under_zero_2_or_3() -> None:
    """Before: Llama 3 405B on 128 H100s ran t4 p15 d2 with ZeRO-2 through DeepSpeed."""
    w = replace(preset("llama3-405b"), framework="deepspeed")
    plan = plan_and_estimate(w, cluster(128)).plan
    assert plan.pipeline > 1
    assert plan.zero_stage <= 1
