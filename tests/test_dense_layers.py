"""Dense layers beside MoE layers (``workload.dense_layers`` and ``dense_ffn_hidden_size``;
HF config.json first_k_dense_replace and intermediate_size, Megatron-Core's --moe-layer-freq):
the first layers of DeepSeek-V3 (3 of 18,432) or Kimi K2 (1) have a dense FFN, no router, no
experts and no all-to-all."""

from __future__ import annotations

from dataclasses import replace

import pytest

from optimizer.errors import InvalidInput
from optimizer.performance.convert import PARAMETER_TOLERANCE
from optimizer.performance.estimator import estimate, expert_traffic, tensor_collective_share
from optimizer.performance.plan import ParallelPlan
from optimizer.performance.validation import HGX_H100, cluster_for
from optimizer.workload.flops import forward_flops_per_token
from optimizer.workload.model import Workload
from optimizer.workload.presets import preset

# DeepSeek-V3 Technical Report (arXiv:2412.19437), sec. 4.2 and Table 1: 671B parameters, 37B
# activated for each token.
DEEPSEEK_V3_PARAMETERS, DEEPSEEK_V3_ACTIVE = 671e9, 37e9


def _all_moe(w: Workload) -> Workload:
    return replace(w, dense_layers=0, dense_ffn_hidden_size=0)


def test_deepseek_v3s_preset_has_its_published_parameter_counts() -> None:
    """The report counts the main model, its MTP module aside."""
    w = preset("deepseek-v3")
    main = replace(w, mtp_layers=0)

    assert (w.dense_layers, w.dense_ffn_hidden_size) == (3, 18432)
    assert w.main_model_parameters == pytest.approx(DEEPSEEK_V3_PARAMETERS, rel=1e-3)
    assert main.active_parameters == pytest.approx(DEEPSEEK_V3_ACTIVE, rel=PARAMETER_TOLERANCE)


def test_a_dense_layer_holds_its_ffn_instead_of_a_router_a_shared_and_every_routed_expert() -> None:
    w = preset("deepseek-v3")
    moe_layer = (
        w.router_parameters_per_layer
        + w.shared_expert_parameters_per_layer
        + w.experts * w.expert_parameters_per_layer
    )

    saved = _all_moe(w).parameters - w.parameters

    assert saved == pytest.approx(3 * (moe_layer - w.dense_ffn_parameters_per_layer))
    assert _all_moe(w).expert_parameters - w.expert_parameters == pytest.approx(
        3 * w.experts * w.expert_parameters_per_layer
    )


def test_a_dense_layer_nine_experts_wide_costs_a_token_nine_experts_but_the_router() -> None:
    """DeepSeek-V3's 18,432 = 9 x 2,048: a token's 8 routed and 1 shared expert."""
    w = preset("deepseek-v3")

    extra = forward_flops_per_token(_all_moe(w)).total - forward_flops_per_token(w).total

    assert extra == pytest.approx(2 * 3 * w.router_parameters_per_layer)


def test_the_expert_all_to_all_runs_in_the_moe_layers_only() -> None:
    w = preset("deepseek-v3", global_batch_size=1024)
    plan = ParallelPlan(tensor=2, pipeline=8, data=64, expert=64, micro_batch_size=1)

    with_dense, all_moe = expert_traffic(w, plan, 8, 8), expert_traffic(_all_moe(w), plan, 8, 8)

    assert with_dense is not None and all_moe is not None
    # 58 MoE layers and the MTP module's block of 62 blocks, against all 62
    assert with_dense.cost.bytes == pytest.approx(all_moe.cost.bytes * 59 / 62)


def test_folded_experts_keep_the_dense_layers_tensor_collectives() -> None:
    w = replace(preset("mixtral-8x7b"), dense_layers=4, dense_ffn_hidden_size=14336)

    assert tensor_collective_share(w, folded=True) == pytest.approx((1 + 4 / 32) / 2)
    assert tensor_collective_share(w, folded=False) == 1.0


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"dense_layers": 3}, "dense_ffn_hidden_size"),
        ({"dense_layers": 0, "dense_ffn_hidden_size": 18432}, "dense_ffn_hidden_size"),
        ({"dense_layers": 61}, "dense_layers"),
        ({"dense_layers": -1}, "dense_layers"),
    ],
)
def test_an_inconsistent_dense_layer_count_or_width_is_refused_naming_it(
    fields: dict[str, int], field: str
) -> None:
    with pytest.raises(InvalidInput) as e:
        replace(preset("deepseek-v3"), **{"dense_ffn_hidden_size": 0, **fields})

    assert e.value.field == f"workload.{field}"


def test_a_dense_model_with_dense_layers_is_refused_naming_the_field() -> None:
    with pytest.raises(InvalidInput) as e:
        preset("llama3-8b", dense_layers=1, dense_ffn_hidden_size=14336)

    assert e.value.field == "workload.dense_layers"


def test_a_tensor_degree_that_does_not_divide_the_dense_ffn_is_refused_naming_it() -> None:
    w = preset("deepseek-v3", dense_ffn_hidden_size=18434, global_batch_size=1024)
    plan = ParallelPlan(tensor=4, pipeline=8, data=32, expert=8, micro_batch_size=1)

    with pytest.raises(InvalidInput) as e:
        estimate(w, cluster_for(HGX_H100, 1024), plan)

    assert e.value.field == "parallelism.tensor"
    assert "dense_ffn_hidden_size 18434" in e.value.problem
