"""The min-time size search stays exact under every facility cap: more budget is never
slower, whatever the floor, the rack density and the cooling."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from optimizer_fixtures import random_catalogs, server, spec_for

from optimizer.catalog.model import Catalog
from optimizer.optimize.request import Objective
from optimizer.optimize.solve import optimize


@st.composite
def halls(draw: st.DrawFn) -> Catalog:
    """A random small catalog, sometimes with a denser liquid-only or either-way server."""
    catalog = draw(random_catalogs())
    cooling = draw(st.sampled_from([None, "liquid", "either"]))
    if cooling is None:
        return catalog
    dense = replace(
        server("SRV-DENSE", draw(st.integers(150_000, 400_000))),
        power_kw=14.3,
        rack_units=4,
        cooling=cooling,
    )
    return replace(catalog, servers=(*catalog.servers, dense))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    catalog=halls(),
    budget=st.integers(150_000, 1_500_000),
    extra=st.integers(1, 1_000_000),
    floor=st.one_of(st.none(), st.integers(1, 6)),
    rack_kw=st.one_of(st.none(), st.floats(8.0, 60.0)),
    cooling=st.sampled_from([None, "air", "liquid"]),
)
def test_more_budget_is_never_slower_under_facility_caps(
    catalog: Catalog,
    budget: int,
    extra: int,
    floor: int | None,
    rack_kw: float | None,
    cooling: str | None,
) -> None:
    def best_hours(budget_usd: int) -> float:
        spec = spec_for(
            budget_usd=budget_usd,
            objective=Objective.MIN_TIME,
            top_k=1,
            max_nodes=16,
            max_floor_positions=floor,
            cooling=cooling,
        )
        result = optimize(catalog, replace(spec, rack_power_kw=rack_kw))
        return result.designs[0].time_hours if result.designs else float("inf")

    assert best_hours(budget + extra) <= best_hours(budget)
