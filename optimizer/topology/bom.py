"""Design -> bill of materials: priced line items a procurement team can order.

Volume breaks apply to the total quantity of a SKU across every line of the BOM (a buyer
orders a SKU once). Capex is the exact integer-cent sum of the extended prices.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from optimizer.catalog.model import Catalog, Link, Server
from optimizer.catalog.union import catalog_of
from optimizer.errors import InvalidInput
from optimizer.registry.topologies import TOPOLOGIES
from optimizer.topology.design import Design
from optimizer.topology.layout import LinkOption, link_options, whole_modules
from optimizer.topology.plan import LinkDemand, PartsKey, PhysicalPlan, parts_key, planned

CATEGORIES = ("server", "nic", "switch", "cable", "transceiver", "fiber")
_CATEGORY_OF_LINK_KIND = {
    "dac": "cable",
    "aec": "cable",
    "aoc": "cable",
    "transceiver": "transceiver",
    "fiber": "fiber",
}

LinkChoice = Mapping[str, Sequence[tuple[LinkOption, int]]]


@dataclass(frozen=True)
class BomLine:
    """One orderable line. ``tier`` says where it sits (node, leaf, spine, core, router, or the
    link group such as leaf-spine); ``length_m`` is the link length class a link line serves."""

    category: str
    sku: str
    vendor: str
    quantity: int
    unit_price_cents: int
    extended_price_cents: int
    tier: str
    power_kw: float
    rack_units: int
    source: str
    length_m: float | None = None
    catalog: str = ""  # the catalog (quote) the line is ordered from


@dataclass(frozen=True)
class BillOfMaterials:
    lines: tuple[BomLine, ...]
    capex_cents: int
    network_cents: int
    power_kw: float
    racks: int
    rack_units: int

    @property
    def network_share(self) -> float:
        """NICs, switches, cables and optics over capex (0 for an empty BOM)."""
        return self.network_cents / self.capex_cents if self.capex_cents else 0.0


@dataclass(frozen=True, slots=True)
class _Item:
    """An unpriced line: what to order and where it goes (at the catalog's price of ``sku``:
    the same items serve catalogs that differ only in prices, _cheapest_items)."""

    category: str
    sku: str
    vendor: str
    quantity: int
    tier: str
    power_kw: float
    rack_units: int
    source: str
    length_m: float | None = None
    included: bool = False  # ships inside another line's part: $0, never ordered on its own


def build_bom(
    design: Design,
    catalog: Catalog,
    link_choice: LinkChoice | None = None,
    spare_parts: Mapping[str, Mapping[str, int]] | None = None,
) -> BillOfMaterials:
    """Price ``design`` from ``catalog``.

    ``link_choice`` gives, per link group, the options and how many links each builds (the
    optimizer's choice under stock limits); ``None`` picks the cheapest option that reaches
    each group's length, moving to the next cheapest where stock runs out. ``spare_parts``
    names, per link group, the caged SKUs that take the modules bought per switch and how
    many (the optimizer's choice, ``layout.whole_modules``); by default the cheapest in use.

    Raises
    ------
    InvalidInput
        The design is invalid (see ``physical_plan``), no part reaches a group's length, or a
        given ``link_choice`` does not build exactly the links a group needs.
    """
    plan = planned(design, catalog)
    if link_choice is None and spare_parts is None:
        items = _cheapest_items(plan, catalog)
    else:
        choice = dict(link_choice) if link_choice is not None else cheapest_links(plan, catalog)
        items = _items(plan, catalog, choice, spare_parts)
    return _price(items, catalog, racks=plan.racks, rack_units=plan.rack_units)


# The items of each design's BOM with its cheapest links, by design and what they read of the
# catalog (plan.parts_key: its parts but their prices, and the links' prices): the min-time
# explanations re-solve on catalogs that differ only in switch prices, and the medium request
# (Llama 3 70B for $300M on roce-spectrum, top 3) built 79,000 BOMs of 18,000 designs, 7.0 of
# whose 11.0 s went to choosing the links and listing the items again.
_ITEMS_CACHE_SIZE = 50_000
_items_cache: dict[tuple[Design, PartsKey], tuple[_Item, ...]] = {}


def _cheapest_items(plan: PhysicalPlan, catalog: Catalog) -> tuple[_Item, ...]:
    key = (plan.design, parts_key(catalog))
    items = _items_cache.get(key)
    if items is None:
        if len(_items_cache) >= _ITEMS_CACHE_SIZE:
            _items_cache.clear()
        items = _items_cache[key] = _items(plan, catalog, cheapest_links(plan, catalog), None)
    return items


def _items(
    plan: PhysicalPlan,
    catalog: Catalog,
    choice: LinkChoice,
    spare_parts: Mapping[str, Mapping[str, int]] | None,
) -> tuple[_Item, ...]:
    items = [*_node_items(plan, catalog), *_switch_items(plan, catalog)]
    links = {lk.sku: lk for lk in catalog.links}
    for demand in plan.links:
        chosen = choice.get(demand.group, [])
        got = sum(n for _, n in chosen)
        if got != demand.count:
            msg = f"builds {got} links, the {demand.group} group needs {demand.count}"
            raise InvalidInput(msg, field=f"link_choice.{demand.group}")
        extra = (spare_parts or {}).get(demand.group)
        items.extend(_link_items(demand, [(o, n) for o, n in chosen if n], links, extra))
    return tuple(items)


def cheapest_links(plan: PhysicalPlan, catalog: Catalog) -> dict[str, list[tuple[LinkOption, int]]]:
    """Per group, the cheapest reaching option at list price; where stock runs short, the next
    cheapest."""
    # Stock in what a link takes: module ports (a twin-port module or a 2-way splitter is two).
    stock: dict[str, int | None] = {
        lk.sku: None
        if lk.availability.stock_units is None
        else lk.availability.stock_units * lk.module_ports
        for lk in catalog.links
    }
    choice: dict[str, list[tuple[LinkOption, int]]] = {}
    for demand in (d for d in plan.links if d.count):
        options = link_options(
            demand.length_m, demand.speed_gbps, demand.fabric, catalog, demand.link_ends
        )
        if not options:
            msg = (
                f"no {demand.fabric} cable or optic at {demand.speed_gbps}G reaches "
                f"{demand.length_m:g} m"
            )
            ports = sorted({end.partition("@")[2] for end in demand.link_ends if "@" in end})
            if ports:  # the tier needs the breakout: only a part of the port's speed fills it
                msg += (
                    f" and fills a broken-out {'/'.join(ports)}G switch port (a splitter cable "
                    "or a multi-port module, links.ports_per_module)"
                )
            raise InvalidInput(msg, field=f"links.{demand.group}")
        left, picks = demand.count, []
        for option in options:
            take = min(left, _links_in_stock(option, stock))
            if take:
                picks.append((option, take))
                for sku, per_link in option.parts:
                    remaining = stock[sku]
                    if remaining is not None:
                        stock[sku] = remaining - take * per_link
                left -= take
        if left:  # not enough stock anywhere: order the cheapest; check_bom reports the shortfall
            picks.append((options[0], left))
        choice[demand.group] = _merge(picks)
    return choice


def _price(
    items: Sequence[_Item], catalog: Catalog, *, racks: int, rack_units: int
) -> BillOfMaterials:
    """Price each item at the volume break its SKU's total quantity reaches."""
    totals = Counter[str]()
    for item in items:
        if not item.included:
            totals[item.sku] += item.quantity
    lines = []
    for item in items:
        listed = unit = 0
        if not item.included:
            listed = catalog.list_price_cents(item.sku)
            unit = catalog.unit_price_cents(item.sku, totals[item.sku], listed)
        source = item.source
        if unit not in (0, listed):
            source += f"; volume price at {totals[item.sku]} units (price_breaks)"
        lines.append(
            BomLine(
                item.category,
                item.sku,
                item.vendor,
                item.quantity,
                unit,
                unit * item.quantity,
                item.tier,
                item.power_kw,
                item.rack_units,
                source,
                item.length_m,
                catalog_of(catalog, item.sku),
            )
        )
    capex = sum(line.extended_price_cents for line in lines)
    network = sum(line.extended_price_cents for line in lines if line.category != "server")
    return BillOfMaterials(
        tuple(lines),
        capex,
        network,
        round(sum(line.power_kw for line in lines), 6),
        racks,
        rack_units,
    )


def spare_ports_note(ports: int, cabled: int = 1) -> str:
    """Why a multi-port NIC has ports no link reaches (the BOM says it on the NIC line);
    ``cabled``: one per fabric plane (issue 16, fabric800)."""
    return (
        f"{cabled} of {ports} ports cabled per NIC, {ports - cabled} spare: the design cables "
        "one port per NIC and fabric plane at the NIC's speed_gbps"
    )


def rack_scale_note(server: Server) -> str:
    """What a rack-scale line buys (issue 16): the whole rack, one line per rack, with the
    parts inside it that the BOM must not order again."""
    hosts = server.gpus_per_node // server.host_gpus
    return (
        f"rack-scale system bought whole, quantity = racks: {server.gpus_per_node} GPUs on "
        f"{hosts} hosts of {server.host_gpus}, scale-up domain of "
        f"{server.scale_up_domain_gpus} GPUs; its NVLink switch trays, power shelves and "
        "coolant manifolds are inside the rack and its price, not bought separately"
    )


def _node_items(plan: PhysicalPlan, catalog: Catalog) -> list[_Item]:
    """Servers, the NICs bought for them, and the NICs built into them (at $0)."""
    server = next(s for s in catalog.servers if s.sku == plan.servers.sku)
    items = [
        _Item(
            "server",
            server.sku,
            server.vendor,
            plan.servers.quantity,
            "node",
            plan.server_power_kw,
            plan.servers.quantity * server.rack_units,
            f"{rack_scale_note(server)}; {server.availability.source}"
            if server.rack_scale
            else server.availability.source,
        )
    ]
    if plan.nics.quantity:
        nic = next(n for n in catalog.nics if n.sku == plan.nics.sku)
        source = nic.availability.source
        if nic.ports > nic.plane_count:  # issue 16 (fabric800): one port per plane
            source = f"{spare_ports_note(nic.ports, nic.plane_count)}; {source}"
        elif nic.plane_count > 1:
            source = f"{nic.ports} ports cabled per NIC, one per fabric plane; {source}"
        items.append(
            _Item(
                "nic",
                nic.sku,
                nic.vendor,
                plan.nics.quantity,
                "node",
                plan.nic_power_kw,
                0,
                source,
            )
        )
    if plan.builtin_nics is not None:
        builtin = next(n for n in catalog.nics if n.sku == plan.builtin_nics.sku)
        why = (
            f"built into {server.sku}, included in the rack's price (servers.builtin_nics; "
            f"{server.builtin_nics} per rack, every one cabled to the fabric)"
            if server.rack_scale  # issue 16 (rackscale)
            else f"built into {server.sku}, included in its price (servers.builtin_nics)"
        )
        if not TOPOLOGIES.get(plan.design.topology).scale_out:
            why += "; spare: a one-node cluster has no scale-out fabric to cable them to"
        items.append(
            _Item(
                "nic",
                builtin.sku,
                builtin.vendor,
                plan.builtin_nics.quantity,
                "node",
                0.0,  # the server's power_kw covers them
                0,
                f"{why}; {builtin.availability.source}",
                included=True,
            )
        )
    return items


def _switch_items(plan: PhysicalPlan, catalog: Catalog) -> list[_Item]:
    items = []
    for demand in plan.switches:
        sw = next(s for s in catalog.switches if s.sku == demand.sku)
        items.append(
            _Item(
                "switch",
                sw.sku,
                sw.vendor,
                demand.quantity,
                demand.tier,
                demand.quantity * sw.power_w / 1000,
                demand.quantity * sw.rack_units,
                sw.availability.source,
            )
        )
    return items


def _link_items(
    demand: LinkDemand,
    chosen: Sequence[tuple[LinkOption, int]],
    links: Mapping[str, Link],
    extra: Mapping[str, int] | None = None,
) -> list[_Item]:
    """The group's cables, optics and fiber; the module ports of a transceiver or fan-out
    cable become whole parts (``ceil(ports / ports_per_module)`` over the group: a twin-port
    module's or a splitter's spare port is paid for), bought per switch where they fill a
    shared switch cage (``layout.whole_modules`` with the demand's ``spare_ports``)."""
    qty = Counter[str]()
    caged: set[str] = set()
    per_module = {sku: lk.module_ports for sku, lk in links.items()}
    for option, count in chosen:
        caged.update(option.caged)
        per_module.update(option.module_ports)  # a twin-port cable: 2 links, its row says 1
        for sku, per_link in option.parts:
            qty[sku] += count * per_link
    multi = {sku: n for sku, n in qty.items() if links[sku].kind != "fiber"}
    whole = whole_modules(
        multi,
        {sku: per_module[sku] for sku in multi},
        caged,
        demand.spare_ports,
        {sku: links[sku].price_cents for sku in multi},
        extra,
    )
    items = []
    for sku, amount in qty.items():
        part = links[sku]
        if part.kind != "fiber":
            amount = whole[sku]
        items.append(
            _Item(
                _CATEGORY_OF_LINK_KIND[part.kind],
                sku,
                part.vendor,
                amount,
                demand.group,
                amount * part.power_w / 1000,
                0,
                part.availability.source,
                demand.length_m,
            )
        )
    return items


def _links_in_stock(option: LinkOption, stock: Mapping[str, int | None]) -> int:
    """How many links of ``option`` the remaining stock builds (unlimited stock: no bound)."""
    bounds = [
        remaining // per_link
        for sku, per_link in option.parts
        if (remaining := stock[sku]) is not None
    ]
    return min(bounds, default=2**62)


def _merge(picks: list[tuple[LinkOption, int]]) -> list[tuple[LinkOption, int]]:
    merged = Counter[LinkOption]()
    for option, count in picks:
        merged[option] += count
    return list(merged.items())


BomSignature = tuple[tuple[str, int], ...]


def bom_signature(bom: BillOfMaterials) -> BomSignature:
    """What a buyer orders: each SKU with its total quantity. Two designs with the same
    signature are one design (a one-router dragonfly is a single switch), ranked once."""
    totals = Counter[str]()
    for line in bom.lines:
        totals[line.sku] += line.quantity
    return tuple(sorted(totals.items()))
