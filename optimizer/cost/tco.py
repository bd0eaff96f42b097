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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from optimizer.errors import InvalidInput
from optimizer.topology.bom import BillOfMaterials

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


COST_MODEL_LIMITS: dict[str, tuple[float, float]] = {
    "years": (0.01, 50.0),
    "utilization": (0.0, 1.0),
    "pue": (1.0, 5.0),
    "electricity_usd_per_kwh": (0.0, 10.0),
    "support_rate": (0.0, 1.0),
    "rack_usd_per_month": (0.0, 1_000_000.0),
    "discount_rate": (0.0, 1.0),
}
"""Accepted range of each CostModel field (request fields ``cost_model.*``, CLI flags)."""


def checked_cost_model(given: Mapping[str, float], field_prefix: str = "cost_model.") -> CostModel:
    """The cost model with ``given`` fields over the defaults, each checked against its range;
    InvalidInput names the field and the range otherwise."""
    for name, value in given.items():
        lo, hi = COST_MODEL_LIMITS[name]
        if not (math.isfinite(value) and lo <= value <= hi):
            msg = f"got {value}, expected a number from {lo:g} to {hi:g}"
            raise InvalidInput(msg, field=field_prefix + name)
    return CostModel(**given)


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


# --- The lifetime cost as the optimizer uses it (issue 17, TCO objective) ----------------------

TCO_UNITS_PER_CENT = 1000
"""The MIP's TCO objective counts milli-cents: its coefficients must be integers, and a whole
cent per watt of lifetime energy (about 364 cents at the defaults) would round away dollars
on a megawatt cluster."""


class SupportRates(Protocol):
    """A catalog row that may carry its own support rate (servers, NICs, switches)."""

    @property
    def sku(self) -> str: ...

    @property
    def support_rate(self) -> float | None: ...


@dataclass(frozen=True)
class TcoPrices:
    """The lifetime cost as linear coefficients in cents: what one more unit of a SKU, one
    more watt or one more rack adds to the net present cost. The MIP, the candidate search's
    bounds and the reported breakdown all read these, so they rank by the same measure."""

    model: CostModel
    annuity: float  # present value of 1 per year over the years (annuity_factor)
    support_rates: Mapping[str, float]  # SKU -> yearly fraction of its price (catalog rows)

    @property
    def energy_cents_per_w(self) -> float:
        """Lifetime (present-value) energy bill of one watt of IT power."""
        return energy_cents_per_year(0.001, self.model) * self.annuity

    @property
    def space_cents_per_rack(self) -> float:
        """Lifetime (present-value) rent of one rack."""
        return space_cents_per_year(1, self.model) * self.annuity

    def support_rate(self, sku: str) -> float:
        """The SKU's catalog support rate, else the request's."""
        return self.support_rates.get(sku, self.model.support_rate)

    def unit_cents(self, sku: str, unit_price_cents: float) -> float:
        """Price plus lifetime support of one unit bought at ``unit_price_cents``."""
        return unit_price_cents * (1.0 + self.annuity * self.support_rate(sku))


def tco_prices(rows: Iterable[SupportRates], model: CostModel) -> TcoPrices:
    """The coefficients of ``model`` over catalog ``rows`` (those with a support_rate)."""
    rates = {r.sku: r.support_rate for r in rows if r.support_rate is not None}
    return TcoPrices(model, annuity_factor(model.years, model.discount_rate), rates)


def bom_tco(
    lines: Iterable[tuple[str, int]], capex_cents: int, power_kw: float, racks: int, p: TcoPrices
) -> TcoBreakdown:
    """TCO of a bill of materials: ``lines`` are (SKU, extended price in cents); support is
    each line's rate times its price, so a catalog's per-row rates count line by line."""
    support = sum(p.support_rate(sku) * cents for sku, cents in lines)
    return lifetime_cost(capex_cents, power_kw, racks, p.model, support_cents_per_year=support)


def usd_text(cents: float) -> str:
    return f"${cents / 100:,.0f}"


def tco_versus_capex(
    chosen_label: str,
    chosen: TcoBreakdown,
    cheapest_label: str,
    cheapest: TcoBreakdown,
    model: CostModel,
) -> str:
    """Why min-tco picked a design other than the cheapest to buy: the extra capex against
    the operating cost it saves over the years (energy, support, space)."""
    extra = chosen.capex_cents - cheapest.capex_cents
    saved_energy = cheapest.energy_cents - chosen.energy_cents
    saved_other = (
        cheapest.support_cents + cheapest.space_cents - chosen.support_cents - chosen.space_cents
    )
    years = f"{model.years:g} years"
    other = "less" if saved_other >= 0 else "more"
    energy = "less" if saved_energy >= 0 else "more"
    return (
        f"Min-tco picks {chosen_label} over the cheapest to buy, {cheapest_label}: "
        f"{usd_text(extra)} more capex, {usd_text(abs(saved_energy))} {energy} energy and "
        f"{usd_text(abs(saved_other))} {other} support and space over {years} "
        f"(at ${model.electricity_usd_per_kwh:g}/kWh, PUE {model.pue:g}, "
        f"{model.utilization:.0%} utilisation), so its TCO is "
        f"{usd_text(cheapest.tco_cents - chosen.tco_cents)} lower "
        f"({usd_text(chosen.tco_cents)} against {usd_text(cheapest.tco_cents)})."
    )


def breakdown_of(bom: BillOfMaterials, p: TcoPrices) -> TcoBreakdown:
    """TCO of a built design: its BOM's lines, capex, power and racks."""
    lines = [(line.sku, line.extended_price_cents) for line in bom.lines]
    return bom_tco(lines, bom.capex_cents, bom.power_kw, bom.racks, p)
