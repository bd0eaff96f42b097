"""The planner's laws (tests/test_planner.py) on clusters whose scale-up domain spans hosts."""

from __future__ import annotations

import contextlib
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optimizer.errors import InvalidInput
from optimizer.performance.cluster import ClusterSpec
from optimizer.performance.errors import PlanInfeasible
from optimizer.performance.estimator import Estimate, estimate
from optimizer.performance.plan import ParallelPlan, PartialPlan
from optimizer.performance.planner import candidate_plans, plan_and_estimate
from optimizer.topology.sizing import size_network
from optimizer.workload.model import Workload
from optimizer.workload.presets import preset


def domain_cluster(gpus: int, domain: int) -> ClusterSpec:
    """4-GPU hosts (one 400G NIC per GPU) whose NVLink domain is ``domain`` GPUs."""
    hosts = max(1, gpus // 4)
    profile = size_network("fat_tree", hosts * 4, 64, rails=4).profile
    return ClusterSpec(
        gpus=gpus,
        gpus_per_node=4,
        gpu_peak_tflops=989.4,
        gpu_memory_gb=80.0,
        intra_node_gbytes_per_s=450.0,
        fabric="infiniband",
        nic_gbps_per_node=1600.0,
        nics_per_node=4,
        topology=profile,
        gpu_model="H100",
        scale_up_gpus=domain,
    )


def _all_plans(w: Workload, c: ClusterSpec) -> list[Estimate]:
    """Every plan with a tensor degree dividing the domain (up to 16) and any expert degree,
    without the planner's pruning (brute force)."""
    out = []
    experts = [e for e in (1, 2, 4, 8, 16, 32, 64) if w.experts % e == 0]
    for t in (1, 2, 4, 8, 16):
        if c.scale_up_domain_gpus % t:
            continue
        for p in range(1, c.gpus // t + 1):
            if c.gpus % (t * p) or p > w.layers:
                continue
            d = c.gpus // (t * p)
            for e in experts:
                for vp in (1, 2, 3, 4):
                    for mb in (1, 2, 4):
                        for z in (0, 1, 2, 3):
                            with contextlib.suppress(InvalidInput):
                                out.append(estimate(w, c, ParallelPlan(t, p, d, e, vp, z, mb)))
    return out


@pytest.mark.parametrize(
    ("name", "gpus", "domain"),
    [("llama3-8b", 32, 16), ("mixtral-8x7b", 32, 16), ("mpt-7b", 64, 32)],
)
def test_planner_matches_the_brute_force_over_domain_placements(
    name: str, gpus: int, domain: int
) -> None:
    w, c = preset(name, training_tokens=1e11), domain_cluster(gpus, domain)
    best = min(e.step_time_s for e in _all_plans(w, c))
    assert plan_and_estimate(w, c).step_time_s == pytest.approx(best, rel=0.02)


def test_a_tensor_degree_of_16_is_searched_only_where_a_domain_holds_it() -> None:
    w = preset("mpt-70b")  # 64 K/V heads (Llama 3 70B's 8 split over at most 8 ranks)
    inside = candidate_plans(w, domain_cluster(256, 16), PartialPlan())
    hosts_only = candidate_plans(w, domain_cluster(256, 4), PartialPlan())
    assert any(p.tensor == 16 for p in inside)
    assert max(p.tensor for p in hosts_only) == 4


@settings(max_examples=25, deadline=None)
@given(
    name=st.sampled_from(["llama3-8b", "mixtral-8x7b", "llama3-70b"]),
    racks=st.integers(1, 12),
    more=st.integers(1, 6),
)
def test_more_racks_never_make_the_planned_job_slower(name: str, racks: int, more: int) -> None:
    w = preset(name)
    small = domain_cluster(racks * 72, 72)
    large = replace(small, gpus=(racks + more) * 72)
    try:
        slow = plan_and_estimate(w, small).step_time_s
    except PlanInfeasible:
        return
    assert plan_and_estimate(w, large).step_time_s <= slow * (1 + 1e-12)
