"""The optimizer's physical plans are kept per design and the catalog's parts but their prices
(topology.plan.planned): physical_plan reads no price, and the min-time sensitivity re-solves
on catalogs that differ only in switch prices (80,000 plans for 20,000 distinct designs in the
medium min-time request). A catalog that differs in any other figure is planned again."""

from __future__ import annotations

from dataclasses import replace

from optimizer.topology.design import Design
from optimizer.topology.plan import physical_plan, planned
from tests.topology_fixtures import topology_catalog

CAT = topology_catalog()
DESIGN = Design(
    server_sku="SRV-H100",
    nodes=64,
    nic_sku="CX7-400",
    nics_per_node=8,
    fabric="infiniband",
    topology="rail_optimized",
    switch_skus=("NDR-64",),
)


def _switches(catalog, **change):  # type: ignore[no-untyped-def]
    return replace(catalog, switches=tuple(replace(s, **change) for s in catalog.switches))


def test_the_kept_plan_is_the_plan() -> None:
    assert planned(DESIGN, CAT) == physical_plan(DESIGN, CAT)


def test_a_catalog_differing_only_in_prices_shares_the_plan() -> None:
    cut = _switches(CAT, price_cents=1)

    assert planned(DESIGN, cut) is planned(DESIGN, CAT)


def test_a_catalog_differing_in_a_part_figure_is_planned_again() -> None:
    hotter = _switches(CAT, power_w=3_000)

    plan = planned(DESIGN, hotter)

    assert plan is not planned(DESIGN, CAT)
    assert plan == physical_plan(DESIGN, hotter)
    assert plan.switch_power_kw > physical_plan(DESIGN, CAT).switch_power_kw
