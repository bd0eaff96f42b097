"""The designs we must beat: the seed article's rule of thumb and the vendor reference design.

Rule of thumb (shared/domain.md section 2, from the seed article): fabric by GPU count
(> 256 InfiniBand, 32-256 RoCE, < 32 TCP Ethernet) and topology by GPU count (tens: a single
switch; hundreds: a fat-tree; more than a thousand: dragonfly or torus), non-blocking, one NIC
per GPU at the fastest compatible speed, the cheapest compatible switch, links chosen greedily;
a design the catalog's stock cannot supply is not a baseline (the buyer could not order it).
For each server the smallest GPU count that meets the target under those rules is built; the
cheapest of those is the baseline. Where the catalog cannot build the rule's fabric, the next
one in the rule's order is used (said in ``note``).

Reference design: NVIDIA DGX SuperPOD style, a non-blocking rail-optimised InfiniBand fat-tree
with one NIC per GPU, sized the same way.

Both are priced by the same BOM code and timed by the same estimator as the optimizer.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from optimizer.catalog.model import Catalog, Nic, Server, Switch
from optimizer.errors import InvalidInput
from optimizer.optimize.candidates import (
    EstimateCache,
    TimeKey,
    confident_hours,
    make_design,
    smallest_meeting,
)
from optimizer.optimize.formulation import over_stock, stock_limits
from optimizer.optimize.request import OptimizeSpec
from optimizer.registry.fabrics import INFINIBAND
from optimizer.registry.topologies import FAT_TREE, RAIL_OPTIMIZED, TOPOLOGIES
from optimizer.topology.bom import BillOfMaterials, build_bom
from optimizer.topology.compat import nic_fits_fabric, ports_at_speed, switch_fits_fabric
from optimizer.topology.design import Design
from optimizer.topology.layout import Layout
from optimizer.topology.sizing import max_endpoints

# GPU-count regimes of the rule: (first GPU count, fabric preference, topology choices). This is
# the seed article's fixed rule (data, by registry name), not a list of every fabric or family:
# a newly registered one is not part of it. The
# topology choices are groups in order of preference: the first group that can be built at the
# size is the rule's, and within a group ("dragonfly or torus") the cheaper design that meets
# the target is taken; a later group is a fallback when the size does not fit the earlier one.
RULE_REGIMES: tuple[tuple[int, tuple[str, ...], tuple[tuple[str, ...], ...]], ...] = (
    (1, ("ethernet", "roce", "infiniband"), (("single_switch",), ("fat_tree",))),
    (32, ("roce", "infiniband", "ethernet"), (("single_switch",), ("fat_tree",))),
    (100, ("roce", "infiniband", "ethernet"), (("fat_tree",),)),
    (257, ("infiniband", "roce", "ethernet"), (("fat_tree",),)),
    (1001, ("infiniband", "roce", "ethernet"), (("dragonfly", "torus"), ("fat_tree",))),
)
MAX_NODES = 16_384


@dataclass(frozen=True)
class BaselineDesign:
    design: Design
    bom: BillOfMaterials
    time_hours: float
    gpus: int
    note: str


def _nic_for(catalog: Catalog, server: Server, fabric: str) -> Nic | None:
    """Fastest compatible NIC, cheapest at that speed."""
    nics = [n for n in catalog.nics if nic_fits_fabric(n, fabric)]
    if not nics:
        return None
    return min(nics, key=lambda n: (-n.speed_gbps, n.price_cents, n.sku))


def _switch_for(catalog: Catalog, fabric: str, speed: int) -> Switch | None:
    fits = [
        w for w in catalog.switches if switch_fits_fabric(w, fabric) and ports_at_speed(w, speed)
    ]
    return min(fits, key=lambda w: (w.price_cents, w.sku), default=None)


def _candidate(
    catalog: Catalog, server: Server, fabric: str, topology: str, rail: bool = False
) -> tuple[TimeKey, Nic, Switch | None] | None:
    nic = _nic_for(catalog, server, fabric)
    if nic is None:
        return None
    npn = min(server.gpus_per_node, server.max_nics)
    switchless = TOPOLOGIES.get(topology).switchless
    switch = None if switchless else _switch_for(catalog, fabric, nic.speed_gbps)
    if not switchless and switch is None:
        return None
    radix = 0 if switch is None else ports_at_speed(switch, nic.speed_gbps)
    family = RAIL_OPTIMIZED.name if rail else topology
    return TimeKey(server.sku, fabric, nic.speed_gbps, npn, family, 1.0, radix), nic, switch


def _build(
    catalog: Catalog,
    key: TimeKey,
    nic: Nic,
    switch: Switch | None,
    nodes: int,
    timer: EstimateCache,
    layout: Layout,
    server: Server,
    note: str,
) -> BaselineDesign | None:
    """The priced design, or None when the catalog cannot supply it (parts, reach, stock)."""
    design = make_design(key, nodes, nic, switch, layout)
    try:
        bom = build_bom(design, catalog)
    except InvalidInput:
        return None
    if over_stock(bom, stock_limits(catalog)):
        return None
    est = timer.estimate(key, nodes)
    if est is None:
        return None
    return BaselineDesign(
        design, bom, confident_hours(est, timer.confidence), nodes * server.gpus_per_node, note
    )


def _size_limit(key: TimeKey, spec: OptimizeSpec, server: Server) -> int:
    """Most nodes the topology attaches and the request allows."""
    cap = min(MAX_NODES, (spec.constraints.max_gpus or 10**9) // server.gpus_per_node)
    most = max_endpoints(key.topology, key.radix, rails=key.nics_per_node)
    return cap if most is None else min(cap, most // key.nics_per_node)


def _target_and_timer(catalog: Catalog, spec: OptimizeSpec) -> tuple[float, EstimateCache]:
    """Both baselines size for the request's target with the optimizer's own estimator."""
    target = spec.constraints.target_training_hours
    if target is None:
        msg = "a baseline design needs a target; expected target_training_hours"
        raise InvalidInput(msg, field="constraints.target_training_hours")
    return target, EstimateCache(
        spec.workload, {s.sku: s for s in catalog.servers}, spec.confidence
    )


def rule_of_thumb(catalog: Catalog, spec: OptimizeSpec) -> BaselineDesign | None:
    """The seed article's design for the request's target (cheapest over servers)."""
    target, timer = _target_and_timer(catalog, spec)
    layout = Layout()
    found: list[BaselineDesign] = []
    for server in catalog.servers:
        for i, (first_gpus, fabrics, groups) in enumerate(RULE_REGIMES):
            lo = math.ceil(first_gpus / server.gpus_per_node)
            last = RULE_REGIMES[i + 1][0] - 1 if i + 1 < len(RULE_REGIMES) else None
            hi = MAX_NODES if last is None else last // server.gpus_per_node
            built = _smallest_in_regime(
                catalog, spec, server, fabrics, groups, lo, hi, target, timer, layout
            )
            if built is not None:
                found.append(built)
                break  # later regimes are larger clusters
    return min(found, key=lambda b: (b.bom.capex_cents, b.design.server_sku), default=None)


def _smallest_in_regime(
    catalog: Catalog,
    spec: OptimizeSpec,
    server: Server,
    fabrics: tuple[str, ...],
    groups: tuple[tuple[str, ...], ...],
    lo: int,
    hi: int,
    target: float,
    timer: EstimateCache,
    layout: Layout,
) -> BaselineDesign | None:
    """The rule's design in one GPU-count regime: the preferred buildable fabric, the first
    topology group that fits the size, the cheaper of its choices that meets the target."""
    for fabric in fabrics:
        for group in groups:
            fitting = []
            for topology in group:
                found = _candidate(catalog, server, fabric, topology)
                if found is None:
                    continue
                top = min(hi, _size_limit(found[0], spec, server))
                if top >= lo:
                    fitting.append((found, top))
            if not fitting:
                continue  # this group cannot be built at this size: the next is the fallback
            note = (
                ""
                if fabric == fabrics[0]
                else (f"the catalog cannot build {fabrics[0]}; used {fabric}")
            )
            built = []
            for (key, nic, switch), top in fitting:
                nodes = smallest_meeting(functools.partial(timer.hours, key), target, lo, top, lo)
                design = (
                    None
                    if nodes is None
                    else _build(catalog, key, nic, switch, nodes, timer, layout, server, note)
                )
                if design is not None:
                    built.append(design)
            return min(built, key=lambda b: b.bom.capex_cents, default=None)
    return None


def reference_design(catalog: Catalog, spec: OptimizeSpec) -> BaselineDesign | None:
    """The non-blocking rail-optimised InfiniBand fat-tree (DGX SuperPOD style), cheapest server."""
    target, timer = _target_and_timer(catalog, spec)
    layout = Layout()
    found = []
    for server in catalog.servers:
        cand = _candidate(catalog, server, INFINIBAND.name, FAT_TREE.name, rail=True)
        if cand is None:
            continue
        key, nic, switch = cand
        nodes = smallest_meeting(
            functools.partial(timer.hours, key), target, 1, _size_limit(key, spec, server), 1
        )
        if nodes is None:
            continue
        built = _build(catalog, key, nic, switch, nodes, timer, layout, server, "")
        if built is not None:
            found.append(built)
    return min(found, key=lambda b: (b.bom.capex_cents, b.design.server_sku), default=None)
