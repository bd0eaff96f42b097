"""The designs we must beat: the seed article's rule of thumb and the vendor reference design.

Rule of thumb (shared/domain.md section 2, from the seed article), as a buyer applies it:

* fabric by GPU count: InfiniBand above 256 GPUs, RoCE from 32 to 256, TCP Ethernet below 32;
* topology: a non-blocking rail-optimized fat-tree (never a torus or dragonfly). Where every
  NIC port fits one switch, the fat-tree is that one switch (its one-tier case: every rail's
  leaf is the same switch; ``optimizer.registry.topologies`` calls the two the same hardware);
* one NIC per GPU (as many as the server takes), of the 400G class: the compatible NIC whose
  speed is nearest 400 Gb/s (the faster on a tie), the cheapest at that speed;
* the cheapest switch that serves the NIC speed, links chosen greedily (the cheapest that
  reaches, the next where stock runs out: ``optimizer.topology.bom.cheapest_links``);
* for each server, the smallest node count that meets the target; the cheapest server wins.

Stock is a fact of the quote, not a reason to give up: when the catalog cannot supply the
rule's NIC or switch at the size needed, the rule takes the next part in its order (next NIC,
next switch; the next server is the next candidate of the final comparison) and says so in
``note``. Where the catalog cannot build the rule's fabric at all (no parts, no link that
reaches, or no stock of any of them), the next fabric in the rule's order is used, also said
in ``note``. A fabric that can be built but is too slow at every size of its GPU-count regime
is not replaced: the rule moves on to the next, larger regime.

Reference design: NVIDIA DGX SuperPOD style, a non-blocking rail-optimized InfiniBand fat-tree
with one NIC per GPU at every size, sized and stock-checked the same way.

Both are priced by the same BOM code and timed by the same estimator as the optimizer.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from optimizer.catalog.model import Catalog, Nic, Server, Switch
from optimizer.errors import InvalidInput
from optimizer.optimize.candidates import (
    EstimateCache,
    TimeKey,
    confident_hours,
    make_design,
    smallest_meeting,
)
from optimizer.optimize.explain import NOT_COMPUTED, describe_design, usd
from optimizer.optimize.formulation import stock_limits
from optimizer.optimize.request import OptimizeSpec
from optimizer.optimize.result import RankedDesign
from optimizer.performance.errors import SearchStopped
from optimizer.registry.fabrics import INFINIBAND
from optimizer.registry.topologies import RAIL_OPTIMIZED, SINGLE_SWITCH
from optimizer.topology.bom import BillOfMaterials, build_bom
from optimizer.topology.compat import (
    nic_fits_fabric,
    port_lanes,
    ports_at_speed,
    switch_fits_fabric,
)
from optimizer.topology.design import Design
from optimizer.topology.layout import Layout
from optimizer.topology.sizing import max_endpoints

# GPU-count regimes of the rule: (first GPU count, fabrics in the rule's order). The first
# fabric is the rule's; the others are its fallbacks, in order, where the catalog cannot build
# it. This is the seed article's fixed rule (data, by registry name), not a list of every
# fabric: a newly registered fabric is not part of it.
RULE_REGIMES: tuple[tuple[int, tuple[str, ...]], ...] = (
    (1, ("ethernet", "roce", "infiniband")),
    (32, ("roce", "infiniband", "ethernet")),
    (257, ("infiniband", "roce", "ethernet")),
)
# The NIC class of the rule and of the reference design (ConnectX-7 NDR / 400GbE).
NIC_CLASS_GBPS = 400
MAX_NODES = 16_384


@dataclass(frozen=True)
class BaselineDesign:
    design: Design
    bom: BillOfMaterials
    time_hours: float
    gpus: int
    note: str


def rule_fabrics(gpus: int) -> tuple[str, ...]:
    """The rule's fabric for a cluster of ``gpus`` GPUs, then its fallbacks in order."""
    return [fabrics for first, fabrics in RULE_REGIMES if first <= gpus][-1]


def nics_in_rule_order(catalog: Catalog, fabric: str) -> list[Nic]:
    """The fabric's NICs, the rule's first: line rate (over all planes, Nic.line_gbps)
    nearest the 400G class (the faster on a tie), then the cheaper. The rest are the parts it
    falls back to when stock runs out."""
    return sorted(
        (n for n in catalog.nics if nic_fits_fabric(n, fabric)),
        key=lambda n: (
            abs(math.log2(n.line_gbps / NIC_CLASS_GBPS)),
            -n.line_gbps,
            n.price_cents,
            n.sku,
        ),
    )


def switches_in_rule_order(catalog: Catalog, fabric: str, speed_gbps: int) -> list[Switch]:
    """The fabric's switches that serve ``speed_gbps`` ports, the cheapest first."""
    return sorted(
        (
            w
            for w in catalog.switches
            if switch_fits_fabric(w, fabric) and ports_at_speed(w, speed_gbps)
        ),
        key=lambda w: (w.price_cents, w.sku),
    )


@dataclass(frozen=True)
class _Parts:
    """One (NIC, switch) choice of the rule, and its place in the rule's order."""

    nic: Nic
    switch: Switch
    first: bool  # the rule's own choice, not a fallback


def _part_choices(catalog: Catalog, fabric: str) -> Iterator[_Parts]:
    """(NIC, switch) pairs in the rule's order: NIC by NIC, each with its switches."""
    first = True
    for nic in nics_in_rule_order(catalog, fabric):
        for switch in switches_in_rule_order(catalog, fabric, nic.speed_gbps):
            yield _Parts(nic, switch, first)
            first = False


# What the topology does at a node count: (family, first node count, last node count).
TopologyRange = tuple[str, int, int]
# The topology ranges of a baseline for (NICs per node, radix, first nodes, last nodes).
TopologyRangesFor = Callable[[int, int, int, int], list[TopologyRange]]


def _rule_topologies(nics_per_node: int, radix: int, lo: int, hi: int) -> list[TopologyRange]:
    """A single switch while every NIC port fits it, a rail-optimized fat-tree above."""
    one_switch = max_endpoints(SINGLE_SWITCH.name, radix) or 0
    fits = one_switch // nics_per_node
    return [(SINGLE_SWITCH.name, lo, min(hi, fits)), (RAIL_OPTIMIZED.name, max(lo, fits + 1), hi)]


def _reference_topologies(nics_per_node: int, radix: int, lo: int, hi: int) -> list[TopologyRange]:
    """The reference design is rail-optimized at every size (a SuperPOD scalable unit)."""
    return [(RAIL_OPTIMIZED.name, lo, hi)]


@dataclass
class _Search:
    """What one baseline's search shares: the catalog, target, timer and stock."""

    catalog: Catalog
    spec: OptimizeSpec
    target_hours: float
    timer: EstimateCache
    layout: Layout
    stock: dict[str, int]

    def node_cap(self, server: Server) -> int:
        """Most nodes the request and the server's stock allow (beyond it: the next server)."""
        cap = min(MAX_NODES, (self.spec.constraints.max_gpus or 10**9) // server.gpus_per_node)
        return min(cap, self.stock.get(server.sku, cap))

    def short(self, bom: BillOfMaterials) -> list[str]:
        """The SKUs ``bom`` needs beyond the catalog's stock, as "SKU (N needed, stock M)"."""
        used: dict[str, int] = {}
        for line in bom.lines:
            used[line.sku] = used.get(line.sku, 0) + line.quantity
        return [
            f"{sku} ({qty:,} needed, stock {self.stock[sku]:,})"
            for sku, qty in sorted(used.items())
            if sku in self.stock and qty > self.stock[sku]
        ]


@dataclass(frozen=True)
class _Found:
    """A fabric's outcome in one regime: the design, or why there is none."""

    design: BaselineDesign | None
    meets_target: bool  # some choice meets the target in the regime (built or not)
    fits: bool  # some choice attaches some size of the regime (else it cannot be built here)


def _for_fabric(
    search: _Search,
    server: Server,
    fabric: str,
    lo: int,
    hi: int,
    topologies: TopologyRangesFor,
) -> _Found:
    """The first part choice, in the rule's order, that meets the target at some size in
    [lo, hi] and that the catalog (parts, reach, stock) can supply at its smallest such size."""
    npn = min(server.gpus_per_node, server.max_nics)
    meets = fits = False
    skipped = dict[str, None]()
    for parts in _part_choices(search.catalog, fabric):
        radix = ports_at_speed(parts.switch, parts.nic.speed_gbps)
        top = min(hi, search.node_cap(server))
        for topology, first, last in topologies(npn, radix, lo, top):
            nic = parts.nic
            key = TimeKey(
                server.sku,
                fabric,
                nic.speed_gbps,
                npn,
                topology,
                1.0,
                radix,
                planes=nic.plane_count,
                port_lanes=port_lanes((parts.switch,), nic.speed_gbps),
            )
            if parts.switch.in_network_reduction:  # its one switch reduces in the network
                key = replace(key, in_network_skus=frozenset({parts.switch.sku}))
            most = max_endpoints(topology, radix, rails=npn, port_lanes=key.port_lanes)
            last = last if most is None else min(last, most // npn)
            fits = fits or first <= last
            hours = functools.partial(search.timer.hours, key)
            nodes = smallest_meeting(hours, search.target_hours, first, last, first)
            if nodes is None:
                continue
            meets = True
            built = _build(search, key, parts, nodes, server)
            if isinstance(built, str):
                skipped[built] = None
                continue
            note = (
                f"{'; '.join(skipped)}: took {parts.nic.sku} and {parts.switch.sku}"
                if skipped
                else ""
            )
            return _Found(
                BaselineDesign(built.design, built.bom, built.time_hours, built.gpus, note),
                True,
                True,
            )
    return _Found(None, meets, fits)


def _build(
    search: _Search, key: TimeKey, parts: _Parts, nodes: int, server: Server
) -> BaselineDesign | str:
    """The priced design, or why the catalog cannot supply it (reach, stock)."""
    design = make_design(key, nodes, parts.nic, parts.switch, search.layout)
    try:
        bom = build_bom(design, search.catalog)
    except InvalidInput as e:
        return f"{parts.nic.sku} with {parts.switch.sku} cannot be cabled ({e})"
    short = search.short(bom)
    if short:
        return f"stock runs out of {', '.join(short)}"
    est = search.timer.estimate(key, nodes)
    if est is None:
        return f"no plan fits {nodes} x {server.sku}"
    hours = confident_hours(est, search.timer.confidence)
    return BaselineDesign(design, bom, hours, nodes * server.gpus_per_node, "")


def _search_for(catalog: Catalog, spec: OptimizeSpec) -> _Search:
    """Both baselines size for the request's target with the optimizer's own estimator."""
    target = spec.constraints.target_training_hours
    if target is None:
        msg = "a baseline design needs a target; expected target_training_hours"
        raise InvalidInput(msg, field="constraints.target_training_hours")
    timer = EstimateCache(
        spec.workload,
        {s.sku: s for s in catalog.servers},
        spec.confidence,
        options=spec.model_options,
    )
    return _Search(catalog, spec, target, timer, Layout(), stock_limits(catalog))


def _rule_for_server(search: _Search, server: Server) -> BaselineDesign | None:
    """The rule's design on ``server``: regime by regime from the smallest, the rule's fabric
    (or its fallback where the catalog cannot build it), the smallest size meeting the target."""
    for i, (first_gpus, fabrics) in enumerate(RULE_REGIMES):
        lo = math.ceil(first_gpus / server.gpus_per_node)
        last_gpus = RULE_REGIMES[i + 1][0] - 1 if i + 1 < len(RULE_REGIMES) else None
        hi = MAX_NODES if last_gpus is None else last_gpus // server.gpus_per_node
        if hi < lo:
            continue  # no whole number of these servers falls in this regime
        unbuildable: list[str] = []
        for fabric in fabrics:
            found = _for_fabric(search, server, fabric, lo, hi, _rule_topologies)
            d = found.design
            if d is not None:
                notes = [d.note] if d.note else []
                if unbuildable:
                    cannot = ", ".join(unbuildable)
                    notes.insert(0, f"the catalog cannot build {cannot} here; used {fabric}")
                return BaselineDesign(d.design, d.bom, d.time_hours, d.gpus, "; ".join(notes))
            if found.fits and not found.meets_target:
                break  # buildable but too slow at every size here: the next regime
            unbuildable.append(fabric)
    return None


def rule_of_thumb(
    catalog: Catalog, spec: OptimizeSpec, stop: Callable[[], bool] | None = None
) -> BaselineDesign | None:
    """The seed article's design for the request's target (cheapest over servers); its plan
    searches end with SearchStopped once ``stop()`` holds (the request's clock)."""
    search = _search_for(catalog, spec)
    with search.timer.stopping(stop):
        found = [d for s in catalog.servers if (d := _rule_for_server(search, s)) is not None]
    return min(found, key=lambda b: (b.bom.capex_cents, b.design.server_sku), default=None)


def reference_design(catalog: Catalog, spec: OptimizeSpec) -> BaselineDesign | None:
    """The non-blocking rail-optimized InfiniBand fat-tree (DGX SuperPOD style), cheapest
    server; the next NIC or switch where stock runs out, like the rule."""
    search = _search_for(catalog, spec)
    found = []
    for server in catalog.servers:
        built = _for_fabric(
            search, server, INFINIBAND.name, 1, MAX_NODES, _reference_topologies
        ).design
        if built is not None:
            found.append(built)
    return min(found, key=lambda b: (b.bom.capex_cents, b.design.server_sku), default=None)


RULE_TIME_LIMIT = f"The rule of thumb (seed article): {NOT_COMPUTED}."


def baseline_line(
    best: RankedDesign, catalog: Catalog, spec: OptimizeSpec, stop: Callable[[], bool]
) -> str:
    """What the seed's rule of thumb buys for the same job, and what rank 1 saves against it
    (capex and training time), for the answer's footer.

    The rule sizes for the request's target; a request without one (min-time within a budget)
    is sized for rank 1's own training time, so the two are compared at equal speed. The rule
    knows no budget, power or rack cap: a cap its design breaks is said, not hidden."""
    target = spec.constraints.target_training_hours
    sized_for = target if target is not None else best.time_hours
    asked = replace(spec, constraints=replace(spec.constraints, target_training_hours=sized_for))
    try:
        rule = rule_of_thumb(catalog, asked, stop)
    except SearchStopped:
        return RULE_TIME_LIMIT
    if rule is None:
        return (
            f"The rule of thumb (seed article) has no design meeting {sized_for:,.4g} h "
            "with this catalog."
        )
    saved_cents = rule.bom.capex_cents - best.bom.capex_cents
    saved_hours = rule.time_hours - best.time_hours
    capex = (
        f"saves {usd(saved_cents)} ({saved_cents / rule.bom.capex_cents:.1%}) of capex"
        if saved_cents >= 0
        else f"costs {usd(-saved_cents)} ({-saved_cents / rule.bom.capex_cents:.1%}) more"
    )
    hours = (
        f"trains {saved_hours:,.0f} h faster"
        if saved_hours >= 0.5
        else f"trains {-saved_hours:,.0f} h slower"
        if saved_hours <= -0.5
        else "trains as fast"
    )
    sized = "" if target is not None else " (sized for rank 1's time)"
    text = (
        f"The rule of thumb (seed article) buys {describe_design(rule.design, rule.gpus)} "
        f"for {usd(rule.bom.capex_cents)}, training in {rule.time_hours:,.0f} h{sized}; "
        f"rank 1 {capex} and {hours}."
    )
    broken = _caps_broken(rule, spec)
    if broken:
        text += f" The rule's design breaks the request's {', '.join(broken)}."
    if rule.note:
        text += f" (Rule: {rule.note}.)"
    return text


def _caps_broken(rule: BaselineDesign, spec: OptimizeSpec) -> list[str]:
    """The request's caps the rule's design exceeds (the rule itself knows none of them)."""
    c = spec.constraints
    out = []
    if c.budget_cents is not None and rule.bom.capex_cents > c.budget_cents:
        out.append(f"{usd(c.budget_cents)} budget")
    if c.max_power_kw is not None and rule.bom.power_kw > c.max_power_kw:
        out.append(f"{c.max_power_kw:,.0f} kW power cap")
    if c.max_racks is not None and rule.bom.racks > c.max_racks:
        out.append(f"{c.max_racks} rack cap")
    return out
