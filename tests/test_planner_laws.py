"""Planner laws (issue 14, defect 7): more GPUs are never slower when the planner may leave
GPUs idle, which holds by construction because a cluster's candidates include every plan of
every smaller whole-node size on the same network. Time is the wall clock the planner
minimises (goodput included: more GPUs fail more often, so the fastest step is not always the
shortest run)."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.planner_laws import series_violations, sweep
from optimizer.performance.errors import PlanInfeasible
from optimizer.performance.planner import plan_and_estimate
from optimizer.performance.validation import HGX_H100, cluster_for
from optimizer.workload.presets import preset


@settings(max_examples=30, deadline=None)
@given(
    layers=st.integers(2, 24),
    batch=st.sampled_from([8, 16, 32, 64, 128, 256]),
    fabric=st.sampled_from(["infiniband", "roce", "ethernet"]),
    small_nodes=st.integers(1, 12),
    more_nodes=st.integers(1, 12),
    schedule=st.sampled_from(["1f1b", "dualpipe"]),
)
def test_more_gpus_on_the_same_network_are_never_slower(
    layers: int, batch: int, fabric: str, small_nodes: int, more_nodes: int, schedule: str
) -> None:
    w = preset("mpt-350m", layers=layers, global_batch_size=batch, pipeline_schedule=schedule)
    large = cluster_for(HGX_H100, 8 * (small_nodes + more_nodes), fabric=fabric)
    small = replace(large, gpus=8 * small_nodes)
    try:
        slow_h = plan_and_estimate(w, small).training_time_hours
    except PlanInfeasible:
        return
    assert plan_and_estimate(w, large).training_time_hours <= slow_h * (1 + 1e-12)


def test_bert_large_on_ethernet_is_not_slower_on_192_gpus_than_on_96() -> None:
    """The issue's worst point: 96 -> 192 GPUs was 2.7x slower (a 24-stage pipeline)."""
    w = preset("bert-large")
    large = cluster_for(HGX_H100, 192, fabric="ethernet")
    small = replace(large, gpus=96)
    large_h = plan_and_estimate(w, large).training_time_hours
    assert large_h <= plan_and_estimate(w, small).training_time_hours


def test_bert_large_is_not_cut_into_one_layer_stages() -> None:
    """Its last stage would hold one layer and the 30,522-word output layer (about two
    layers of FLOPs), and every micro-batch chunk pays its overhead."""
    est = plan_and_estimate(preset("bert-large"), cluster_for(HGX_H100, 192, fabric="ethernet"))
    assert est.plan.pipeline < 24


def test_the_sweep_counts_points_slower_than_any_smaller_count() -> None:
    times = [(8, 10.0), (16, 6.0), (24, 7.0), (32, 9.0), (48, 5.0)]
    violations = series_violations("w", "ethernet", times)
    assert [(v.gpus, v.smaller_gpus) for v in violations] == [(24, 16), (32, 16)]


def test_the_sweep_of_bert_large_on_ethernet_has_no_violation() -> None:
    result = sweep(HGX_H100, ["bert-large"], (48, 96, 128, 192, 256, 384), ["ethernet"])
    assert result.points == 6
    assert result.violations == ()
