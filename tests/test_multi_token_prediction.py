"""Multi-token prediction (``workload.mtp_layers``; DeepSeek-V3 report, arXiv:2412.19437, sec.
2.2; Megatron-Core's --mtp-num-layers): each module is one more block of the decoder's kind, a
projection of [h; embedding] to h and the output head once more, trained on the last pipeline
stage. Model cards count the model without it (DeepSeek-V3: 671B of 685B weights)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from google.protobuf.json_format import ParseDict

from optimizer._pb.procurement.v1 import estimate_pb2
from optimizer.errors import InvalidInput
from optimizer.performance.convert import workload_from_proto
from optimizer.performance.estimator import estimate, expert_traffic
from optimizer.performance.plan import ParallelPlan
from optimizer.performance.validation import HGX_H100, cluster_for
from optimizer.workload.flops import attention_score_flops_per_token_layer, forward_flops_per_token
from optimizer.workload.memory import held_blocks, memory_per_gpu
from optimizer.workload.model import Workload
from optimizer.workload.pipeline_layout import mtp_note, output_layer_equivalents, pipeline_layout
from optimizer.workload.presets import preset


def _mixtral(mtp: int) -> Workload:
    return replace(preset("mixtral-8x7b"), mtp_layers=mtp)


def _llama(mtp: int) -> Workload:
    return replace(preset("llama3-8b"), mtp_layers=mtp)


def test_deepseek_v3s_preset_trains_one_module() -> None:
    """The report's depth D = 1 (sec. 4.2); its config.json num_nextn_predict_layers 1."""
    assert preset("deepseek-v3").mtp_layers == 1


def test_a_module_adds_a_block_of_the_decoders_kind_and_its_projection() -> None:
    without, with_ = _mixtral(0), _mixtral(1)
    h = with_.hidden_size
    moe_block = (
        with_.attention_parameters_per_layer
        + with_.router_parameters_per_layer
        + with_.experts * with_.expert_parameters_per_layer
    )

    assert with_.parameters - without.parameters == pytest.approx(moe_block + 2 * h * h)
    assert with_.expert_parameters - without.expert_parameters == pytest.approx(
        with_.experts * with_.expert_parameters_per_layer
    )


def test_a_dense_models_module_is_a_dense_block() -> None:
    without, with_ = _llama(0), _llama(2)
    block = with_.attention_parameters_per_layer + with_.expert_parameters_per_layer
    h = with_.hidden_size

    assert with_.parameters - without.parameters == pytest.approx(2 * (block + 2 * h * h))
    assert with_.expert_parameters == 0.0


def test_the_main_models_count_leaves_the_modules_out() -> None:
    assert _mixtral(2).main_model_parameters == pytest.approx(_mixtral(0).parameters)
    assert _llama(1).main_model_parameters == pytest.approx(_llama(0).parameters)


def test_a_stated_parameter_count_is_checked_against_the_main_model() -> None:
    """DeepSeek-V3 with its MTP module, stated as the report counts it (671B): accepted as is,
    nothing inferred."""
    msg = ParseDict(
        {"model": "deepseek-v3", "parameters": 671e9, "mtp_layers": 1}, estimate_pb2.Workload()
    )

    w = workload_from_proto(msg)

    assert w.mtp_layers == 1
    assert w.inferred == ()


def test_a_count_far_from_the_main_models_is_refused_saying_what_it_was_compared_with() -> None:
    msg = ParseDict({"model": "deepseek-v3", "parameters": 685e9}, estimate_pb2.Workload())

    with pytest.raises(InvalidInput) as e:
        workload_from_proto(msg)

    assert e.value.field == "workload.parameters"
    assert "671B (its MTP modules' aside, as model cards count)" in e.value.problem


def test_each_module_costs_a_token_a_block_its_projection_and_the_output_head_again() -> None:
    without, with_ = _mixtral(0), _mixtral(1)
    h, v = with_.hidden_size, with_.vocab_size
    active_block = (
        with_.attention_parameters_per_layer
        + with_.router_parameters_per_layer
        + with_.experts_per_token * with_.expert_parameters_per_layer
    )
    expected = (
        2 * active_block
        + 2 * (2 * h * h)
        + 2 * h * v
        + attention_score_flops_per_token_layer(with_)
    )

    added = forward_flops_per_token(with_).total - forward_flops_per_token(without).total

    assert added == pytest.approx(expected)


def test_the_modules_work_sits_on_the_last_pipeline_stage() -> None:
    """At least a block-equivalent a module beside the output layer, and the balanced layout
    gives the last stage fewer decoder layers for it."""
    without, with_ = _llama(0), _llama(2)

    assert output_layer_equivalents(with_) > output_layer_equivalents(without) + 2
    assert pipeline_layout(with_, 4).layers[-1] < pipeline_layout(without, 4).layers[-1]
    assert sum(pipeline_layout(with_, 4).layers) == with_.layers


def test_the_last_stage_holds_the_modules_blocks() -> None:
    w = _llama(2)

    assert held_blocks(w, 4, 1)[:-1] == pipeline_layout(w, 4).layers[:-1]
    assert held_blocks(w, 4, 1)[-1] == pipeline_layout(w, 4).layers[-1] + 2


def test_the_modules_weights_and_logits_take_memory() -> None:
    plan = ParallelPlan(tensor=1, pipeline=1, data=8, micro_batch_size=1)

    without, with_ = memory_per_gpu(_llama(0), plan), memory_per_gpu(_llama(1), plan)

    assert with_.weights_gb > without.weights_gb
    assert with_.activations_gb > without.activations_gb


def test_the_expert_all_to_all_runs_in_the_modules_moe_block_too() -> None:
    plan = ParallelPlan(tensor=1, pipeline=4, data=16, expert=8, micro_batch_size=1)
    without, with_ = _mixtral(0), _mixtral(1)

    a2a_without = expert_traffic(without, plan, 8, 8)
    a2a_with = expert_traffic(with_, plan, 8, 8)

    assert a2a_without is not None and a2a_with is not None
    assert a2a_with.cost.bytes == pytest.approx(a2a_without.cost.bytes * 33 / 32)


@pytest.mark.parametrize("mtp", [1, 2])
def test_a_module_makes_a_fixed_plans_step_slower(mtp: int) -> None:
    plan = ParallelPlan(tensor=2, pipeline=4, data=8, micro_batch_size=1)
    cluster = cluster_for(HGX_H100, 64)

    base = estimate(_llama(0), cluster, plan).step_time_s

    assert estimate(_llama(mtp), cluster, plan).step_time_s > base


def test_the_estimate_notes_the_modules_where_they_sit_and_what_they_cost() -> None:
    plan = ParallelPlan(tensor=2, pipeline=4, data=8, micro_batch_size=1)
    w = _llama(2)

    notes = estimate(w, cluster_for(HGX_H100, 64), plan).notes
    mtp = [n for n in notes if n.startswith("multi-token prediction")]

    assert mtp == [mtp_note(w, pipeline_layout(w, 4))]
    assert "2 modules" in mtp[0]
    assert f"beside {pipeline_layout(w, 4).layers[-1]} of the 32 layers" in mtp[0]


def test_the_notes_share_of_flops_is_the_modules_forward_flops() -> None:
    """Mixtral's blocks are alike, so the module's block is the mean block."""
    without, with_ = _mixtral(0), _mixtral(1)
    share = 1.0 - forward_flops_per_token(without).total / forward_flops_per_token(with_).total

    assert f"{share:.1%} of a token's FLOPs" in mtp_note(with_, pipeline_layout(with_, 1))


def test_a_workload_without_modules_has_no_such_note() -> None:
    plan = ParallelPlan(tensor=2, pipeline=4, data=8, micro_batch_size=1)

    notes = estimate(_llama(0), cluster_for(HGX_H100, 64), plan).notes

    assert not [n for n in notes if "multi-token" in n]


def test_a_negative_count_is_refused_naming_the_field() -> None:
    with pytest.raises(InvalidInput) as e:
        _llama(-1)

    assert e.value.field == "workload.mtp_layers"
