"""From a design to exact required quantities, before any link part is chosen.

The optimizer states its constraints from this plan (servers, NICs, switches per tier, link
demands with their lengths, racks and power), the BOM builder prices it, and both refuse the
same incompatible designs with the same field-named reasons.
"""

from __future__ import annotations

import itertools
import math
import weakref
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import NamedTuple

from optimizer.catalog.model import Catalog, Nic, Server, Switch
from optimizer.errors import InvalidInput
from optimizer.registry.fabrics import FABRICS
from optimizer.registry.topologies import BACK_TO_BACK_NODES, TOPOLOGIES, TopologyFamily
from optimizer.topology.compat import (
    cage_gbps,
    cage_of_end,
    host_end,
    nic_fits_fabric,
    port_lanes,
    ports_at_speed,
    switch_end,
    switch_fits_fabric,
)
from optimizer.topology.design import Design
from optimizer.topology.layout import (
    Placement,
    buildable_lanes,
    group_ends,
    packed_spare_ports,
    place,
    spare_ports,
)
from optimizer.topology.network import (
    GROUP_END_TIERS,
    NetworkSizing,
    require_positive,
    tier_ends,
)
from optimizer.topology.parts import find
from optimizer.topology.sizing import size_network


@dataclass(frozen=True)
class PartDemand:
    sku: str
    quantity: int


@dataclass(frozen=True)
class SwitchDemand:
    """Switches of one tier.

    ``ports_used`` is the tier total, ``busiest_ports_used`` the fullest switch's count.
    """

    tier: str
    sku: str
    quantity: int
    ports_per_switch: int
    ports_used: int
    busiest_ports_used: int


@dataclass(frozen=True)
class LinkDemand:
    """``count`` links of one group, each up to ``length_m`` long, at ``speed_gbps``."""

    group: str
    count: int
    length_m: float
    speed_gbps: int
    fabric: str
    ends: tuple[str, str] | None = None  # issue 16 (fabric800): with the switches' cages
    spare_ports: int = 0
    """Ports of the parts at shared switch cages left empty because each switch buys whole
    parts for its own ends (``layout.spare_ports`` over the tiers whose end is ``@``)."""

    @property
    def link_ends(self) -> tuple[str, str]:
        """The ends ``link_options`` fits parts to (the group's kinds when not qualified)."""
        return self.ends or group_ends(self.group)


@dataclass(frozen=True)
class PhysicalPlan:
    design: Design
    servers: PartDemand
    nics: PartDemand
    switches: tuple[SwitchDemand, ...]
    links: tuple[LinkDemand, ...]
    placement: Placement
    rack_units: int
    server_power_kw: float
    nic_power_kw: float
    switch_power_kw: float
    sizing: NetworkSizing
    builtin_nics: PartDemand | None = None
    """NICs that ship inside the servers (priced in them, never ordered); ``nics`` is only
    what is bought."""

    @property
    def racks(self) -> int:
        return self.placement.racks

    @property
    def power_kw(self) -> float:
        """Servers, NICs and switches; link power depends on the parts chosen (see the BOM)."""
        return self.server_power_kw + self.nic_power_kw + self.switch_power_kw

    @property
    def oversubscription(self) -> float:
        """The down:up ratio the network is built with: the design's, or 1:1 where it is too
        small to have the oversubscribed tier (every endpoint on one leaf: no uplinks), as
        the estimator times it (the sizing's profile)."""
        if self.sizing.profile.oversubscription <= 1.0:
            return 1.0
        return self.design.oversubscription


class PartsKey(NamedTuple):
    """What a catalog's plans and cheapest links read of it: ``parts``, an id shared by every
    catalog with the same servers, NICs, switches and links but for their prices, and the
    links' list prices in the catalog's order (which links are cheapest), so the catalogs of
    a switch-price cut share both."""

    parts: int
    link_prices: tuple[int, ...]


# The optimizer's plans by design and the catalog's parts but their prices (parts_key):
# physical_plan reads no price, and the explanations re-solve on catalogs that differ only in
# prices (each switch-price cut of the min-time sensitivity): the medium min-time request
# (Llama 3 70B for $300M on roce-spectrum) planned 80,000 (design, catalog) pairs for 20,000
# distinct designs. check_bom and the enumerator call physical_plan itself, uncached.
_PLANS_CACHE_SIZE = 50_000
_plans: dict[tuple[Design, int], PhysicalPlan] = {}
# id(catalog) -> (the catalog, weakly; its PartsKey), and each distinct parts' id
_parts_of: dict[int, tuple[weakref.ref[Catalog], PartsKey]] = {}
_parts_ids: dict[tuple[object, ...], int] = {}
_next_parts_id = itertools.count()


def parts_key(catalog: Catalog) -> PartsKey:
    hit = _parts_of.get(id(catalog))
    if hit is not None and hit[0]() is catalog:
        return hit[1]
    if len(_parts_of) >= 4_096:  # each request's catalogs die with it: forget their ids
        _parts_of.clear()
    parts = tuple(
        tuple(replace(part, price_cents=0) for part in table)
        for table in (catalog.servers, catalog.nics, catalog.switches, catalog.links)
    )
    found = _parts_ids.get(parts)
    if found is None:
        if len(_parts_ids) >= 1_024:  # a long-lived service: start again (ids stay unique)
            _parts_ids.clear()
            _parts_of.clear()
            _plans.clear()
        found = _parts_ids[parts] = next(_next_parts_id)
    key = PartsKey(found, tuple(lk.price_cents for lk in catalog.links))
    _parts_of[id(catalog)] = (weakref.ref(catalog), key)
    return key


def planned(design: Design, catalog: Catalog) -> PhysicalPlan:
    """physical_plan, kept per design and the catalog's parts but their prices (the
    optimizer's searches and BOMs; an invalid design raises each time)."""
    key = (design, parts_key(catalog).parts)
    plan = _plans.get(key)
    if plan is None:
        if len(_plans) >= _PLANS_CACHE_SIZE:
            _plans.clear()
        plan = _plans[key] = physical_plan(design, catalog)
    return plan


def physical_plan(design: Design, catalog: Catalog) -> PhysicalPlan:
    """Exact quantities, lengths, racks and power of ``design`` built from ``catalog`` parts.

    Raises
    ------
    InvalidInput
        An unknown SKU, a NIC, switch or fabric that do not work together, more NICs than
        the server has slots, or a size the topology family cannot reach.
    """
    require_positive(design.nodes, "design.nodes")
    family = TOPOLOGIES.get(design.topology, "design.topology")
    if family.max_nodes is not None and design.nodes > family.max_nodes:
        msg = f"a {family.label} has at most {family.max_nodes} node(s), got {design.nodes}"
        raise InvalidInput(msg, field="design.nodes")
    FABRICS.get(design.fabric, "design.fabric")
    server = find(catalog.servers, design.server_sku, "design.server_sku")
    nic = _nic(design, server, catalog, family)
    if nic is not None and family.needs_forwarding:
        _require_forwarding(design, server, nic)
    switches = _switches(design, catalog, nic)
    speed_gbps = 0 if nic is None else nic.speed_gbps
    radix = min((ports_at_speed(s, speed_gbps) for s in switches), default=0)
    sizing = size_network(
        design.topology,
        design.endpoints,
        radix,
        oversubscription=design.oversubscription,
        rails=design.nics_per_node,
        oversubscribed_tier=design.oversubscribed_tier,
        params=design.topology_params,
        planes=1 if nic is None else nic.plane_count,  # issue 16 (fabric800)
        port_lanes=port_lanes(switches, speed_gbps) if speed_gbps else 1,
    )
    demands = _switch_demands(sizing, switches, speed_gbps)
    layout = design.layout
    bought = 0 if server.builtin_nics else design.nics_per_node  # built-in: inside the server
    nic_kw = 0.0 if nic is None else nic.power_w / 1000
    node_power_kw = server.power_kw + bought * nic_kw
    nodes_per_rack = layout.servers_per_rack(server, node_power_kw)  # a rack-scale unit: 1
    by_sku = {s.sku: s for s in switches}
    network_racks = sum(
        math.ceil(
            d.quantity
            / layout.per_rack(
                by_sku[d.sku].power_w / 1000, by_sku[d.sku].rack_units, f"switch {d.sku}"
            )
        )
        for d in demands
    )
    placement = place(
        layout,
        sizing,
        nodes=design.nodes,
        nodes_per_rack=nodes_per_rack,
        nodes_per_leaf=_nodes_per_leaf(design, sizing),
        network_racks=network_racks,
        liquid_cooled=layout.liquid_installed(server.cooling),  # issue 17 (facility)
        leaf_in_row=server.rack_scale,  # issue 16 (rackscale)
    )
    # A twin-port cage's links bundle as one cage-to-cage link like a faster port's (a
    # Quantum-2 twin-port cable carries two 400G links between the same two switches).
    cage_speeds = {d.tier: cage_gbps(by_sku[d.sku]) for d in demands}
    # A tier breaks its ports out only where its busiest switch needs more ports than it has
    # cages; otherwise every link may take a whole port, a straight cable included.
    broken_out = {d.tier: d.busiest_ports_used > by_sku[d.sku].ports for d in demands}

    # Every NIC port on one switch (a single switch): a twin-port NIC cage's two ports reach
    # one switch cage, so a twin-port cable may join them (a DGX, servers.nic_cage).
    first_tier = sizing.tiers[0].name if sizing.tiers else ""
    one_first_switch = sum(d.quantity for d in demands if d.tier == first_tier) == 1

    def ends_at(group: str) -> Callable[[int], tuple[str, str] | None]:
        """The group's ends for links at a speed: each switch's cage (issue 16, fabric800),
        shared by links slower than it at a twin-port cage, and where the tier needs the
        breakout."""
        return lambda gbps: tier_ends(
            sizing,
            group,
            {
                d.tier: switch_end(by_sku[d.sku], gbps, broken_out=broken_out[d.tier])
                for d in demands
            },
            host_end(nic, server, one_switch=one_first_switch),
        )

    links = tuple(
        LinkDemand(
            g.name,
            g.count // f,
            placement.length_m(g.name),
            speed_gbps * f,
            design.fabric,
            ends_at(g.name)(speed_gbps * f),
            _spare_ports(
                sizing,
                g.name,
                g.count // f,
                speed_gbps * f,
                ends_at(g.name)(speed_gbps * f),
                design.nics_per_node,
            ),
        )
        for g in sizing.link_groups
        for f in (
            buildable_lanes(
                sizing,
                g.name,
                cage_speeds,
                speed_gbps,
                placement.length_m(g.name),
                design.fabric,
                catalog,
                ends_at(g.name),
            ),
        )
    )
    builtin = (
        PartDemand(server.builtin_nic_sku, design.nodes * server.builtin_nics)
        if server.builtin_nics
        else None
    )
    return PhysicalPlan(
        design=design,
        servers=PartDemand(server.sku, design.nodes),
        nics=PartDemand(design.nic_sku, design.nodes * bought),
        switches=demands,
        links=links,
        placement=placement,
        rack_units=design.nodes * server.rack_units
        + sum(d.quantity * by_sku[d.sku].rack_units for d in demands),
        server_power_kw=design.nodes * server.power_kw,
        nic_power_kw=design.nodes * bought * nic_kw,
        switch_power_kw=sum(d.quantity * by_sku[d.sku].power_w for d in demands) / 1000,
        sizing=sizing,
        builtin_nics=builtin,
    )


def _spare_ports(
    sizing: NetworkSizing,
    group: str,
    count: int,
    speed_gbps: int,
    ends: tuple[str, str] | None,
    rails: int,
) -> int:
    """Empty ports of the whole parts that a group's ``count`` links at ``speed_gbps`` put in
    shared switch cages (an end ``...@C``, where every part that fits has C/speed ports, or a
    one-port cage of C Gb/s faster than the links that is not broken out, where a multi-port
    module shares it: the builder rounds only such modules, ``layout._caged``): per tier,
    each switch buying whole parts for its own ends. Nodes fill a fat-tree's leaves in
    order (each rail's own leaves on a rail-optimized one): ``layout.packed_spare_ports``;
    other tiers take their ends evenly (``layout.spare_ports``)."""
    tiers = GROUP_END_TIERS.get(group)
    if ends is None or tiers is None or not count or speed_gbps <= 0:
        return 0
    first = sizing.tiers[0].name if sizing.tiers else ""
    at: dict[str, list[int]] = {}  # tier -> [its ends, ports per part]
    for tier, end in zip(tiers, ends, strict=True):
        cage = int(end.partition("@")[2] or cage_of_end(end) or 0)
        if tier != "host" and cage > speed_gbps:
            name = first if tier == "first" else tier
            at.setdefault(name, [0, cage // speed_gbps])[0] += count
    total = 0
    for name, (n_ends, per_part) in at.items():
        tier_sizing = sizing.tier(name)
        if tier_sizing is None:
            continue
        if group == "node-leaf" and name == "leaf" and sizing.profile.endpoints_per_leaf:
            total += packed_spare_ports(
                n_ends,
                tier_sizing.switches,
                sizing.profile.endpoints_per_leaf,
                per_part,
                rails if sizing.profile.rail_optimized else 1,
            )
        else:
            total += spare_ports(n_ends, tier_sizing.switches, per_part)
    return total


def _nic(design: Design, server: Server, catalog: Catalog, family: TopologyFamily) -> Nic | None:
    """The design's NIC, checked against the server and fabric; None when a one-node design
    buys none. A server with built-in NICs is always built with them, all of them."""
    if server.builtin_nics and (
        design.nic_sku != server.builtin_nic_sku or design.nics_per_node != server.builtin_nics
    ):
        msg = (
            f"{server.sku} ships with {server.builtin_nics} x {server.builtin_nic_sku} "
            f"(servers.builtin_nics); a design with it uses those, got {design.nics_per_node} "
            f"x {design.nic_sku or 'no NIC'}"
        )
        raise InvalidInput(msg, field="design.nic_sku")
    if not family.scale_out:
        if not server.builtin_nics and (design.nic_sku or design.nics_per_node):
            msg = (
                f"a {family.label} cables no NIC, so it buys none; got "
                f"{design.nics_per_node} x {design.nic_sku}"
            )
            raise InvalidInput(msg, field="design.nics_per_node")
        if not server.builtin_nics:
            return None
        return find(catalog.nics, design.nic_sku, "design.nic_sku")
    require_positive(design.nics_per_node, "design.nics_per_node")
    nic = find(catalog.nics, design.nic_sku, "design.nic_sku")
    if design.nics_per_node > server.max_nics:
        msg = f"{design.nics_per_node} NICs per node exceed {server.sku}'s {server.max_nics} slots"
        raise InvalidInput(msg, field="design.nics_per_node")
    if not nic_fits_fabric(nic, design.fabric):
        msg = f"{nic.sku} speaks {', '.join(sorted(nic.protocols))}, not {design.fabric}"
        raise InvalidInput(msg, field="design.nic_sku")
    return nic


def _require_forwarding(design: Design, server: Server, nic: Nic) -> None:
    """A direct network relays traffic through its nodes: only hardware that forwards between
    its ports builds one, except two nodes cabled back to back (nothing to relay)."""
    if nic.forwarding or server.forwarding or design.nodes == BACK_TO_BACK_NODES:
        return
    msg = (
        f"a {design.nodes}-node {design.topology} relays traffic through its nodes, but "
        f"neither {nic.sku} nor {server.sku} forwards between ports (catalog column "
        f"forwarding); expected a switched topology or {BACK_TO_BACK_NODES} nodes back to back"
    )
    raise InvalidInput(msg, field="design.topology")


def _switches(design: Design, catalog: Catalog, nic: Nic | None) -> tuple[Switch, ...]:
    """The design's switch SKUs, each checked against the fabric and the NIC speed."""
    if TOPOLOGIES.get(design.topology, "design.topology").switchless:
        if design.switch_skus:
            msg = f"a {design.topology} is switchless; expected no switch SKUs"
            raise InvalidInput(msg, field="design.switch_skus")
        return ()
    if nic is None or not design.switch_skus:
        msg = f"a {design.topology} fabric needs at least one switch SKU"
        raise InvalidInput(msg, field="design.switch_skus")
    switches = tuple(
        find(catalog.switches, sku, "design.switch_skus") for sku in design.switch_skus
    )
    for switch in switches:
        if not switch_fits_fabric(switch, design.fabric):
            needs = FABRICS.get(design.fabric).switch_wording
            msg = (
                f"{switch.sku} is a {'lossless' if switch.lossless else 'lossy'} "
                f"{switch.fabric_family} switch; {design.fabric} needs {needs} switch"
            )
            raise InvalidInput(msg, field="design.switch_skus")
        if ports_at_speed(switch, nic.speed_gbps) == 0:
            msg = (
                f"{switch.sku}'s {switch.port_speed_gbps}G ports (breakout "
                f"{switch.breakout}) cannot serve {nic.sku}'s {nic.speed_gbps}G"
            )
            raise InvalidInput(msg, field="design.switch_skus")
    return switches


def _switch_demands(
    sizing: NetworkSizing, switches: tuple[Switch, ...], speed_gbps: int
) -> tuple[SwitchDemand, ...]:
    """Pair each sized tier with its SKU: one SKU for all tiers, or one per tier."""
    if len(switches) not in (1, len(sizing.tiers)):
        msg = (
            f"{len(switches)} switch SKUs for a {len(sizing.tiers)}-tier fabric; "
            "expected one for all tiers or one per tier"
        )
        raise InvalidInput(msg, field="design.switch_skus")
    per_tier = switches if len(switches) == len(sizing.tiers) else switches * len(sizing.tiers)
    return tuple(
        SwitchDemand(
            t.name,
            s.sku,
            t.switches,
            ports_at_speed(s, speed_gbps),
            t.down_ports_used + t.up_ports_used,
            t.busiest_switch_ports_used,
        )
        for t, s in zip(sizing.tiers, per_tier, strict=True)
    )


def _nodes_per_leaf(design: Design, sizing: NetworkSizing) -> int:
    """Nodes one first-tier switch serves: one port per node on a rail leaf, packed otherwise."""
    if sizing.profile.rail_optimized:
        return sizing.profile.endpoints_per_leaf
    if not sizing.profile.endpoints_per_leaf:  # no fabric
        return 1
    return math.ceil(sizing.profile.endpoints_per_leaf / design.nics_per_node)
