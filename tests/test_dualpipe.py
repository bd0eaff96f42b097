"""DualPipe, DeepSeek's bidirectional pipeline schedule (workload.pipeline_schedule dualpipe;
DeepSeek-V3 report, arXiv:2412.19437, sec. 3.2.1 and Table 2; github.com/deepseek-ai/DualPipe):
its bubble, its two stages a rank, what its schedule runs and refuses, and the overlap of the
all-to-all and the pipeline sends of paired chunks with the other chunk's compute."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from optimizer.errors import InvalidInput
from optimizer.performance import planner
from optimizer.performance.compute import optimizer_step_bytes
from optimizer.performance.estimator import (
    StepModel,
    check_plan,
    data_traffic,
    paired_exposed_s,
    scenario,
)
from optimizer.performance.fabrics import DEFAULT_FABRICS
from optimizer.performance.plan import ParallelPlan, PartialPlan
from optimizer.performance.validation import HGX_H100, cluster_for
from optimizer.workload.memory import FamilyLoads, held_blocks
from optimizer.workload.pipeline_layout import (
    bubble_fraction,
    dualpipe_refusal,
    dualpipe_unpaired_share,
    pipeline_layout,
)
from optimizer.workload.presets import preset

DEEPSEEK = preset("deepseek-v3", precision="fp8", expert_dispatch="node_deduplicated")
DUAL = replace(DEEPSEEK, pipeline_schedule="dualpipe")
# DeepSeek-V3's own layout (report sec. 3.2): PP 16, EP 64 over 8 nodes, ZeRO-1, no TP
OWN = ParallelPlan(tensor=1, pipeline=16, data=128, expert=64, zero_stage=1, expert_tensor=1)

even_pipelines = st.integers(1, 32).map(lambda k: 2 * k)


@given(p=even_pipelines, extra=st.integers(0, 200))
def test_the_bubble_is_table_2s_with_a_backward_twice_the_forward(p: int, extra: int) -> None:
    m = 2 * p + 2 * extra
    f = 1.0
    b, w = 2 * f, f  # a backward twice the forward, its weight half as long as the forward
    f_and_b = f + b  # a paired forward and backward take their compute's sum
    table_2 = (p / 2 - 1) * (f_and_b + b - 3 * w)

    assert bubble_fraction(p, 1, m, dualpipe=True) == pytest.approx(table_2 / (m * (f + b)))
    assert bubble_fraction(p, 1, m, dualpipe=True) < bubble_fraction(p, 1, m)


def test_the_readmes_example_pairs_six_of_the_end_ranks_twenty_micro_batches() -> None:
    """DualPipe's README schedules 8 ranks and 20 micro-batches; its step() runs
    half_num_chunks - num_ranks + half_rank + 1 = 3 main iterations of two pairs on rank 0."""
    assert dualpipe_unpaired_share(8, 20) == pytest.approx((20 - 2 * 3) / 20)


@pytest.mark.parametrize(("p", "m"), [(3, 12), (1, 8), (8, 15), (8, 14)])
def test_what_dualpipes_step_asserts_is_refused(p: int, m: int) -> None:
    assert dualpipe_refusal(p, m)


def test_an_even_pipeline_with_twice_as_many_micro_batches_runs() -> None:
    assert dualpipe_refusal(8, 16) == ""


@pytest.mark.parametrize(
    ("plan", "field"),
    [
        (replace(OWN, pipeline=8, data=256), ""),
        (replace(OWN, zero_stage=3), "parallelism.zero_stage"),
        (replace(OWN, virtual_pipeline=2), "parallelism.virtual_pipeline"),
        (replace(OWN, micro_batch_size=8), "parallelism.micro_batch_size"),
    ],
)
def test_a_stated_plan_dualpipe_cannot_run_names_its_field(plan: ParallelPlan, field: str) -> None:
    c = cluster_for(HGX_H100, plan.gpus, "fat_tree", "infiniband", 1.0)
    if not field:
        check_plan(DUAL, c, plan)
        return
    with pytest.raises(InvalidInput) as refused:
        check_plan(DUAL, c, plan)
    assert refused.value.field == field


def test_deepspeeds_engine_and_dualpipe_are_refused_together() -> None:
    with pytest.raises(InvalidInput) as refused:
        preset("mixtral-8x7b", framework="deepspeed", pipeline_schedule="dualpipe")
    assert refused.value.field == "workload.pipeline_schedule"


def test_the_planner_offers_only_plans_dualpipe_runs() -> None:
    w = preset("mixtral-8x7b", global_batch_size=256, pipeline_schedule="dualpipe")
    c = cluster_for(HGX_H100, 64, "fat_tree", "infiniband", 1.0)
    plans = planner.candidate_plans(w, c, PartialPlan())

    assert plans
    for plan in plans:
        check_plan(w, c, plan)  # even pipeline, micro-batches, one chunk a stage, ZeRO <= 2
        assert plan.pipeline % 2 == 0 and plan.virtual_pipeline == 1


def test_a_ranks_work_is_its_two_stages_mean() -> None:
    """Rank r runs half the micro-batches through stage r and half through stage p - 1 - r:
    the output layer's stage pairs with the first stage, the lightest."""
    one, dual = pipeline_layout(DEEPSEEK, 16, 1), pipeline_layout(DUAL, 16, 1)
    loads = [*one.layers[:-1], one.layers[-1] + one.output_layer_equivalents]

    assert dual.layers == one.layers
    assert dual.slowest_stage_load == pytest.approx(
        max((loads[r] + loads[15 - r]) / 2 for r in range(16))
    )
    assert dual.slowest_stage_load < one.slowest_stage_load


@pytest.mark.parametrize("rank", [0, 3, 7])
def test_a_rank_holds_stage_r_and_stage_p_minus_1_minus_r(rank: int) -> None:
    one = FamilyLoads(DEEPSEEK, *OWN.family)
    dual = FamilyLoads(DUAL, *OWN.family)
    mirror = OWN.pipeline - 1 - rank

    assert dual.stage(rank, 1).params == pytest.approx(
        one.stage(rank, 1).params + one.stage(mirror, 1).params
    )


def test_a_rank_keeps_p_plus_1_chunks_of_activations() -> None:
    """Table 2: PP + 1 chunks in flight (1F1B's first stage: PP), of one of its stages."""
    dual = FamilyLoads(DUAL, *OWN.family)
    rank = 3  # a middle rank: no logits
    held = held_blocks(DUAL, OWN.pipeline, 1)[rank]

    assert dual.stage(rank, 1).activations == pytest.approx(
        (OWN.pipeline + 1) * held / 2 * dual.act_layer
    )


def test_both_stages_gradients_and_optimizer_updates_are_a_ranks() -> None:
    c = cluster_for(HGX_H100, OWN.gpus, "fat_tree", "infiniband", 1.0)
    degrees = (1, 16, 128, 64, 1, True, 1)
    one = data_traffic(DEEPSEEK, OWN, c.gpus_per_node, c.scale_up_domain_gpus)
    dual = data_traffic(DUAL, OWN, c.gpus_per_node, c.scale_up_domain_gpus)

    assert optimizer_step_bytes(DUAL, *degrees) == 2 * optimizer_step_bytes(DEEPSEEK, *degrees)
    for a, b in zip(one, dual, strict=True):
        assert b.ring.bytes == pytest.approx(2 * a.ring.bytes)


@given(
    compute=st.floats(0.0, 100.0),
    communication=st.floats(0.0, 100.0),
    unpaired=st.floats(0.0, 1.0),
)
def test_pairing_never_adds_more_than_the_communication_itself(
    compute: float, communication: float, unpaired: float
) -> None:
    exposed = paired_exposed_s(compute, communication, unpaired)

    assert 0.0 <= exposed <= communication * (1 + 1e-12)


def test_unpaired_chunks_expose_their_communication_whole() -> None:
    assert paired_exposed_s(10.0, 4.0, 1.0) == 4.0


def test_deepseeks_own_layout_is_faster_under_dualpipe_by_at_most_what_it_hides() -> None:
    """The paired chunks hide the all-to-all and the sends, the bubble shrinks, and the
    slowest rank's compute is its two stages' mean; the weight update and the gradients of
    the second stage only add, so the step falls by less than the communication, bubble and
    compute it saves."""
    c = cluster_for(HGX_H100, OWN.gpus, "fat_tree", "infiniband", 1.0)
    fabric = DEFAULT_FABRICS[c.fabric]
    sc = scenario(c, fabric, "expected", precision="fp8")
    one, _ = StepModel(DEEPSEEK, c, OWN, fabric).breakdown_and_step_s(sc)
    dual, _ = StepModel(DUAL, c, OWN, fabric).breakdown_and_step_s(sc)
    hidden_at_most = one.all_to_all_s + one.pipeline_p2p_s
    bubble_saved = one.pipeline_bubble_s - dual.pipeline_bubble_s
    compute_saved = one.compute_s - dual.compute_s

    assert dual.step_time_s < one.step_time_s
    assert compute_saved >= 0.0
    assert one.step_time_s - dual.step_time_s <= hidden_at_most + bubble_saved + compute_saved
    assert dual.exposed_communication_s < one.exposed_communication_s
