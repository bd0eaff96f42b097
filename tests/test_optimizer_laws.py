"""Laws every answer obeys, checked on random small catalogs (hypothesis)."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from optimizer_fixtures import random_catalogs, spec_for, tiny_catalog

from optimizer.optimize.request import Objective
from optimizer.optimize.solve import optimize

FAST = settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _first_time(result) -> float:
    return result.designs[0].time_hours if result.designs else float("inf")


def _first_cost(result) -> float:
    return result.designs[0].bom.capex_cents if result.designs else float("inf")


@FAST
@given(
    catalog=random_catalogs(),
    budget=st.integers(150_000, 1_500_000),
    extra=st.integers(1, 1_000_000),
)
def test_more_budget_never_gives_a_slower_best_design(catalog, budget: int, extra: int) -> None:
    low = optimize(catalog, spec_for(budget_usd=budget, objective=Objective.MIN_TIME))
    high = optimize(catalog, spec_for(budget_usd=budget + extra, objective=Objective.MIN_TIME))
    assert _first_time(high) <= _first_time(low)


@FAST
@given(catalog=random_catalogs(), target=st.floats(2.0, 30.0), slack=st.floats(0.1, 30.0))
def test_a_looser_target_never_gives_a_costlier_design(
    catalog, target: float, slack: float
) -> None:
    tight = optimize(catalog, spec_for(target_hours=target))
    loose = optimize(catalog, spec_for(target_hours=target + slack))
    assert _first_cost(loose) <= _first_cost(tight)


@FAST
@given(catalog=random_catalogs(), target=st.floats(2.0, 30.0), power_kw=st.floats(5.0, 60.0))
def test_adding_a_constraint_never_improves_the_objective(
    catalog, target: float, power_kw: float
) -> None:
    free = optimize(catalog, spec_for(target_hours=target))
    capped = optimize(catalog, spec_for(target_hours=target, max_power_kw=power_kw))
    assert _first_cost(capped) >= _first_cost(free)
    for d in capped.designs:
        assert d.bom.power_kw <= power_kw + 1e-9


@FAST
@given(
    catalog=random_catalogs(),
    target=st.floats(2.0, 30.0),
    budget=st.integers(200_000, 3_000_000),
    top_k=st.integers(1, 5),
)
def test_ranks_are_sorted_distinct_and_within_budget_and_target(
    catalog, target: float, budget: int, top_k: int
) -> None:
    result = optimize(catalog, spec_for(target_hours=target, budget_usd=budget, top_k=top_k))
    costs = [d.bom.capex_cents for d in result.designs]
    assert costs == sorted(costs)
    assert [d.rank for d in result.designs] == list(range(1, len(costs) + 1))
    groups = {
        (d.design.server_sku, d.design.fabric, d.design.topology, d.design.oversubscription)
        for d in result.designs
    }
    assert len(groups) == len(result.designs)
    for d in result.designs:
        assert d.bom.capex_cents <= budget * 100
        assert d.time_hours <= target


def test_the_same_request_gives_the_same_answer() -> None:
    spec = spec_for(target_hours=6.0, top_k=3)
    first = optimize(tiny_catalog(), spec)
    again = optimize(tiny_catalog(), spec)
    assert [(d.design, d.bom) for d in first.designs] == [(d.design, d.bom) for d in again.designs]


def test_an_unaffordable_target_says_what_the_cheapest_design_costs() -> None:
    result = optimize(tiny_catalog(), spec_for(target_hours=6.0, budget_usd=100_000))
    assert result.status == "INFEASIBLE"
    assert not result.designs
    assert "over the $100,000 budget by" in result.diagnosis


def test_an_unreachable_target_says_how_fast_the_fastest_design_is() -> None:
    result = optimize(tiny_catalog(), spec_for(target_hours=0.01))
    assert not result.designs
    assert "meets the 0.01 h target: the fastest the catalog can build" in result.diagnosis


def test_stock_limits_make_the_optimizer_mix_link_skus() -> None:
    """With only 2 AOCs in stock, links that need them are built from optics for the rest."""
    catalog = tiny_catalog(aoc_stock=2)
    result = optimize(
        catalog,
        spec_for(target_hours=1e6, min_gpus=32, max_nodes=4, top_k=1, topologies=("fat_tree",)),
    )
    assert result.designs
    used = {line.sku: line.quantity for line in result.designs[0].bom.lines}
    assert used.get("AOC-30M", 0) <= 2


def test_pessimistic_confidence_never_picks_a_cheaper_design() -> None:
    base = spec_for(target_hours=5.0)
    expected = optimize(tiny_catalog(), base)
    pessimistic = optimize(
        tiny_catalog(), replace(base, confidence=type(base.confidence)("pessimistic"))
    )
    assert _first_cost(pessimistic) >= _first_cost(expected)
    for d in pessimistic.designs:
        assert d.estimate.training_time_hours_high <= 5.0
