"""Brute force: every design and every way to buy its links, priced and checked one by one.

The correctness oracle for the MIP (tests) and the reference it is timed against
(benchmarks). Under min-tco each design is bought the way with the lowest lifetime cost
(optimizer.cost.tco, the request's cost model) and ranked by it.
It shares only the physics with the optimizer (estimator, topology sizing,
link options, volume prices): no bounds, no search heuristics, no solver. Exponential: small
catalogs and clusters only.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from optimizer.catalog.model import Catalog, Nic, Switch
from optimizer.cost.tco import TcoPrices, bom_tco, tco_prices
from optimizer.errors import InvalidInput
from optimizer.optimize.candidates import (
    NO_NIC,
    EstimateCache,
    SearchSpace,
    TimeKey,
    confident_hours,
    design_order,
    is_switchless,
    make_design,
    nics_per_node_options,
    ratios_for,
    redundant,
)
from optimizer.optimize.facility import facility_layout
from optimizer.optimize.formulation import list_prices, stock_limits
from optimizer.optimize.request import Constraints, OptimizeSpec
from optimizer.registry.objectives import Measure
from optimizer.registry.topologies import TOPOLOGIES
from optimizer.topology.compat import (
    nic_fits_fabric,
    port_lanes,
    ports_at_speed,
    switch_fits_fabric,
)
from optimizer.topology.design import Design
from optimizer.topology.layout import (
    Layout,
    LinkOption,
    link_options,
    missing_modules,
    modules_for,
)
from optimizer.topology.plan import physical_plan


@dataclass(frozen=True)
class BruteDesign:
    design: Design
    capex_cents: int
    time_hours: float
    tco_cents: int | None = None  # lifetime cost of the same order (issue 17, min-tco)

    @property
    def group(self) -> tuple[str, str, str, float]:
        d = self.design
        return (d.server_sku, d.fabric, d.topology, d.oversubscription)


def _compositions(total: int, parts: int) -> Iterator[tuple[int, ...]]:
    """Every way to split ``total`` links among ``parts`` options."""
    if parts == 1:
        yield (total,)
        return
    for first in range(total + 1):
        for rest in _compositions(total - first, parts - 1):
            yield (first, *rest)


def _priced(catalog: Catalog, qty: Counter[str], prices: dict[str, int]) -> int:
    return sum(q * catalog.unit_price_cents(sku, q, prices[sku]) for sku, q in qty.items() if q)


Order = tuple[tuple[str, int], ...]  # each SKU bought with its total quantity


@dataclass(frozen=True)
class Build:
    """One way to buy a design: its capex, IT power, order and lifetime cost."""

    capex_cents: int
    power_kw: float
    order: Order
    tco_cents: int


def _order_tco(
    catalog: Catalog,
    qty: Counter[str],
    prices: dict[str, int],
    capex_cents: int,
    power_kw: float,
    racks: int,
    tco: TcoPrices,
) -> int:
    """TCO of an order, line by line at its volume prices (optimizer.cost.tco.bom_tco)."""
    lines = [(s, q * catalog.unit_price_cents(s, q, prices[s])) for s, q in qty.items() if q]
    return bom_tco(lines, capex_cents, power_kw, racks, tco).tco_cents


def cheapest_build(
    design: Design, catalog: Catalog, spec: OptimizeSpec
) -> tuple[int, float, Order] | None:
    """(capex cents, power kW, order) of the cheapest feasible way to buy ``design``, or None."""
    found = best_build(design, catalog, spec)
    return None if found is None else (found.capex_cents, found.power_kw, found.order)


def best_build(design: Design, catalog: Catalog, spec: OptimizeSpec) -> Build | None:
    """The best feasible way to buy ``design`` by the objective's cost measure: the lowest TCO
    under min-tco (a dearer optic that draws less can win), else the lowest capex; builds over
    the request's TCO cap are infeasible. None when no way fits."""
    try:
        plan = physical_plan(design, catalog)
    except InvalidInput:
        return None
    c = spec.constraints
    if c.max_racks is not None and plan.racks > c.max_racks:
        return None
    base: Counter[str] = Counter({plan.servers.sku: plan.servers.quantity})
    base[plan.nics.sku] += plan.nics.quantity
    for sw in plan.switches:
        base[sw.sku] += sw.quantity
    classes: dict[tuple[float, int, str, str], int] = {}
    spare: Counter[tuple[float, int, str, str]] = Counter()  # per-switch whole parts
    for need in plan.links:
        k = (need.length_m, need.speed_gbps, need.fabric, need.group)
        classes[k] = classes.get(k, 0) + need.count
        spare[k] += need.spare_ports
    opts: list[list[LinkOption]] = []
    ends = {need.group: need.link_ends for need in plan.links}  # issue 16 (fabric800): cages
    for length, speed, fabric, group in classes:
        found = link_options(length, speed, fabric, catalog, ends[group])
        found = [o for o in found if all(_allowed_link(catalog, spec, s) for s, _ in o.parts)]
        if not found:
            return None
        opts.append(found)
    prices, stock = list_prices(catalog), stock_limits(catalog)
    tco = tco_prices((*catalog.servers, *catalog.nics, *catalog.switches), spec.cost_model)
    by_tco = Measure.TCO in spec.objective.kind.stages
    best: Build | None = None
    per_class = [
        list(_compositions(n, len(o))) for n, o in zip(classes.values(), opts, strict=True)
    ]
    for split in itertools.product(*per_class):
        fixed = Counter(base)
        power_w = plan.power_kw * 1000
        # Modules the per-switch rounding adds may go to any caged SKU a group uses: every
        # placement is a build of its own (stock and volume tiers decide the cheapest).
        placements: list[list[dict[str, int]]] = []
        for counts, options, cls in zip(split, opts, classes, strict=True):
            ports: Counter[str] = Counter()  # multi-port modules are bought whole per group
            caged: set[str] = set()
            per_module: dict[str, int] = {}
            for n, option in zip(counts, options, strict=True):
                power_w += n * option.power_w
                twins = dict(option.module_ports)
                per_module.update(twins)  # a twin-port cable: 2, though its row says 1
                if n:
                    caged.update(option.caged)
                for sku, per_link in option.parts:
                    if sku in twins:
                        ports[sku] += n * per_link
                    else:
                        fixed[sku] += n * per_link
            per_module = {sku: per_module.get(sku) or _module_ports(catalog, sku) for sku in ports}
            fixed.update({sku: modules_for(n, per_module[sku]) for sku, n in ports.items()})
            at_cage, missing = missing_modules(ports, per_module, caged, spare[cls])
            ways = _compositions(missing, len(at_cage)) if missing else iter([()])
            placements.append([dict(zip(at_cage, way, strict=False)) for way in ways])
        if c.max_power_kw is not None and power_w > c.max_power_kw * 1000:
            continue
        for placed in itertools.product(*placements):
            qty = Counter(fixed)
            for extra in placed:
                qty.update(extra)
            build = _build(catalog, qty, prices, stock, power_w / 1000, plan.racks, tco, c)
            if build is not None and (
                best is None or _build_key(build, by_tco) < _build_key(best, by_tco)
            ):
                best = build
    return best


def _build(
    catalog: Catalog,
    qty: Counter[str],
    prices: dict[str, int],
    stock: dict[str, int],
    power_kw: float,
    racks: int,
    tco: TcoPrices,
    c: Constraints,
) -> Build | None:
    """The order ``qty`` priced, or None past a stock limit or the TCO cap."""
    if any(q > stock[s] for s, q in qty.items() if s in stock):
        return None
    cost = _priced(catalog, qty, prices)
    life = _order_tco(catalog, qty, prices, cost, power_kw, racks, tco)
    if c.max_tco_cents is not None and life > c.max_tco_cents:
        return None
    return Build(cost, power_kw, tuple(sorted((s, q) for s, q in qty.items() if q)), life)


def _build_key(b: Build, by_tco: bool) -> tuple[int, int]:
    return (b.tco_cents, b.capex_cents) if by_tco else (b.capex_cents, b.tco_cents)


def _module_ports(catalog: Catalog, sku: str) -> int:
    return next(lk.module_ports for lk in catalog.links if lk.sku == sku)


def _allowed_link(catalog: Catalog, spec: OptimizeSpec, sku: str) -> bool:
    link = next(lk for lk in catalog.links if lk.sku == sku)
    if spec.allowed_vendors and link.vendor not in spec.allowed_vendors:
        return False
    if link.vendor in spec.excluded_vendors:
        return False
    lead = spec.constraints.max_lead_time_days
    return not (
        lead is not None
        and link.availability.lead_time_days is not None
        and link.availability.lead_time_days > lead
    )


def exhaustive(catalog: Catalog, spec: OptimizeSpec, *, max_nodes: int) -> list[BruteDesign]:
    """The best design of every distinct group, ranked as the optimizer ranks them: a group
    whose best design orders the same SKUs and quantities as a ranked one is skipped."""
    space = SearchSpace(catalog, spec)
    timer = EstimateCache(
        spec.workload,
        {s.sku: s for s in space.servers},
        spec.confidence,
        options=spec.model_options,
    )
    c = spec.constraints
    layout = facility_layout(spec)  # issue 17 (facility): the hall's limits
    best: dict[tuple[object, ...], tuple[BruteDesign, Order]] = {}
    for server in space.servers:
        lo = max(1, math.ceil((c.min_gpus or 1) / server.gpus_per_node))
        hi = min(max_nodes, (c.max_gpus or 10**9) // server.gpus_per_node)
        for topology in space.topologies:  # one node without a fabric (docs/optimizer.md)
            if TOPOLOGIES.get(topology).scale_out or spec.require_fabric or lo > 1 or hi < 1:
                continue
            nic = next((n for n in catalog.nics if n.sku == server.builtin_nic_sku), NO_NIC)
            npn = server.builtin_nics
            _consider(
                best, catalog, spec, timer, layout, server.sku, space.fabrics[0], nic, npn,
                topology, 1.0, None, 1,
            )  # fmt: skip
        for fabric in space.fabrics:
            for nic in (n for n in space.nics if nic_fits_fabric(n, fabric)):
                for npn in nics_per_node_options(server):
                    for topology in space.topologies:
                        if not TOPOLOGIES.get(topology).scale_out:
                            continue  # offered once per server above
                        ratios = ratios_for(topology)
                        switches = (
                            [None]
                            if is_switchless(topology)
                            else [
                                w
                                for w in space.switches
                                if switch_fits_fabric(w, fabric)
                                and ports_at_speed(w, nic.speed_gbps)
                            ]
                        )
                        for ratio, switch, nodes in itertools.product(
                            ratios, switches, range(lo, hi + 1)
                        ):
                            _consider(
                                best,
                                catalog,
                                spec,
                                timer,
                                layout,
                                server.sku,
                                fabric,
                                nic,
                                npn,
                                topology,
                                ratio,
                                switch,
                                nodes,
                            )
    ranked: list[BruteDesign] = []
    orders: set[Order] = set()
    for b, order in sorted(best.values(), key=lambda f: _objective(f[0], spec)):
        if len(ranked) == spec.top_k:
            break
        if order not in orders:
            ranked.append(b)
            orders.add(order)
    return ranked


def _objective(b: BruteDesign, spec: OptimizeSpec) -> tuple[object, ...]:
    """The optimizer's lexicographic objective (optimizer.optimize.problem.solve_problem)."""
    seconds = math.ceil(b.time_hours * 3600)
    value = spec.objective.kind.ranking_value(b.capex_cents, seconds, b.tco_cents)
    return (*value, design_order(b.design))


def _consider(
    best: dict[tuple[object, ...], tuple[BruteDesign, Order]],
    catalog: Catalog,
    spec: OptimizeSpec,
    timer: EstimateCache,
    layout: Layout,
    server_sku: str,
    fabric: str,
    nic: Nic,
    npn: int,
    topology: str,
    ratio: float,
    switch: Switch | None,
    nodes: int,
) -> None:
    radix = 0 if switch is None else ports_at_speed(switch, nic.speed_gbps)
    lanes = 1 if switch is None else port_lanes((switch,), nic.speed_gbps)
    key = TimeKey(
        server_sku,
        fabric,
        nic.speed_gbps,
        npn,
        topology,
        ratio,
        radix,
        planes=nic.plane_count,
        port_lanes=lanes,
    )
    design = make_design(key, nodes, nic, switch, layout)
    try:
        plan = physical_plan(design, catalog)
    except InvalidInput:
        return
    if redundant(design, plan, spec.allowed_topologies or TOPOLOGIES.names()):
        return
    est = timer.reestimate(design, plan)
    if est is None:
        return
    hours = confident_hours(est, spec.confidence)
    c = spec.constraints
    if c.target_training_hours is not None and hours > c.target_training_hours:
        return
    built = best_build(design, catalog, spec)
    if built is None:
        return
    if c.budget_cents is not None and built.capex_cents > c.budget_cents:
        return
    order = built.order
    found = BruteDesign(design, built.capex_cents, hours, built.tco_cents)
    group = found.group
    if group not in best or _objective(found, spec) < _objective(best[group][0], spec):
        best[group] = (found, order)
