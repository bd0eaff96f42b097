"""Min-time sizes the cluster under every cap at once: more budget is never slower (defect 6)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from optimizer_fixtures import random_catalogs, spec_for

from optimizer.catalog import load_catalog
from optimizer.catalog.resolve import bundled_catalogs
from optimizer.optimize.request import Constraints, Objective, OptimizeSpec
from optimizer.optimize.result import OptimizeResult
from optimizer.optimize.solve import optimize
from optimizer.workload.presets import preset

INFINIBAND = load_catalog(next(p for p in bundled_catalogs() if p.name == "infiniband-ndr"))


def _best_hours(result: OptimizeResult) -> float:
    return result.designs[0].time_hours if result.designs else float("inf")


def _mpt_7b_min_time(
    budget_usd: float,
    *,
    max_power_kw: float | None = None,
    max_racks: int | None = None,
    topologies: tuple[str, ...] = (),
) -> OptimizeResult:
    spec = OptimizeSpec(
        workload=preset("mpt-7b"),
        objective=Objective.MIN_TIME,
        top_k=1,
        constraints=Constraints(
            budget_cents=round(budget_usd * 100), max_power_kw=max_power_kw, max_racks=max_racks
        ),
        allowed_topologies=topologies,
    )
    return optimize(INFINIBAND, spec)


@pytest.mark.parametrize(
    ("low_usd", "high_usd", "caps", "topologies"),
    [
        # The repro (on a fat-tree: a switchless torus may not be offered at all).
        (8e6, 12e6, {"max_power_kw": 150.0}, ("fat_tree",)),
        (2e6, 6e6, {"max_power_kw": 50.0}, ()),
        (4e6, 6e6, {"max_racks": 3}, ("fat_tree",)),
        (4e6, 12e6, {"max_power_kw": 150.0, "max_racks": 4}, ()),
    ],
    ids=["150kW-fat-tree", "50kW-any-topology", "3-racks-fat-tree", "150kW-4-racks"],
)
def test_more_budget_is_never_slower_under_a_cap(
    low_usd: float, high_usd: float, caps: dict[str, float], topologies: tuple[str, ...]
) -> None:
    low = _mpt_7b_min_time(low_usd, topologies=topologies, **caps)  # type: ignore[arg-type]
    high = _mpt_7b_min_time(high_usd, topologies=topologies, **caps)  # type: ignore[arg-type]
    assert low.designs, "the premise: the smaller budget already buys a design"
    assert _best_hours(high) <= _best_hours(low)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    catalog=random_catalogs(),
    budget=st.integers(150_000, 1_500_000),
    extra=st.integers(1, 1_000_000),
    power_kw=st.floats(10.0, 120.0),
    racks=st.integers(1, 4),
)
def test_more_budget_is_never_slower_under_power_and_rack_caps(
    catalog, budget: int, extra: int, power_kw: float, racks: int
) -> None:
    def best(budget_usd: int) -> float:
        spec = spec_for(
            budget_usd=budget_usd,
            objective=Objective.MIN_TIME,
            top_k=1,
            max_nodes=16,
            max_power_kw=power_kw,
            max_racks=racks,
        )
        return _best_hours(optimize(catalog, spec))

    assert best(budget + extra) <= best(budget)


def _with_target(budget_usd: float, target_hours: float) -> OptimizeResult:
    spec = OptimizeSpec(
        workload=preset("mpt-7b"),
        objective=Objective.MIN_TIME,
        top_k=1,
        constraints=Constraints(
            budget_cents=round(budget_usd * 100), target_training_hours=target_hours
        ),
    )
    return optimize(INFINIBAND, spec)


def test_min_time_says_when_its_answer_misses_the_target() -> None:
    """Min-time answers with the fastest design within the budget whatever the target
    (docs/optimizer.md), and said nothing when that design missed it: a request for 168 h
    got an 842 h rank 1, OPTIMAL, without a word."""
    result = _with_target(1e6, 1.0)
    rank_one = result.designs[0]
    assert rank_one.time_hours > 1.0
    assert any("meets the 1 h target" in w for w in result.warnings)
    met = _with_target(1e6, rank_one.time_hours * 2)
    assert not any("target" in w for w in met.warnings)


def test_a_design_past_the_target_is_not_at_it() -> None:
    """A lower rank's "at limit" lists the constraints it uses up; a min-time design over the
    target was listed as at the time limit."""
    spec = OptimizeSpec(
        workload=preset("mpt-7b"),
        objective=Objective.MIN_TIME,
        top_k=2,
        constraints=Constraints(budget_cents=100_000_000, target_training_hours=1.0),
    )
    ranked = optimize(INFINIBAND, spec).designs
    assert len(ranked) == 2 and ranked[1].time_hours > 1.0
    assert "time" not in ranked[1].binding


def test_a_cheaper_lower_rank_says_it_costs_less() -> None:
    """Under min-time a design 0.02 h slower ranks below rank 1 however much cheaper; its
    explanation read "Trains as fast as rank 1 and costs $-6,512,640 more" (found reading
    answers as a vendor architect: Llama 3 8B, $600M, infiniband-ndr). One 0.1 h slower said
    only "Takes 0.1 h longer than rank 1", not the $6.5M it saves (session 33)."""
    spec = OptimizeSpec(
        workload=preset("llama3-8b"),
        objective=Objective.MIN_TIME,
        top_k=3,
        constraints=Constraints(budget_cents=60_000_000_000),
    )
    ranked = optimize(INFINIBAND, spec).designs
    cheaper = [d for d in ranked[1:] if d.bom.capex_cents < ranked[0].bom.capex_cents]
    assert cheaper, "no lower rank cheaper than rank 1: the case this checks is gone"
    for d in ranked:
        assert "$-" not in d.explanation
    for d in cheaper:
        assert "less." in d.explanation and "$-" not in d.explanation
