"""An independent enumerator: every design of a small scenario, priced, checked and timed.

The acceptance oracle of issue 13. It shares only the public physics with the optimizer:
the estimator (``plan_and_estimate``), topology sizing (``physical_plan``), link options,
the BOM builder (``build_bom``) and its verifier (``check_bom``), and the catalog. None of
the optimizer's search, candidate generation, dominance pruning, bounds or MIP is imported,
so a hole in those shows up as a disagreement with this module.

The design space is every server x fabric x NIC x NICs per node x topology family x
oversubscription x switch SKU (one for every tier, or one per tier) x node count 1..N, plus
the switchless one-node design (a server alone, no scale-out fabric). Each design's links are
priced exactly: a small CP-SAT model of its own (not the optimizer's) chooses how many links
of each option every link group buys, with whole twin-port modules per group, each SKU at
the volume tier its total reaches, stock and the power cap; its optimum is the design's price.
Node counts are enumerated one by one: no monotonicity of time in node count is assumed.

Facility limits (docs/optimizer.md, "Facility limits"), applied from the doc: an air-cooled
hall takes no liquid-only server and caps racks at 30 kW unless a rack limit is stated; the
rack limit is the layout's rack power; floor positions are racks plus one CDU per row (10
racks) of liquid-installed server racks.

Buildability rules applied on top of ``check_bom`` (issue 13): a multi-node design without
switches needs hardware that forwards (a NIC's or server's ``forwarding``, read defensively)
unless it is two nodes back to back, and every NIC bought is cabled (NICs bought equal the
NIC ends of the endpoint links).
"""

from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace

from ortools.sat.python import cp_model

from optimizer.catalog.model import Catalog, Link, Nic, Server, Switch
from optimizer.cost.tco import (
    HOURS_PER_YEAR,
    CostModel,
    annuity_factor,
    energy_cents_per_year,
    lifetime_cost,
)
from optimizer.errors import InvalidInput
from optimizer.optimize.request import Confidence, Objective, OptimizeSpec
from optimizer.performance.cluster import server_cluster
from optimizer.performance.estimator import Estimate
from optimizer.performance.planner import plan_and_estimate
from optimizer.registry.fabrics import FABRICS
from optimizer.registry.topologies import SINGLE_SWITCH_NAME, TOPOLOGIES
from optimizer.topology.bom import BillOfMaterials, build_bom
from optimizer.topology.check import check_bom
from optimizer.topology.compat import nic_fits_fabric, ports_at_speed, switch_fits_fabric
from optimizer.topology.design import Design
from optimizer.topology.layout import Layout, LinkOption, link_options
from optimizer.topology.plan import PhysicalPlan, physical_plan
from optimizer.topology.profile import TopologyProfile
from optimizer.workload.model import Workload

SECONDS_PER_HOUR = 3600.0
# Down:up ratios offered where a family has an oversubscribed tier (the ratios vendors'
# reference designs use: 1:1, 2:1, 3:1).
RATIOS = (1.0, 2.0, 3.0)
# NICs per node: powers of two up to one NIC per GPU (the configurations servers ship in).
NIC_COUNTS = (1, 2, 4, 8)
# Link groups whose two ends are both NIC ports (direct networks) vs one NIC end.
_ENDPOINT_GROUP = "node-leaf"

# Estimates and plans are shared across scenarios: each key holds everything its value reads.
_ESTIMATES: dict[tuple[object, ...], Estimate | None] = {}
_PLANS: dict[tuple[int, Design], PhysicalPlan | None] = {}


def plan_of(design: Design, catalog: Catalog) -> PhysicalPlan | None:
    """``physical_plan`` of ``design`` (cached per catalog object), None when it cannot be built."""
    key = (id(catalog), design)
    if key not in _PLANS:
        try:
            _PLANS[key] = physical_plan(design, catalog)
        except InvalidInput:
            _PLANS[key] = None
    return _PLANS[key]


@dataclass(frozen=True)
class Found:
    """One priced, checked, timed design."""

    design: Design | None  # None: the switchless one-node design (a server alone)
    server_sku: str
    nodes: int
    capex_cents: int
    time_hours: float
    power_kw: float
    racks: int
    bom: BillOfMaterials | None
    tco_cents: int = 0  # issue 17 (tco): lifetime cost under the spec's cost model

    @property
    def seconds(self) -> int:
        """Time as the optimizer ranks it: whole seconds, rounded up."""
        return math.ceil(self.time_hours * SECONDS_PER_HOUR)

    @property
    def switchless_single_node(self) -> bool:
        return self.design is None

    def describe(self) -> str:
        if self.design is None:
            where = f"1 x {self.server_sku} alone (no fabric)"
        else:
            d = self.design
            where = (
                f"{d.nodes} x {d.server_sku}, {d.nics_per_node} x {d.nic_sku}, {d.fabric} "
                f"{d.topology} {d.oversubscription:g}:1 switches {list(d.switch_skus)}"
            )
        return f"{where}: ${self.capex_cents / 100:,.2f}, {self.time_hours:.4f} h"


def objective(found: Found, spec: OptimizeSpec) -> tuple[int, int]:
    """The lexicographic objective: (capex, seconds) for min-cost, (TCO, seconds) for
    min-tco, (seconds, capex) else."""
    if spec.objective is Objective.MIN_COST:
        return (found.capex_cents, found.seconds)
    if spec.objective is Objective.MIN_TCO:
        return (found.tco_cents, found.seconds)
    return (found.seconds, found.capex_cents)


def support_rate(catalog: Catalog, spec: OptimizeSpec, sku: str) -> float:
    """A row's own support rate (servers, NICs, switches), else the request's."""
    rows: list[Server | Nic | Switch] = [*catalog.servers, *catalog.nics, *catalog.switches]
    own = next((r.support_rate for r in rows if r.sku == sku), None)
    return spec.cost_model.support_rate if own is None else own


def tco_of(
    catalog: Catalog,
    spec: OptimizeSpec,
    priced: Counter[str],
    capex_cents: int,
    power_kw: float,
    racks: int,
) -> int:
    """Lifetime cost by the hand-checked formula (optimizer.cost.tco.lifetime_cost):
    ``priced`` maps each SKU to what its line costs in cents."""
    support = sum(support_rate(catalog, spec, sku) * c for sku, c in priced.items())
    return lifetime_cost(capex_cents, power_kw, racks, spec.cost_model, support).tco_cents


def forwards(part: object) -> bool:
    """May this NIC or server relay traffic between its ports (catalog ``forwarding``)?"""
    return bool(getattr(part, "forwarding", False))


AIR_RACK_KW = 30.0  # docs/optimizer.md: an air-cooled hall's racks, unless a limit is stated
RACKS_PER_CDU = 10  # docs/optimizer.md: one in-row CDU per row of liquid-cooled server racks
LINK_SOLVE_S = 30.0  # the link-mix model is tiny; a clock this long never binds


def rack_kw(spec: OptimizeSpec) -> float | None:
    """The hall's power per rack: stated, else 30 kW when it is air-cooled, else none."""
    if spec.rack_power_kw is not None:
        return spec.rack_power_kw
    return AIR_RACK_KW if spec.constraints.cooling == "air" else None


def layout_of(spec: OptimizeSpec) -> Layout:
    """The rack layout with the hall's cooling and rack power; floor positions are checked
    here (``floor_positions``), not by the layout."""
    kw = rack_kw(spec)
    base = Layout() if kw is None else Layout(rack_power_kw=kw)
    return replace(base, facility_cooling=spec.constraints.cooling)


def cooled(server: Server, spec: OptimizeSpec) -> bool:
    """An air-cooled hall cannot take a liquid-only server."""
    return not (spec.constraints.cooling == "air" and server.cooling == "liquid")


def liquid(server: Server, spec: OptimizeSpec) -> bool:
    """Installed liquid-cooled: liquid-only, or either-way in a liquid hall."""
    return server.cooling == "liquid" or (
        server.cooling == "either" and spec.constraints.cooling == "liquid"
    )


def floor_positions(server_racks: int, racks: int, server: Server, spec: OptimizeSpec) -> int:
    """Racks plus one CDU per row of liquid-installed server racks."""
    cdus = math.ceil(server_racks / RACKS_PER_CDU) if liquid(server, spec) else 0
    return racks + cdus


def _allowed(part: Server | Nic | Switch, spec: OptimizeSpec) -> bool:
    if spec.allowed_vendors and part.vendor not in spec.allowed_vendors:
        return False
    if part.vendor in spec.excluded_vendors:
        return False
    lead = spec.constraints.max_lead_time_days
    days = part.availability.lead_time_days
    return lead is None or days is None or days <= lead


def _hours(est: Estimate, confidence: Confidence) -> float:
    if confidence is Confidence.PESSIMISTIC:
        return est.training_time_hours_high
    return est.training_time_hours


def estimate_of(
    workload: Workload,
    server: Server,
    fabric: str,
    nic_gbps: int,
    nics_per_node: int,
    nodes: int,
    profile: TopologyProfile,
    in_network_reduction: bool = False,
) -> Estimate | None:
    """The public estimator on this cluster (cached across scenarios), None when no plan fits.
    ``nic_gbps``: each NIC's line rate over all its planes (Nic.line_gbps).
    ``in_network_reduction``: every switch of the design reduces in the network (SHARP)."""
    key = (
        workload,
        server.gpu_model,
        server.gpus_per_node,
        server.host_gpus,
        server.scale_up_domain_gpus,
        server.gpu_peak_bf16_tflops,
        server.gpu_peak_fp8_tflops,
        server.gpu_memory_gb,
        server.intra_node_gbytes_per_s,
        server.nic_slot_gbps,  # issue 14 (host link): the NIC's rate in this server
        fabric,
        nic_gbps,
        nics_per_node,
        nodes,
        profile,
        in_network_reduction,
    )
    if key not in _ESTIMATES:
        cluster = server_cluster(
            server,
            nodes=nodes,
            fabric=fabric,
            nic_gbps=nic_gbps,
            nics_per_node=nics_per_node,
            topology=profile,
            in_network_reduction=in_network_reduction,
        )
        try:
            _ESTIMATES[key] = plan_and_estimate(workload, cluster, why=False)
        except InvalidInput:  # PlanInfeasible is an InvalidInput: no plan fits in memory
            _ESTIMATES[key] = None
    return _ESTIMATES[key]


def portfolio_hours(spec: OptimizeSpec, hours_of: Callable[[Workload], float]) -> float:
    """A design's time; for a portfolio (issue 17) the reference hours R times the worst of
    each workload's time / its target and the year's share (runs a year x hours over 8,760 h
    at the cost model's utilisation), R being the first workload's target or else the year's
    usable hours (docs/optimizer.md, "Portfolio of workloads"). Written from the doc, not
    from optimizer.optimize.portfolio."""
    if not spec.portfolio:
        return hours_of(spec.workload)
    times = [hours_of(w.workload) for w in spec.portfolio]
    year_hours = HOURS_PER_YEAR * CostModel().utilization
    first = spec.portfolio[0].target_training_hours
    reference = first if first is not None else year_hours
    ratios = [
        t * (reference / w.target_training_hours)
        for t, w in zip(times, spec.portfolio, strict=True)
        if w.target_training_hours is not None
    ]
    if any(w.runs_per_year is not None for w in spec.portfolio):
        year = sum((w.runs_per_year or 0.0) * t for t, w in zip(times, spec.portfolio, strict=True))
        ratios.append(year * (reference / year_hours))
    return max(ratios)


def single_node_hours(workload: Workload, server: Server, confidence: Confidence) -> float:
    """One node alone: no scale-out traffic, so any fabric profile times it the same (the
    estimator is asked on a one-endpoint single switch; tests check fabric independence)."""
    profile = TopologyProfile(
        family=SINGLE_SWITCH_NAME,
        endpoints=1,
        tiers=1,
        max_switch_hops=1,
        oversubscription=1.0,
        bisection_ratio=1.0,
        endpoints_per_leaf=1,
        rail_optimized=True,
    )
    est = estimate_of(workload, server, FABRICS.names()[0], 400, 1, 1, profile)
    return math.inf if est is None else _hours(est, confidence)


@dataclass(frozen=True)
class _Pre:
    """A design that passed the cheap filters, with its exact non-link part prices."""

    design: Design
    plan: PhysicalPlan
    hours: float
    base_qty: Counter[str]
    base_cents: int  # servers, NICs and switches at volume prices: a lower bound on capex

    @property
    def seconds(self) -> int:
        return math.ceil(self.hours * SECONDS_PER_HOUR)


class Enumerator:
    """Every design of one catalog and spec up to ``max_nodes`` nodes per server."""

    def __init__(
        self, catalog: Catalog, spec: OptimizeSpec, *, max_nodes: int, issue13: bool = True
    ) -> None:
        # issue13=False enumerates the design space of the tree before issue 13 (no
        # buildability rules, no per-tier switch mixes, no switchless one-node design): a
        # diagnostic that tells the enumerator's own errors from the defects the issue lists.
        self.issue13 = issue13
        self.catalog = catalog
        self.spec = spec
        self.max_nodes = max_nodes
        self.layout = layout_of(spec)
        parts: list[Server | Nic | Switch | Link] = [
            *catalog.servers,
            *catalog.nics,
            *catalog.switches,
            *catalog.links,
        ]
        self.prices = {p.sku: p.price_cents for p in parts}
        self.stock = {
            p.sku: p.availability.stock_units
            for p in parts
            if p.availability.stock_units is not None
        }
        self.checked = 0

    # -- the design space -------------------------------------------------------------------

    def node_range(self, server: Server) -> range:
        c = self.spec.constraints
        lo = max(1, math.ceil((c.min_gpus or 1) / server.gpus_per_node))
        hi = self.max_nodes
        if c.max_gpus is not None:
            hi = min(hi, c.max_gpus // server.gpus_per_node)
        return range(lo, hi + 1)

    def bases(self) -> Iterator[tuple[int, Design, list[Switch]]]:
        """Every structural design before its switch SKUs, with the switches that fit it and
        the exact price of its servers and NICs (a lower bound on its capex). Designs whose
        servers and NICs alone break stock, the budget or the power cap are left out."""
        spec = self.spec
        c = spec.constraints
        servers = [s for s in self.catalog.servers if _allowed(s, spec) and cooled(s, spec)]
        nics = [n for n in self.catalog.nics if _allowed(n, spec)]
        switches = [w for w in self.catalog.switches if _allowed(w, spec)]
        fabrics = spec.allowed_fabrics or FABRICS.names()
        topologies = spec.allowed_topologies or TOPOLOGIES.names()
        min_gbps = c.min_nic_gbps_per_gpu
        for server in servers:
            # A server with built-in NICs is built with exactly those, inside its price and power
            # (servers.builtin_nics); the others choose a bought NIC and how many.
            builtin = server.builtin_nics > 0
            own = [n for n in self.catalog.nics if n.sku == server.builtin_nic_sku]
            for fabric, nic in itertools.product(fabrics, own if builtin else nics):
                if not nic_fits_fabric(nic, fabric):
                    continue
                fitting = [
                    w
                    for w in switches
                    if switch_fits_fabric(w, fabric) and ports_at_speed(w, nic.speed_gbps)
                ]
                counts = {n for n in NIC_COUNTS if n <= server.gpus_per_node}
                counts |= {server.gpus_per_node}
                choices = (
                    [server.builtin_nics]
                    if builtin
                    else sorted(n for n in counts if n <= server.max_nics)
                )
                for npn in choices:
                    # what the NICs move in this server, over all planes (host link)
                    per_gpu = server.nic_rate_gbps(nic.line_gbps) * npn / server.gpus_per_node
                    if min_gbps is not None and per_gpu < min_gbps - 1e-9:
                        continue
                    for nodes in self.node_range(server):
                        qty = Counter({server.sku: nodes})
                        bought = 0 if builtin else npn
                        if bought:
                            qty[nic.sku] += nodes * bought
                        if not self._in_stock(qty):
                            continue
                        node_kw = nodes * (server.power_kw + bought * nic.power_w / 1000)
                        if c.max_power_kw is not None and node_kw > c.max_power_kw + 1e-9:
                            continue
                        cents = self._price(qty)
                        if c.budget_cents is not None and cents > c.budget_cents:
                            continue
                        for topology in topologies:
                            family = TOPOLOGIES.get(topology)
                            for ratio in RATIOS if family.oversubscribable else (1.0,):
                                base = Design(
                                    server_sku=server.sku,
                                    nodes=nodes,
                                    nic_sku=nic.sku,
                                    nics_per_node=npn,
                                    fabric=fabric,
                                    topology=topology,
                                    oversubscription=ratio,
                                    layout=self.layout,
                                )
                                yield cents, base, [] if family.switchless else fitting

    def expand(self, base: Design, fitting: list[Switch]) -> Iterator[Design]:
        """``base`` with every switch choice (itself when switchless)."""
        if TOPOLOGIES.get(base.topology).switchless:
            yield base
        else:
            yield from self._switch_choices(base, fitting)

    def _switch_choices(self, base: Design, fitting: Sequence[Switch]) -> Iterator[Design]:
        """One switch SKU for every tier, then every per-tier mix of distinct SKUs."""
        tiers = 0
        for w in fitting:
            design = replace(base, switch_skus=(w.sku,))
            plan = plan_of(design, self.catalog)
            if plan is None:
                continue
            tiers = max(tiers, len(plan.switches))
            yield design
        if self.issue13 and tiers > 1 and len(fitting) > 1:
            for mix in itertools.product([w.sku for w in fitting], repeat=tiers):
                if len(set(mix)) > 1:
                    yield replace(base, switch_skus=mix)

    # -- rules --------------------------------------------------------------------------------

    def buildable(self, design: Design, plan: PhysicalPlan) -> bool:
        """Issue 13's buildability rules that ``check_bom`` may not know yet."""
        if not self.issue13:
            return True
        switchless = not plan.switches
        if switchless and design.nodes > 2:
            server = next(s for s in self.catalog.servers if s.sku == design.server_sku)
            nic = next(n for n in self.catalog.nics if n.sku == design.nic_sku)
            if not (forwards(nic) or forwards(server)):
                return False
        own = plan.builtin_nics.quantity if plan.builtin_nics is not None else 0
        return nics_cabled(plan) == plan.nics.quantity + own

    # -- pricing ------------------------------------------------------------------------------

    def _price(self, qty: Counter[str]) -> int:
        return sum(
            q * self.catalog.unit_price_cents(sku, q, self.prices[sku]) for sku, q in qty.items()
        )

    def _in_stock(self, qty: Counter[str]) -> bool:
        return all(q <= self.stock[s] for s, q in qty.items() if s in self.stock)

    def _pre(self, design: Design) -> _Pre | None:
        """Cheap filters first: plan, buildability, base stock, racks, power, time, budget."""
        c = self.spec.constraints
        plan = plan_of(design, self.catalog)
        if plan is None:
            return None
        if not self.buildable(design, plan):
            return None
        if c.max_racks is not None and plan.racks > c.max_racks:
            return None
        server = next(s for s in self.catalog.servers if s.sku == design.server_sku)
        if c.max_floor_positions is not None:
            placement = plan.placement
            floor = floor_positions(placement.server_racks, placement.racks, server, self.spec)
            if floor > c.max_floor_positions:
                return None
        if c.max_power_kw is not None and plan.power_kw > c.max_power_kw + 1e-9:
            return None
        qty = Counter({plan.servers.sku: plan.servers.quantity})
        qty[plan.nics.sku] += plan.nics.quantity
        for sw in plan.switches:
            qty[sw.sku] += sw.quantity
        if not self._in_stock(qty):
            return None
        base_cents = self._price(qty)
        if c.budget_cents is not None and base_cents > c.budget_cents:
            return None
        nic = next(n for n in self.catalog.nics if n.sku == design.nic_sku)
        # docs/optimizer.md, in-network reduction: a design is timed with SHARP exactly when
        # it has switches and every one of them offers it.
        sharp = {w.sku for w in self.catalog.switches if w.in_network_reduction}
        reduces = bool(plan.switches) and all(d.sku in sharp for d in plan.switches)

        def hours_of(workload: Workload) -> float:
            est = estimate_of(
                workload,
                server,
                design.fabric,
                nic.line_gbps,
                design.nics_per_node,
                design.nodes,
                plan.sizing.profile,
                reduces,
            )
            return math.inf if est is None else _hours(est, self.spec.confidence)

        hours = portfolio_hours(self.spec, hours_of)
        if not math.isfinite(hours):
            return None
        target = c.target_training_hours
        if target is not None and hours > target:
            return None
        return _Pre(design, plan, hours, qty, base_cents)

    def _cheapest_links(self, pre: _Pre) -> tuple[int, dict[str, list[tuple[LinkOption, int]]]]:
        """The exact cheapest link mix of ``pre`` within stock and the power cap: (link capex
        in cents, links bought per option per group); (-1, {}) when no mix exists. Min-TCO
        ranks mixes by their lifetime cost (milli-cents, as the TCO's terms are linear)."""
        demands = [d for d in pre.plan.links if d.count]
        groups = []
        for demand in demands:
            options = link_options(  # ends with the switches' cages and broken-out ports
                demand.length_m, demand.speed_gbps, demand.fabric, self.catalog, demand.link_ends
            )
            if not options:
                return (-1, {})
            groups.append((demand.group, demand.count, options))
        cap_kw = self.spec.constraints.max_power_kw
        headroom_mw = (
            None if cap_kw is None else math.floor((cap_kw - pre.plan.power_kw) * 1e6 + 1e-3)
        )
        if headroom_mw is not None and headroom_mw < 0:
            return (-1, {})
        return link_mix(self.catalog, self.spec, groups, pre.base_qty, headroom_mw)

    def _exact(self, pre: _Pre) -> Found | None:
        """Price ``pre`` exactly, build and verify its BOM; None when it cannot be bought."""
        c = self.spec.constraints
        cents, choice = self._cheapest_links(pre)
        if cents < 0:
            return None
        self.checked += 1
        bom = build_bom(pre.design, self.catalog, choice)
        if check_bom(pre.design, bom, self.catalog):
            return None
        if c.budget_cents is not None and bom.capex_cents > c.budget_cents:
            return None
        if c.max_power_kw is not None and bom.power_kw > c.max_power_kw + 1e-9:
            return None
        if c.max_racks is not None and bom.racks > c.max_racks:
            return None
        lines = Counter[str]()
        for line in bom.lines:
            lines[line.sku] += line.extended_price_cents
        return Found(
            pre.design,
            pre.design.server_sku,
            pre.design.nodes,
            bom.capex_cents,
            pre.hours,
            bom.power_kw,
            bom.racks,
            bom,
            tco_of(self.catalog, self.spec, lines, bom.capex_cents, bom.power_kw, bom.racks),
        )

    def standalone(self) -> list[Found]:
        """The switchless one-node designs: one server alone, no NIC and no fabric."""
        if self.spec.require_fabric or not self.issue13:
            return []
        c = self.spec.constraints
        out = []
        for server in self.catalog.servers:
            if not (_allowed(server, self.spec) and cooled(server, self.spec)):
                continue
            if 1 not in self.node_range(server):
                continue
            if server.sku in self.stock and self.stock[server.sku] < 1:
                continue
            cents = self.catalog.unit_price_cents(server.sku, 1, server.price_cents)
            hours = portfolio_hours(
                self.spec, lambda w, s=server: single_node_hours(w, s, self.spec.confidence)
            )
            per_rack = self.layout.per_rack(server.power_kw, server.rack_units, server.sku)
            racks = 1 if per_rack >= 1 else 0
            ok = (
                math.isfinite(hours)
                and (c.target_training_hours is None or hours <= c.target_training_hours)
                and (c.budget_cents is None or cents <= c.budget_cents)
                and (c.max_power_kw is None or server.power_kw <= c.max_power_kw + 1e-9)
                and (c.max_racks is None or racks <= c.max_racks)
                and (
                    c.max_floor_positions is None
                    or floor_positions(racks, racks, server, self.spec) <= c.max_floor_positions
                )
            )
            if ok:
                tco = tco_of(
                    self.catalog,
                    self.spec,
                    Counter({server.sku: cents}),
                    cents,
                    server.power_kw,
                    racks,
                )
                out.append(
                    Found(None, server.sku, 1, cents, hours, server.power_kw, racks, None, tco)
                )
        return out

    # -- the optimum --------------------------------------------------------------------------

    def optimum(self) -> Found | None:
        """The best design under the spec's objective (lexicographic, exact).

        Min-cost visits designs by the price of their servers and NICs (a lower bound on
        capex: switches and links only add) and stops once that bound passes the best found;
        min-time times every design (no bound on time is assumed) and prices them fastest
        first, stopping once a design is slower than the best found.
        """
        spec = self.spec
        best: Found | None = None
        for alone in self.standalone():
            if best is None or objective(alone, spec) < objective(best, spec):
                best = alone
        bases = sorted(self.bases(), key=lambda t: t[0])
        if spec.objective is Objective.MIN_COST:
            for cents, base, fitting in bases:
                if best is not None and cents > best.capex_cents:
                    break
                for design in self.expand(base, fitting):
                    best = self._consider(design, best)
            return best
        pres = [
            pre
            for _, base, fitting in bases
            for design in self.expand(base, fitting)
            if (pre := self._pre(design)) is not None
        ]
        if spec.objective is Objective.MIN_TCO:
            # Capex is a lower bound on the TCO (operating costs are not negative): price
            # every design in capex-bound order until the bound passes the best TCO.
            pres.sort(key=lambda p: (p.base_cents, p.seconds))
            for pre in pres:
                if best is not None and pre.base_cents > best.tco_cents:
                    break
                found = self._exact(pre)
                if found is not None and (
                    best is None or objective(found, spec) < objective(best, spec)
                ):
                    best = found
            return best
        pres.sort(key=lambda p: (p.seconds, p.base_cents))
        for pre in pres:
            if best is not None and (pre.seconds, pre.base_cents) > objective(best, spec):
                break
            found = self._exact(pre)
            if found is not None and (
                best is None or objective(found, spec) < objective(best, spec)
            ):
                best = found
        return best

    def _consider(self, design: Design, best: Found | None) -> Found | None:
        """``best`` or ``design`` if it is feasible and better (min-cost order)."""
        pre = self._pre(design)
        if pre is None:
            return best
        if best is not None and (pre.base_cents, pre.seconds) > objective(best, self.spec):
            return best
        found = self._exact(pre)
        if found is not None and (
            best is None or objective(found, self.spec) < objective(best, self.spec)
        ):
            return found
        return best


Group = tuple[str, int, Sequence[LinkOption]]  # (link group, links, ways to build one)


def link_mix(
    catalog: Catalog,
    spec: OptimizeSpec,
    groups: Sequence[Group],
    base_qty: Counter[str],
    headroom_mw: int | None,
) -> tuple[int, dict[str, list[tuple[LinkOption, int]]]]:
    """Links per option per group at the least cost, exactly (CP-SAT over integers): each
    group's links sum to its count; a multi-port part's ports in a group become whole parts
    (ceil(ports / ports per module), as the BOM buys them); each SKU's total pays the unit
    price of the deepest volume break it reaches; totals stay within stock; link power (mW)
    within ``headroom_mw``. Returns (link capex in cents, choice) or (-1, {})."""
    links = {lk.sku: lk for lk in catalog.links}
    model = cp_model.CpModel()
    xs: list[list[cp_model.IntVar]] = []
    amounts: dict[str, list[tuple[cp_model.LinearExprT, int]]] = defaultdict(list)
    for gi, (_, count, options) in enumerate(groups):
        row = [model.new_int_var(0, count, f"x{gi}_{oi}") for oi in range(len(options))]
        model.add(sum(row) == count)
        xs.append(row)
        ports: dict[str, list[tuple[int, cp_model.IntVar]]] = defaultdict(list)
        for option, var in zip(options, row, strict=True):
            for sku, per_link in option.parts:
                ports[sku].append((per_link, var))
        for sku, terms in ports.items():
            expr = sum(k * v for k, v in terms)
            most = count * max(k for k, _ in terms)
            per_module = links[sku].module_ports  # a twin-port module or a splitter
            if per_module > 1:
                modules = model.new_int_var(0, most, f"m{gi}_{sku}")
                model.add(per_module * modules >= expr)
                model.add(per_module * modules <= expr + per_module - 1)
                amounts[sku].append((modules, -(-most // per_module)))
            else:
                amounts[sku].append((expr, most))
    cost_terms: list[tuple[int, cp_model.LinearExprT]] = []  # (weight, cents expression)
    power_terms = []
    model_tco = spec.objective is Objective.MIN_TCO
    factor = annuity_factor(spec.cost_model.years, spec.cost_model.discount_rate)
    for sku, parts in amounts.items():
        total = sum(e for e, _ in parts) + base_qty.get(sku, 0)
        most = sum(m for _, m in parts) + base_qty.get(sku, 0)
        stock = links[sku].availability.stock_units
        if stock is not None:
            model.add(total <= stock)
        power_terms.append((round(links[sku].power_w * 1000), sum(e for e, _ in parts)))
        cents = _tiered_cents(model, catalog, sku, links[sku].price_cents, total, most)
        weight = 1
        if model_tco:  # capex plus the annuity of its support, in milli-cents
            weight = round(1000 * (1 + support_rate(catalog, spec, sku) * factor))
        cost_terms.append((weight, cents))
    link_mw = sum(k * e for k, e in power_terms)
    if headroom_mw is not None:
        model.add(link_mw <= headroom_mw)
    objective = sum(w * e for w, e in cost_terms)
    if model_tco:  # plus the lifetime energy of the links' power, milli-cents per mW
        per_mw = round(energy_cents_per_year(1e-6, spec.cost_model) * factor * 1000)
        objective += per_mw * link_mw
    model.minimize(objective)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.max_time_in_seconds = LINK_SOLVE_S
    status = solver.solve(model)
    if status == cp_model.INFEASIBLE:
        return (-1, {})
    if status != cp_model.OPTIMAL:
        raise RuntimeError(f"link mix not proven optimal in {LINK_SOLVE_S} s: {status}")
    choice: dict[str, list[tuple[LinkOption, int]]] = {}
    for (group, _, options), row in zip(groups, xs, strict=True):
        picked = [(o, solver.value(v)) for o, v in zip(options, row, strict=True)]
        choice[group] = [(o, n) for o, n in picked if n]
    capex = sum(solver.value(e) for _, e in cost_terms)
    return (int(capex), choice)


def _tiered_cents(
    model: cp_model.CpModel,
    catalog: Catalog,
    sku: str,
    list_cents: int,
    total: cp_model.LinearExprT,
    most: int,
) -> cp_model.LinearExprT:
    """Cents paid for ``total`` units of ``sku``: all units at the price of the deepest volume
    break the total reaches (Catalog.unit_price_cents), one tier chosen by a Boolean."""
    tiers = [(0, list_cents)]
    for pb in catalog.breaks_for(sku):
        if pb.min_quantity > tiers[-1][0]:
            tiers.append((pb.min_quantity, pb.unit_price_cents))
    if len(tiers) == 1:
        return list_cents * total
    picks, parts = [], []
    for ti, (low, unit) in enumerate(tiers):
        high = tiers[ti + 1][0] - 1 if ti + 1 < len(tiers) else max(most, low)
        if low > most:
            break
        pick = model.new_bool_var(f"t_{sku}_{ti}")
        qty = model.new_int_var(0, max(most, 0), f"q_{sku}_{ti}")
        model.add(qty >= low * pick)
        model.add(qty <= high * pick)
        picks.append(pick)
        parts.append((unit, qty))
    model.add(sum(picks) == 1)
    model.add(sum(q for _, q in parts) == total)
    return sum(u * q for u, q in parts)


def nics_cabled(plan: PhysicalPlan) -> int:
    """NIC ends of the endpoint links: one per node-to-switch link, two per direct link."""
    if not plan.switches:
        return 2 * sum(d.count for d in plan.links)
    return sum(d.count for d in plan.links if d.group == _ENDPOINT_GROUP)


def enumerate_optimum(
    catalog: Catalog, spec: OptimizeSpec, *, max_nodes: int, issue13: bool = True
) -> Found | None:
    """The exact optimum of ``spec`` over every design of up to ``max_nodes`` nodes."""
    return Enumerator(catalog, spec, max_nodes=max_nodes, issue13=issue13).optimum()
