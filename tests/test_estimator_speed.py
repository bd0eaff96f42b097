"""The estimator's caches across networks (issue 14, speed): what a StepModel shares between
networks is keyed on the workload, plan and hardware, and forgotten when the calibration's
fitting loop installs other constants."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

import pytest

from optimizer.performance import calibration, compute
from optimizer.performance.estimator import StepModel, estimate, scenario_for
from optimizer.performance.fabrics import DEFAULT_FABRICS
from optimizer.performance.goodput import Reliability
from optimizer.performance.plan import ParallelPlan
from optimizer.performance.planner import plan_and_estimate
from optimizer.performance.validation import HGX_H100, cluster_for
from optimizer.workload.presets import preset

W = preset("llama3-8b")
PLAN = ParallelPlan(2, 1, 32, micro_batch_size=1)


@contextmanager
def constants(**changes: float) -> Iterator[None]:
    """Other fitted compute constants installed as the fitting loop does, then restored."""
    saved = calibration.COMPUTE
    calibration.set_compute_constants(replace(saved, **changes))
    compute.clear_caches()
    scenario_for.cache_clear()
    try:
        yield
    finally:
        calibration.set_compute_constants(saved)
        compute.clear_caches()
        scenario_for.cache_clear()


def test_a_plan_re_priced_on_another_network_shares_its_compute_terms() -> None:
    ib = cluster_for(HGX_H100, 64)
    eth = cluster_for(HGX_H100, 64, fabric="ethernet")
    a = StepModel(W, ib, PLAN, DEFAULT_FABRICS["infiniband"])
    b = StepModel(W, eth, PLAN, DEFAULT_FABRICS["ethernet"])
    assert a.traffic is b.traffic and a.layout is b.layout


def test_a_step_model_follows_new_fitted_constants() -> None:
    c = cluster_for(HGX_H100, 64)
    fabric = DEFAULT_FABRICS["infiniband"]
    fitted = StepModel(W, c, PLAN, fabric).straggler  # cached under the fitted constants
    with constants(straggler_per_doubling=10 * calibration.COMPUTE.straggler_per_doubling):
        assert StepModel(W, c, PLAN, fabric).straggler == pytest.approx(10 * fitted)


def test_the_estimate_is_the_same_whether_its_hardware_part_was_cached_or_not() -> None:
    c = cluster_for(HGX_H100, 64, "rail_optimized", "roce", 2.0)
    first = estimate(W, c, PLAN)
    cached = estimate(W, c, PLAN)
    assert first == cached


def test_the_planner_follows_new_fitted_constants() -> None:
    c = cluster_for(HGX_H100, 64)
    before = plan_and_estimate(W, c)  # caches the sizes and candidates of this hardware
    with constants(step_overhead_s=1.0 + calibration.COMPUTE.step_overhead_s):
        after = plan_and_estimate(W, c)
        assert after.step_time_s == estimate(W, c, after.plan).step_time_s
        assert after.step_time_s > before.step_time_s + 0.9


def test_equal_plans_built_apart_share_one_cached_core() -> None:
    """The search builds a plan per candidate and the optimizer rebuilds them per request:
    plans, workloads and reliability figures hash by their fields, once, so equal ones built
    apart hit the same cache entries."""
    c = cluster_for(HGX_H100, 64)
    fabric = DEFAULT_FABRICS["infiniband"]
    first = StepModel(W, c, ParallelPlan(2, 1, 32, micro_batch_size=1), fabric)
    again = StepModel(preset("llama3-8b"), c, ParallelPlan(2, 1, 32, micro_batch_size=1), fabric)
    assert again.traffic is first.traffic
    assert hash(Reliability()) == hash(Reliability()) and Reliability() == Reliability()
    assert hash(replace(PLAN, data=16)) != hash(PLAN)
