"""The expert all-to-all waits for its busiest rank (issue 14: "MoE without ... load-imbalance
costs"; a starved network must show in the time exactly as much as physics says).

Under skewed routing the busiest expert-parallel rank receives its load in the dispatch and
sends it back in the combine (Workload.busiest_expert_load), and every rank of the group
waits for it at the next layer. Before, only its expert GEMMs were timed at that load: the
all-to-all carried the mean rank's bytes whatever the skew. An oversubscribed tier carries
every rank's bytes, the mean: it slows the busiest rank only where it has no room for the
skew (estimator.crossing_slowdown)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optimizer.performance.estimator import crossing_slowdown, estimate, expert_collective
from optimizer.performance.plan import ParallelPlan
from optimizer.performance.planner import plan_and_estimate
from optimizer.performance.validation import HGX_H100, cluster_for
from optimizer.workload.model import Workload
from optimizer.workload.presets import preset

# DeepSeek-V3's experts over 64 ranks of 8 nodes, two leaves of a 1,024-GPU tree
PLAN = ParallelPlan(1, 16, 64, 64, micro_batch_size=1, expert_tensor=1)
EXPERTS = 64


def _deepseek(imbalance: float, dispatch: str = "all_to_all") -> Workload:
    return preset(
        "deepseek-v3",
        expert_load_imbalance=imbalance,
        expert_dispatch=dispatch,
        precision="fp8",
        activation_recompute="full",  # fits 80 GB at this plan
    )


def _all_to_all_s(imbalance: float, oversubscription: float) -> float:
    c = cluster_for(HGX_H100, 1024, "fat_tree", "infiniband", oversubscription)
    return estimate(_deepseek(imbalance), c, PLAN).breakdown.all_to_all_s


def test_the_nccl_all_to_all_carries_the_busiest_ranks_load() -> None:
    skewed, balanced = _deepseek(1.5), _deepseek(1.0)

    sent = expert_collective(skewed, PLAN, 8, 8)
    even = expert_collective(balanced, PLAN, 8, 8)

    assert sent is not None and even is not None
    assert sent.cost.bytes == pytest.approx(skewed.busiest_expert_load(EXPERTS) * even.cost.bytes)


def test_on_a_non_blocking_tree_the_all_to_all_takes_the_busiest_ranks_time() -> None:
    """At a skew of 1.2 the busiest of 64 ranks takes 1.197 x the mean: so does the transfer
    (its latency, a step's worth of round trips, does not grow)."""
    load = _deepseek(1.2).busiest_expert_load(EXPERTS)

    assert _all_to_all_s(1.2, 1.0) / _all_to_all_s(1.0, 1.0) == pytest.approx(load, rel=2e-3)


def test_an_oversubscribed_tier_slows_only_the_skew_it_has_no_room_for() -> None:
    """At 3:1 a third of the bandwidth crosses the spine: a mild skew hides under the tier's
    own slow-down, a fourfold one makes the busiest rank's NIC the bottleneck, as on 1:1."""
    mild = _all_to_all_s(1.2, 3.0) / _all_to_all_s(1.0, 3.0)

    assert 1.0 < mild < _deepseek(1.2).busiest_expert_load(EXPERTS)
    assert _all_to_all_s(4.0, 3.0) == pytest.approx(_all_to_all_s(4.0, 1.0))


@given(ratio=st.floats(0.05, 1.0), busiest=st.floats(1.0, 64.0))
def test_the_busiest_ranks_crossing_bytes_take_the_longer_of_its_nic_and_the_tier(
    ratio: float, busiest: float
) -> None:
    """In units of the mean rank's bytes at line rate: its NIC busiest, the tier 1 / ratio."""
    assert busiest * crossing_slowdown(ratio, busiest) == pytest.approx(max(busiest, 1.0 / ratio))


def test_a_deduplicated_dispatch_is_timed_at_the_mean_ranks_load() -> None:
    """A domain's NICs carry all its ranks' tokens, whose skew no field states: the lower
    estimate the docstring of estimator.expert_collective owns up to."""
    skewed = expert_collective(_deepseek(1.5, "node_deduplicated"), PLAN, 8, 8)
    even = expert_collective(_deepseek(1.0, "node_deduplicated"), PLAN, 8, 8)

    assert skewed is not None and even is not None
    assert skewed.cost.bytes == even.cost.bytes


@settings(max_examples=25, deadline=None)
@given(
    low=st.floats(1.0, 4.0),
    high=st.floats(1.0, 4.0),
    oversubscription=st.sampled_from([1.0, 2.0, 3.0]),
    dispatch=st.sampled_from(["all_to_all", "node_deduplicated"]),
)
def test_more_skew_never_gives_a_faster_step(
    low: float, high: float, oversubscription: float, dispatch: str
) -> None:
    low, high = min(low, high), max(low, high)
    c = cluster_for(HGX_H100, 1024, "fat_tree", "infiniband", oversubscription)

    assert estimate(_deepseek(low, dispatch), c, PLAN).step_time_s <= estimate(
        _deepseek(high, dispatch), c, PLAN
    ).step_time_s * (1 + 1e-12)


def _skew_notes(w: Workload, plan: ParallelPlan) -> list[str]:
    c = cluster_for(HGX_H100, 1024, "fat_tree", "infiniband", 1.0)
    return [n for n in estimate(w, c, plan).notes if n.startswith("expert load skew")]


def test_the_estimate_says_what_the_skew_costs_re_timed_balanced() -> None:
    c = cluster_for(HGX_H100, 1024, "fat_tree", "infiniband", 1.0)
    skewed = estimate(_deepseek(1.2), c, PLAN)
    balanced = estimate(_deepseek(1.0), c, PLAN)

    (note,) = _skew_notes(_deepseek(1.2), PLAN)
    cost_s = skewed.step_time_s - balanced.step_time_s
    assert "the busiest of 64 expert ranks is timed at 1.20 x" in note
    assert f"{cost_s:.2f} s of the {skewed.step_time_s:.2f} s step" in note
    assert "expert GEMMs and the all-to-all" in note


def test_a_deduplicated_dispatch_says_its_all_to_all_is_at_the_mean_load() -> None:
    (note,) = _skew_notes(_deepseek(1.2, "node_deduplicated"), PLAN)

    assert "the deduplicated all-to-all is timed at the mean rank's load" in note


def test_a_deduplicated_dispatch_inside_one_node_says_its_all_to_all_waits() -> None:
    """Inside one scale-up domain there is nothing to deduplicate: the all-to-all is the
    NCCL one, at the busiest rank's load (expert_collective), and the note says so."""
    w = preset("mixtral-8x7b", expert_load_imbalance=1.5, expert_dispatch="node_deduplicated")
    c = cluster_for(HGX_H100, 64, "fat_tree", "infiniband", 1.0)
    notes = estimate(w, c, ParallelPlan(1, 1, 64, 8, micro_batch_size=1)).notes

    (note,) = [n for n in notes if n.startswith("expert load skew")]
    assert "expert GEMMs and the all-to-all, which wait for it" in note


@pytest.mark.parametrize(
    ("w", "plan"),
    [
        (_deepseek(1.0), PLAN),  # balanced
        (preset("mixtral-8x7b", expert_load_imbalance=1.5), ParallelPlan(8, 1, 128, 1)),
        (  # a capacity: capacity_note says what the skew costs
            preset("mixtral-8x7b", expert_load_imbalance=1.5, expert_capacity_factor=1.25),
            ParallelPlan(2, 1, 512, 8, micro_batch_size=1, expert_tensor=1),
        ),
    ],
    ids=["balanced", "no expert parallelism", "token dropping"],
)
def test_no_skew_note_where_no_rank_waits_for_a_busier_one(w: Workload, plan: ParallelPlan) -> None:
    assert _skew_notes(w, plan) == []


@settings(max_examples=15, deadline=None)
@given(
    low=st.floats(1.0, 3.0),
    high=st.floats(1.0, 3.0),
    oversubscription=st.sampled_from([1.0, 3.0]),
)
def test_more_skew_never_gives_a_faster_best_plan(
    low: float, high: float, oversubscription: float
) -> None:
    """Every plan's step grows with the skew, so the best of them does: the planner's too."""
    low, high = min(low, high), max(low, high)
    c = cluster_for(HGX_H100, 128, "fat_tree", "infiniband", oversubscription)

    def best_hours(imbalance: float) -> float:
        w = preset("mixtral-8x22b", expert_load_imbalance=imbalance)
        return plan_and_estimate(w, c, why=False).training_time_hours

    assert best_hours(low) <= best_hours(high) * (1 + 1e-12)
