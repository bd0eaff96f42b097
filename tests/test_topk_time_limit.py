"""A top-K the clock cuts short says so; a top-K that is really short stays OPTIMAL (defect 7)."""

from __future__ import annotations

import threading
from collections.abc import Callable

from optimizer_fixtures import spec_for, tiny_catalog

from optimizer.catalog import load_catalog
from optimizer.catalog.resolve import bundled_catalogs
from optimizer.optimize.request import Constraints, OptimizeSpec
from optimizer.optimize.solve import optimize
from optimizer.workload.presets import preset

ETHERNET = load_catalog(next(p for p in bundled_catalogs() if p.name == "ethernet-budget"))


def _mpt_30b(top_k: int) -> OptimizeSpec:
    """The issue's repro: mpt-30b within 84.47 h on the Ethernet catalog, ten designs asked."""
    return OptimizeSpec(
        workload=preset("mpt-30b"),
        constraints=Constraints(target_training_hours=84.47),
        top_k=top_k,
        allowed_fabrics=("roce",),
        allowed_topologies=("fat_tree", "rail_optimized"),
    )


def _stop_after_ranks(ranks: int) -> tuple[threading.Event, Callable[[dict[str, object]], None]]:
    """A stop event set once ``ranks`` designs are ranked: the clock ends the ranking there."""
    stop = threading.Event()

    def progress(event: dict[str, object]) -> None:
        if event.get("phase") == "solve" and event.get("designs_found") == ranks:
            stop.set()

    return stop, progress


def test_a_ranking_cut_short_by_the_clock_is_not_optimal_and_says_how_far_it_got() -> None:
    stop, progress = _stop_after_ranks(3)
    result = optimize(ETHERNET, _mpt_30b(top_k=10), stop=stop, progress=progress)
    assert len(result.designs) == 3
    assert result.status == "TIME_LIMIT"
    assert any("3 of 10 designs ranked before the time limit" in w for w in result.warnings)


def test_the_same_request_with_time_to_finish_ranks_all_it_asks_for_as_optimal() -> None:
    result = optimize(ETHERNET, _mpt_30b(top_k=8))
    assert len(result.designs) == 8
    assert result.status == "OPTIMAL"
    assert not result.warnings


def test_a_top_k_with_fewer_distinct_designs_than_asked_stays_optimal() -> None:
    # One fabric, one topology: two servers make at most two distinct designs.
    spec = spec_for(target_hours=30.0, top_k=5, fabrics=("infiniband",), topologies=("fat_tree",))
    result = optimize(tiny_catalog(), spec)
    assert 1 <= len(result.designs) < 5
    assert result.status == "OPTIMAL"
    assert not any("designs ranked before the time limit" in w for w in result.warnings)


def test_a_search_the_clock_ends_before_any_design_claims_none() -> None:
    stop = threading.Event()
    stop.set()  # the clock has run out before the search starts
    result = optimize(ETHERNET, _mpt_30b(top_k=10), stop=stop)
    assert not result.designs
    assert result.status == "TIME_LIMIT"
    assert "before any design was found" in result.diagnosis
    assert not any("the designs are the best found" in w for w in result.warnings)
