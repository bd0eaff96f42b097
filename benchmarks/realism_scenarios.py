"""Issue 13's acceptance scenarios over the bundled catalogs, each solved once per session.

Workloads and targets are small so that clusters stay at most ``max_nodes`` nodes (the
request's ``max_gpus`` says so, and the enumerator enumerates exactly that range); the
optimizer's answers and the enumerator's optima are cached, because several test modules
read the same scenario.
"""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass, field

from benchmarks.enumerator import Found, enumerate_optimum
from optimizer.catalog import load_catalog
from optimizer.catalog.model import Catalog
from optimizer.catalog.resolve import bundled_catalogs
from optimizer.cost.tco import CostModel
from optimizer.optimize.request import Constraints, Objective, OptimizeSpec
from optimizer.optimize.result import OptimizeResult, RankedDesign
from optimizer.optimize.solve import optimize
from optimizer.topology.bom import BillOfMaterials
from optimizer.workload.presets import preset

CATALOGS = ("ethernet-budget", "infiniband-ndr", "roce-spectrum")
# Each catalog's own fabric (the one it exists to offer).
NATIVE_FABRIC = {
    "ethernet-budget": "ethernet",
    "infiniband-ndr": "infiniband",
    "roce-spectrum": "roce",
}
TIME_LIMIT_S = 20.0


@dataclass(frozen=True)
class Scenario:
    """One request: catalog, workload (preset and tokens), objective, limits, restrictions."""

    catalog: str
    workload: str = "bert-large"
    tokens: float = 4e10
    objective: Objective = Objective.MIN_COST
    target_hours: float | None = None
    budget_usd: int | None = None
    max_power_kw: float | None = None
    fabrics: tuple[str, ...] = ()
    topologies: tuple[str, ...] = ()
    max_nodes: int = 16
    top_k: int = 3
    require_fabric: bool = False
    min_nic_gbps_per_gpu: float | None = None
    cost_model: CostModel = field(
        default_factory=CostModel
    )  # issue 17 (tco): the lifetime cost's terms
    # issue 17 (facility): the hall's floor positions, power per rack and cooling
    max_floor_positions: int | None = None
    rack_kw: float | None = None
    cooling: str | None = None

    @property
    def name(self) -> str:
        parts = [self.catalog, self.workload, f"{self.tokens:g}tok", self.objective.value]
        if self.target_hours is not None:
            parts.append(f"{self.target_hours:g}h")
        if self.budget_usd is not None:
            parts.append(f"${self.budget_usd / 1e6:g}M")
        if self.max_power_kw is not None:
            parts.append(f"{self.max_power_kw:g}kW")
        parts += [f"fabric={f}" for f in self.fabrics]
        parts += [f"topology={t}" for t in self.topologies]
        if self.require_fabric:
            parts.append("require-fabric")
        if self.min_nic_gbps_per_gpu is not None:
            parts.append(f">={self.min_nic_gbps_per_gpu:g}Gbps/GPU")
        if self.cost_model != CostModel():
            m = self.cost_model
            parts.append(f"${m.electricity_usd_per_kwh:g}/kWh,{m.years:g}y")
        if self.max_floor_positions is not None:
            parts.append(f"<={self.max_floor_positions}positions")
        if self.rack_kw is not None:
            parts.append(f"<={self.rack_kw:g}kW/rack")
        if self.cooling is not None:
            parts.append(f"{self.cooling}-cooled")
        parts.append(f"<={self.max_nodes}nodes")
        return "/".join(parts)

    def spec(self) -> OptimizeSpec:
        return OptimizeSpec(
            workload=preset(self.workload, training_tokens=self.tokens),
            constraints=Constraints(
                target_training_hours=self.target_hours,
                budget_cents=None if self.budget_usd is None else self.budget_usd * 100,
                max_power_kw=self.max_power_kw,
                max_gpus=self.max_nodes * 8,
                min_nic_gbps_per_gpu=self.min_nic_gbps_per_gpu,
                max_floor_positions=self.max_floor_positions,
                cooling=self.cooling,
            ),
            rack_power_kw=self.rack_kw,
            objective=self.objective,
            top_k=self.top_k,
            allowed_fabrics=self.fabrics,
            allowed_topologies=self.topologies,
            time_limit_s=TIME_LIMIT_S,
            require_fabric=self.require_fabric,
            cost_model=self.cost_model,
        )


def _min_cost(catalog: str, hours: float, **kw: object) -> Scenario:
    return Scenario(catalog, target_hours=hours, **kw)  # type: ignore[arg-type]


def _min_time(catalog: str, budget_usd: int, **kw: object) -> Scenario:
    return Scenario(catalog, objective=Objective.MIN_TIME, budget_usd=budget_usd, **kw)  # type: ignore[arg-type]


def _min_tco(catalog: str, hours: float, **kw: object) -> Scenario:
    """Issue 17 (tco): the lowest lifetime cost meeting the target."""
    return Scenario(catalog, objective=Objective.MIN_TCO, target_hours=hours, **kw)  # type: ignore[arg-type]


# A tariff three times the default and a long life: energy weighs most against capex.
HIGH_TARIFF = CostModel(electricity_usd_per_kwh=0.30, years=8.0, pue=1.5)


# Scale-out bandwidth a buyer insists on: one 400G NIC per GPU where the catalog sells 400G,
# one 200G NIC per GPU on the budget catalog (its fastest NIC).
MIN_NIC_GBPS_PER_GPU = {"ethernet-budget": 200.0, "infiniband-ndr": 400.0, "roce-spectrum": 400.0}


def _per_catalog(catalog: str) -> list[Scenario]:
    native = NATIVE_FABRIC[catalog]
    return [
        _min_cost(catalog, 24.0),  # one node meets it
        _min_cost(catalog, 6.0),
        _min_cost(catalog, 2.0),
        _min_cost(catalog, 1.0),
        _min_cost(catalog, 2.0, fabrics=(native,)),
        _min_cost(catalog, 1.0, topologies=("fat_tree",)),
        _min_cost(catalog, 1.0, topologies=("rail_optimized",)),
        _min_cost(catalog, 2.0, max_power_kw=60.0),
        _min_cost(catalog, 4.0, workload="mpt-1b", tokens=2e10),
        _min_time(catalog, 1_500_000),
        _min_time(catalog, 3_000_000, max_power_kw=50.0),
        _min_time(catalog, 2_500_000, topologies=("torus",)),
        _min_cost(catalog, 2.0, min_nic_gbps_per_gpu=MIN_NIC_GBPS_PER_GPU[catalog]),
        _min_tco(catalog, 2.0),
        _min_tco(catalog, 1.0, cost_model=HIGH_TARIFF),
        _min_tco(catalog, 6.0, workload="mpt-1b", tokens=2e10, cost_model=HIGH_TARIFF),
    ]


# issue 17 (facility): a small hall, dense racks refused, an air-cooled floor.
FACILITY_SCENARIOS = (
    _min_time("infiniband-ndr", 3_000_000, max_floor_positions=3),
    _min_cost("roce-spectrum", 2.0, rack_kw=15.0),
    _min_cost("ethernet-budget", 2.0, cooling="air", max_floor_positions=5),
)

SCENARIOS: tuple[Scenario, ...] = (
    *(s for c in CATALOGS for s in _per_catalog(c)),
    *FACILITY_SCENARIOS,
)

# The default test run's subset; the others run under ``pytest -m soak`` (CI's time budget).
# Each kind of request in ``_per_catalog`` once, the k-th kind on the ((k + 1) mod 3)-th
# catalog so that every catalog and fabric is covered, and the facility scenarios: every
# objective and every constraint kind (target, budget, power, fabric, topology, NIC bandwidth,
# cost model, floor, rack power, cooling) appears at least once. The shift by one keeps the
# enumerator's slowest requests in soak (min-TCO at the high tariff: 71 s of CPU on
# roce-spectrum and 29 s on ethernet-budget, against 5-15 s on the catalogs chosen here).
REPRESENTATIVE: tuple[Scenario, ...] = (
    *(
        kinds[(k + 1) % len(CATALOGS)]
        for k, kinds in enumerate(zip(*(_per_catalog(c) for c in CATALOGS), strict=True))
    ),
    *FACILITY_SCENARIOS,
)


@functools.cache
def catalog(name: str) -> Catalog:
    return load_catalog(next(p for p in bundled_catalogs() if p.name == name))


@functools.cache
def solved(scenario: Scenario) -> OptimizeResult:
    """The optimizer's ranked designs (cached: several tests read them), without the
    explanations' re-solves: the tests compare designs with the enumerator's, not words."""
    return optimize(catalog(scenario.catalog), scenario.spec(), explain=False)


@functools.cache
def enumerated(scenario: Scenario) -> Found | None:
    """The enumerator's optimum (cached)."""
    return enumerate_optimum(
        catalog(scenario.catalog), scenario.spec(), max_nodes=scenario.max_nodes
    )


def bom_multiset(bom: BillOfMaterials) -> frozenset[tuple[str, int]]:
    """A BOM as the multiset of what it orders: (SKU, total quantity) pairs."""
    totals = Counter[str]()
    for line in bom.lines:
        totals[line.sku] += line.quantity
    return frozenset(totals.items())


def switch_count(bom: BillOfMaterials) -> int:
    return sum(line.quantity for line in bom.lines if line.category == "switch")


def nic_count(bom: BillOfMaterials) -> int:
    return sum(line.quantity for line in bom.lines if line.category == "nic")


def describe(ranked: RankedDesign) -> str:
    d = ranked.design
    return (
        f"{d.nodes} x {d.server_sku}, {d.nics_per_node} x {d.nic_sku}, {d.fabric} {d.topology} "
        f"{d.oversubscription:g}:1 switches {list(d.switch_skus)}: "
        f"${ranked.bom.capex_cents / 100:,.2f}, {ranked.time_hours:.4f} h"
    )
