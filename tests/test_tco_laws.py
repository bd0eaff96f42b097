"""Issue 17 (tco): laws of the min-tco optimum, over random tariffs and lifetimes.

The optimum minimises C + t x P (C: capex, support and space; P: power; t: the tariff), so
for t1 < t2 optimality at both gives (t2 - t1)(P2 - P1) <= 0: a dearer kWh never buys a
design that draws more. At equal capex, energy is the only term the designs differ in that
grows with the years, so no lifetime favours the design drawing more per unit of work.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st
from optimizer_fixtures import server, spec_for, tiny_catalog

from optimizer.catalog.model import Catalog
from optimizer.cost.tco import CostModel
from optimizer.optimize.request import Objective
from optimizer.optimize.result import RankedDesign
from optimizer.optimize.solve import optimize

TARIFFS_USD_PER_KWH = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


def catalog_with(cool_price_usd: int) -> Catalog:
    """The tiny catalog plus SRV-COOL: SRV-A's performance at 6.0 kW (SRV-A: 10.2 kW)."""
    cat = tiny_catalog()
    cool = replace(server("SRV-COOL", cool_price_usd), power_kw=6.0)
    return replace(cat, servers=(*cat.servers, cool))


def rank_one(cat: Catalog, target_hours: float, model: CostModel) -> RankedDesign:
    spec = replace(
        spec_for(target_hours=target_hours, objective=Objective.MIN_TCO, top_k=1),
        cost_model=model,
    )
    result = optimize(cat, spec, explain=False)
    assert result.designs, result.status
    return result.designs[0]


@settings(max_examples=12, deadline=None)
@given(
    low=TARIFFS_USD_PER_KWH,
    high=TARIFFS_USD_PER_KWH,
    cool_price_usd=st.integers(min_value=240_000, max_value=330_000),
    # 5 h needs four nodes of the tiny catalog (4.5 h), 6 h three, 12 h one.
    target_hours=st.sampled_from([5.0, 6.0, 12.0]),
)
def test_a_higher_tariff_never_raises_the_chosen_designs_power(
    low: float, high: float, cool_price_usd: int, target_hours: float
) -> None:
    low, high = min(low, high), max(low, high)
    cat = catalog_with(cool_price_usd)
    cheap = rank_one(cat, target_hours, CostModel(electricity_usd_per_kwh=low))
    dear = rank_one(cat, target_hours, CostModel(electricity_usd_per_kwh=high))
    assert dear.bom.power_kw <= cheap.bom.power_kw + 1e-6, (
        f"${high}/kWh buys {dear.bom.power_kw} kW, ${low}/kWh {cheap.bom.power_kw} kW"
    )


@settings(max_examples=10, deadline=None)
@given(
    years=st.floats(min_value=0.5, max_value=15.0, allow_nan=False),
    more=st.floats(min_value=0.0, max_value=10.0, allow_nan=False),
    tariff=st.floats(min_value=0.01, max_value=1.0, allow_nan=False),
)
def test_more_years_never_favour_more_power_per_unit_of_work_at_equal_capex(
    years: float, more: float, tariff: float
) -> None:
    # SRV-COOL and SRV-A cost the same and train as fast; SRV-COOL draws less.
    cat = catalog_with(250_000)
    energy = [
        rank_one(cat, 6.0, CostModel(years=y, electricity_usd_per_kwh=tariff))
        for y in (years, years + more)
    ]
    per_work = [d.bom.power_kw * d.time_hours for d in energy]  # kWh per training run
    assert per_work[1] <= per_work[0] + 1e-6
    assert all(d.design.server_sku == "SRV-COOL" for d in energy)
