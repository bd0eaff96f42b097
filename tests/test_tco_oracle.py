"""Min-tco against brute force (issue 17, fixB): on small random catalogs, rank 1 to K of the
optimizer equal optimizer.optimize.exhaustive's ranking by lifetime cost, to the cent, across
tariffs and lifetimes; a TCO cap holds under min-cost as well."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from optimizer_fixtures import random_catalogs, small_workload, spec_for

from optimizer.catalog.model import Catalog
from optimizer.cost.tco import CostModel
from optimizer.optimize.exhaustive import exhaustive
from optimizer.optimize.request import Objective, OptimizeSpec
from optimizer.optimize.solve import optimize

MAX_NODES = 4
FEW = settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _tco_spec(target: float, top_k: int, model: CostModel) -> OptimizeSpec:
    spec = spec_for(
        target_hours=target,
        top_k=top_k,
        objective=Objective.MIN_TCO,
        max_nodes=MAX_NODES,
        workload=small_workload(),
    )
    return replace(spec, cost_model=model)


@FEW
@given(
    catalog=random_catalogs(),
    target=st.sampled_from([3.0, 6.0, 12.0, 40.0]),
    top_k=st.integers(1, 3),
    tariff=st.sampled_from([0.05, 0.10, 0.60]),
    years=st.sampled_from([1.0, 4.0, 10.0]),
)
def test_min_tco_equals_brute_force(
    catalog: Catalog, target: float, top_k: int, tariff: float, years: float
) -> None:
    spec = _tco_spec(target, top_k, CostModel(years=years, electricity_usd_per_kwh=tariff))
    got = optimize(catalog, spec)
    want = exhaustive(catalog, spec, max_nodes=MAX_NODES)
    assert [(d.design, d.tco_cents) for d in got.designs] == [(b.design, b.tco_cents) for b in want]
    assert (got.status == "INFEASIBLE") == (not want)


@FEW
@given(catalog=random_catalogs(), target=st.sampled_from([6.0, 12.0, 40.0]))
def test_the_oracle_ranks_min_tco_by_lifetime_cost(catalog: Catalog, target: float) -> None:
    want = exhaustive(
        catalog, _tco_spec(target, 3, CostModel(electricity_usd_per_kwh=0.6)), max_nodes=MAX_NODES
    )
    tcos = [b.tco_cents for b in want]
    assert all(t is not None for t in tcos)
    assert tcos == sorted(t or 0 for t in tcos)


@FEW
@given(catalog=random_catalogs(), target=st.sampled_from([6.0, 12.0, 40.0]))
def test_a_tco_cap_holds_under_min_cost_as_in_the_optimizer(
    catalog: Catalog, target: float
) -> None:
    free = exhaustive(
        catalog, spec_for(target_hours=target, max_nodes=MAX_NODES), max_nodes=MAX_NODES
    )
    if not free:
        return
    cap = free[0].tco_cents
    assert cap is not None
    spec = spec_for(target_hours=target, max_nodes=MAX_NODES, max_tco_cents=cap - 1)
    want = exhaustive(catalog, spec, max_nodes=MAX_NODES)
    assert all(b.tco_cents is not None and b.tco_cents < cap for b in want)
    got = optimize(catalog, spec)
    assert [(d.design, d.bom.capex_cents) for d in got.designs] == [
        (b.design, b.capex_cents) for b in want
    ]
