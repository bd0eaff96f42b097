"""Total cost of ownership: capex plus the operating cost over the cluster's life.

Pure functions over integer cents, so a hand computation checks them to the cent
(tests/test_tco_model.py). The terms are the usual facility ones: energy is IT power x
utilisation x PUE x tariff x hours (PUE as defined by The Green Grid, "PUE: A Comprehensive
Examination of the Metric", 2012); support is a yearly fraction of the hardware price; space is
a rent per rack per month. Yearly costs are paid at the end of each year and discounted at the
request's rate to a net present cost; a fractional last year pays its share at the end.
The defaults and their sources are in docs/optimizer.md ("Lifetime cost").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

HOURS_PER_YEAR = 8760.0
MONTHS_PER_YEAR = 12


@dataclass(frozen=True)
class CostModel:
    """How the facility charges for a running cluster (request fields, CLI flags)."""

    years: float = 4.0
    utilization: float = 0.8  # fraction of the hours the cluster draws its rated IT power
    pue: float = 1.3
    electricity_usd_per_kwh: float = 0.10
    support_rate: float = 0.08  # per year, fraction of capex, where a catalog row has none
    rack_usd_per_month: float = 1500.0
    discount_rate: float = 0.0  # per year; 0 = undiscounted sum


@dataclass(frozen=True)
class TcoBreakdown:
    """Net present cost of owning one design for ``years`` (cents)."""

    capex_cents: int
    energy_cents: int
    support_cents: int
    space_cents: int
    depreciation_cents_per_year: int  # straight line over the years, no residual value

    @property
    def tco_cents(self) -> int:
        return self.capex_cents + self.energy_cents + self.support_cents + self.space_cents

    @property
    def opex_cents(self) -> int:
        return self.energy_cents + self.support_cents + self.space_cents


def annuity_factor(years: float, discount_rate: float) -> float:
    """Present value of 1 paid at the end of each year for ``years`` (a fractional last
    year pays its fraction at the end of the term); equals ``years`` when undiscounted."""
    whole = math.floor(years)
    v = 1.0 / (1.0 + discount_rate)
    factor = sum(v**y for y in range(1, whole + 1))
    return float(factor + (years - whole) * v**years)


def energy_cents_per_year(it_power_kw: float, model: CostModel) -> float:
    """Facility energy bill per year: IT power x utilisation x PUE x tariff x 8,760 h."""
    kwh = it_power_kw * model.utilization * model.pue * HOURS_PER_YEAR
    return kwh * model.electricity_usd_per_kwh * 100.0


def space_cents_per_year(racks: int, model: CostModel) -> float:
    return racks * model.rack_usd_per_month * MONTHS_PER_YEAR * 100.0


def lifetime_cost(
    capex_cents: int,
    it_power_kw: float,
    racks: int,
    model: CostModel,
    support_cents_per_year: float | None = None,
) -> TcoBreakdown:
    """TCO of one design. ``support_cents_per_year`` comes from the catalog's per-row support
    rates when it has them; otherwise ``model.support_rate`` x capex."""
    factor = annuity_factor(model.years, model.discount_rate)
    support = (
        model.support_rate * capex_cents
        if support_cents_per_year is None
        else support_cents_per_year
    )
    return TcoBreakdown(
        capex_cents=capex_cents,
        energy_cents=round(energy_cents_per_year(it_power_kw, model) * factor),
        support_cents=round(support * factor),
        space_cents=round(space_cents_per_year(racks, model) * factor),
        depreciation_cents_per_year=round(capex_cents / model.years) if model.years > 0 else 0,
    )
