"""The lifetime-cost formulas, checked against hand computations to the cent."""

from __future__ import annotations

import pytest

from optimizer.cost.tco import CostModel, annuity_factor, lifetime_cost


def test_undiscounted_four_years_by_hand() -> None:
    # $1,000,000 of hardware drawing 20 kW in 2 racks, 4 years, 80 % busy, PUE 1.3,
    # $0.10/kWh, 8 % support a year, $1,500 per rack-month.
    # energy  = 20 x 0.8 x 1.3 x 0.10 x 8760 x 4  = $72,883.20
    # support = 0.08 x 1,000,000 x 4               = $320,000.00
    # space   = 2 x 1,500 x 12 x 4                  = $144,000.00
    t = lifetime_cost(100_000_000, 20.0, 2, CostModel())
    assert t.energy_cents == 7_288_320
    assert t.support_cents == 32_000_000
    assert t.space_cents == 14_400_000
    assert t.tco_cents == 100_000_000 + 7_288_320 + 32_000_000 + 14_400_000
    assert t.depreciation_cents_per_year == 25_000_000


def test_discounting_by_hand() -> None:
    # 2 years at 10 %: factor = 1/1.1 + 1/1.21 = 1.7355371900826446
    # energy/year = 10 kW x 1.0 x 1.5 x $0.20 x 8760 = $26,280.00 -> PV $45,609.92
    model = CostModel(
        years=2,
        utilization=1.0,
        pue=1.5,
        electricity_usd_per_kwh=0.20,
        support_rate=0.0,
        rack_usd_per_month=0.0,
        discount_rate=0.10,
    )
    t = lifetime_cost(50_000_000, 10.0, 1, model)
    assert t.energy_cents == 4_560_992
    assert t.support_cents == 0 and t.space_cents == 0


def test_catalog_support_replaces_the_default_rate() -> None:
    t = lifetime_cost(100_000_000, 0.0, 0, CostModel(years=3), support_cents_per_year=1_234_500)
    assert t.support_cents == 3_703_500


@pytest.mark.parametrize("years", [1.0, 2.5, 4.0, 7.0])
def test_undiscounted_annuity_is_the_years(years: float) -> None:
    assert annuity_factor(years, 0.0) == pytest.approx(years)


def test_half_year_pays_its_share_at_the_end() -> None:
    assert annuity_factor(1.5, 0.1) == pytest.approx(1 / 1.1 + 0.5 / 1.1**1.5)
