"""Issue 17 (tco): the lifetime cost through the whole API, the min-tco objective, its
difference from min-cost, and the TCO cap with every objective."""

from __future__ import annotations

from dataclasses import replace

import pytest
from optimizer_fixtures import server, tiny_catalog

from optimizer._pb.procurement.v1 import optimize_pb2
from optimizer.api import optimize
from optimizer.catalog.model import Catalog
from optimizer.errors import InvalidInput

HIGH_TARIFF_USD_PER_KWH = 0.40


def with_cool_server(cat: Catalog) -> Catalog:
    """``cat`` plus SRV-COOL: SRV-A's performance at 6.0 kW instead of 10.2 kW, for $12,000
    more ($262,000)."""
    cool = replace(server("SRV-COOL", 262_000), power_kw=6.0)
    return replace(cat, servers=(*cat.servers, cool))


def request(objective: str, **cost_model: float) -> optimize_pb2.OptimizeRequest:
    """BERT-Large on 4e10 tokens within 8 h: two nodes of the tiny catalog (6.5 h; one takes
    10.8 h)."""
    req = optimize_pb2.OptimizeRequest(objective=objective, top_k=1)
    req.workload.model = "bert-large"
    req.workload.training_tokens = 4e10
    req.constraints.target_training_hours = 8.0
    req.constraints.max_gpus = 32
    for name, value in cost_model.items():
        setattr(req.cost_model, name, value)
    return req


def test_tco_of_a_small_design_by_hand_to_the_cent() -> None:
    # SRV-A carries its own 10 % support contract; the NICs and the cable take the request's
    # 6 %. Rank 1 is 2 x SRV-A ($500,000), 2 x NIC-VPI ($4,000), 1 x DAC-3M ($200): capex
    # $504,200, 20.451 kW (20.4 + 2 x 0.025 + 0.001), one rack.
    # annuity(3 years, 5 %) = 1/1.05 + 1/1.05**2 + 1/1.05**3 = 2.723248029...
    # energy/year  = 20.451 kW x 0.5 x 1.4 x 8,760 h x $0.12 = $15,048.66384 -> $40,981.24
    # support/year = 0.10 x 500,000 + 0.06 x (4,000 + 200)  = $50,252.00    -> $136,848.66
    # space/year   = 1 rack x $1,000 x 12                    = $12,000.00    -> $32,678.98
    # TCO = 504,200 + 40,981.24 + 136,848.66 + 32,678.98      = $714,708.88
    cat = tiny_catalog()
    cat = replace(cat, servers=(replace(cat.servers[0], support_rate=0.10), *cat.servers[1:]))
    req = request(
        "min_tco",
        years=3,
        discount_rate=0.05,
        utilization=0.5,
        pue=1.4,
        electricity_usd_per_kwh=0.12,
        support_rate=0.06,
        rack_usd_per_month=1000,
    )
    d = optimize(req, catalog=cat).designs[0]
    assert [(b.sku, b.quantity) for b in d.bom] == [("SRV-A", 2), ("NIC-VPI", 2), ("DAC-3M", 1)]
    assert (d.capex_usd, d.power_kw, d.racks) == (504_200.0, pytest.approx(20.451), 1)
    assert d.tco.capex_usd == 504_200.00
    assert d.tco.energy_usd == 40_981.24
    assert d.tco.support_usd == 136_848.66
    assert d.tco.space_usd == 32_678.98
    assert d.tco.opex_usd == 210_508.88
    assert d.tco.depreciation_usd_per_year == 168_066.67
    assert d.tco_usd == 714_708.88


def test_every_objective_reports_the_tco_beside_capex() -> None:
    resp = optimize(request("min_cost"), catalog=tiny_catalog())
    d = resp.designs[0]
    assert d.tco_usd > d.capex_usd
    assert d.tco_usd == pytest.approx(
        d.tco.capex_usd + d.tco.energy_usd + d.tco.support_usd + d.tco.space_usd
    )
    assert resp.cost_model.years == 4.0 and resp.cost_model.pue == 1.3  # the defaults used


def test_at_a_high_tariff_min_tco_buys_the_cooler_server_that_min_cost_does_not() -> None:
    cat = with_cool_server(tiny_catalog())
    tariff = {"electricity_usd_per_kwh": HIGH_TARIFF_USD_PER_KWH}
    cheapest = optimize(request("min_cost", **tariff), catalog=cat).designs[0]
    resp = optimize(request("min_tco", **tariff), catalog=cat)
    lifetime = resp.designs[0]
    assert cheapest.server_sku == "SRV-A"
    assert lifetime.server_sku == "SRV-COOL"
    assert lifetime.capex_usd > cheapest.capex_usd
    assert lifetime.tco_usd < cheapest.tco_usd
    saved_usd = cheapest.tco.energy_usd - lifetime.tco.energy_usd
    assert f"${lifetime.capex_usd - cheapest.capex_usd:,.0f} more capex" in resp.tco_comparison
    assert f"${saved_usd:,.0f} less energy" in resp.tco_comparison
    assert resp.tco_comparison in lifetime.explanation


def test_at_the_default_tariff_both_objectives_agree_and_say_so() -> None:
    resp = optimize(request("min_tco"), catalog=with_cool_server(tiny_catalog()))
    assert resp.designs[0].server_sku == "SRV-A"
    assert resp.tco_comparison.startswith("Min-tco and min-cost pick the same design")


def test_a_tco_cap_makes_min_cost_buy_the_cheapest_design_within_it() -> None:
    cat = with_cool_server(tiny_catalog())
    req = request("min_cost", electricity_usd_per_kwh=HIGH_TARIFF_USD_PER_KWH)
    uncapped = optimize(req, catalog=cat).designs[0]
    req.constraints.max_tco_usd = uncapped.tco_usd - 1
    req.top_k = 3
    capped = optimize(req, catalog=cat)
    assert capped.designs[0].server_sku == "SRV-COOL"
    assert all(d.tco_usd <= req.constraints.max_tco_usd for d in capped.designs)
    assert "TCO over 4 years" in capped.designs[0].explanation


def test_a_tco_cap_binds_min_time_too() -> None:
    cat = with_cool_server(tiny_catalog())
    req = request("min_time", electricity_usd_per_kwh=HIGH_TARIFF_USD_PER_KWH)
    req.constraints.ClearField("target_training_hours")
    req.constraints.budget_usd = 2_000_000
    uncapped = optimize(req, catalog=cat).designs[0]
    req.constraints.max_tco_usd = uncapped.tco_usd * 0.6
    req.top_k = 3
    capped = optimize(req, catalog=cat)
    assert capped.designs
    assert all(d.tco_usd <= req.constraints.max_tco_usd for d in capped.designs)
    assert capped.designs[0].training_time_hours >= uncapped.training_time_hours


def test_a_tco_cap_nothing_meets_is_diagnosed_with_the_tco_that_would_meet_it() -> None:
    req = request("min_cost")
    req.constraints.max_tco_usd = 1_000
    resp = optimize(req, catalog=tiny_catalog())
    assert not resp.designs
    assert "lifetime cost (TCO) of $" in resp.diagnosis
    assert "over the $1,000 cap" in resp.diagnosis


@pytest.mark.parametrize(
    ("name", "value"),
    [("pue", 0.9), ("years", 0.0), ("utilization", 1.5), ("discount_rate", -0.1)],
)
def test_a_cost_model_field_out_of_range_is_refused_by_name(name: str, value: float) -> None:
    req = request("min_tco", **{name: value})
    with pytest.raises(InvalidInput) as err:
        optimize(req, catalog=tiny_catalog())
    assert err.value.field == f"cost_model.{name}"


def test_min_tco_needs_a_target_or_a_budget() -> None:
    req = request("min_tco")
    req.constraints.ClearField("target_training_hours")
    with pytest.raises(InvalidInput) as err:
        optimize(req, catalog=tiny_catalog())
    assert err.value.field == "constraints.target_training_hours"


def test_the_objective_enum_value_selects_min_tco() -> None:
    req = request("")
    req.objective_kind = optimize_pb2.OBJECTIVE_MIN_TCO
    req.cost_model.electricity_usd_per_kwh = HIGH_TARIFF_USD_PER_KWH
    assert optimize(req, catalog=with_cool_server(tiny_catalog())).designs[0].server_sku == (
        "SRV-COOL"
    )
