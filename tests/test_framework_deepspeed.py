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
lets its 1T run of 1,024 A100s fit in 80 GB; its engine runs no mixture of experts under
ZeRO-3 ("MoE not supported with Stage 3"). Its context parallelism is DeepSpeed-Ulysses
(Jacobs et al., arXiv:2309.14509), not ring attention: all-to-alls that hand each rank whole
heads, which the attention waits for, run by Megatron-DeepSpeed with tensor parallel size 1.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optimizer._pb.procurement.v1 import estimate_pb2
from optimizer.errors import InvalidInput
from optimizer.performance import calibration
from optimizer.performance.convert import workload_from_proto
from optimizer.performance.errors import PlanInfeasible
from optimizer.performance.estimator import estimate, pipeline_traffic, plan_traffic
from optimizer.performance.plan import ParallelPlan, PartialPlan
from optimizer.performance.planner import plan_and_estimate
from optimizer.workload.memory import DEEPSPEED_MAX_LIVE_PARAMETERS, memory_per_gpu
from optimizer.workload.presets import preset
from tests.estimator_fixtures import cluster
from tests.test_planner_exact import exhaustive

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
    """Before: Llama 3 405B on 128 H100s ran t4 p15 d2 with ZeRO-2 through DeepSpeed. (Since
    session 32 counts every stage's memory, 512 GPUs are the fewest it fits.)"""
    w = replace(preset("llama3-405b"), framework="deepspeed")
    plan = plan_and_estimate(w, cluster(512)).plan
    assert plan.pipeline > 1
    assert plan.zero_stage <= 1


MIXTRAL = replace(preset("mixtral-8x7b"), framework="deepspeed")


def test_the_planner_never_gives_a_deepspeed_mixture_of_experts_zero_3() -> None:
    """Before: Mixtral 8x7B on 64 H100s ran t2 d32 with ZeRO-3 (FSDP-style, no re-sharding)
    through DeepSpeed, whose engine asserts 'MoE not supported with Stage 3'."""
    assert plan_and_estimate(MIXTRAL, cluster(64)).plan.zero_stage <= 2


@pytest.mark.parametrize(
    "fixed",
    [
        PartialPlan(zero_stage=3),
        PartialPlan(
            tensor=2, pipeline=1, data=32, zero_stage=3, micro_batch_size=1, virtual_pipeline=1
        ),
    ],
    ids=["partial", "complete"],
)
def test_a_deepspeed_mixture_of_experts_under_zero_3_is_refused(fixed: PartialPlan) -> None:
    with pytest.raises(InvalidInput) as err:
        plan_and_estimate(MIXTRAL, cluster(64), fixed)
    assert err.value.field == "parallelism.zero_stage"
    assert "MoE not supported with Stage 3" in str(err.value)


LONG = replace(preset("llama3-8b"), sequence_length=65_536, global_batch_size=64)  # 8 K/V heads
ULYSSES = ParallelPlan(tensor=1, pipeline=1, data=8, context=8, zero_stage=1, micro_batch_size=1)


def test_the_planner_gives_deepspeed_only_context_degrees_ulysses_runs() -> None:
    """Before: Llama 3 8B at 65,536 tokens on 64 H100s ran context 32 through DeepSpeed, more
    ranks than its 8 K/V heads (and Llama 3 70B tensor 2 with context 16)."""
    plan = plan_and_estimate(replace(LONG, framework="deepspeed"), cluster(64)).plan
    assert plan.context > 1
    assert LONG.kv_heads % plan.context == 0
    assert plan.tensor == 1
    # Megatron's ring attention has no such limit: 32 ranks of 8 K/V heads still run
    ring = plan_and_estimate(LONG, cluster(64), PartialPlan(context=32)).plan
    assert ring.context == 32 and LONG.kv_heads % ring.context != 0


def test_ulysses_moves_q_k_v_and_the_output_by_all_to_all() -> None:
    w = replace(LONG, framework="deepspeed")
    part = plan_traffic(w, ULYSSES, 8, 8).context
    assert part is not None
    cp, tokens = 8, 65_536 / 8
    layer_passes = 64 // 8 * w.layers * 2  # micro-batches x layers x (forward, backward)
    size = (2 + 2 * w.kv_ratio) * w.hidden_size * tokens * 2  # Q, O, and K, V (GQA), bf16
    assert part.pattern == "all_to_all"
    assert part.remote_share == 0.0  # eight ranks in one node
    assert part.cost.bytes == pytest.approx((cp - 1) / cp * size * layer_passes)
    assert part.cost.steps == pytest.approx(4 * (cp - 1) * layer_passes)


def test_nothing_hides_ulysses_all_to_alls_while_attention_hides_the_ring() -> None:
    ring = estimate(LONG, cluster(64), ULYSSES).breakdown
    ulysses = estimate(replace(LONG, framework="deepspeed"), cluster(64), ULYSSES).breakdown
    assert ring.exposed_communication_s < ring.context_parallel_s
    assert ulysses.exposed_communication_s >= ulysses.context_parallel_s > 0


def test_deepspeed_needs_context_chunks_not_twice_as_many() -> None:
    """Ulysses attends over the whole sequence of its heads; ring attention balances a causal
    mask over 2 x context chunks."""
    w = replace(LONG, sequence_length=8 * 4_097, global_batch_size=64)
    with pytest.raises(InvalidInput) as err:
        estimate(w, cluster(64), ULYSSES)
    assert err.value.field == "parallelism.context"
    assert "16 equal chunks" in str(err.value)
    assert estimate(replace(w, framework="deepspeed"), cluster(64), ULYSSES).step_time_s > 0


def test_a_fixed_context_degree_ulysses_runs_without_tensor_parallelism_is_planned() -> None:
    """Context 2 under DeepSpeed leaves the tensor degree to the planner: Ulysses runs it at
    tensor 1. It was refused ("context 2 with workload.framework deepspeed") because the
    planner offered a fixed context with every tensor degree and timed a tensor-2 plan
    first."""
    est = plan_and_estimate(MIXTRAL, cluster(64), PartialPlan(context=2))
    assert (est.plan.context, est.plan.tensor) == (2, 1)


@pytest.mark.parametrize(
    ("plan", "why"),
    [
        (replace(ULYSSES, tensor=2, data=4), "tensor parallel size 1 only"),
        (replace(ULYSSES, context=16, data=4), "do not split evenly"),
    ],
    ids=["with-tensor", "more-ranks-than-kv-heads"],
)
def test_what_ulysses_cannot_run_is_refused_naming_the_context(
    plan: ParallelPlan, why: str
) -> None:
    with pytest.raises(InvalidInput) as err:
        estimate(replace(LONG, framework="deepspeed"), cluster(64), plan)
    assert err.value.field == "parallelism.context"
    assert why in str(err.value)


@pytest.mark.parametrize("fabric", ["infiniband", "ethernet"])
def test_a_deepspeed_long_sequence_search_finds_the_exhaustive_loops_plan(fabric: str) -> None:
    """The bound leaves context parallelism's time out (at least 0), so exposed all-to-alls
    keep it a bound."""
    w, c = replace(LONG, framework="deepspeed"), cluster(32, fabric=fabric)
    _, plan, used = exhaustive(w, c)
    est = plan_and_estimate(w, c)
    assert (est.plan, est.gpus_used) == (plan, used)
    assert plan.context > 1


@settings(max_examples=20, deadline=None)
@given(
    kv_heads=st.sampled_from([2, 4, 8, 32]),
    sequence=st.sampled_from([32_768, 65_536, 8 * 4_097]),
    gpus=st.sampled_from([16, 64, 128]),
    moe=st.booleans(),
)
def test_every_deepspeed_plan_the_planner_gives_is_one_deepspeed_runs(
    kv_heads: int, sequence: int, gpus: int, moe: bool
) -> None:
    """What the planner recommends passes check_plan (estimated as given, not refused)."""
    base = preset("mixtral-8x7b" if moe else "mpt-7b", global_batch_size=64)
    w = replace(base, framework="deepspeed", kv_heads=kv_heads, sequence_length=sequence)
    try:
        plan = plan_and_estimate(w, cluster(gpus)).plan
    except PlanInfeasible:
        return
    estimate(w, cluster(plan.gpus), plan)
    assert plan.context == 1 or (plan.tensor == 1 and w.kv_heads % plan.context == 0)
    assert not (moe and plan.zero_stage == 3)
