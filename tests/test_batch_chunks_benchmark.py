"""The batch benchmark's grids: any size it is asked for, every catalog and workload in it."""

from __future__ import annotations

import json

from benchmarks.batch import BASE_GRID_SCENARIOS, CATALOGS, WORKLOADS, benchmark_plan, sample_plan


def test_a_grid_larger_than_the_base_one_has_exactly_the_scenarios_asked_for() -> None:
    plan = benchmark_plan(BASE_GRID_SCENARIOS + 300)
    ids = [s.scenario_id for s in plan.scenarios]
    assert len(ids) == len(set(ids)) == BASE_GRID_SCENARIOS + 300


def test_a_large_grid_spreads_over_every_catalog_and_workload() -> None:
    plan = benchmark_plan(2000)
    assert {s.catalog_ref for s in plan.scenarios} == set(CATALOGS)
    workloads = {json.loads(s.request_json)["workload"]["model"] for s in plan.scenarios}
    assert workloads == {m for m, _ in WORKLOADS}


def test_the_one_worker_sample_is_a_seeded_subset_in_plan_order() -> None:
    plan = benchmark_plan(200)
    sample = sample_plan(plan, 50)
    order = [s.scenario_id for s in plan.scenarios]
    picked = [s.scenario_id for s in sample.scenarios]
    assert len(picked) == 50 and picked == sorted(picked, key=order.index)
    assert picked == [s.scenario_id for s in sample_plan(plan, 50).scenarios]
