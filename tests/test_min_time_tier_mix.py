"""Min-time's size search prices the per-tier switch mixes the MIP may buy.

The scenario: InfiniBand NDR with DGX-H100 servers only and just 10 unmanaged Quantum-2
switches (MQM9790-NS2F) in stock. 64 nodes on a 3:1 fat-tree need 11 leaves and 4 spines:
all unmanaged is over the stock, all managed (MQM9700-NS2F, $14k dearer each) over the
budget, but managed leaves under unmanaged spines is exactly the budget. The size search
used to price one SKU on every tier, so it settled for 40 nodes and 1,032 h where the MIP
could buy the 64-node mix at 618 h.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from optimizer.catalog import load_catalog
from optimizer.catalog.model import Catalog
from optimizer.optimize.backends import Limits, get_backend
from optimizer.optimize.candidates import EstimateCache, TimeKey, confident_hours, make_design
from optimizer.optimize.formulation import Bounds
from optimizer.optimize.problem import RowBuilder
from optimizer.optimize.request import Constraints, Objective, OptimizeSpec
from optimizer.optimize.solve import optimize
from optimizer.topology.design import Design
from optimizer.topology.layout import Layout
from optimizer.topology.plan import physical_plan
from optimizer.workload.presets import preset

CATALOGS = Path(__file__).resolve().parents[1] / "catalogs"
MANAGED, UNMANAGED = "MQM9700-NS2F", "MQM9790-NS2F"
NIC = "MCX75310AAS-NEAT"
WORKLOAD = preset("llama3-70b", training_tokens=1e12)


def _dgx_h100_with_unmanaged_stock(units: int) -> Catalog:
    ndr = load_catalog(CATALOGS / "infiniband-ndr")
    switches = tuple(
        dataclasses.replace(w, availability=dataclasses.replace(w.availability, stock_units=units))
        if w.sku == UNMANAGED
        else w
        for w in ndr.switches
    )
    servers = tuple(s for s in ndr.servers if s.sku == "DGX-H100")
    return dataclasses.replace(ndr, switches=switches, servers=servers)


CATALOG = _dgx_h100_with_unmanaged_stock(10)


def _design(tier_skus: tuple[str, ...]) -> Design:
    key = TimeKey("DGX-H100", "infiniband", 400, 8, "fat_tree", 3.0, 64)
    nic = next(n for n in CATALOG.nics if n.sku == NIC)
    return make_design(key, 64, nic, None, Layout(), tier_skus)


def _exact_cents(design: Design, budget_cents: int | None = None) -> int | None:
    spec = OptimizeSpec(workload=WORKLOAD)
    builder = RowBuilder(CATALOG, spec)
    plan = physical_plan(design, CATALOG)
    bounds = Bounds(budget_cents=budget_cents)
    return builder.exact_cost(plan, get_backend("cpsat"), Limits(time_limit_s=30.0), bounds)


@pytest.fixture(scope="module")
def mix_budget_cents() -> int:
    """Exactly what the mixed 64-node fabric costs (its cheapest purchase)."""
    cents = _exact_cents(_design((MANAGED, UNMANAGED)))
    assert cents is not None
    return cents


def test_premise_only_the_mix_buys_64_nodes_within_the_budget(mix_budget_cents: int) -> None:
    assert _exact_cents(_design((UNMANAGED,))) is None, "all unmanaged is over the stock"
    assert _exact_cents(_design((MANAGED,)), mix_budget_cents) is None, "all managed is dearer"


def test_min_time_finds_the_size_only_a_per_tier_mix_affords(mix_budget_cents: int) -> None:
    spec = OptimizeSpec(
        workload=WORKLOAD,
        constraints=Constraints(budget_cents=mix_budget_cents),
        objective=Objective.MIN_TIME,
        top_k=1,
        allowed_fabrics=("infiniband",),
        allowed_topologies=("fat_tree",),
        time_limit_s=60.0,
    )
    best = optimize(CATALOG, spec, explain=False).designs[0]
    assert best.time_hours <= _hours(_design((MANAGED, UNMANAGED)), spec)
    assert best.bom.capex_cents <= mix_budget_cents


def _hours(design: Design, spec: OptimizeSpec) -> float:
    timer = EstimateCache(spec.workload, {s.sku: s for s in CATALOG.servers}, spec.confidence)
    est = timer.reestimate(design, physical_plan(design, CATALOG))
    assert est is not None
    return confident_hours(est, spec.confidence)
