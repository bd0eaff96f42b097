"""MoE parallel folding (Megatron-Core ``--expert-tensor-parallel-size``; Liu et al., arXiv:
2504.14960): ``parallelism.expert_tensor`` 1 gives the experts their own grid over the same
GPUs, each expert whole on its rank, so an expert degree may span the tensor ranks (NVIDIA's
Qwen3-235B-A22B on H100: EP 32 over TP 2 x DP 16). Its GEMMs, memory, collectives and the
planner's choice."""

from __future__ import annotations

from dataclasses import replace

import pytest
from google.protobuf.json_format import ParseDict

from optimizer import api
from optimizer._pb.procurement.v1 import estimate_pb2
from optimizer.errors import InvalidInput
from optimizer.performance.compute import (
    OPTIMIZER_STEP_BYTES_PER_PARAMETER,
    compute_s_per_token,
    optimizer_step_bytes,
)
from optimizer.performance.convert import request_from_proto
from optimizer.performance.estimator import (
    estimate,
    expert_collective,
    tensor_traffic,
)
from optimizer.performance.plan import ParallelPlan, PartialPlan
from optimizer.performance.planner import plan_and_estimate
from optimizer.performance.validation import HGX_H100, cluster_for, unseen_runs
from optimizer.workload.model import Workload
from optimizer.workload.presets import preset

QWEN3_235B = next(r for r in unseen_runs() if r.id == "qwen3-235b-a22b-256xh100-dropless")
H100 = ("H100", 989.4, 1978.9)


def _qwen3_235b() -> tuple[Workload, ParallelPlan]:
    """The row's workload and its stated layout (ZeRO 1, the distributed optimizer)."""
    request = ParseDict(QWEN3_235B.request, estimate_pb2.EstimateRequest())
    w, c, fixed, _ = request_from_proto(request)
    plan = replace(fixed, zero_stage=1).complete()
    assert plan is not None and c.gpus == 256
    return w, plan


def test_an_expert_degree_spans_the_tensor_ranks_only_folded() -> None:
    """EP 32 over TP 2 x DP 16 runs folded; at the tensor degree it is refused, and the
    refusal says what would run it."""
    w, plan = _qwen3_235b()
    c = cluster_for(HGX_H100, 256)
    assert estimate(w, c, plan).plan.expert == 32
    with pytest.raises(InvalidInput) as e:
        estimate(w, c, replace(plan, expert_tensor=2))
    assert e.value.field == "parallelism.expert"
    assert "expert_tensor 1" in e.value.problem


def test_folded_experts_are_split_as_the_unfolded_at_a_tensor_times_wider_expert_degree() -> None:
    """Expert degree 2e folded (each expert whole) splits the experts, and shards their
    optimizer states, as e at tensor degree 2 does: the same bytes per GPU; at the same
    expert degree, replicated (ZeRO 0), a folded GPU holds whole experts, twice the bytes."""
    w, _ = _qwen3_235b()
    for sharded in (True, False):
        folded = optimizer_step_bytes(w, 2, 8, 16, 32, 1, sharded, expert_tensor=1)
        assert folded == pytest.approx(optimizer_step_bytes(w, 2, 8, 16, 16, 1, sharded))
    whole = optimizer_step_bytes(w, 2, 8, 16, 16, 1, False, expert_tensor=1)
    split = optimizer_step_bytes(w, 2, 8, 16, 16, 1, False)
    per_parameter = OPTIMIZER_STEP_BYTES_PER_PARAMETER
    assert whole - split == pytest.approx(per_parameter * w.expert_parameters / (8 * 16 * 2))


def test_folded_experts_run_their_flops_in_wider_gemms() -> None:
    """The same expert FLOPs a GPU (expert degree 32 folded, 16 at tensor 2) as half as many
    GEMMs twice as wide (1,536 columns, not 768): never slower, here faster."""
    w, _ = _qwen3_235b()
    folded, _ = compute_s_per_token(w, 1, 2, *H100, 32, 1)
    unfolded, _ = compute_s_per_token(w, 1, 2, *H100, 16)
    assert folded < unfolded


def test_folded_moe_layers_run_half_the_tensor_collectives() -> None:
    """Only the attention's all-gathers and reduce-scatters remain: each tensor rank routes
    its own sequence shard. A dense model's are all there whatever the field would say."""
    w, plan = _qwen3_235b()
    unfolded = replace(plan, expert=16, expert_tensor=2)
    half = tensor_traffic(w, plan, 8, 8).cost.bytes
    assert half == pytest.approx(0.5 * tensor_traffic(w, unfolded, 8, 8).cost.bytes)


def test_a_folded_expert_group_packs_consecutive_gpus() -> None:
    """EP 8 folded over TP 2 x DP 4 is one 8-GPU host; at the tensor degree EP 8 takes 8 data
    ranks, two hosts, and half its all-to-all leaves the host."""
    w = preset("mixtral-8x7b")
    folded = ParallelPlan(2, 1, 4, 8, expert_tensor=1)
    unfolded = ParallelPlan(2, 1, 8, 8)
    inside = expert_collective(w, folded, 8, 8)
    across = expert_collective(w, unfolded, 8, 8)
    assert inside is not None and across is not None
    assert (inside.remote_share, across.remote_share) == (0.0, 0.5)


@pytest.mark.parametrize(
    ("model", "tensor", "expert_tensor", "framework", "expected"),
    [
        ("llama3-8b", 2, 1, "megatron", "mixture-of-experts workloads only"),
        ("mixtral-8x7b", 4, 2, "megatron", "expected 1 (each expert whole on its rank)"),
        ("mixtral-8x7b", 2, 1, "deepspeed", "Megatron-Core's"),
    ],
)
def test_an_expert_tensor_degree_no_stack_runs_is_refused_naming_the_field(
    model: str, tensor: int, expert_tensor: int, framework: str, expected: str
) -> None:
    w = preset(model, framework=framework)
    c = cluster_for(HGX_H100, 64)
    plan = ParallelPlan(tensor, 1, 64 // tensor, 1, expert_tensor=expert_tensor)
    with pytest.raises(InvalidInput) as e:
        estimate(w, c, plan)
    assert e.value.field == "parallelism.expert_tensor"
    assert expected in e.value.problem


def test_the_planner_folds_where_the_request_asks_an_expert_degree_beyond_the_data_ranks() -> None:
    """TP 2, EP 32 on 256 GPUs at PP 8 leaves 16 data ranks: only folding runs it, and the
    planner finds it without being told."""
    w, _ = _qwen3_235b()
    c = cluster_for(HGX_H100, 256)
    fixed = PartialPlan(tensor=2, pipeline=8, expert=32)
    assert plan_and_estimate(w, c, fixed).plan.expert_tensor == 1


@pytest.mark.parametrize("gpus", [128, 256])
def test_folding_as_a_choice_never_gives_a_slower_best_plan(gpus: int) -> None:
    """The planner with folding to choose from is never slower than held to the tensor
    degree (its search is exact: more plans, never a worse best)."""
    w = preset("mixtral-8x22b")
    c = cluster_for(HGX_H100, gpus)
    free = plan_and_estimate(w, c, PartialPlan())
    held = min(
        (plan_and_estimate(w, c, PartialPlan(tensor=t, expert_tensor=t)) for t in (1, 2, 4, 8)),
        key=lambda e: e.step_time_s,
    )
    assert free.step_time_s <= held.step_time_s * (1 + 1e-9)


def test_the_answer_states_the_expert_tensor_degree() -> None:
    response = api.estimate(ParseDict(QWEN3_235B.request, estimate_pb2.EstimateRequest()))
    plan = response.parallelism
    assert (plan.tensor, plan.expert, plan.expert_tensor) == (2, 32, 1)


def test_a_plan_at_the_tensor_degree_stays_there_when_its_tensor_degree_changes() -> None:
    """One form per plan: the default (and an expert tensor degree equal to the tensor's) is
    kept as "the tensor degree", so a plan re-cut to another tensor degree is not folded."""
    plan = replace(ParallelPlan(1, 1, 8), tensor=2)
    assert (plan.folded, plan.expert_tensor_degree) == (False, 2)
    assert ParallelPlan(2, 1, 4, expert_tensor=2) == ParallelPlan(2, 1, 4)
