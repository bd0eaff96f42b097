"""Shared experts (``workload.shared_expert_ffn_hidden_size``): a dense FFN every token of an
MoE layer passes through beside its routed experts (DeepSeekMoE, Dai et al. arXiv:2401.06066,
sec. 3.2; Megatron-Core's SharedExpertMLP). It counts once a layer in the parameters and in
every token's FLOPs, splits over the tensor ranks like a dense FFN, and is never dispatched."""

from __future__ import annotations

from dataclasses import replace

import pytest
from google.protobuf.json_format import ParseDict

from optimizer._pb.procurement.v1 import estimate_pb2
from optimizer.errors import InvalidInput
from optimizer.performance.convert import workload_from_proto
from optimizer.performance.estimator import (
    estimate,
    expert_collective,
    tensor_collective_share,
)
from optimizer.performance.plan import ParallelPlan
from optimizer.performance.validation import HGX_H100, cluster_for
from optimizer.workload.flops import forward_flops_per_token
from optimizer.workload.memory import activation_bytes_per_layer
from optimizer.workload.model import Workload
from optimizer.workload.presets import preset

SHARED = 2048  # DeepSeek-V3's: one shared expert of its routed experts' width (sec. 4.2)


def _moe(shared: int) -> Workload:
    """Mixtral 8x7B (multi-head attention, no shared expert of its own) with one."""
    return replace(preset("mixtral-8x7b"), shared_expert_ffn_hidden_size=shared)


def test_deepseek_v3s_preset_has_one_shared_expert_of_its_routed_experts_width() -> None:
    w = preset("deepseek-v3")

    assert w.shared_expert_ffn_hidden_size == w.ffn_hidden_size == SHARED


def test_a_shared_expert_adds_its_weights_once_a_layer_to_the_total_and_active_parameters() -> None:
    without, with_ = _moe(0), _moe(SHARED)
    weights = 3 * with_.hidden_size * SHARED * with_.layers  # gated: three matrices

    assert with_.parameters - without.parameters == pytest.approx(weights)
    assert with_.active_parameters - without.active_parameters == pytest.approx(weights)
    assert with_.expert_parameters == without.expert_parameters


def test_every_token_runs_the_shared_experts_gemms() -> None:
    without, with_ = _moe(0), _moe(SHARED)
    weights = 3 * with_.hidden_size * SHARED * with_.layers

    added = forward_flops_per_token(with_).total - forward_flops_per_token(without).total

    assert added == pytest.approx(2 * weights)


def test_the_shared_expert_sends_nothing_through_the_expert_all_to_all() -> None:
    plan = ParallelPlan(tensor=2, pipeline=4, data=16, expert=8, micro_batch_size=1)

    assert expert_collective(_moe(SHARED), plan, 8, 8) == expert_collective(_moe(0), plan, 8, 8)


def test_folded_experts_keep_the_tensor_collectives_a_shared_expert_runs() -> None:
    assert tensor_collective_share(_moe(0), folded=True) == 0.5
    assert tensor_collective_share(_moe(SHARED), folded=True) == 1.0
    assert tensor_collective_share(_moe(SHARED), folded=False) == 1.0


def test_a_shared_expert_makes_the_step_slower_and_stores_more_activations() -> None:
    plan = ParallelPlan(tensor=8, pipeline=4, data=32, expert=8, micro_batch_size=1)
    c = cluster_for(HGX_H100, 1024)

    slow, fast = estimate(_moe(SHARED), c, plan), estimate(_moe(0), c, plan)

    assert slow.breakdown.compute_s > fast.breakdown.compute_s
    assert activation_bytes_per_layer(_moe(SHARED), 1, 8) > activation_bytes_per_layer(
        _moe(0), 1, 8
    )


def test_the_tensor_degree_must_divide_the_shared_experts_width() -> None:
    plan = ParallelPlan(tensor=8, pipeline=4, data=32, expert=8, micro_batch_size=1)

    with pytest.raises(InvalidInput) as e:
        estimate(_moe(SHARED + 4), cluster_for(HGX_H100, 1024), plan)

    assert e.value.field == "parallelism.tensor"
    assert "shared_expert_ffn_hidden_size 2052" in e.value.problem


def test_a_dense_workload_with_a_shared_expert_is_refused_naming_the_field() -> None:
    request = ParseDict(
        {"model": "llama3-8b", "shared_expert_ffn_hidden_size": SHARED}, estimate_pb2.Workload()
    )

    with pytest.raises(InvalidInput) as e:
        workload_from_proto(request)

    assert e.value.field == "workload.shared_expert_ffn_hidden_size"
