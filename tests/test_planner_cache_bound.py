"""The planner's caches hold a bounded number of candidate rows (planner._CACHED_ROWS_LIMIT):
bounded by entries alone, a long-lived process grew past 16 GB and a CI worker was killed for
memory. Emptied caches only cost time: the answers are the same. The sizes' candidates and the
bands of several sizes (copies of their rows, cheap to build again) are counted apart, so bands
filling their share never throw the sizes away (one count for both emptied every cache 11
times in a DeepSeek-V3 optimization on gen-2026, and built its sizes 2.5 times over)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from optimizer.performance import plan_pricing, planner
from optimizer.performance.planner import plan_and_estimate
from optimizer.performance.validation import HGX_H100, cluster_for
from optimizer.workload.presets import preset


@pytest.fixture
def empty_caches(monkeypatch: pytest.MonkeyPatch) -> None:
    """The planner's caches as a new process has them (restored afterwards)."""
    monkeypatch.setattr(planner, "_size_cache", {})
    monkeypatch.setattr(planner, "_pending_cache", {})
    monkeypatch.setattr(planner, "_row_parts_cache", {})
    monkeypatch.setattr(planner._RowBudget, "sizes", 0)
    monkeypatch.setattr(planner._RowBudget, "bands", 0)


def _band_rows_held() -> int:
    return sum(
        planner._band_rows(band)
        for order in planner._pending_cache.values()
        for band in order.bands.values()
    )


def test_the_rows_the_caches_hold_stay_within_the_limit(
    monkeypatch: pytest.MonkeyPatch, empty_caches: None
) -> None:
    monkeypatch.setattr(planner, "_CACHED_ROWS_LIMIT", 5_000)
    for gpus in (64, 128, 256, 512):
        plan_and_estimate(preset("llama3-70b"), cluster_for(HGX_H100, gpus))

    # past the limit the caches start again from the entry that crossed it
    assert planner._RowBudget.sizes <= 5_000 or len(planner._size_cache) <= 1


def test_the_band_rows_counted_are_the_band_rows_held(empty_caches: None) -> None:
    w = preset("bert-large")
    for topology, fabric, oversubscription in (
        ("fat_tree", "ethernet", 1.0),
        ("fat_tree", "ethernet", 3.0),
        ("dragonfly", "roce", 1.0),
    ):
        plan_and_estimate(w, cluster_for(HGX_H100, 256, topology, fabric, oversubscription))

    assert planner._RowBudget.bands == _band_rows_held() > 0


def test_bands_past_their_share_leave_the_sizes_candidates_in_place(
    monkeypatch: pytest.MonkeyPatch, empty_caches: None
) -> None:
    # BERT-Large on 256 GPUs over Ethernet: about 1,700 candidates in 24 sizes, and about
    # 1,500 band rows over two networks, past half of a 2,500-row limit (counted as one,
    # every cache was emptied and the sizes built three times over)
    monkeypatch.setattr(planner, "_CACHED_ROWS_LIMIT", 2_500)
    built: list[int] = []
    price_free = planner._price_free
    monkeypatch.setattr(planner, "_price_free", lambda *args: built.append(1) or price_free(*args))
    w = preset("bert-large")
    networks = [("fat_tree", "ethernet", 1.0), ("fat_tree", "ethernet", 3.0)] * 2
    band_rows = []
    for topology, fabric, oversubscription in networks:
        plan_and_estimate(w, cluster_for(HGX_H100, 256, topology, fabric, oversubscription))
        band_rows.append(_band_rows_held())

    assert min(band_rows[1:]) < max(band_rows)  # the bands were emptied
    assert len(built) == len(planner._size_cache) == 24  # and no size was built twice


def test_a_familys_row_is_built_once_per_hardware_whatever_the_gpu_memory(
    monkeypatch: pytest.MonkeyPatch, empty_caches: None
) -> None:
    # 80 and 141 GB (H100, H200) fit different candidates on the same hardware rows: the
    # families both fit share one row (B200 and B300 servers, 180 and 288 GB, in gen-2026)
    rows: list[tuple[object, ...]] = []
    row = plan_pricing._depth_free_row

    def counted(w, plan, hw, parts):  # type: ignore[no-untyped-def]
        rows.append((w, hw, replace(plan, virtual_pipeline=1)))
        return row(w, plan, hw, parts)

    monkeypatch.setattr(plan_pricing, "_depth_free_row", counted)
    w, c = preset("llama3-70b"), cluster_for(HGX_H100, 256, "fat_tree", "ethernet")
    plan_and_estimate(w, c)
    first = len(rows)
    plan_and_estimate(w, replace(c, gpu_memory_gb=141.0))

    assert len(rows) > first  # the larger memory fits families the smaller did not
    assert len(set(rows)) == len(rows)


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
