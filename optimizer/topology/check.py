"""Independent verifier of a bill of materials: lists every violation, never trusts the builder.

Quantities are recomputed from the family formulas and port conservation (every endpoint
has a link; no tier uses more ports than its switches have; each tier has the switches and
links its formula requires), not through ``physical_plan``/``size_network``: each family
module's ``required`` recounts them from its formulas, apart from its sizing. Shared with the
builder are only the specification-level rules: protocol and breakout (``compat``), the port
split and shape formulas of each family, and the layout's link lengths and rack packing.

Violation codes
---------------
design, unknown-sku, category, protocol, speed, server-count, nic-count, nic-slots,
switch-sku, switch-count, switch-ports, endpoint-unlinked, link-count, optic-side, optic-ports,
fiber-length, length, reach, stock, unit-price, extended-price, capex, network-cents, power,
racks, plane-split (issue 16: a multi-plane NIC's tiers not whole copies per plane),
optic-cage (issue 16: a switch-side module that fills no cage of the switches it joins),
switch-cage (a cable or module whose plug does not fit the form factor of the switch cages
it lands in, switches.form_factor),
breakout (straight cables slower than the switch port take a whole port each, more ports
than the tier's switches have; a fan-out cable whose wide end fills no switch cage there),
cable-cage (a cable plug that cannot fill the twin-port switch cage it lands in: a single
400G plug or a splitter's narrow end in a Quantum-2 cage),
nic-cage (a cable or host-side module whose plug does not fit the NIC's cage),
fiber-connector (an optic with no fiber of its connector in its link group, or fiber that
no optic there takes: an MPO-12 trunk for an MPO-16 DR8 or an LC duplex FR4),
no-forwarding (a direct network of more than two nodes whose NIC and server do not
forward), nic-uncabled (NIC ports bought that no link reaches; a one-node design's built-in
NICs are spare, and it may buy none), rack-power (a rack-scale unit drawing more than the
facility's stated kW per rack), cooling (a liquid-only server in an air-cooled facility),
builtin-nics (a server's built-in NICs listed in another count or SKU than its row ships).

A server's built-in NICs (``servers.builtin_nics``) are listed at $0 and are neither ordered
nor counted against stock or volume breaks; $0 is accepted for no other line.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from optimizer.catalog.model import Catalog, Link, Nic, Server, Switch
from optimizer.errors import InvalidInput
from optimizer.registry.topologies import BACK_TO_BACK_NODES, TOPOLOGIES
from optimizer.topology.bom import BillOfMaterials, BomLine
from optimizer.topology.compat import (
    cage_gbps,
    connectors_mate,
    fabric_family,
    fits_cage,
    fits_end,
    link_fits,
    nic_fits_fabric,
    port_lanes,
    ports_at_speed,
    switch_end,
    switch_fits_fabric,
)
from optimizer.topology.design import Design
from optimizer.topology.fat_tree import split_ports, tier_ratios
from optimizer.topology.layout import fiber_metres, group_ends, packed_spare_ports, spare_ports
from optimizer.topology.network import (
    GROUP_END_TIERS,
    NIC_ENDS_PER_LINK,
    Requirement,
    SizingArgs,
)
from optimizer.topology.plan import physical_plan

_TABLE_CATEGORIES = {
    "server": "servers",
    "nic": "nics",
    "switch": "switches",
    "cable": "links",
    "transceiver": "links",
    "fiber": "links",
}
_POWER_TOLERANCE_KW = 1e-6


@dataclass(frozen=True)
class Violation:
    code: str
    message: str


def check_bom(
    design: Design,
    bom: BillOfMaterials,
    catalog: Catalog,
    *,
    in_network_reduction: bool = False,
) -> list[Violation]:
    """Every way ``bom`` fails to build ``design`` from ``catalog``; empty when it is sound.

    ``in_network_reduction``: the design's time was estimated with the switches reducing in
    the network (issue 14, sharp), which every switch of the BOM must then offer."""
    out: list[Violation] = []
    parts = _parts(catalog)
    for line in bom.lines:
        table = _TABLE_CATEGORIES.get(line.category)
        if line.sku not in parts:
            out.append(Violation("unknown-sku", f"{line.sku} is not in the catalog"))
        elif table is None or parts[line.sku][0] != table:
            out.append(
                Violation(
                    "category",
                    f"{line.sku} is a {parts[line.sku][0]} row, listed as {line.category}",
                )
            )
    for sku in (design.server_sku, design.nic_sku, *design.switch_skus):
        if sku not in parts and (sku or design.nics_per_node):  # "": a one-node design's no NIC
            out.append(Violation("unknown-sku", f"the design's {sku} is not in the catalog"))
    # Lines the later checks can trust to name a row of the table their category says.
    known = [
        ln
        for ln in bom.lines
        if ln.sku in parts and parts[ln.sku][0] == _TABLE_CATEGORIES.get(ln.category)
    ]
    out += _check_nodes(design, known, catalog)
    out += _check_buildable(design, known, catalog)
    # Link lengths follow the layout model (a specification, like the reach rules).
    try:
        plan = physical_plan(design, catalog)
        lengths = dict(plan.placement.group_lengths_m)
        planned = {d.group: d.count * d.speed_gbps for d in plan.links}  # bandwidth, Gb/s
        speeds = {d.group: d.speed_gbps for d in plan.links}
    except InvalidInput as e:
        out.append(Violation("design", str(e)))
        lengths, planned, speeds = {}, {}, {}
    nic = next((n for n in catalog.nics if n.sku == design.nic_sku), None)
    server = next((s for s in catalog.servers if s.sku == design.server_sku), None)
    if nic is not None:
        host_cage = _host_cage_ports(server, nic)
        out += _check_network(design, known, catalog, nic)
        out += _check_planes(design, known, nic)  # issue 16 (fabric800)
        out += _check_cages(known, catalog)  # issue 16 (fabric800)
        out += _check_nic_cages(known, catalog, nic, server, host_cage)
        out += _check_plug_pairs(known, catalog, nic)
        out += _check_links(design, known, catalog, nic, lengths, planned, speeds, host_cage)
        out += _check_connectors(known, catalog)
    ordered = [ln for ln in known if not _included(ln, server)]
    out += _check_stock(ordered, parts)
    out += _check_prices(bom, known, catalog, parts, server)
    out += _check_racks(design, bom, known, catalog)
    out += _check_rack_scale(design, known, server)  # issue 16 (rackscale)
    if in_network_reduction:  # issue 14 (sharp)
        out += _check_in_network(known, catalog)
    return list(dict.fromkeys(out))  # one report per distinct finding


def _parts(catalog: Catalog) -> dict[str, tuple[str, Server | Nic | Switch | Link]]:
    table: dict[str, tuple[str, Server | Nic | Switch | Link]] = {}
    for name in ("servers", "nics", "switches", "links"):
        for row in getattr(catalog, name):
            table[row.sku] = (name, row)
    return table


def _sum(lines: list[BomLine], category: str, sku: str | None = None) -> int:
    return sum(
        ln.quantity for ln in lines if ln.category == category and (sku is None or ln.sku == sku)
    )


def _check_nodes(design: Design, lines: list[BomLine], catalog: Catalog) -> list[Violation]:
    out = []
    server = next((s for s in catalog.servers if s.sku == design.server_sku), None)
    servers = _sum(lines, "server", design.server_sku)
    if servers != design.nodes or _sum(lines, "server") != servers:
        out.append(
            Violation(
                "server-count",
                f"{_sum(lines, 'server')} servers listed "
                f"({servers} of {design.server_sku}), the design has "
                f"{design.nodes}",
            )
        )
    nics = _sum(lines, "nic", design.nic_sku)
    expected = design.nodes * design.nics_per_node
    if nics != expected or _sum(lines, "nic") != nics:
        out.append(
            Violation(
                "nic-count",
                f"{_sum(lines, 'nic')} NICs listed ({nics} of "
                f"{design.nic_sku}), expected {expected}",
            )
        )
    if server is not None and design.nics_per_node > server.max_nics:
        out.append(
            Violation(
                "nic-slots",
                f"{design.nics_per_node} NICs per node exceed "
                f"{server.sku}'s {server.max_nics} slots",
            )
        )
    nic = next((n for n in catalog.nics if n.sku == design.nic_sku), None)
    cabled = design.topology not in TOPOLOGIES.names() or TOPOLOGIES.get(design.topology).scale_out
    if nic is not None and cabled and not nic_fits_fabric(nic, design.fabric):
        # (a one-node design cables no NIC: its built-in ones speak what they speak)
        out.append(Violation("protocol", f"NIC {nic.sku} does not speak {design.fabric}"))
    return out


def _included(line: BomLine, server: Server | None) -> bool:
    """A NIC line at $0 that the design's server ships with (priced inside the server)."""
    return (
        server is not None
        and server.builtin_nics > 0
        and line.category == "nic"
        and line.sku == server.builtin_nic_sku
        and line.unit_price_cents == 0
    )


def _check_buildable(design: Design, lines: list[BomLine], catalog: Catalog) -> list[Violation]:
    """Direct networks only on forwarding hardware (or two nodes back to back); every NIC port
    bought is cabled; a one-node design has no fabric and buys no NIC."""
    try:
        family = TOPOLOGIES.get(design.topology, "design.topology")
    except InvalidInput as e:
        return [Violation("design", str(e))]
    server = next((s for s in catalog.servers if s.sku == design.server_sku), None)
    nic = next((n for n in catalog.nics if n.sku == design.nic_sku), None)
    out = []
    if family.needs_forwarding and design.nodes != BACK_TO_BACK_NODES:
        forwards = (nic is not None and nic.forwarding) or (
            server is not None and server.forwarding
        )
        if not forwards:
            out.append(
                Violation(
                    "no-forwarding",
                    f"a {design.nodes}-node {design.topology} needs nodes that relay traffic; "
                    f"{design.nic_sku} and {design.server_sku} do not forward between ports",
                )
            )
    nics = [ln for ln in lines if ln.category == "nic"]
    if not family.scale_out:
        bought = sum(ln.quantity for ln in nics if not _included(ln, server))
        if bought:
            out.append(
                Violation(
                    "nic-uncabled",
                    f"{bought} NICs bought for a {family.label}: nothing to cable them to",
                )
            )
        for ln in lines:
            if ln.category in ("switch", "cable", "transceiver", "fiber"):
                code = "switch-count" if ln.category == "switch" else "link-count"
                out.append(Violation(code, f"{ln.sku}: a {family.label} has no fabric"))
        return out
    # issue 16 (fabric800): one cabled port per NIC and fabric plane (Design.endpoints per plane)
    ports = sum(ln.quantity * _nic_planes(ln.sku, catalog) for ln in nics)
    for ln in nics:
        part = next(n for n in catalog.nics if n.sku == ln.sku)
        if part.ports > part.plane_count and "spare" not in ln.source:
            out.append(
                Violation(
                    "nic-uncabled",
                    f"{ln.sku} has {part.ports} ports, one cabled per NIC; the line does not "
                    "say why the others are spare",
                )
            )
    links = _links_per_group(lines, catalog, nic.speed_gbps if nic is not None else 1)
    cabled = sum(links[g] * ends for g, ends in NIC_ENDS_PER_LINK.items())
    if cabled < ports:
        out.append(
            Violation(
                "nic-uncabled",
                f"{ports} NIC ports bought, links reach {cabled}: {ports - cabled} uncabled",
            )
        )
    return out


def _check_network(
    design: Design, lines: list[BomLine], catalog: Catalog, nic: Nic
) -> list[Violation]:
    """Switch protocol, speed, counts and ports per tier; links per group (family formulas)."""
    out = []
    switches = {s.sku: s for s in catalog.switches}
    radix: dict[str, int] = {}
    count: Counter[str] = Counter()
    tier_sku: dict[str, Switch] = {}  # issue 16 (fabric800): for the port wording
    for ln in (ln for ln in lines if ln.category == "switch"):
        sw = switches[ln.sku]
        tier_sku[ln.tier] = sw
        if sw.sku not in design.switch_skus:
            out.append(Violation("switch-sku", f"switch {sw.sku} is not one the design names"))
        if not switch_fits_fabric(sw, design.fabric):
            why = f"({sw.fabric_family}, lossless={sw.lossless}) cannot carry {design.fabric}"
            out.append(Violation("protocol", f"switch {sw.sku} {why}"))
        ports = ports_at_speed(sw, nic.speed_gbps)
        if ports == 0:
            out.append(Violation("speed", f"switch {sw.sku} has no {nic.speed_gbps}G ports"))
        radix[ln.tier] = min(radix.get(ln.tier, ports), ports)
        count[ln.tier] += ln.quantity
    links = _links_per_group(lines, catalog, nic.speed_gbps)
    design_radix = [
        ports_at_speed(switches[sku], nic.speed_gbps)
        for sku in design.switch_skus
        if sku in switches
    ]
    named = [switches[sku] for sku in design.switch_skus if sku in switches]
    try:
        need = _required(
            design,
            min(design_radix, default=0),
            nic.plane_count,
            port_lanes(named, nic.speed_gbps),
        )
    except InvalidInput as e:
        return [*out, Violation("design", str(e))]
    for tier, switches_needed in need.switches.items():
        if count[tier] < switches_needed:
            out.append(
                Violation(
                    "switch-count",
                    f"{count[tier]} {tier} switches, the {design.topology} needs {switches_needed}",
                )
            )
    for tier in count.keys() - need.switches.keys():
        out.append(Violation("switch-count", f"{design.topology} has no {tier} tier"))
    for group, links_needed in need.links.items():
        code = "endpoint-unlinked" if group == "node-leaf" else "link-count"
        if links[group] < links_needed:
            out.append(Violation(code, f"{links[group]} {group} links, {links_needed} needed"))
    packing = _leaf_packing(design, catalog, nic)
    for tier, groups in need.ports.items():
        used = sum(
            _ports_of(g, links[g], ends, tier, need.links.get(g, 0), lines, catalog, nic, packing)
            for g, ends in groups
        )
        have = count[tier] * radix.get(tier, 0)
        if used > have:
            out.append(
                Violation(
                    "switch-ports",
                    _ports_wording(tier, used, count[tier], have, tier_sku, nic.speed_gbps),
                )
            )
        elif tier in tier_sku:
            sw = tier_sku[tier]
            straight = _straight_cables(lines, catalog, sw.port_speed_gbps)
            whole = sum(straight[g] * ends for g, ends in groups)
            out += _check_whole_ports(tier, whole, used, count[tier], sw, nic.speed_gbps)
    return out + _check_cable_plugs(lines, catalog, tier_sku)


def _straight_cables(lines: list[BomLine], catalog: Catalog, below_gbps: int) -> Counter[str]:
    """Straight cables slower than ``below_gbps`` per group: each takes a whole switch port."""
    parts = {lk.sku: lk for lk in catalog.links}
    out: Counter[str] = Counter()
    for ln in (ln for ln in lines if ln.category == "cable" and ln.sku in parts):
        part = parts[ln.sku]
        if part.module_ports == 1 and part.speed_gbps < below_gbps:
            out[ln.tier] += ln.quantity
    return out


def _check_whole_ports(
    tier: str, whole: int, used: int, switches: int, sw: Switch, speed_gbps: int
) -> list[Violation]:
    """The tier's physical ports: ``whole`` straight cable ends slower than the port take a
    whole port each (nothing splits it); the other ``used`` NIC-speed ports share broken-out
    ports ``port_speed / speed`` each (a fan-out cable or a twin-port module fills one)."""
    lanes = max(1, sw.port_speed_gbps // speed_gbps)
    if not whole:
        return []
    ports = whole + -(-max(0, used - whole) // lanes)
    if ports <= switches * sw.ports:
        return []
    return [
        Violation(
            "breakout",
            f"{tier} tier: {whole} straight cable ends slower than {sw.sku}'s "
            f"{sw.port_speed_gbps}G ports take a whole port each; with its other links that "
            f"is {ports} ports, its {switches} switches have {switches * sw.ports} "
            "(a fan-out cable or a twin-port module fills a broken-out port, "
            "links.ports_per_module)",
        )
    ]


# issue 16 (fabric800)
def _ports_wording(
    tier: str, used: int, switches: int, have: int, tier_sku: dict[str, Switch], speed_gbps: int
) -> str:
    """A tier's port overflow in the NIC-speed ports it is counted in, saying how a faster
    switch port breaks out (so 1,024 "ports" on 64-port switches reads right)."""
    sw = tier_sku.get(tier)
    if sw is None or sw.port_speed_gbps == speed_gbps:
        return f"{tier} tier uses {used} ports, its {switches} switches have {have}"
    lanes = sw.port_speed_gbps // speed_gbps
    return (
        f"{tier} tier uses {used} ports at {speed_gbps}G (an {sw.port_speed_gbps}G link takes "
        f"{lanes}), its {switches} {sw.sku} switches have {have} ({sw.ports} x "
        f"{sw.port_speed_gbps}G ports each, broken out {lanes} x {speed_gbps}G)"
    )


# end issue 16 (fabric800)


def _host_cage_ports(server: Server | None, nic: Nic) -> int:
    """NIC ports one of the server's cages holds: 2 where the design's NIC is the server's
    built-in one in twin-port cages (``servers.nic_cage``, a DGX's OSFP-twin), else 1."""
    if server is None or server.builtin_nic_sku != nic.sku:
        return 1
    return server.nic_ports_per_cage


def _check_nic_cages(
    lines: list[BomLine], catalog: Catalog, nic: Nic, server: Server | None, host_cage: int = 1
) -> list[Violation]:
    """A cable or host-side module of a group that ends at the NICs has the NIC cage's form
    factor (``compat.fits_cage``: a QSFP112 module does not go into an OSFP cage). Where the
    server puts its NIC ports in twin-port cages (``servers.nic_cage``: a DGX's OSFP-twin,
    2 x 400G), each cage takes only a whole twin-port plug (``nic-cage``): a twin-port module
    or a straight cable of the cage's speed, never a single-port 400G module, a 400G cable
    nor a splitter's 400G end."""
    parts = {lk.sku: lk for lk in catalog.links}
    if host_cage > 1 and server is not None:  # the server's cage, not the NIC card's
        return _check_twin_host_cages(lines, parts, nic, server, host_cage)
    out = []
    for ln in (ln for ln in lines if ln.category in ("cable", "transceiver")):
        part = parts[ln.sku]
        at_host = "host" in GROUP_END_TIERS.get(ln.tier, ())
        if (part.kind == "transceiver" and part.fits_side != "host") or not at_host:
            continue
        if not any(fits_cage(plug, nic.form_factor) for plug in _end_plugs(part, True)):
            out.append(
                Violation(
                    "nic-cage",
                    f"{part.sku} ({part.form_factor} plug) on {ln.tier} does not fit "
                    f"{nic.sku}'s {nic.form_factor} cage (nics.form_factor)",
                )
            )
    return out


def _check_twin_host_cages(
    lines: list[BomLine], parts: dict[str, Link], nic: Nic, server: Server, per_cage: int
) -> list[Violation]:
    """Every plug at a host end of a twin-port server cage fills the whole cage: a cable of
    the cage's speed and one plug (a twin-port cable), or a module of ``per_cage`` ports."""
    cage = nic.speed_gbps * per_cage
    out = []
    for ln in (ln for ln in lines if ln.category in ("cable", "transceiver")):
        part = parts[ln.sku]
        if "host" not in GROUP_END_TIERS.get(ln.tier, ()):
            continue
        whole = per_cage if part.kind == "transceiver" else 1
        cable = part.kind not in ("transceiver", "fiber")
        if cable and part.speed_gbps == cage and part.module_ports == 1:
            if _first_tier_switches(lines) > 1:
                out.append(
                    Violation(
                        "nic-cage",
                        f"{part.sku} on {ln.tier}: a twin-port cable from {server.sku}'s "
                        f"twin-port cage reaches one switch cage, yet its NIC ports spread "
                        "over several switches (servers.nic_cage)",
                    )
                )
            continue
        if part.kind == "fiber" or (part.speed_gbps == cage and part.module_ports == whole):
            continue  # fiber, or a twin-port module: the whole cage
        if part.kind == "transceiver":
            plug = f"a {part.module_ports}-port {part.speed_gbps}G module"
        elif part.module_ports > 1:
            plug = f"a splitter's {part.port_speed_gbps}G end"
        else:
            plug = f"a {part.speed_gbps}G plug"
        out.append(
            Violation(
                "nic-cage",
                f"{part.sku} on {ln.tier}: {plug} cannot fill {server.sku}'s twin-port "
                f"{server.nic_cage} cage ({per_cage} x {nic.speed_gbps}G, servers.nic_cage); "
                "it takes a twin-port module or a twin-port cable",
            )
        )
    return out


def _first_tier_switches(lines: list[BomLine]) -> int:
    """Switches of the tier hosts plug into (leaf, or router where there is no leaf)."""
    count: Counter[str] = Counter()
    for ln in (ln for ln in lines if ln.category == "switch"):
        count[ln.tier] += ln.quantity
    return count["leaf"] if "leaf" in count else count["router"]


def _twin_cable_fits(
    lines: list[BomLine], parts: dict[str, Link], nic: Nic, host_cage: int
) -> Callable[[BomLine, Link], bool]:
    """Whether a cable line is a twin-port cable from a server's twin-port NIC cage (a DGX)
    to one switch: a one-plug cable at the cage's speed on a host group, where every NIC
    port lands on one switch (so both ports of a cage reach one switch cage)."""
    one_switch = host_cage > 1 and _first_tier_switches(lines) == 1

    def fits(ln: BomLine, part: Link) -> bool:
        return (
            one_switch
            and ln.category == "cable"
            and part.module_ports == 1
            and part.speed_gbps == nic.speed_gbps * host_cage
            and "host" in GROUP_END_TIERS.get(ln.tier, ())
        )

    return fits


def _check_cable_plugs(
    lines: list[BomLine], catalog: Catalog, tier_sku: dict[str, Switch]
) -> list[Violation]:
    """Every cable plug fills the switch cage it lands in. A fan-out cable's wide end fills
    one cage of its speed at an end of its group (``breakout``). A cage of several ports (a
    Quantum-2 twin-port cage, 2 x 400G) takes only a plug of the whole cage (``cable-cage``):
    a straight cable of the cage's speed at either end, a fan-out cable's one wide end;
    never a single-port plug nor a splitter's narrow end (hardware.md sections 3-4)."""
    parts = {lk.sku: lk for lk in catalog.links}
    first = "leaf" if "leaf" in tier_sku else "router"  # the tier hosts plug into
    out = []
    for ln in (ln for ln in lines if ln.category == "cable" and ln.sku in parts):
        part = parts[ln.sku]
        tiers = GROUP_END_TIERS.get(ln.tier, ())
        ends = [tier_sku.get(first if t == "first" else t) for t in tiers if t != "host"]
        there = [sw for sw in ends if sw is not None]
        fan_out = part.module_ports > 1
        if fan_out and not any(cage_gbps(sw) == part.speed_gbps for sw in there):
            cages = ", ".join(sorted({f"{sw.sku} {cage_gbps(sw)}G" for sw in there})) or "none"
            out.append(
                Violation(
                    "breakout",
                    f"{part.sku} is a fan-out cable ({part.speed_gbps}G to {part.module_ports} "
                    f"x {part.port_speed_gbps}G); its {part.speed_gbps}G end fills no switch "
                    f"cage on {ln.tier} (cages there: {cages})",
                )
            )
        twins = [sw for sw in there if (sw.ports_per_cage or 1) > 1]
        wide_plugs = 1 if fan_out else 2
        if any(cage_gbps(sw) != part.speed_gbps for sw in twins) or len(twins) > wide_plugs:
            cages = ", ".join(sorted({f"{sw.sku} {cage_gbps(sw)}G" for sw in twins}))
            plug = "a splitter's narrow end" if fan_out else f"a {part.speed_gbps}G plug"
            out.append(
                Violation(
                    "cable-cage",
                    f"{part.sku} on {ln.tier}: {plug} cannot fill a twin-port cage there "
                    f"({cages} per cage, switches.ports_per_cage); a twin-port cage takes a "
                    "twin-port module, a splitter's twin-port end or a twin-port cable",
                )
            )
    return out


def _required(design: Design, k: int, planes: int = 1, lanes: int = 1) -> Requirement:
    """Minimum switches per tier and links per group, straight from each family's formulas
    (its module's ``required``, which recomputes them without the builder's sizing), times
    the NIC's fabric planes (each plane is a whole copy of the network)."""
    family = TOPOLOGIES.get(design.topology, "design.topology")
    one = family.required(
        SizingArgs(
            design.endpoints,
            k,
            design.oversubscription,
            design.nics_per_node,
            design.oversubscribed_tier,
            design.topology_params,
            lanes,
        )
    )
    return _times_planes(one, planes)


# issue 16 (fabric800)
def _nic_planes(sku: str, catalog: Catalog) -> int:
    """Fabric planes of the NIC ``sku`` (1 for an unknown SKU: reported elsewhere)."""
    return next((n.plane_count for n in catalog.nics if n.sku == sku), 1)


def _times_planes(one: Requirement, planes: int) -> Requirement:
    """``planes`` independent copies of one plane's minimum (ports per link are unchanged)."""
    if planes == 1:
        return one
    return Requirement(
        {tier: n * planes for tier, n in one.switches.items()},
        {group: n * planes for group, n in one.links.items()},
        one.ports,
    )


def _check_planes(design: Design, lines: list[BomLine], nic: Nic) -> list[Violation]:
    """Every plane is a copy of the same network: each tier's switches split evenly over the
    planes (a tier of 3 switches cannot be two identical planes)."""
    planes = nic.plane_count
    if planes == 1:
        return []
    count: Counter[str] = Counter()
    for ln in (ln for ln in lines if ln.category == "switch"):
        count[ln.tier] += ln.quantity
    return [
        Violation(
            "plane-split",
            f"{n} {tier} switches do not split into {planes} identical planes of "
            f"{design.nic_sku} (nics.planes)",
        )
        for tier, n in sorted(count.items())
        if n % planes
    ]


def _check_in_network(lines: list[BomLine], catalog: Catalog) -> list[Violation]:
    """issue 14 (sharp): a design credited with in-network reduction has switches, and every
    one of them offers it (switches.in_network_reduction)."""
    offers = {s.sku: s.in_network_reduction for s in catalog.switches}
    switch_lines = [ln for ln in lines if ln.category == "switch"]
    if not switch_lines:
        return [Violation("in-network", "in-network reduction claimed without any switch")]
    return [
        Violation(
            "in-network",
            f"switch {ln.sku} does not offer in-network reduction "
            "(switches.in_network_reduction), yet the design's time assumes it",
        )
        for ln in switch_lines
        if not offers.get(ln.sku, False)
    ]


def _check_cages(lines: list[BomLine], catalog: Catalog) -> list[Violation]:
    """A cable or module at a switch end of its group plugs into the switches' cages: of
    their form factor (``switch-cage``, ``switches.form_factor``: a QSFP-DD plug does not go
    into an OSFP800 cage; a cable at every switch it joins, a module at one of them), and a
    switch-side module fills one cage where the switch states ``ports_per_cage``
    (``optic-cage``: a 1.6T twin-port module fits a Q3400 cage, not an SN5600's)."""
    switches = {s.sku: s for s in catalog.switches}
    parts = {lk.sku: lk for lk in catalog.links}
    at_tier = {ln.tier: switches[ln.sku] for ln in lines if ln.category == "switch"}
    first = "leaf" if "leaf" in at_tier else "router"  # the tier hosts plug into
    plugs = [ln for ln in lines if ln.category in ("cable", "transceiver")]
    switch_side = {ln.tier for ln in plugs if parts[ln.sku].fits_side == "switch"}
    out = []
    for ln in plugs:
        part = parts[ln.sku]
        tiers = GROUP_END_TIERS.get(ln.tier, ())
        ends = [at_tier.get(first if t == "first" else t) for t in tiers if t != "host"]
        there = [sw for sw in ends if sw is not None]
        if not there or not _at_a_switch(part, "host" in tiers, ln.tier in switch_side):
            continue
        at_switch = _end_plugs(part, False, host_group="host" in tiers)
        fitting = [
            sw
            for sw in there
            if any(fits_cage(plug, sw.form_factor or "", top="finned") for plug in at_switch)
        ]
        if len(fitting) < (len(there) if part.kind != "transceiver" else 1):
            misfits = sorted({f"{sw.sku} {sw.form_factor}" for sw in there if sw not in fitting})
            out.append(
                Violation(
                    "switch-cage",
                    f"{part.sku} ({part.form_factor} plug) on {ln.tier} does not fit the "
                    f"cages of {', '.join(misfits)} (switches.form_factor)",
                )
            )
            continue
        caged = [sw for sw in fitting if sw.ports_per_cage is not None]
        if part.fits_side != "switch" or not caged:
            continue
        if not any(fits_end(part, switch_end(sw)) for sw in caged):
            cages = ", ".join(sorted({f"{sw.sku} {cage_gbps(sw)}G" for sw in caged}))
            out.append(
                Violation(
                    "optic-cage",
                    f"{part.sku} ({part.speed_gbps}G module) on {ln.tier} fills no cage of "
                    f"the switches there ({cages} per cage, switches.ports_per_cage)",
                )
            )
    return out


def _end_plugs(part: Link, at_host: bool, *, host_group: bool = True) -> tuple[str, ...]:
    """The plugs ``part`` may have at a host end (``at_host``) or a switch end of its group:
    a module its one; a cable of two plugs (``Link.plugs``) either of them, but a fan-out
    cable's narrow one at the host and its wide one at the switch a host plugs into
    (``compat.cable_orientations``). Both ends at once: ``_check_plug_pairs``."""
    if part.kind == "transceiver":
        return (part.form_factor,)
    wide, narrow = part.plugs
    if part.module_ports > 1 and host_group:
        return (narrow,) if at_host else (wide,)
    return (wide, narrow)


def _check_plug_pairs(lines: list[BomLine], catalog: Catalog, nic: Nic) -> list[Violation]:
    """A cable of two plugs (``links.form_factor`` A/B) has each in a cage it fits at once
    (``cable-plugs``): a fan-out cable's wide plug at a switch, a straight cable either way
    round. The cage checks take each end alone, which a cable of two plugs can pass with
    the same plug at both (a QSFP112 NIC and a QSFP-DD switch for an OSFP/QSFP112 cable)."""
    switches = {s.sku: s for s in catalog.switches}
    parts = {lk.sku: lk for lk in catalog.links}
    at_tier = {ln.tier: switches[ln.sku] for ln in lines if ln.category == "switch"}
    first = "leaf" if "leaf" in at_tier else "router"  # the tier hosts plug into
    out = []
    for ln in lines:
        part = parts[ln.sku] if ln.category == "cable" else None
        if part is None or part.plugs[0] == part.plugs[1] or ln.tier not in GROUP_END_TIERS:
            continue
        ends: list[tuple[str, str]] = []  # (top of the cage's plugs, its form factor)
        for tier in GROUP_END_TIERS[ln.tier]:
            if tier == "host":
                ends.append(("flat", nic.form_factor))
            else:
                sw = at_tier.get(first if tier == "first" else tier)
                ends.append(("finned", sw.form_factor or "" if sw is not None else ""))
        wide, narrow = part.plugs
        ways = [(wide, narrow), (narrow, wide)]  # the wide plug at the first end, or second
        if part.module_ports > 1:
            ways = [way for way, (top, _) in zip(ways, ends, strict=True) if top == "finned"]
        if not any(
            all(fits_cage(plug, form, top=top) for plug, (top, form) in zip(way, ends, strict=True))
            for way in ways
        ):
            cages = " and ".join(f"{form or 'unstated'}" for _, form in ends)
            out.append(
                Violation(
                    "cable-plugs",
                    f"{part.sku} ({wide} and {narrow} plugs) on {ln.tier} cannot sit with "
                    f"each plug in a cage it fits: the cages are {cages} (links.form_factor)",
                )
            )
    return out


def _at_a_switch(part: Link, host_end: bool, group_has_switch_side: bool) -> bool:
    """A cable plugs into every switch its group joins; a module by its side, one that fits
    any end sitting at the switch unless its host-to-switch group buys switch-side modules."""
    if part.kind != "transceiver":
        return True
    if part.fits_side != "any":
        return part.fits_side == "switch"
    return not (host_end and group_has_switch_side)


# end issue 16 (fabric800)


def _links_per_group(lines: list[BomLine], catalog: Catalog, speed_gbps: int) -> Counter[str]:
    """Links each group's lines build, counted at the endpoint speed ``speed_gbps`` (as the
    family formulas count them): a cable per its speed (an 800G uplink is two 400G links);
    optics by bandwidth, every module's ports over the two ends of a link (a twin-port
    2 x 400G module is two 400G ends, a host-side 400G module one)."""
    parts = {lk.sku: lk for lk in catalog.links}
    links: Counter[str] = Counter()
    optic_gbps: Counter[str] = Counter()
    for ln in lines:
        if ln.category == "cable" and ln.sku in parts:  # an 800G uplink cable is two 400G
            links[ln.tier] += ln.quantity * max(1, parts[ln.sku].speed_gbps // speed_gbps)
        elif ln.category == "transceiver" and ln.sku in parts:
            optic_gbps[ln.tier] += ln.quantity * parts[ln.sku].speed_gbps
    for group, gbps in optic_gbps.items():
        links[group] += gbps // (2 * speed_gbps)
    return links


def _check_links(
    design: Design,
    lines: list[BomLine],
    catalog: Catalog,
    nic: Nic,
    lengths: dict[str, float],
    planned: dict[str, int],
    speeds: dict[str, int],
    host_cage: int = 1,
) -> list[Violation]:
    """Protocol, speed and reach of each link line; optics come in pairs with enough fiber.
    ``host_cage``: NIC ports per server cage (2 at a DGX's twin-port cage, whose host ends
    take twin-port modules of the switch's kind)."""
    out = []
    parts = {lk.sku: lk for lk in catalog.links}
    optics: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # group -> [transceivers, fiber m]
    twin_cable = _twin_cable_fits(lines, parts, nic, host_cage)
    packing = _leaf_packing(design, catalog, nic)
    for ln in (ln for ln in lines if ln.category in ("cable", "transceiver", "fiber")):
        part = parts[ln.sku]
        speed = speeds.get(ln.tier, nic.speed_gbps)  # uplinks may run at the port speed
        if twin_cable(ln, part):
            speed = 2 * speed  # two links in one twin-port cable, DGX cage to switch cage
        if not link_fits(part, speed, design.fabric):
            code = "protocol" if part.fabric_family not in ("any", _family(design)) else "speed"
            out.append(
                Violation(
                    code,
                    f"{part.sku} ({part.fabric_family}, {part.speed_gbps}G) "
                    f"does not fit {speed}G {design.fabric} on {ln.tier}",
                )
            )
        need_m = lengths.get(ln.tier)
        if need_m is None and lengths:
            out.append(
                Violation(
                    "link-count",
                    f"{ln.sku} serves {ln.tier!r}, which the {design.topology} does not have",
                )
            )
            continue
        if need_m is None:
            continue
        if ln.length_m is None or ln.length_m < need_m:
            out.append(
                Violation(
                    "length",
                    f"{ln.sku} on {ln.tier} is listed for {ln.length_m} m, "
                    f"the links run {need_m} m",
                )
            )
        if part.reach_m < need_m:
            out.append(
                Violation(
                    "reach", f"{part.sku} reaches {part.reach_m} m, {ln.tier} links run {need_m} m"
                )
            )
        slot = 0 if ln.category == "transceiver" else 1
        if ln.category != "cable":
            optics[ln.tier][slot] += ln.quantity
    for group, (_, metres) in optics.items():
        bandwidth = planned.get(group, 0) // nic.speed_gbps
        links, optical = _group_links(design, group, lines, catalog, nic, bandwidth)
        # issue: twin-port cages take whole modules per switch. Where cables share the group
        # the split of ends between them is the buyer's, so the spare is allowed, not required:
        # as many as the group's links leave (a splitter's wide end fills a cage with two of
        # them, so a switch's optics are as odd as its links: the builder's count).
        spare = sum(
            _cage_spare(group, optical, lines, catalog, nic.speed_gbps, packing=packing).values()
        )
        allowed = _cage_spare(
            group, links, lines, catalog, nic.speed_gbps, twin_only=False, packing=packing
        )
        mixed = any(ln.tier == group and ln.category == "cable" for ln in lines)
        if _modules_share_cages(group, lines, parts, speeds.get(group, nic.speed_gbps), nic):
            spare = sum(allowed.values())  # a one-port cage's module: whole ones per switch too
        out += _check_optic_ends(
            group,
            lines,
            parts,
            nic.speed_gbps,
            optical,
            0 if mixed else spare,
            sum(allowed.values()),
            host_cage,
        )
        # Fiber runs per physical link: an uplink at f x the NIC speed is f endpoint links.
        physical = -(-optical * nic.speed_gbps // speeds.get(group, nic.speed_gbps))
        needed_m = physical * fiber_metres(lengths.get(group, 0.0))
        if metres < needed_m:
            out.append(
                Violation("fiber-length", f"{metres} m of fiber on {group}, {needed_m} m needed")
            )
    return out


def _modules_share_cages(
    group: str, lines: list[BomLine], parts: dict[str, Link], speed_gbps: int, nic: Nic
) -> bool:
    """Every module that may sit at a switch end of ``group`` serves several of its links at
    the NIC speed: then each switch's cages take whole modules for its own ends, a one-port
    800G cage's twin-port 2 x 400G module as much as a twin-port cage's (``layout._caged``)."""
    if speed_gbps != nic.speed_gbps:  # bundled links: one module per link end
        return False
    at_switch = [
        parts[ln.sku]
        for ln in lines
        if ln.tier == group and ln.category == "transceiver" and parts[ln.sku].fits_side != "host"
    ]
    return bool(at_switch) and all(
        tx.module_ports > 1 and tx.port_speed_gbps == speed_gbps for tx in at_switch
    )


def _check_connectors(lines: list[BomLine], catalog: Catalog) -> list[Violation]:
    """Each optic has fiber of its connector in its link group, and each fiber an optic there
    that takes it (``links.connector``; unstated mates any)."""
    parts = {lk.sku: lk for lk in catalog.links}
    groups: dict[str, tuple[list[Link], list[Link]]] = defaultdict(lambda: ([], []))
    for ln in lines:
        if ln.category in ("transceiver", "fiber"):
            groups[ln.tier][ln.category == "fiber"].append(parts[ln.sku])
    out = []
    for group, (optics, fibers) in groups.items():
        for mine, theirs in ((optics, fibers), (fibers, optics)):
            for part in mine:
                if theirs and not any(connectors_mate(part, other) for other in theirs):
                    there = ", ".join(sorted({f"{o.sku} {o.connector}" for o in theirs}))
                    out.append(
                        Violation(
                            "fiber-connector",
                            f"{part.sku} ({part.connector}) on {group} mates none of {there} "
                            "(links.connector)",
                        )
                    )
    return out


def _group_links(
    design: Design, group: str, lines: list[BomLine], catalog: Catalog, nic: Nic, planned: int
) -> tuple[int, int]:
    """(links of ``group``, those that cables leave to optics), at the endpoint speed: the
    family formula's minimum, or the layout's count where the family cables more (a
    dragonfly's spare global ports)."""
    switches = [s for s in catalog.switches if s.sku in design.switch_skus]
    radix = min((ports_at_speed(s, nic.speed_gbps) for s in switches), default=0)
    try:
        lanes = port_lanes(switches, nic.speed_gbps)
        needed = max(planned, _required(design, radix, nic.plane_count, lanes).links.get(group, 0))
    except InvalidInput:
        needed = planned
    cables = _links_per_group(
        [ln for ln in lines if ln.tier == group and ln.category == "cable"],
        catalog,
        nic.speed_gbps,
    )[group]
    return needed, max(0, needed - cables)


def _cage_spare(
    group: str,
    n_links: int,
    lines: list[BomLine],
    catalog: Catalog,
    speed_gbps: int,
    *,
    twin_only: bool = True,
    packing: tuple[int, int] | None = None,
) -> dict[str, int]:
    """Per switch tier of ``group``, the module ports its ``n_links`` links at ``speed_gbps``
    leave empty in twin-port cages (``switches.ports_per_cage``): a twin-port part sits in
    one cage of one switch, so each switch buys whole parts for its own ends, spread as
    evenly as the tier's switches (read from the BOM's switch lines) allow
    (``layout.spare_ports``). Empty where the group runs at the cage's speed (bundled).
    ``twin_only=False`` also counts one-port cages faster than the links (a broken-out
    800G port: the builder breaks a tier out only where it must, so this is an allowance).
    ``packing`` (ends a leaf holds, rails): node-leaf ends fill the leaves in order, each
    rail's own on a rail-optimized fabric (``_leaf_packing``), not evenly."""
    switches = {s.sku: s for s in catalog.switches}
    count: Counter[str] = Counter()
    at_tier: dict[str, Switch] = {}
    for ln in (ln for ln in lines if ln.category == "switch" and ln.sku in switches):
        count[ln.tier] += ln.quantity
        at_tier[ln.tier] = switches[ln.sku]
    first = "leaf" if "leaf" in at_tier else "router"
    ends = Counter(first if t == "first" else t for t in GROUP_END_TIERS.get(group, ()))
    out = {}
    for tier, per_link in ends.items():
        sw = at_tier.get(tier)
        if sw is None or cage_gbps(sw) <= speed_gbps:
            continue
        if twin_only and (sw.ports_per_cage or 1) < 2:
            continue
        per_part = cage_gbps(sw) // speed_gbps
        if group == "node-leaf" and tier == "leaf" and packing is not None:
            per_leaf, rails = packing
            out[tier] = packed_spare_ports(
                n_links * per_link, count[tier], per_leaf, per_part, rails
            )
        else:
            out[tier] = spare_ports(n_links * per_link, count[tier], per_part)
    return out


def _leaf_packing(design: Design, catalog: Catalog, nic: Nic) -> tuple[int, int] | None:
    """(ends one full leaf holds, rails) of a fat-tree or rail-optimized design, from the
    family formula: d = the leaf's down ports (all endpoints on one switch that holds them),
    per rail on a rail-optimized fabric; None for other families."""
    if design.topology not in ("fat_tree", "rail_optimized"):
        return None
    named = [s for s in catalog.switches if s.sku in design.switch_skus]
    k = min((ports_at_speed(s, nic.speed_gbps) for s in named), default=0)
    if k < 2:
        return None
    leaf_o, _ = tier_ratios(design.oversubscription, design.oversubscribed_tier)
    try:
        down, _ = split_ports(k, leaf_o, lanes=port_lanes(named, nic.speed_gbps))
    except InvalidInput:
        return None
    if design.topology == "rail_optimized":
        return min(down, design.nodes), design.nics_per_node
    return (design.endpoints if design.endpoints <= k else down), 1


def _ports_of(
    group: str,
    counted: int,
    ends: int,
    tier: str,
    needed: int,
    lines: list[BomLine],
    catalog: Catalog,
    nic: Nic,
    packing: tuple[int, int] | None,
) -> int:
    """Ports ``group`` takes on ``tier``: ``counted`` links (``_links_per_group``) times its
    ends there; where its optics fill twin-port cages, the empty ports of the per-switch
    parts sit on the tier they are bought for (counted by bandwidth they would add
    ``spare / 2`` links to both tiers)."""
    optics = any(ln.tier == group and ln.category == "transceiver" for ln in lines)
    cables = any(ln.tier == group and ln.category == "cable" for ln in lines)
    if not optics or cables:
        return counted * ends
    spare = _cage_spare(
        group, needed, lines, catalog, nic.speed_gbps, twin_only=False, packing=packing
    )
    total = sum(spare.values())
    return max(0, counted - total // 2) * ends + spare.get(tier, 0)


def _check_optic_ends(
    group: str,
    lines: list[BomLine],
    parts: dict[str, Link],
    speed_gbps: int,
    optical: int,
    spare: int = 0,
    allowed_spare: int = 0,
    host_cage: int = 1,
) -> list[Violation]:
    """Each optic sits at an end its side allows (a host-side flat-top OSFP is no switch
    module), and each end kind has the module ports its ``optical`` links need, plus the
    ``spare`` ports that twin-port cages leave empty when each switch buys whole modules.
    At a server's twin-port cages (``host_cage`` 2, a DGX) the host ends take the switch's
    twin-port modules, so they count on the switch side (``_check_twin_host_cages`` refuses
    any other module there)."""
    out = []
    ends = group_ends(group)
    gbps = {"host": 0, "switch": 0, "any": 0}
    for ln in (ln for ln in lines if ln.tier == group and ln.category == "transceiver"):
        part = parts[ln.sku]
        sides = {*ends, "switch"} if host_cage > 1 else set(ends)  # a DGX cage: twin modules
        if part.fits_side != "any" and part.fits_side not in sides:
            where = " and ".join(sorted(set(ends)))
            out.append(
                Violation(
                    "optic-side",
                    f"{part.sku} is a {part.fits_side}-side module; {group} links end at {where}",
                )
            )
            continue
        gbps[part.fits_side] += ln.quantity * part.speed_gbps
    need = Counter(ends)
    if host_cage > 1:  # the host ends' modules are the switch's twin-port kind
        need = Counter({"switch": need["switch"] + need.pop("host", 0)})
    want = {end: need[end] * optical * speed_gbps for end in ("host", "switch")}
    want["switch"] += spare * speed_gbps
    allowed = {**want, "switch": want["switch"] + max(0, allowed_spare - spare) * speed_gbps}
    if not _ends_covered(gbps, want):
        have = sum(gbps.values()) // speed_gbps
        out.append(
            Violation(
                "optic-ports",
                f"{group}: optics give {have} {speed_gbps}G ends "
                f"({gbps['host'] // speed_gbps} host-side, {gbps['switch'] // speed_gbps} "
                f"switch-side, {gbps['any'] // speed_gbps} either), {optical} optical links "
                f"need {need['host'] * optical} host-side and {need['switch'] * optical} "
                f"switch-side ends"
                + (
                    f" plus {spare} empty in twin-port cages (whole modules per switch)"
                    if spare
                    else ""
                ),
            )
        )
    elif any(
        _ends_covered({**gbps, side: gbps[side] - part.speed_gbps}, allowed)
        for side, part in {
            parts[ln.sku].fits_side: parts[ln.sku]
            for ln in lines
            if ln.tier == group and ln.category == "transceiver"
        }.items()
    ):
        out.append(
            Violation(
                "optic-ports",
                f"{group}: a whole transceiver module is spare (the optics cover "
                f"{optical} links without it)",
            )
        )
    return out


def _ends_covered(gbps: dict[str, int], want: dict[str, int]) -> bool:
    """Module bandwidth by side covers what each end kind needs; ``any`` modules fill in."""
    flexible = gbps["any"]
    for end, needed in want.items():
        flexible -= max(0, needed - gbps[end])
    return flexible >= 0 and min(gbps.values()) >= 0


def _family(design: Design) -> str:
    return fabric_family(design.fabric)


def _totals(lines: list[BomLine]) -> Counter[str]:
    """Quantity of each SKU across the whole BOM (stock and volume breaks apply to it)."""
    totals = Counter[str]()
    for ln in lines:
        totals[ln.sku] += ln.quantity
    return totals


def _check_stock(
    lines: list[BomLine], parts: dict[str, tuple[str, Server | Nic | Switch | Link]]
) -> list[Violation]:
    out = []
    for sku, qty in _totals(lines).items():
        stock = parts[sku][1].availability.stock_units
        if stock is not None and qty > stock:
            out.append(Violation("stock", f"{qty} x {sku} ordered, {stock} in stock"))
    return out


def _check_prices(
    bom: BillOfMaterials,
    lines: list[BomLine],
    catalog: Catalog,
    parts: dict[str, tuple[str, Server | Nic | Switch | Link]],
    server: Server | None,
) -> list[Violation]:
    """Unit price after the break the SKU's total reaches ($0 for the server's built-in NICs),
    extended price, capex to the cent."""
    totals = _totals([ln for ln in lines if not _included(ln, server)])
    out = []
    for ln in lines:
        if _included(ln, server):
            continue
        if server is not None and server.builtin_nics and ln.sku == server.builtin_nic_sku:
            out.append(
                Violation(
                    "unit-price",
                    f"{ln.sku} ships inside {server.sku} and is priced in it; expected $0, "
                    f"got {ln.unit_price_cents} cents",
                )
            )
            continue
        unit = catalog.unit_price_cents(ln.sku, totals[ln.sku], parts[ln.sku][1].price_cents)
        if ln.unit_price_cents != unit:
            out.append(
                Violation(
                    "unit-price",
                    f"{ln.sku} at {ln.unit_price_cents} cents; at "
                    f"{totals[ln.sku]} units the price is {unit}",
                )
            )
    for ln in bom.lines:
        if ln.extended_price_cents != ln.unit_price_cents * ln.quantity:
            out.append(
                Violation(
                    "extended-price",
                    f"{ln.sku}: {ln.quantity} x "
                    f"{ln.unit_price_cents} != "
                    f"{ln.extended_price_cents} cents",
                )
            )
    capex = sum(ln.extended_price_cents for ln in bom.lines)
    if bom.capex_cents != capex:
        out.append(Violation("capex", f"capex {bom.capex_cents} cents, the lines sum to {capex}"))
    network = sum(ln.extended_price_cents for ln in bom.lines if ln.category != "server")
    if bom.network_cents != network:
        out.append(
            Violation(
                "network-cents",
                f"network {bom.network_cents} cents, the network lines sum to {network}",
            )
        )
    power = sum(ln.power_kw for ln in bom.lines)
    if abs(bom.power_kw - power) > _POWER_TOLERANCE_KW * max(1.0, power):
        out.append(Violation("power", f"power {bom.power_kw} kW, the lines sum to {power} kW"))
    return out


def _check_racks(
    design: Design, bom: BillOfMaterials, lines: list[BomLine], catalog: Catalog
) -> list[Violation]:
    """Racks = servers packed by power and units, plus switches packed per tier likewise."""
    server = next((s for s in catalog.servers if s.sku == design.server_sku), None)
    nic = next((n for n in catalog.nics if n.sku == design.nic_sku), None)
    if server is None or (nic is None and design.nics_per_node):
        return []
    layout = design.layout
    bought = 0 if server.builtin_nics else design.nics_per_node  # built-in: in server power
    try:
        node_kw = server.power_kw + bought * (0.0 if nic is None else nic.power_w) / 1000
        # issue 16 (rackscale): a rack-scale unit is one rack; its power is rack-power's check
        per_rack = 1 if server.rack_scale else layout.per_rack(node_kw, server.rack_units, "server")
        racks = math.ceil(design.nodes / per_rack)
        switches = {s.sku: s for s in catalog.switches}
        for ln in (ln for ln in lines if ln.category == "switch"):
            sw = switches[ln.sku]
            racks += math.ceil(
                ln.quantity / layout.per_rack(sw.power_w / 1000, sw.rack_units, "switch")
            )
    except InvalidInput as e:
        return [Violation("racks", str(e))]
    if bom.racks != racks:
        return [Violation("racks", f"{bom.racks} racks listed, the equipment needs {racks}")]
    return []


# issue 16 (rackscale)
def _check_rack_scale(
    design: Design, lines: list[BomLine], server: Server | None
) -> list[Violation]:
    """A rack-scale unit within the facility's stated kW per rack, a liquid-only server only
    in a hall with liquid cooling, and built-in NICs exactly as the row ships them."""
    if server is None:
        return []
    layout = design.layout
    out = []
    if layout.facility_cooling == "air" and server.cooling == "liquid":
        out.append(
            Violation(
                "cooling",
                f"{server.sku} is liquid-cooled only (servers.cooling), placed in an air-cooled "
                "facility (--cooling air)",
            )
        )
    units = [ln for ln in lines if ln.category == "server" and ln.sku == server.sku]
    if server.rack_scale and layout.rack_power_stated:
        rack_kw = max(
            [server.power_kw, *(ln.power_kw / ln.quantity for ln in units if ln.quantity)]
        )
        if rack_kw > layout.rack_power_kw + _POWER_TOLERANCE_KW:
            out.append(
                Violation(
                    "rack-power",
                    f"each {server.sku} rack draws {rack_kw:g} kW, above the facility's "
                    f"{layout.rack_power_kw:g} kW per rack (--max-rack-kw)",
                )
            )
    return out + _check_builtin_nics(design, lines, server)


# issue 16 (rackscale)
def _check_builtin_nics(design: Design, lines: list[BomLine], server: Server) -> list[Violation]:
    """A server that ships with NICs (72 per GB200 NVL72 rack, 8 per DGX) is built with
    exactly those: the design names them, the BOM lists them all at $0 and orders no other."""
    if not server.builtin_nics:
        return []
    out = []
    ships = f"{server.builtin_nics} x {server.builtin_nic_sku}"
    if (design.nic_sku, design.nics_per_node) != (server.builtin_nic_sku, server.builtin_nics):
        out.append(
            Violation(
                "builtin-nics",
                f"the design uses {design.nics_per_node} x {design.nic_sku or 'no NIC'} per "
                f"node, {server.sku} ships with {ships} (servers.builtin_nics)",
            )
        )
    nics = [ln for ln in lines if ln.category == "nic"]
    listed = sum(ln.quantity for ln in nics if _included(ln, server))
    if listed != design.nodes * server.builtin_nics:
        out.append(
            Violation(
                "builtin-nics",
                f"{listed} x {server.builtin_nic_sku} listed as built in, {design.nodes} x "
                f"{server.sku} ship {design.nodes * server.builtin_nics} ({ships} each)",
            )
        )
    for sku in sorted({ln.sku for ln in nics if ln.sku != server.builtin_nic_sku}):
        out.append(
            Violation(
                "builtin-nics",
                f"{sku} ordered for {server.sku}, which ships with its own {ships}",
            )
        )
    return out
