"""How the topology profile changes what collectives see (docs/performance-model.md, sec.
"Topology")."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from optimizer.performance.estimator import estimate
from optimizer.performance.plan import ParallelPlan
from optimizer.performance.planner import plan_and_estimate
from optimizer.workload.presets import preset
from tests.estimator_fixtures import cluster

MIXTRAL = preset("mixtral-8x7b")
# Expert parallelism over 32 ranks spread over 4 nodes: all-to-all crosses leaves.
MOE_PLAN = ParallelPlan(1, 1, 256, expert=8, zero_stage=3, micro_batch_size=1)


def test_oversubscription_slows_all_to_all_heavy_jobs() -> None:
    """Seed: all-to-all is bounded by bisection, so oversubscription hits it hardest."""
    base = cluster(256)
    blocking = replace(base, topology=replace(base.topology, oversubscription=4.0,
                                              bisection_ratio=0.25))
    moe = preset("mixtral-8x7b")
    wide = ParallelPlan(1, 1, 256, expert=8, zero_stage=3)
    fast, slow = estimate(moe, replace(base, nics_per_node=1, nic_gbps_per_node=400), wide), \
        estimate(moe, replace(blocking, nics_per_node=1, nic_gbps_per_node=400), wide)
    assert slow.breakdown.all_to_all_s > fast.breakdown.all_to_all_s
    assert slow.step_time_s > fast.step_time_s


def test_all_to_all_crossing_leaves_slows_by_the_bisection_ratio() -> None:
    """Spanning L leaves, a share 1 - 1/L of the traffic crosses a tier at bisection_ratio."""
    base = cluster(512, nics_per_node=8, nic_gbps_per_node=3200)
    one_leaf = replace(base, topology=replace(base.topology, endpoints_per_leaf=512))
    tiny = replace(base, topology=replace(base.topology, endpoints_per_leaf=8,
                                          bisection_ratio=0.5))
    plan = ParallelPlan(1, 1, 512, expert=8, zero_stage=3)
    assert estimate(MIXTRAL, tiny, plan).breakdown.all_to_all_s >= \
        estimate(MIXTRAL, one_leaf, plan).breakdown.all_to_all_s


def _oversubscribed(c, ratio: float):  # type: ignore[no-untyped-def]
    """The same leaves with fewer uplinks: only oversubscription and bisection change."""
    topo = c.topology
    return replace(c, topology=replace(topo, oversubscription=ratio,
                                       bisection_ratio=min(topo.bisection_ratio, 1 / ratio)))


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(["bert-large", "llama3-8b", "mpt-30b", "mixtral-8x7b"]),
       gpus=st.sampled_from([64, 256, 1024]), ratio=st.floats(1.0, 16.0),
       fabric=st.sampled_from(["infiniband", "roce", "ethernet"]),
       nics=st.sampled_from([1, 8]))
def test_oversubscription_never_makes_a_job_faster(name: str, gpus: int, ratio: float,
                                                   fabric: str, nics: int) -> None:
    """Seed claim: an oversubscribed fat-tree is never faster than the non-blocking one."""
    w = preset(name)
    flat = cluster(gpus, fabric=fabric, nics_per_node=nics, nic_gbps_per_node=400.0 * nics)
    best = plan_and_estimate(w, flat)
    worse = _oversubscribed(flat, ratio)
    assert estimate(w, worse, best.plan).step_time_s >= best.step_time_s
    assert plan_and_estimate(w, worse).step_time_s >= best.step_time_s


def _dp_time(topology: str, oversubscription: float) -> float:
    c = cluster(1024, topology=topology, oversubscription=oversubscription)
    plan = ParallelPlan(8, 1, 128, micro_batch_size=1)
    return estimate(preset("llama3-70b", global_batch_size=1024), c, plan) \
        .breakdown.data_parallel_s


def test_rail_optimized_placement_shortens_the_ring_all_reduce() -> None:
    """128 nodes: a rail's ring stays under 4 rail leaves instead of 32 shared leaves, so it
    climbs fewer tiers per step (latency)."""
    assert _dp_time("rail_optimized", 1.0) < _dp_time("fat_tree", 1.0)


def test_rail_optimized_placement_keeps_ring_bandwidth_under_heavy_oversubscription() -> None:
    """At 15:1 a plain leaf carries 8 rails' rings on its few uplinks; a rail leaf carries one."""
    assert _dp_time("rail_optimized", 15.0) < 0.7 * _dp_time("fat_tree", 15.0)
    assert _dp_time("rail_optimized", 15.0) <= 1.01 * _dp_time("rail_optimized", 1.0)
