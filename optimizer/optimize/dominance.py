"""Drop network parts that another part of the same function beats on every count.

Servers are kept: a server SKU makes a design distinct (a vendor alternative the ranking shows).
A NIC, switch, cable or optic is *dominated* when another one with the same function
(everything the topology and the estimator read: NIC speed, ports, protocols; switch family,
losslessness, ports, speed, breakout; link kind, speed, family) is no dearer at every quantity
(list price and every volume break), draws no more power, takes no more rack units, adds no
more latency, reaches at least as far (cables and optics; fiber is kept whole) and is in stock
at least as much, with no longer lead time. Buying the dominated part instead can never lower
capex, power, racks or training time, so removing it keeps every optimum (ties keep the SKU
that sorts first, as the optimizer's tie-break would). Real vendor catalogs list many
near-duplicate parts; they shrink to the Pareto-efficient ones before any design is enumerated.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TypeVar

from optimizer.catalog.model import Availability, Catalog, Link, Nic, Server, Switch

P = TypeVar("P", Nic, Switch, Link)


def _price_points(catalog: Catalog, part: P) -> list[int]:
    """Quantities where a unit price can change: 1 and every break of the part."""
    return [1, *(pb.min_quantity for pb in catalog.breaks_for(part.sku))]


def _cheaper_everywhere(catalog: Catalog, a: P, b: P) -> bool:
    """Unit price of ``a`` <= that of ``b`` at every quantity (both are step functions)."""
    points = sorted({*_price_points(catalog, a), *_price_points(catalog, b)})
    return all(
        catalog.unit_price_cents(a.sku, q, a.price_cents)
        <= catalog.unit_price_cents(b.sku, q, b.price_cents)
        for q in points
    )


def _stock_at_least(a: Availability, b: Availability) -> bool:
    if a.stock_units is None:
        return True
    return b.stock_units is not None and a.stock_units >= b.stock_units


def _lead_no_longer(a: Availability, b: Availability) -> bool:
    if a.lead_time_days is None:
        return b.lead_time_days is None
    return b.lead_time_days is None or a.lead_time_days <= b.lead_time_days


def _keep_efficient(
    catalog: Catalog,
    parts: Sequence[P],
    signature: Callable[[P], tuple[object, ...]],
    no_worse: Callable[[P, P], bool],
) -> tuple[P, ...]:
    """The parts no other part of the same signature dominates (first SKU kept on ties)."""
    groups: dict[tuple[object, ...], list[P]] = defaultdict(list)
    for part in sorted(parts, key=lambda p: p.sku):
        groups[signature(part)].append(part)
    kept: list[P] = []
    for group in groups.values():
        for i, part in enumerate(group):
            beaten = any(
                j != i
                and no_worse(other, part)
                and _cheaper_everywhere(catalog, other, part)
                and _stock_at_least(other.availability, part.availability)
                and _lead_no_longer(other.availability, part.availability)
                and (
                    j < i
                    or not (
                        no_worse(part, other)
                        and _cheaper_everywhere(catalog, part, other)
                        and _stock_at_least(part.availability, other.availability)
                        and _lead_no_longer(other.availability, part.availability)
                    )
                )
                for j, other in enumerate(group)
            )
            if not beaten:
                kept.append(part)
    order = {p.sku: i for i, p in enumerate(parts)}
    return tuple(sorted(kept, key=lambda p: order[p.sku]))


def _support_no_higher(a: Nic | Switch, b: Nic | Switch) -> bool:
    """Issue 17 (tco): ``a``'s support contract costs no more per dollar than ``b``'s (an empty
    rate is the request's, unknown here: comparable only with another empty one)."""
    if a.support_rate is None or b.support_rate is None:
        return a.support_rate is b.support_rate
    return a.support_rate <= b.support_rate


def prune_dominated(catalog: Catalog) -> Catalog:
    """``catalog`` without dominated parts (price breaks of removed parts dropped too)."""
    nics = _keep_efficient(
        catalog,
        catalog.nics,
        lambda n: (n.speed_gbps, n.ports, n.protocols),
        lambda a, b: a.power_w <= b.power_w and _support_no_higher(a, b),
    )
    switches = _keep_efficient(
        catalog,
        catalog.switches,
        lambda w: (w.fabric_family, w.lossless, w.ports, w.port_speed_gbps, w.breakout),
        lambda a, b: (
            a.power_w <= b.power_w
            and a.rack_units <= b.rack_units
            and a.latency_ns <= b.latency_ns
            and _support_no_higher(a, b)
        ),
    )
    # Fiber is left alone: its reach stands for its type (multimode vs single-mode), which
    # decides the transceivers it pairs with (optimizer.topology.layout.matching_fiber).
    fibers = tuple(lk for lk in catalog.links if lk.kind == "fiber")
    links = fibers + _keep_efficient(
        catalog,
        [lk for lk in catalog.links if lk.kind != "fiber"],
        lambda lk: (lk.kind, lk.speed_gbps, lk.fabric_family),
        lambda a, b: a.power_w <= b.power_w and a.reach_m >= b.reach_m,
    )
    every: tuple[Server | Nic | Switch | Link, ...] = (*catalog.servers, *nics, *switches, *links)
    kept = {p.sku for p in every}
    return replace(
        catalog,
        nics=nics,
        switches=switches,
        links=links,
        price_breaks=tuple(pb for pb in catalog.price_breaks if pb.sku in kept),
    )
