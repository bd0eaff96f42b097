"""Rent vs buy arithmetic (optimizer/cost/rent.py), checked against hand computations."""

from __future__ import annotations

from dataclasses import replace

import pytest
from catalog_samples import sample_catalog
from catalog_samples import sample_offer as offer

from optimizer.cost.rent import (
    break_even,
    break_even_utilization,
    quote_offer,
    rented_cost_cents,
    rented_gpus,
)
from optimizer.cost.tco import CostModel
from optimizer.workload.presets import preset

# Two years, no discounting: every yearly term is simply doubled.
MODEL = CostModel(
    years=2.0,
    utilization=0.5,  # ignored: the break-even solves for the utilisation
    pue=1.5,
    electricity_usd_per_kwh=0.10,
    support_rate=0.10,
    rack_usd_per_month=1000.0,
    discount_rate=0.0,
)
# A one-node design: $100,000 capex, 10 kW, one rack, 8 GPUs.
DESIGN = {"capex_cents": 10_000_000, "it_power_kw": 10.0, "racks": 1, "gpus": 8}


def test_rented_cost_is_rate_times_gpus_times_hours_to_the_cent() -> None:
    assert rented_cost_cents(12.29, 16, 10.5) == 206_472  # $12.29 x 16 x 10.5 h = $2,064.72
    assert rented_cost_cents(4.916, 8, 609.125) == 2_395_567  # $23,955.668 -> 2,395,567 cents
    # 101.5 cents exactly, rounded half to even; in binary floats 1.015 x 100 is 101.4999...
    assert rented_cost_cents(1.015, 1, 1.0) == 102


def test_break_even_utilisation_by_hand() -> None:
    # Owning, independent of use: capex $100,000 + 2 x (support $10,000 + space $12,000)
    #   = $144,000. Energy at full use: 10 kW x 1.5 x 8,760 h x $0.10 = $13,140 a year,
    #   $26,280 over 2. Renting every hour: $2 x 8 x 8,760 x 2 = $280,320.
    # $144,000 + u x $26,280 = u x $280,320  =>  u = 144,000 / 254,040.
    found = break_even(offer(), "on_demand", model=MODEL, **DESIGN)
    assert found is not None
    assert (found.own_fixed_cents, found.own_energy_full_use_cents, found.rent_full_use_cents) == (
        14_400_000,
        2_628_000,
        28_032_000,
    )
    assert found.utilization == pytest.approx(144_000 / 254_040, rel=1e-12)


def test_break_even_with_discounting_by_hand() -> None:
    # At 10% a year the yearly terms are worth 1/1.1 + 1/1.21 = 1.7355... each, capex is not
    # discounted: u = (100,000 + 22,000 f) / ((140,160 - 13,140) f).
    f = 1 / 1.1 + 1 / 1.21
    found = break_even(offer(), "on_demand", model=replace(MODEL, discount_rate=0.1), **DESIGN)
    assert found is not None and found.utilization is not None
    assert found.utilization == pytest.approx((100_000 + 22_000 * f) / (127_020 * f), rel=1e-12)


def test_renting_cheaper_at_every_utilisation_is_never() -> None:
    # $0.50/GPU-hour: renting all the time costs $70,080, less than owning's fixed $144,000.
    cheap = break_even(offer(on_demand_usd_per_gpu_hour=0.5), "on_demand", model=MODEL, **DESIGN)
    assert cheap is not None and cheap.utilization is None
    # Rent below the owner's own energy bill: owning never catches up, whatever the use.
    assert break_even_utilization(100.0, 50.0, 40.0) is None
    assert break_even_utilization(100.0, 50.0, 250.0) == 0.5


def test_an_offer_without_the_asked_rate_has_no_break_even() -> None:
    assert break_even(offer(), "committed", model=MODEL, **DESIGN) is None


def test_the_rented_gpus_are_the_designs_rounded_up_to_whole_instances() -> None:
    assert rented_gpus(offer(), 12) == (16, 2)
    assert rented_gpus(offer(), 16) == (16, 2)
    assert rented_gpus(offer(gpus_per_instance=1), 3) == (3, 3)


def test_an_offers_max_instances_caps_the_rented_cluster_and_the_quote_says_so() -> None:
    capped = offer(max_instances=64)
    assert rented_gpus(capped, 16_384) == (512, 64)
    quote = quote_offer(capped, sample_catalog().servers[0], 1024, preset("llama3-8b"))
    assert (quote.gpus, quote.instances) == (512, 64)
    assert quote.note == "capped at the offer's 64 instances (512 GPUs)"
    assert quote.on_demand_cost_cents == rented_cost_cents(2.0, 512, quote.training_time_hours or 0)


def test_a_quote_prices_the_timed_run_at_each_rate() -> None:
    server = sample_catalog().servers[0]
    workload = preset("llama3-8b")
    quote = quote_offer(offer(committed_usd_per_gpu_hour=1.5), server, 12, workload)
    assert quote.gpus == 16 and quote.instances == 2
    assert quote.training_time_hours is not None and quote.training_time_hours > 0
    hours = quote.training_time_hours
    assert quote.on_demand_cost_cents == rented_cost_cents(2.0, 16, hours)
    assert quote.committed_cost_cents == rented_cost_cents(1.5, 16, hours)


def test_a_faster_interconnect_never_makes_the_rented_run_slower() -> None:
    server = sample_catalog().servers[0]
    workload = preset("llama3-8b")
    slow = quote_offer(offer(network_gbps_per_gpu=25.0), server, 64, workload)
    fast = quote_offer(offer(network_gbps_per_gpu=400.0), server, 64, workload)
    assert slow.training_time_hours is not None and fast.training_time_hours is not None
    assert fast.training_time_hours <= slow.training_time_hours


def test_an_offer_whose_gpu_the_catalog_lacks_is_quoted_untimed_with_the_reason() -> None:
    quote = quote_offer(offer(gpu_model="MI300X"), None, 8, preset("llama3-8b"))
    assert quote.training_time_hours is None and quote.on_demand_cost_cents is None
    assert "no servers row of GPU MI300X" in quote.note
