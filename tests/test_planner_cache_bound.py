"""The planner's caches hold a bounded number of candidate rows (planner._CACHED_ROWS_LIMIT):
bounded by entries alone, a long-lived process grew past 16 GB and a CI worker was killed for
memory. Emptied caches only cost time: the answers are the same."""

from __future__ import annotations

import pytest

from optimizer.performance import planner
from optimizer.performance.planner import plan_and_estimate
from optimizer.performance.validation import HGX_H100, cluster_for
from optimizer.workload.presets import preset


def test_the_rows_the_caches_hold_stay_within_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(planner, "_CACHED_ROWS_LIMIT", 5_000)
    for gpus in (64, 128, 256, 512):
        plan_and_estimate(preset("llama3-70b"), cluster_for(HGX_H100, gpus))

    # past the limit the caches start again from the entry that crossed it
    assert planner._RowBudget.rows <= 5_000 or len(planner._size_cache) <= 1


def test_a_search_after_the_caches_are_emptied_gives_the_same_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    w, c = preset("llama3-8b"), cluster_for(HGX_H100, 512, "fat_tree", "infiniband")
    before = plan_and_estimate(w, c)
    monkeypatch.setattr(planner, "_CACHED_ROWS_LIMIT", 1)  # every new entry empties them

    after = plan_and_estimate(w, cluster_for(HGX_H100, 512, "rail_optimized", "infiniband"))
    again = plan_and_estimate(w, c)

    assert after.plan.gpus <= 512
    assert (again.plan, again.step_time_s) == (before.plan, before.step_time_s)
