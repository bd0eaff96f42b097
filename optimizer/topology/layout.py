"""Physical layout: racks, rows, the length each link group travels and the parts that reach it.

Model (every default below can be set per request through ``Layout``)
----------------------------------------------------------------------
- Servers fill racks up to the rack's power cap and rack units; switches go to network racks
  packed the same way, tier by tier. Rows hold ``racks_per_row`` racks.
- A link group's length is that of its longest link, so one part choice serves the whole
  group: a switch sits at the centre of the racks it serves (its *span* of R racks), and
  a link runs up from the port to the overhead tray, along the row, across rows and down:
  ``2*vertical_run + rack_width*ceil(min(R, racks_per_row)/2) + row_pitch*floor(rows(R)/2)``;
  a span of one rack (top-of-rack or adjacent network rack) is ``in_rack_link_m``.
- Spans (``LinkGroupSizing.span_kind``: leaf, pod, cluster, neighbours; a family names the
  span of a new link group): node-leaf: the racks of one leaf's nodes; leaf-spine: the whole
  cluster (two tiers) or one pod (three tiers); spine-core and global: the whole cluster;
  intra-group: one dragonfly group; torus (folded, Dally & Towles 2004 section 5.2): at most
  three rack positions along a row, plus two row pitches when the cluster spans rows.
- Reach (hardware.md section 4.1, NVIDIA LinkX): a cable assembly (DAC, AEC/ACC, AOC) serves a
  link when its reach >= the length; optics serve it with a transceiver at each end plus
  ``ceil(length)`` metres of fiber when both reach it. Each end takes a module that fits it
  (``side``: a flat-top OSFP in the NIC, a finned twin-port OSFP in the switch, NVIDIA LinkX
  NDR cabling); a twin-port module serves two links' ends, bought whole per link group. A
  transceiver is paired with fiber of its connector (``links.connector``: MPO-12 for SR4/DR4,
  MPO-16 for SR8/DR8, LC duplex for CWDM4/FR4) whose reach is the nearest at or above its
  own (multimode for SR, single-mode for DR/FR), since the catalog has no medium column; the
  two ends' optics must share that fiber class.
- Floor positions (issue 17): every rack, server or network, takes one position; servers
  installed liquid-cooled also need one floor-mounted (in-row) coolant distribution unit per
  row of their racks, which occupies about one rack's footprint (Motivair by Schneider
  Electric, "In-rack CDU v. floor-mounted CDU", 2026-04-29). ``max_floor_positions`` refuses
  a placement that takes more (the facility's floor).
- Rack-scale systems (issue 16; ``Server.rack_scale``: several hosts bought as one unit, e.g.
  GB200 NVL72, ~120-132 kW, liquid-cooled, NVIDIA GB200 NVL72 product page and DGX GB200 user
  guide): the unit is a whole rack with its NVLink switch trays, power shelves and manifolds
  inside, so it takes one rack position of its own at its own power. ``rack_power_kw`` packs
  ordinary servers; it binds a rack-scale unit only when the facility states it
  (``rack_power_stated``: a request's max rack kW or an air hall's ceiling), since the 42 kW
  default describes an air-cooled HGX rack, not a rack designed for its own power. Its NICs
  reach leaves in a network rack of the same row (the rack has no room for a leaf): the
  node-leaf span is at least the row's server racks.
"""

from __future__ import annotations

import math
import weakref
from collections import Counter
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

from optimizer.catalog.model import Catalog, Link, Server
from optimizer.errors import InvalidInput
from optimizer.topology.compat import (
    cable_fits_ends,
    connectors_mate,
    fits_end,
    link_fits,
    plugs_fit,
    ports_per_end,
    wide_end,
)
from optimizer.topology.fat_tree import uplink_lanes
from optimizer.topology.network import NetworkSizing

CABLE_KINDS = ("dac", "aec", "aoc")


@dataclass(frozen=True)
class Layout:
    """Data-hall parameters; defaults are modelling assumptions, each sourced or reasoned."""

    # 4 DGX H100 per rack (hardware.md section 5: 40.8 kW) plus their 8 NICs of ~25 W each.
    rack_power_kw: float = 42.0
    # A standard 42U rack, all of it usable for equipment.
    rack_units: int = 42
    # Racks per row (a SuperPOD SU is 8 compute racks plus network racks).
    racks_per_row: int = 10
    # Standard 600 mm wide rack.
    rack_width_m: float = 0.6
    # Row-to-row distance: 1.2 m deep racks plus a 1.2 m aisle and cable slack.
    row_pitch_m: float = 3.0
    # From a port to the overhead tray (or down from it) at one end, with service slack.
    vertical_run_m: float = 1.5
    # A link inside one rack or to the adjacent network rack (passive DAC reach at 400G: 3 m).
    in_rack_link_m: float = 3.0
    # issue 17 (facility): the hall's floor and cooling; None: not limited / not stated.
    max_floor_positions: int | None = None
    facility_cooling: str | None = None  # "air" | "liquid"
    # issue 16 (rackscale): rack_power_kw is the facility's stated limit, binding rack-scale
    # systems too; False: the default packing assumption, which they are designed beyond.
    rack_power_stated: bool = False

    def __post_init__(self) -> None:
        for name in (
            "rack_power_kw",
            "rack_width_m",
            "row_pitch_m",
            "vertical_run_m",
            "in_rack_link_m",
        ):
            if not getattr(self, name) > 0:
                msg = f"must be > 0, got {getattr(self, name)}"
                raise InvalidInput(msg, field=f"layout.{name}")
        for name in ("rack_units", "racks_per_row"):
            if getattr(self, name) < 1:
                msg = f"must be a positive integer, got {getattr(self, name)}"
                raise InvalidInput(msg, field=f"layout.{name}")
        if self.max_floor_positions is not None and self.max_floor_positions < 1:
            msg = f"got {self.max_floor_positions}, expected a positive integer"
            raise InvalidInput(msg, field="constraints.max_floor_positions")
        if self.facility_cooling not in (None, "air", "liquid"):
            msg = f"got {self.facility_cooling!r}, expected air or liquid"
            raise InvalidInput(msg, field="constraints.cooling")

    def liquid_installed(self, server_cooling: str) -> bool:
        """A server of this cooling (catalog ``servers.cooling``) goes in liquid-cooled: a
        liquid-only one always, an either-way one when the facility has liquid cooling."""
        return server_cooling == "liquid" or (
            server_cooling == "either" and self.facility_cooling == "liquid"
        )

    def per_rack(self, power_kw: float, rack_units: int, what: str) -> int:
        """How many boxes of this power and height one rack holds; refuses a box that fits none."""
        by_power = math.floor(self.rack_power_kw / power_kw + 1e-9) if power_kw > 0 else math.inf
        by_units = self.rack_units // max(1, rack_units)
        count = min(by_power, by_units)
        if count < 1:
            msg = (
                f"one {what} ({power_kw:g} kW, {rack_units} U) does not fit a rack of "
                f"{self.rack_power_kw:g} kW and {self.rack_units} U"
            )
            binding = "rack_power_kw" if by_power < 1 else "rack_units"
            raise InvalidInput(msg, field=f"layout.{binding}")
        return int(count)

    def servers_per_rack(self, server: Server, node_power_kw: float) -> int:
        """Servers one rack holds at ``node_power_kw`` each (server plus the NICs bought for
        it); a rack-scale unit is one rack on its own, refused only by a stated rack limit."""
        if not server.rack_scale:
            return self.per_rack(node_power_kw, server.rack_units, f"server {server.sku}")
        if self.rack_power_stated and node_power_kw > self.rack_power_kw + 1e-9:
            msg = (
                f"{server.sku} is a rack-scale system bought and placed as one rack drawing "
                f"{node_power_kw:g} kW, above the facility's {self.rack_power_kw:g} kW per rack; "
                f"expected --max-rack-kw of at least {node_power_kw:g}"
            )
            raise InvalidInput(msg, field="constraints.max_rack_kw")
        return 1

    def span_length_m(self, racks: int) -> float:
        """Longest link from a switch at the centre of ``racks`` racks to one of them."""
        if racks <= 1:
            return self.in_rack_link_m
        rows = math.ceil(racks / self.racks_per_row)
        along_row = self.rack_width_m * math.ceil(min(racks, self.racks_per_row) / 2)
        return 2 * self.vertical_run_m + along_row + self.row_pitch_m * (rows // 2)


@dataclass(frozen=True)
class Placement:
    """Racks, rows and each link group's length for one design."""

    nodes_per_rack: int
    server_racks: int
    network_racks: int
    rows: int
    group_lengths_m: tuple[tuple[str, float], ...]
    cdu_positions: int = 0
    """Floor-mounted coolant distribution units: one per row of liquid-cooled server racks."""

    @property
    def racks(self) -> int:
        return self.server_racks + self.network_racks

    @property
    def floor_positions(self) -> int:
        """Positions on the data-hall floor: every rack plus the in-row CDUs."""
        return self.racks + self.cdu_positions

    def length_m(self, group: str) -> float:
        return dict(self.group_lengths_m)[group]


def place(
    layout: Layout,
    sizing: NetworkSizing,
    *,
    nodes: int,
    nodes_per_rack: int,
    nodes_per_leaf: int,
    network_racks: int,
    liquid_cooled: bool = False,
    leaf_in_row: bool = False,
) -> Placement:
    """Racks and link lengths of ``sizing`` for ``nodes`` servers, ``nodes_per_rack`` to a rack.

    ``nodes_per_leaf`` is how many nodes one first-tier switch serves (the node-leaf span).
    ``liquid_cooled`` servers add their rows' CDUs to the floor positions. ``leaf_in_row``:
    the leaves sit in a network rack of the row, not in the server racks (rack-scale units),
    so a node-leaf link spans at least the row's server racks.

    Raises
    ------
    InvalidInput
        More floor positions than ``layout.max_floor_positions``
        (field ``constraints.max_floor_positions``).
    """
    server_racks = math.ceil(nodes / nodes_per_rack)
    racks = server_racks + network_racks
    rows = math.ceil(racks / layout.racks_per_row)
    cdus = math.ceil(server_racks / layout.racks_per_row) if liquid_cooled else 0
    if layout.max_floor_positions is not None and racks + cdus > layout.max_floor_positions:
        msg = (
            f"{nodes} servers take {racks + cdus} floor positions ({server_racks} server "
            f"racks, {network_racks} network racks, {cdus} CDUs), more than the "
            f"{layout.max_floor_positions} allowed"
        )
        raise InvalidInput(msg, field="constraints.max_floor_positions")
    leaf_span = min(server_racks, math.ceil(nodes_per_leaf / nodes_per_rack))
    if leaf_in_row:  # issue 16 (rackscale)
        leaf_span = max(leaf_span, min(server_racks, layout.racks_per_row))
    spans = {"leaf": leaf_span, "pod": math.ceil(racks / sizing.pods), "cluster": racks}
    lengths: list[tuple[str, float]] = []
    for group in sizing.link_groups:
        if group.span_kind == "neighbours":
            row_hops = 2 * layout.row_pitch_m if rows > 1 else 0.0
            length = layout.span_length_m(min(server_racks, 3)) + row_hops
        else:
            length = layout.span_length_m(spans[group.span_kind])
        lengths.append((group.name, round(length, 3)))
    return Placement(nodes_per_rack, server_racks, network_racks, rows, tuple(lengths), cdus)


HOST_SWITCH = ("host", "switch")
SWITCH_SWITCH = ("switch", "switch")
HOST_HOST = ("host", "host")
GROUP_ENDS = {"node-leaf": HOST_SWITCH, "torus": HOST_HOST}
"""What each link group's two ends plug into; every other group runs switch to switch."""


def group_ends(group: str) -> tuple[str, str]:
    """The (end, end) kinds of ``group``'s links: host-switch, switch-switch or host-host."""
    return GROUP_ENDS.get(group, SWITCH_SWITCH)


@dataclass(frozen=True)
class LinkOption:
    """One way to build a link of a given length: a cable assembly, or an optic at each end
    plus fiber.

    ``parts`` lists (SKU, quantity per link): cables and fiber metres as bought, transceivers
    and fan-out cables in module *ports* (a host-side module is 1 port, half a twin-port switch
    module is 1 of its 2, one narrow end of a 2-way splitter 1 of 2). ``module_ports`` names
    the multi-port parts and their ports per module: whole modules are bought,
    ``ceil(ports / ports_per_module)`` per link group.
    ``unit_cost_cents`` (list price, a twin-port module's price shared by its ports) and
    ``power_w`` are per link.
    """

    kind: str  # "cable" | "optics"
    parts: tuple[tuple[str, int], ...]
    reach_m: float
    unit_cost_cents: int
    power_w: float
    module_ports: tuple[tuple[str, int], ...] = ()
    caged: tuple[str, ...] = ()
    """The multi-port parts that sit at a shared switch cage (an end ``...@C``: a twin-port
    cage or a broken-out port, which only such a part fills): bought whole per switch
    (``whole_modules``)."""

    @property
    def label(self) -> str:
        return " + ".join(f"{qty} x {sku}" for sku, qty in self.parts)


OptionsKey = tuple[float, int, str, tuple[str, str]]
# Options per catalog object (catalogs are immutable), dropped with the catalog: the size
# search prices thousands of BOMs over a handful of (length, speed, fabric, ends) classes.
_OPTIONS: dict[int, tuple[weakref.ref[Catalog], dict[OptionsKey, tuple[LinkOption, ...]]]] = {}


def link_options(
    group_length_m: float,
    speed_gbps: int,
    fabric: str,
    catalog: Catalog,
    ends: tuple[str, str] = SWITCH_SWITCH,
) -> list[LinkOption]:
    """Every catalog way to build a link of ``group_length_m`` at ``speed_gbps`` between
    ``ends`` (see ``group_ends``), cheapest first.

    Optics pair a transceiver that fits each end (its ``side``) and share one fiber class
    (``matching_fiber``: the same medium); on symmetric ends each unordered pair once.
    """
    entry = _OPTIONS.get(id(catalog))
    if entry is None or entry[0]() is not catalog:
        key_id = id(catalog)
        entry = (weakref.ref(catalog, lambda _: _OPTIONS.pop(key_id, None)), {})
        _OPTIONS[key_id] = entry
    key = (group_length_m, speed_gbps, fabric, ends)
    found = entry[1].get(key)
    if found is None:
        found = tuple(_link_options(group_length_m, speed_gbps, fabric, catalog, ends))
        entry[1][key] = found
    return list(found)


def _link_options(
    group_length_m: float,
    speed_gbps: int,
    fabric: str,
    catalog: Catalog,
    ends: tuple[str, str],
) -> list[LinkOption]:
    fitting = [lk for lk in catalog.links if link_fits(lk, speed_gbps, fabric)]
    options = [
        _cable(lk, ends)
        for lk in fitting
        if lk.kind in CABLE_KINDS and lk.reach_m >= group_length_m and cable_fits_ends(lk, ends)
    ]
    options += _twin_cables(group_length_m, speed_gbps, fabric, catalog, ends)
    fibers = [lk for lk in fitting if lk.kind == "fiber"]
    fiber_m = fiber_metres(group_length_m)
    optics = [lk for lk in fitting if lk.kind == "transceiver" and lk.reach_m >= group_length_m]
    at_a = [tx for tx in optics if fits_end(tx, ends[0])]
    at_b = [tx for tx in optics if fits_end(tx, ends[1])]
    for tx_a in at_a:
        fiber = matching_fiber(tx_a, fibers)
        if fiber is None or fiber.reach_m < group_length_m:
            continue
        for tx_b in at_b:
            if ends[0] == ends[1] and tx_b.sku < tx_a.sku:
                continue  # the same pair with its ends swapped
            if matching_fiber(tx_b, fibers) != fiber or not connectors_mate(tx_a, tx_b):
                continue  # different media (multimode SR vs single-mode DR) do not mate
            options.append(_optics(tx_a, tx_b, fiber, fiber_m, speed_gbps, ends))
    return sorted(options, key=lambda o: (o.unit_cost_cents, o.label))


def _twin_cables(
    group_length_m: float, speed_gbps: int, fabric: str, catalog: Catalog, ends: tuple[str, str]
) -> list[LinkOption]:
    """Twin-port cables (both ends one twin-port plug, NDR-ACC-800G-TWIN-5M) from a server's
    twin-port NIC cage whose two ports land on one switch (``host_end``'s ``:pair``, a DGX
    on a single switch) to a shared switch cage of the same speed: one cable per two links,
    bought whole per group (price and power shared by its two links)."""
    paired = [end for end in ends if ":pair@" in end]
    if not paired or not all("@" in end for end in ends):
        return []
    cage = 2 * speed_gbps
    return [
        LinkOption(
            "cable",
            ((lk.sku, 1),),
            lk.reach_m,
            math.ceil(lk.price_cents / 2),
            lk.power_w / 2,
            ((lk.sku, 2),),
            (lk.sku,),
        )
        for lk in catalog.links
        if lk.kind in CABLE_KINDS
        and lk.module_ports == 1
        and lk.reach_m >= group_length_m
        and link_fits(lk, cage, fabric)
        and plugs_fit(lk, ends)
    ]


def _cable(cable: Link, ends: tuple[str, str]) -> LinkOption:
    """One cable per link; a fan-out cable serves ``ports_per_module`` links, bought whole per
    group like a twin-port module (its price and power shared by its narrow ends), and per
    switch where its wide end fills a shared cage."""
    ports = cable.module_ports
    return LinkOption(
        "cable",
        ((cable.sku, 1),),
        cable.reach_m,
        math.ceil(cable.price_cents / ports),
        cable.power_w / ports,
        ((cable.sku, ports),) if ports > 1 else (),
        (cable.sku,) if ports > 1 and wide_end(cable, ends) is not None else (),
    )


def _optics(
    tx_a: Link,
    tx_b: Link,
    fiber: Link,
    fiber_m: int,
    speed_gbps: int,
    ends: tuple[str, str] = SWITCH_SWITCH,
) -> LinkOption:
    """One optic at each end plus fiber; a link using a whole multi-port module at its full
    speed takes one fiber run per port."""
    ports = Counter[str]()
    for tx in (tx_a, tx_b):
        ports[tx.sku] += ports_per_end(tx, speed_gbps)
    runs = max(ports_per_end(tx_a, speed_gbps), ports_per_end(tx_b, speed_gbps))
    by_sku = {tx_a.sku: tx_a, tx_b.sku: tx_b}
    cost = sum(n * by_sku[sku].price_cents / by_sku[sku].module_ports for sku, n in ports.items())
    power = sum(n * by_sku[sku].power_w / by_sku[sku].module_ports for sku, n in ports.items())
    return LinkOption(
        "optics",
        (*ports.items(), (fiber.sku, runs * fiber_m)),
        min(tx_a.reach_m, tx_b.reach_m, fiber.reach_m),
        math.ceil(cost + runs * fiber_m * fiber.price_cents),
        power,
        tuple((sku, lk.module_ports) for sku, lk in by_sku.items() if lk.module_ports > 1),
        tuple(
            dict.fromkeys(
                tx.sku
                for tx, end in ((tx_a, ends[0]), (tx_b, ends[1]))
                if _caged(tx, end, speed_gbps)
            )
        ),
    )


def _caged(tx: Link, end: str, speed_gbps: int) -> bool:
    """Each switch (or twin-port host cage) buys whole modules of ``tx`` for its own ends: a
    multi-port module in a shared cage (``@``), or one that several links at ``speed_gbps``
    share in a switch's one-port cage that is not broken out (a twin-port 2 x 400G module in
    an 800G cage: a leaf with three such links needs two, not one and a half)."""
    if tx.module_ports < 2:
        return False
    return "@" in end or (end.startswith("switch") and ports_per_end(tx, speed_gbps) == 1)


def buildable_lanes(
    sizing: NetworkSizing,
    group: str,
    cage_gbps: dict[str, int],
    speed_gbps: int,
    length_m: float,
    fabric: str,
    catalog: Catalog,
    ends_at: Callable[[int], tuple[str, str] | None] = lambda _: None,
) -> int:
    """``fat_tree.uplink_lanes`` where the catalog has a cable or optics pair reaching
    ``length_m`` at the cage speed; 1 (links at the endpoint speed) otherwise. ``ends_at``:
    the group's ends for links at a speed (issue 16, fabric800: the switches' cages; broken
    out below their port speed)."""
    lanes = uplink_lanes(sizing, group, cage_gbps, speed_gbps)
    if lanes == 1:
        return 1
    ends = ends_at(speed_gbps * lanes) or group_ends(group)
    return lanes if link_options(length_m, speed_gbps * lanes, fabric, catalog, ends) else 1


def modules_for(ports: int, module_ports: int) -> int:
    """Whole modules that give ``ports`` ports (a twin-port module's spare half is bought)."""
    return -(-ports // module_ports)


def spare_ports(ends: int, switches: int, per_module: int) -> int:
    """Module ports left empty when ``ends`` link ends, spread as evenly as the tier's
    ``switches`` allow (each takes floor or ceil of ends/switches), fill their shared cages
    with parts of ``per_module`` ports: a twin-port module or a splitter's wide end sits in
    one cage of one switch, so a switch with an odd count leaves half a part empty."""
    if switches < 1 or per_module < 2:
        return 0
    base, more = divmod(ends, switches)
    return more * (-(base + 1) % per_module) + (switches - more) * (-base % per_module)


def packed_spare_ports(
    ends: int, switches: int, per_switch: int, per_module: int, rails: int = 1
) -> int:
    """Module ports left empty when ``ends`` fill the tier's ``switches`` in order,
    ``per_switch`` each and the last the rest, each of ``rails`` rails its own share of both:
    how a packed fat-tree or a rail's leaves take their nodes (sizing's
    ``endpoints_per_leaf``), not spread evenly (1,024 nodes x 2 NICs on 43 leaves of 48: all
    even, where 47 or 48 each left 8 cages half empty). Evenly (``spare_ports``) where the
    counts do not describe such a packing."""
    ends, switches = ends // rails, switches // rails
    last = ends - (switches - 1) * per_switch
    if per_module < 2 or switches < 1 or not 0 < last <= per_switch:
        return rails * spare_ports(ends, switches, per_module)
    return rails * ((switches - 1) * (-per_switch % per_module) + (-last % per_module))


def whole_modules(
    ports: Mapping[str, int],
    module_ports: Mapping[str, int],
    caged: Collection[str],
    spare: int,
    price_cents: Mapping[str, int],
    extra: Mapping[str, int] | None = None,
) -> dict[str, int]:
    """Whole parts of each multi-port SKU of one link group: ``ceil(ports / per module)`` per
    SKU, and at least ``ceil((ports + spare) / per module)`` over the SKUs that fill shared
    switch cages (``caged``), bought per switch (``spare``: ``spare_ports`` of the group's
    tiers). Modules the per-switch rounding adds go to the cheapest caged SKU the links use,
    at list price, or as ``extra`` says (SKU -> modules, the MIP's choice: the cheapest at
    its volume tier within stock) when it names caged SKUs in use and adds exactly that
    many."""
    out = {sku: modules_for(n, module_ports[sku]) for sku, n in ports.items()}
    caged_used, missing = missing_modules(ports, module_ports, caged, spare)
    given = {s: n for s, n in (extra or {}).items() if n}
    if given and set(given) <= set(caged_used) and sum(given.values()) == missing:
        for sku, n in given.items():
            out[sku] += n
    elif missing:
        out[min(caged_used, key=lambda s: (price_cents[s], s))] += missing
    return out


def missing_modules(
    ports: Mapping[str, int], module_ports: Mapping[str, int], caged: Collection[str], spare: int
) -> tuple[tuple[str, ...], int]:
    """The caged SKUs one link group's links use, and how many whole modules the per-switch
    rounding (``whole_modules``) adds over ``ceil(ports / per module)`` of each: any of those
    SKUs may take them."""
    at_cage = tuple(sorted(s for s in caged if ports.get(s)))
    if not at_cage or not spare:
        return at_cage, 0
    per_module = min(module_ports[s] for s in at_cage)
    need = modules_for(sum(ports[s] for s in at_cage) + spare, per_module)
    have = sum(modules_for(ports[s], module_ports[s]) for s in at_cage)
    return at_cage, max(0, need - have)


def fiber_metres(length_m: float) -> int:
    """Fiber bought per link: the length rounded up to whole metres (at least one)."""
    return max(1, math.ceil(length_m - 1e-9))


def matching_fiber(transceiver: Link, fibers: list[Link]) -> Link | None:
    """The fiber class for ``transceiver``: of its connector, the nearest reach at or above
    the optic's own."""
    candidates = [
        f for f in fibers if f.reach_m >= transceiver.reach_m and connectors_mate(transceiver, f)
    ]
    return min(candidates, key=lambda f: (f.reach_m, f.price_cents, f.sku), default=None)
