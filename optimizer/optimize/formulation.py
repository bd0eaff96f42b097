"""The procurement MIP: pick one candidate design, buy its parts, choose link SKUs per length class.

Decomposition (docs/optimizer.md): the training time is nonlinear in the design, so the
structural choices it depends on (server, fabric, NIC bandwidth, topology, oversubscription,
switch radix, node count) are enumerated and timed beforehand (optimizer.optimize.candidates).
The MIP then chooses exactly one candidate and buys every part it needs, deciding

* which cable or optic SKU serves each link length class (a mix when stock runs out),
* the volume-price tier of every SKU (exact piecewise pricing, Catalog.price_breaks),

subject to the budget, power, rack and stock limits. All coefficients are integers (cents,
watts, seconds), as CP-SAT requires.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from optimizer.catalog.model import Catalog, Link, Nic, Server, Switch
from optimizer.cost.tco import TCO_UNITS_PER_CENT, TcoPrices
from optimizer.optimize.mip import MAX_ABS_SUM, MipModel
from optimizer.topology.bom import BillOfMaterials
from optimizer.topology.plan import LinkDemand


@dataclass(frozen=True)
class LinkClass:
    """Links that any of the same cable/optic options can serve."""

    length_m: float
    speed_gbps: int
    fabric: str
    # The link group: it fixes the ends (host-switch, switch-switch), hence the options, and
    # twin-port modules are rounded up to whole modules per group, as the BOM buys them.
    group: str = ""
    # issue 16 (fabric800): the ends with their switches' cages (a 1.6T module fits one
    # switch's cage and not another's) and broken-out ports (only a part that fills the port
    # fits); plain ends name no more than the group, so names stay as before.
    ends: str = ""

    @classmethod
    def of(cls, need: LinkDemand) -> LinkClass:
        ends = "" if need.ends is None else "-".join(need.ends)
        return cls(need.length_m, need.speed_gbps, need.fabric, need.group, ends)

    @property
    def label(self) -> str:
        """The group, and the cage or broken-out ends where stated: unique in variable
        names."""
        plain = ":" not in self.ends and "@" not in self.ends
        return self.group if plain else f"{self.group}@{self.ends}"


@dataclass(frozen=True)
class LinkChoice:
    """One way to build a link of a class: SKU quantities per link (e.g. 2 optics + 30 m fiber).

    Transceiver quantities are module ports; ``module_ports`` names the multi-port modules
    (SKU, ports per module), which the MIP buys whole.
    """

    name: str
    skus: tuple[tuple[str, int], ...]
    power_w: float
    module_ports: tuple[tuple[str, int], ...] = ()
    caged: tuple[str, ...] = ()  # the multi-port SKUs in shared switch cages (LinkOption)


@dataclass(frozen=True)
class CandidateRow:
    """What the MIP needs to know of one candidate design."""

    fixed_qty: Mapping[str, int]  # servers, NICs, switches: SKU -> quantity
    link_demand: Mapping[LinkClass, int]
    power_w: int  # servers, NICs and switches
    racks: int
    time_s: int  # training time under the request's confidence level
    group: int  # candidates with the same distinct key share a group (top-K exclusion)
    # Empty ports of the parts in shared switch cages, bought per switch (LinkDemand)
    link_spare: Mapping[LinkClass, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Bounds:
    budget_cents: int | None = None
    max_power_w: int | None = None
    max_racks: int | None = None
    max_time_s: int | None = None
    max_tco_cents: int | None = None  # issue 17 (tco): needs build_model's ``tco`` prices


@dataclass
class VarMap:
    """Indices of the MIP variables, for decoding a solution."""

    pick: list[int]
    links: dict[tuple[LinkClass, int], int]
    cost_terms: dict[int, int]
    time_terms: dict[int, int]
    # issue 17 (tco): lifetime cost in 1/tco_units_per_cent cents; empty without prices
    tco_terms: dict[int, int] = field(default_factory=dict)
    tco_units_per_cent: int = 1
    # whole modules of each multi-port SKU per class (the spare ones included)
    modules: dict[tuple[LinkClass, str], int] = field(default_factory=dict)


def _price_tiers(
    catalog: Catalog, sku: str, list_cents: int, qty_ub: int
) -> list[tuple[int, int, int]]:
    """(min_qty, max_qty, unit_cents) tiers covering 1..qty_ub; the deepest break applies."""
    tiers: list[tuple[int, int, int]] = []
    lo, unit = 1, list_cents
    for pb in catalog.breaks_for(sku):
        if pb.min_quantity > qty_ub:
            break
        if pb.min_quantity > lo:
            tiers.append((lo, pb.min_quantity - 1, unit))
        lo, unit = max(lo, pb.min_quantity), pb.unit_price_cents
    tiers.append((lo, qty_ub, unit))
    return tiers


def list_prices(catalog: Catalog) -> dict[str, int]:
    rows: Iterable[Server | Nic | Switch | Link] = (
        *catalog.servers,
        *catalog.nics,
        *catalog.switches,
        *catalog.links,
    )
    return {r.sku: r.price_cents for r in rows}


def stock_limits(catalog: Catalog) -> dict[str, int]:
    rows: Iterable[Server | Nic | Switch | Link] = (
        *catalog.servers,
        *catalog.nics,
        *catalog.switches,
        *catalog.links,
    )
    return {
        r.sku: r.availability.stock_units for r in rows if r.availability.stock_units is not None
    }


def ordered_quantities(bom: BillOfMaterials, server: Server | None = None) -> dict[str, int]:
    """Units of each SKU the BOM orders. The NICs built into ``server`` (its $0
    ``builtin_nic_sku`` line) come with the server and are never ordered from the NIC row's
    stock, as the MIP's stock rows and check_bom count them."""
    used: dict[str, int] = defaultdict(int)
    for line in bom.lines:
        if not _built_in(line.sku, line.category, line.unit_price_cents, server):
            used[line.sku] += line.quantity
    return dict(used)


def _built_in(sku: str, category: str, unit_price_cents: int, server: Server | None) -> bool:
    return (
        server is not None
        and server.builtin_nics > 0
        and category == "nic"
        and sku == server.builtin_nic_sku
        and unit_price_cents == 0
    )


def over_stock(
    bom: BillOfMaterials, stock: Mapping[str, int], server: Server | None = None
) -> bool:
    """The BOM orders more of some SKU (over all its lines) than the catalog has in stock;
    ``server``'s built-in NICs are not ordered (see ``ordered_quantities``)."""
    used = ordered_quantities(bom, server)
    return any(qty > stock[sku] for sku, qty in used.items() if sku in stock)


def build_model(
    rows: Sequence[CandidateRow],
    options: Mapping[LinkClass, Sequence[LinkChoice]],
    catalog: Catalog,
    bounds: Bounds,
    *,
    excluded_groups: Iterable[int] = (),
    tco: TcoPrices | None = None,
) -> tuple[MipModel, VarMap]:
    """The MIP over ``rows``; its objective is left for the caller (cost, time or TCO).

    With ``tco`` prices the VarMap also carries the lifetime cost (capex plus the annuity of
    support on every line's price, energy per watt and rent per rack), linear in the chosen
    row and the link and tier variables."""
    m = MipModel()
    excluded = set(excluded_groups)

    # Exactly one candidate design is bought; excluded groups (ranks already returned) are not.
    pick = [m.binary(f"pick[{i}]") for i in range(len(rows))]
    m.add("one_design", dict.fromkeys(pick, 1), lo=1, hi=1)
    for i, row in enumerate(rows):
        if row.group in excluded:
            m.add(f"exclude[{i}]", {pick[i]: 1}, hi=0)

    # Every link the chosen design needs is built from one of its class's options.
    sku_terms: dict[str, dict[int, int]] = defaultdict(dict)
    sku_ub: dict[str, int] = defaultdict(int)
    link_vars: dict[tuple[LinkClass, int], int] = {}
    power_terms: dict[int, int] = {}
    module_power_w = {lk.sku: lk.power_w for lk in catalog.links}
    module_vars: dict[tuple[LinkClass, str], int] = {}
    for cls in sorted(
        {c for r in rows for c in r.link_demand},
        key=lambda c: (c.fabric, c.speed_gbps, c.length_m, c.group, c.ends),
    ):
        demand_ub = max(r.link_demand.get(cls, 0) for r in rows)
        balance: dict[int, int] = {
            pick[i]: -r.link_demand[cls] for i, r in enumerate(rows) if cls in r.link_demand
        }
        ports: dict[str, dict[int, int]] = defaultdict(dict)  # multi-port SKU -> port terms
        per_module: dict[str, int] = {}
        caged = {sku for opt in options[cls] for sku in opt.caged}
        spare = {pick[i]: n for i, r in enumerate(rows) if (n := r.link_spare.get(cls, 0))}
        spare_ub = max(spare.values(), default=0)
        for j, opt in enumerate(options[cls]):
            y = m.var(
                f"links[{cls.length_m}m,{cls.speed_gbps}G,{cls.fabric},{cls.label},{opt.name}]",
                0,
                demand_ub,
            )
            link_vars[(cls, j)] = y
            balance[y] = 1
            twins = dict(opt.module_ports)
            power = opt.power_w
            for sku, per_link in opt.skus:
                if sku in twins:  # bought as whole modules below
                    ports[sku][y] = ports[sku].get(y, 0) + per_link
                    per_module[sku] = twins[sku]
                    power -= per_link * module_power_w[sku] / twins[sku]
                    continue
                sku_terms[sku][y] = sku_terms[sku].get(y, 0) + per_link
                sku_ub[sku] += per_link * demand_ub
            power_terms[y] = round(power)
        m.add(
            f"links_built[{cls.length_m}m,{cls.speed_gbps}G,{cls.fabric},{cls.label}]",
            balance,
            lo=0,
            hi=0,
        )
        # Whole modules of each multi-port transceiver: k * modules >= ports used (per group).
        # In shared switch cages each switch buys whole parts (layout.whole_modules): the
        # caged SKUs' modules together cover their ports plus the chosen row's spare ports,
        # one aggregate row per class (kmin * sum modules >= ports + spare * pick, as tight
        # in the LP as the integer count), the extra modules only on caged SKUs the links
        # use, each part carrying a link (modules <= ports). Which used SKU takes them is the
        # solver's choice (the cheapest at its tier within stock); the BOM buys the same.
        at_cage = sorted(sku for sku in ports if sku in caged)
        for sku, terms in sorted(ports.items()):
            k = per_module[sku]
            extra = spare_ub if sku in caged else 0
            ub = -(-(max(terms.values()) * demand_ub + extra) // k)
            z = m.var(f"modules[{cls.length_m}m,{cls.speed_gbps}G,{cls.label},{sku}]", 0, ub)
            module_vars[(cls, sku)] = z
            m.add(
                f"whole_modules[{cls.length_m}m,{cls.speed_gbps}G,{cls.label},{sku}]",
                {z: k, **{v: -q for v, q in terms.items()}},
                lo=0,
            )
            if spare and sku in caged and len(at_cage) > 1:
                # Every part holds at least one link (modules <= ports): a switch's spare port
                # shares its cage with a link of the same part, so a SKU takes no more spare
                # ports than it carries links. Without this the spare of six odd leaves went
                # to twin modules carrying two links, a mix no switch-by-switch cabling has.
                m.add(
                    f"spare_used[{cls.length_m}m,{cls.speed_gbps}G,{cls.label},{sku}]",
                    {z: 1, **{v: -q for v, q in terms.items()}},
                    hi=0,
                )
            sku_terms[sku][z] = 1
            sku_ub[sku] += ub
            power_terms[z] = round(module_power_w[sku])
        if spare and at_cage:
            _spare_ports(m, cls, options[cls], at_cage, ports, per_module, module_vars, spare)

    for i, row in enumerate(rows):
        power_terms[pick[i]] = row.power_w
        for sku, qty in row.fixed_qty.items():
            sku_terms[sku][pick[i]] = qty
    for sku in {s for r in rows for s in r.fixed_qty}:
        sku_ub[sku] += max(r.fixed_qty.get(sku, 0) for r in rows)

    # Each SKU is paid at the unit price of the volume tier its total quantity falls in.
    prices, stock = list_prices(catalog), stock_limits(catalog)
    cost_terms: dict[int, int] = {}
    support_terms: dict[int, float] = defaultdict(float)  # issue 17 (tco): cents per year
    for sku in sorted(sku_terms):
        rate = 0.0 if tco is None else tco.support_rate(sku)
        ub = sku_ub[sku]
        if sku in stock:
            m.add(f"stock[{sku}]", sku_terms[sku], hi=stock[sku])
            ub = min(ub, stock[sku])
        tiers = _price_tiers(catalog, sku, prices[sku], max(ub, 1))
        if len(tiers) == 1:
            for v, q in sku_terms[sku].items():
                cost_terms[v] = cost_terms.get(v, 0) + q * tiers[0][2]
                support_terms[v] += rate * q * tiers[0][2]
            continue
        split: dict[int, int] = {v: q for v, q in sku_terms[sku].items()}
        chosen: dict[int, int] = {}
        for t, (lo, hi, unit) in enumerate(tiers):
            z = m.binary(f"tier[{sku},{t}]")
            w = m.var(f"qty[{sku},{t}]", 0, hi)
            m.add(f"tier_lo[{sku},{t}]", {w: 1, z: -lo}, lo=0)
            m.add(f"tier_hi[{sku},{t}]", {w: 1, z: -hi}, hi=0)
            split[w] = -1
            chosen[z] = 1
            cost_terms[w] = unit
            support_terms[w] += rate * unit
        m.add(f"tier_total[{sku}]", split, lo=0, hi=0)
        m.add(f"one_tier[{sku}]", chosen, hi=1)

    if bounds.budget_cents is not None:
        m.add("budget", cost_terms, hi=bounds.budget_cents)
    if bounds.max_power_w is not None:
        m.add("power", power_terms, hi=bounds.max_power_w)
    if bounds.max_racks is not None:
        m.add("racks", {pick[i]: r.racks for i, r in enumerate(rows)}, hi=bounds.max_racks)
    time_terms = {pick[i]: r.time_s for i, r in enumerate(rows)}
    if bounds.max_time_s is not None:
        m.add("target_time", time_terms, hi=bounds.max_time_s)
    tco_terms: dict[int, int] = {}
    units = 1
    if tco is not None:  # issue 17 (tco)
        racks = {pick[i]: r.racks for i, r in enumerate(rows)}
        exact = _tco_terms(tco, cost_terms, support_terms, power_terms, racks)
        units = _tco_units(m, exact)
        tco_terms = {v: round(c * units) for v, c in exact.items() if round(c * units)}
        if bounds.max_tco_cents is not None:
            m.add("max_tco", tco_terms, hi=bounds.max_tco_cents * units)
    return m, VarMap(pick, link_vars, cost_terms, time_terms, tco_terms, units, module_vars)


def _spare_ports(
    m: MipModel,
    cls: LinkClass,
    options: Sequence[LinkChoice],
    at_cage: Sequence[str],
    ports: Mapping[str, Mapping[int, int]],
    per_module: Mapping[str, int],
    module_vars: Mapping[tuple[LinkClass, str], int],
    spare: Mapping[int, int],
) -> None:
    """kmin * (modules of the caged SKUs) >= their ports + the picked row's spare ports.

    Where some option of the class uses no caged SKU, a row built from such options alone
    buys no spare (layout.whole_modules): the spare then counts only when ``used`` (a binary
    that any caged port forces to 1) is set."""
    name = f"{cls.length_m}m,{cls.speed_gbps}G,{cls.label}"
    k_min = min(per_module[sku] for sku in at_cage)
    total: dict[int, int] = {module_vars[(cls, sku)]: k_min for sku in at_cage}
    caged_ports: dict[int, int] = defaultdict(int)
    for sku in at_cage:
        for v, q in ports[sku].items():
            caged_ports[v] += q
    for v, q in caged_ports.items():
        total[v] = total.get(v, 0) - q
    for p, n in spare.items():
        total[p] = -n
    if all(set(opt.caged) & set(at_cage) for opt in options):
        m.add(f"spare_ports[{name}]", total, lo=0)
        return
    used = m.binary(f"caged_used[{name}]")
    big = sum(q * m.variables[v].ub for v, q in caged_ports.items())
    m.add(f"caged_used_ports[{name}]", {**caged_ports, used: -big}, hi=0)
    total[used] = -max(spare.values())  # off: kmin * modules >= ports + spare - max spare
    m.add(f"spare_ports[{name}]", total, lo=-max(spare.values()))


def _tco_units(m: MipModel, exact: Mapping[int, float]) -> int:
    """The finest unit (TCO_UNITS_PER_CENT, or a tenth of it down to a cent) at which every
    TCO coefficient times its variable's bound stays within what each backend solves exactly
    (MipModel's magnitude check): rounding a coefficient to it costs at most half a unit."""
    worst = sum(
        abs(c) * max(abs(m.variables[v].lb), abs(m.variables[v].ub)) for v, c in exact.items()
    )
    units = TCO_UNITS_PER_CENT
    while units > 1 and worst * units >= MAX_ABS_SUM / 2:
        units //= 10
    return units


def _tco_terms(
    tco: TcoPrices,
    cost_terms: Mapping[int, int],
    support_terms: Mapping[int, float],
    power_terms: Mapping[int, int],
    racks: Mapping[int, int],
) -> dict[int, float]:
    """Lifetime cost per unit of each variable, in cents."""
    exact: dict[int, float] = defaultdict(float)
    for v, cents in cost_terms.items():
        exact[v] += cents + tco.annuity * support_terms.get(v, 0.0)
    for v, watts in power_terms.items():
        exact[v] += watts * tco.energy_cents_per_w
    for v, n in racks.items():
        exact[v] += n * tco.space_cents_per_rack
    return exact
