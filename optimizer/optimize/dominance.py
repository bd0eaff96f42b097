"""Drop parts that other parts of the same function beat on every count.

A NIC, switch, cable or optic is *dominated* when another one with the same function
(everything the topology and the estimator read: NIC speed, ports, protocols, cage form
factor; switch family, losslessness, ports, speed, breakout; link kind, speed, family) is no
dearer at every quantity
(list price and every volume break), draws no more power, takes no more rack units, adds no
more latency, reaches at least as far (cables and optics; fiber is kept whole) and is in stock
at least as much. Buying the dominated part instead can never lower
capex, power, racks or training time, so removing it keeps every optimum (ties keep the SKU
that sorts first, as the optimizer's tie-break would). Real vendor catalogs list many
near-duplicate parts; they shrink to the Pareto-efficient ones before any design is enumerated.

Servers are different: a server SKU makes a design distinct (a vendor alternative the ranking
shows), so one better server does not remove another from a top K. A server is dropped only
when at least K servers of the same figures (everything the estimator, the topology and the
facility read) beat it: each of them builds every design it builds, no dearer, so K distinct
designs rank ahead of any design on it. A 5,000-SKU list of a few server classes keeps a
handful per class.

Only parts the request may buy (its vendor filters, its lead-time cap) count as a dominator:
a part that beats another but is excluded must not remove it. Links it may not buy are left
out altogether, since a BOM picks its links from the catalog. Lead time is otherwise no
count: nothing but that cap reads it.
"""

from __future__ import annotations

import weakref
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from optimizer.catalog.model import Availability, Catalog, Link, Nic, PriceBreak, Server, Switch

P = TypeVar("P", Server, Nic, Switch, Link)
Usable = Callable[[Server | Nic | Switch | Link], bool]


class _Prices:
    """Each SKU's volume breaks, indexed once (the catalog's own look-ups scan every break)."""

    def __init__(self, catalog: Catalog) -> None:
        breaks: dict[str, list[PriceBreak]] = defaultdict(list)
        for pb in catalog.price_breaks:
            breaks[pb.sku].append(pb)
        self._breaks = {
            sku: sorted(pbs, key=lambda pb: pb.min_quantity) for sku, pbs in breaks.items()
        }

    def points(self, part: Server | Nic | Switch | Link) -> list[int]:
        """Quantities where a unit price can change: 1 and every break of the part."""
        return [1, *(pb.min_quantity for pb in self._breaks.get(part.sku, ()))]

    def unit_cents(self, part: Server | Nic | Switch | Link, quantity: int) -> int:
        """Unit price at ``quantity`` (the deepest break that applies, as Catalog's)."""
        price = part.price_cents
        for pb in self._breaks.get(part.sku, ()):
            if pb.min_quantity <= quantity:
                price = pb.unit_price_cents
        return price

    def cheaper_everywhere(self, a: P, b: P) -> bool:
        """Unit price of ``a`` <= that of ``b`` at every quantity (both are step functions)."""
        points = {*self.points(a), *self.points(b)}
        return all(self.unit_cents(a, q) <= self.unit_cents(b, q) for q in points)


def _stock_at_least(a: Availability, b: Availability) -> bool:
    if a.stock_units is None:
        return True
    return b.stock_units is not None and a.stock_units >= b.stock_units


def _keep_efficient(
    prices: _Prices,
    parts: Sequence[P],
    signature: Callable[[P], tuple[object, ...]],
    no_worse: Callable[[P, P], bool],
    usable: Usable,
    dominators: int = 1,
) -> tuple[P, ...]:
    """The parts fewer than ``dominators`` usable parts of the same signature dominate
    (on an exact tie the SKU that sorts first dominates)."""

    def beats(other: P, part: P) -> bool:
        return (
            no_worse(other, part)
            and prices.cheaper_everywhere(other, part)
            and _stock_at_least(other.availability, part.availability)
        )

    groups: dict[tuple[object, ...], list[P]] = defaultdict(list)
    for part in sorted(parts, key=lambda p: p.sku):
        groups[signature(part)].append(part)
    kept: list[P] = []
    for group in groups.values():
        if len(group) <= dominators:
            kept.extend(group)
            continue
        # Cheapest list price first: a dominator is never dearer at quantity 1, so only the
        # parts before (or tied with) a part can beat it.
        ordered = sorted(group, key=lambda p: (p.price_cents, p.sku))
        for i, part in enumerate(ordered):
            found = 0
            for j, other in enumerate(ordered):
                if other.price_cents > part.price_cents:
                    break
                if j == i or not usable(other) or not beats(other, part):
                    continue
                if beats(part, other) and part.sku < other.sku:
                    continue  # an exact tie: the SKU that sorts first stays
                found += 1
                if found >= dominators:
                    break
            if found < dominators:
                kept.append(part)
    order = {p.sku: i for i, p in enumerate(parts)}
    return tuple(sorted(kept, key=lambda p: order[p.sku]))


def _support_no_higher(a: Server | Nic | Switch, b: Server | Nic | Switch) -> bool:
    """Issue 17 (tco): ``a``'s support contract costs no more per dollar than ``b``'s (an empty
    rate is the request's, unknown here: comparable only with another empty one)."""
    if a.support_rate is None or b.support_rate is None:
        return a.support_rate is b.support_rate
    return a.support_rate <= b.support_rate


def server_figures(s: Server) -> tuple[object, ...]:
    """Everything about a server but its identity, price and supply: what the estimator,
    the topology, buildability and the facility read. Equal figures build the same designs."""
    return (
        s.gpu_model,
        s.gpus_per_node,
        s.gpu_peak_bf16_tflops,
        s.gpu_peak_fp8_tflops,
        s.gpu_memory_gb,
        s.intra_node_gbytes_per_s,
        s.max_nics,
        s.forwarding,
        s.builtin_nic_sku,
        s.builtin_nics,
        s.cooling,
        s.scale_up_gpus,
        s.gpus_per_host,
    )


def _matchable_fibers(links: Sequence[Link]) -> tuple[Link, ...]:
    """The fibers ``optimizer.topology.layout.matching_fiber`` can pick: per speed, fabric
    family, connector and reach the cheapest list price (first SKU on ties). Its reach stands
    for the fiber's type (multimode vs single-mode) and its connector for the optics it mates,
    so neither is ever merged; a link's fiber is chosen by (reach, list price, SKU) among
    those that fit its speed, fabric and connector, and fitting reads only those."""
    best: dict[tuple[object, ...], Link] = {}
    for lk in links:
        if lk.kind != "fiber":
            continue
        group = (lk.speed_gbps, lk.fabric_family, lk.connector, lk.reach_m)
        held = best.get(group)
        if held is None or (lk.price_cents, lk.sku) < (held.price_cents, held.sku):
            best[group] = lk
    kept = {lk.sku for lk in best.values()}
    return tuple(lk for lk in links if lk.sku in kept)


def _everything(_: Server | Nic | Switch | Link) -> bool:
    return True


@dataclass(frozen=True)
class _Memo:
    catalog: weakref.ref[Catalog]
    pruned: dict[tuple[object, ...], Catalog]


# Pruned catalogs per catalog object (catalogs are immutable): one request's explanations
# re-solve on the same catalog several times, a batch many times.
_PRUNED: dict[int, _Memo] = {}


def prune_dominated(
    catalog: Catalog,
    *,
    top_k: int | None = None,
    usable: Usable | None = None,
    links_usable: Usable | None = None,
    usable_key: tuple[object, ...] = (),
) -> Catalog:
    """``catalog`` without dominated parts (price breaks of removed parts dropped too).

    ``top_k``: also drop servers that at least ``top_k`` usable servers dominate (None keeps
    every server). ``usable``: the servers, NICs and switches the request may buy (only they
    dominate); ``links_usable``: the links it may buy (the others are left out: a BOM takes
    its links from the catalog); ``usable_key`` names the filters for the per-catalog memo
    (equal keys, equal filters). Without filters every part may dominate.
    """
    memo = _PRUNED.get(id(catalog))
    if memo is None or memo.catalog() is not catalog:
        key_id = id(catalog)
        memo = _Memo(weakref.ref(catalog, lambda _: _PRUNED.pop(key_id, None)), {})
        _PRUNED[key_id] = memo
    filtered = usable is not None or links_usable is not None
    key = (top_k, usable_key if filtered else None)
    if key not in memo.pruned:
        memo.pruned[key] = _prune(
            catalog, top_k, usable or _everything, links_usable or _everything
        )
    return memo.pruned[key]


def _prune(catalog: Catalog, top_k: int | None, usable: Usable, links_usable: Usable) -> Catalog:
    prices = _Prices(catalog)
    servers = catalog.servers
    if top_k is not None:
        servers = _keep_efficient(
            prices,
            catalog.servers,
            server_figures,
            lambda a, b: (
                a.power_kw <= b.power_kw
                and a.rack_units <= b.rack_units
                and _support_no_higher(a, b)
            ),
            usable,
            dominators=max(1, top_k),
        )
    nics = _keep_efficient(
        prices,
        catalog.nics,
        lambda n: (n.speed_gbps, n.plane_count, n.ports, n.protocols, n.forwarding, n.form_factor),
        lambda a, b: a.power_w <= b.power_w and _support_no_higher(a, b),
        usable,
    )
    builtin = {s.builtin_nic_sku for s in servers if s.builtin_nics}
    nics += tuple(n for n in catalog.nics if n.sku in builtin and n not in nics)
    switches = _keep_efficient(
        prices,
        catalog.switches,
        # its cages decide which cables and optics fit it: another cage, another part list
        lambda w: (
            w.fabric_family,
            w.lossless,
            w.ports,
            w.port_speed_gbps,
            w.breakout,
            w.ports_per_cage,
            w.form_factor,
        ),
        lambda a, b: (
            a.power_w <= b.power_w
            and a.rack_units <= b.rack_units
            and a.latency_ns <= b.latency_ns
            and _support_no_higher(a, b)
            # issue 14 (sharp): a non-SHARP switch never stands in for a SHARP one
            and (a.in_network_reduction or not b.in_network_reduction)
        ),
        usable,
    )
    # A BOM takes its links from the catalog (topology.bom.cheapest_links), so the links the
    # request may not buy are left out, not only kept from dominating: the search's greedy
    # BOMs, which bound and prune it, then build from the same links as the MIP.
    buyable = [lk for lk in catalog.links if links_usable(lk)]
    fibers = _matchable_fibers(buyable)
    links = fibers + _keep_efficient(
        prices,
        [lk for lk in buyable if lk.kind != "fiber"],
        lambda lk: (
            lk.kind,
            lk.speed_gbps,
            lk.fabric_family,
            lk.side,
            lk.form_factor,
            lk.ports_per_module,
            lk.connector,
            # an optic's reach picks its fiber (matching_fiber): another reach, another medium
            lk.reach_m if lk.kind == "transceiver" else None,
        ),
        lambda a, b: a.power_w <= b.power_w and a.reach_m >= b.reach_m,
        _everything,  # every link left may be bought
    )
    every: tuple[Server | Nic | Switch | Link, ...] = (*servers, *nics, *switches, *links)
    kept = {p.sku for p in every}
    if len(kept) == len(catalog.servers) + len(catalog.nics) + len(catalog.switches) + len(
        catalog.links
    ):
        return catalog
    return replace(
        catalog,
        servers=servers,
        nics=tuple(n for n in catalog.nics if n.sku in kept),
        switches=switches,
        links=links,
        price_breaks=tuple(pb for pb in catalog.price_breaks if pb.sku in kept),
    )
