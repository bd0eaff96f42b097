"""Dragonfly: groups of all-to-all routers joined by global links.

Source: J. Kim, W. J. Dally, S. Scott, D. Abts, "Technology-driven, highly-scalable dragonfly
topology", ISCA 2008. Each router has p terminal ports, a - 1 local ports (all-to-all inside a
group of a routers) and h global ports; radix k = p + (a - 1) + h; at most g = a*h + 1 groups;
E <= p*a*g. The balanced dragonfly a = 2p = 2h loads global channels like terminal channels
under uniform random traffic; from a radix k it gives p = h = floor((k + 1)/4), a = 2p.

Rules used here
---------------
- groups g = ceil(E / (p*a)), each of a routers; refuse g > a*h + 1. A single group needs only
  ceil(E/p) routers (a smaller complete graph).
- Global links: every pair of groups joined by m = floor(a*h/(g - 1)) links (all pairs equal,
  so minimal routing is uniform); g*(g - 1)/2 * m global links in all.
- Intra-group links: g * a*(a - 1)/2; terminal links: E.
- Bisection: (g//2)*(g - g//2)*m global links (one group: the cut through its complete graph).
- Minimal route: local, global, local: up to 4 routers crossed (2 inside one group).
- ``p``, ``a``, ``h`` may be set through topology parameters; they must fit the radix.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from optimizer.errors import InvalidInput
from optimizer.topology.network import (
    LinkGroupSizing,
    NetworkSizing,
    Requirement,
    SizingArgs,
    TierSizing,
    bisection_ratio,
    refuse_oversubscription,
    require_positive,
)
from optimizer.topology.profile import TopologyProfile


def balanced_shape(radix: int) -> tuple[int, int, int]:
    """(p, a, h) of the balanced dragonfly a = 2p = 2h that fits ``radix`` ports: k >= 4p - 1."""
    p = (radix + 1) // 4
    if p < 1:
        msg = f"a balanced dragonfly needs routers of at least 3 ports, got {radix}"
        raise InvalidInput(msg, field="radix")
    return p, 2 * p, p


def max_endpoints(radix: int, params: Mapping[str, int] | None = None) -> int:
    """Largest E: p terminals x a routers x (a*h + 1) groups."""
    p, a, h = _shape(radix, params or {})
    return p * a * (a * h + 1)


def size_dragonfly(
    endpoints: int,
    radix: int,
    *,
    oversubscription: float = 1.0,
    params: Mapping[str, int] | None = None,
) -> NetworkSizing:
    """Size a dragonfly of ``radix``-port routers for ``endpoints`` terminal ports."""
    require_positive(endpoints, "endpoints")
    require_positive(radix, "radix")
    refuse_oversubscription("dragonfly", oversubscription)
    p, a, h = _shape(radix, params or {})
    groups = math.ceil(endpoints / (p * a))
    if groups > a * h + 1:
        msg = (
            f"{endpoints} endpoints need {groups} groups; a dragonfly with p={p}, a={a}, "
            f"h={h} has at most {a * h + 1} groups ({p * a * (a * h + 1)} endpoints)"
        )
        raise InvalidInput(msg, field="endpoints")
    if groups == 1:
        a = math.ceil(endpoints / p)
    routers = groups * a
    per_pair = (a * h) // (groups - 1) if groups > 1 else 0
    global_links = groups * (groups - 1) // 2 * per_pair
    local_links = groups * a * (a - 1) // 2
    if groups > 1:
        bisection = (groups // 2) * (groups - groups // 2) * per_pair
    elif a > 1:  # one group: the cut through its complete graph of routers
        bisection = (a // 2) * (a - a // 2)
    else:  # one router: a crossbar
        bisection = endpoints // 2
    bisection = min(bisection, endpoints // 2)
    # A group's (g - 1)*m global ports are spread over its a routers as evenly as possible.
    busiest_global = math.ceil((groups - 1) * per_pair / a)
    tier = TierSizing(
        "router",
        routers,
        radix,
        endpoints,
        2 * (local_links + global_links),
        busiest_switch_ports_used=min(p, endpoints) + (a - 1) + busiest_global,
    )
    hops = 4 if groups > 1 else (2 if routers > 1 else 1)
    profile = TopologyProfile(
        family="dragonfly",
        endpoints=endpoints,
        tiers=2 if groups > 1 else 1,
        max_switch_hops=hops,
        oversubscription=1.0,
        bisection_ratio=bisection_ratio(bisection, endpoints),
        endpoints_per_leaf=min(p, endpoints),
    )
    groups_sizing = (
        LinkGroupSizing("node-leaf", endpoints),
        LinkGroupSizing("intra-group", local_links),
        LinkGroupSizing("global", global_links),
    )
    return NetworkSizing(
        "dragonfly", endpoints, (tier,), groups_sizing, bisection, profile, pods=groups
    )


def _shape(radix: int, params: Mapping[str, int]) -> tuple[int, int, int]:
    """Balanced (p, a, h) for ``radix``, overridden by any of p, a, h given in ``params``."""
    unknown = set(params) - {"p", "a", "h"}
    if unknown:
        msg = f"unknown dragonfly parameter(s) {sorted(unknown)}, expected p, a, h"
        raise InvalidInput(msg, field="topology_params")
    p0, a0, h0 = balanced_shape(radix)
    p, a, h = params.get("p", p0), params.get("a", a0), params.get("h", h0)
    for name, value in (("p", p), ("a", a), ("h", h)):
        require_positive(value, f"topology_params.{name}")
    if p + (a - 1) + h > radix:
        msg = f"p + (a - 1) + h = {p + a - 1 + h} exceeds the router radix {radix}"
        raise InvalidInput(msg, field="topology_params")
    return p, a, h


def required(args: SizingArgs) -> Requirement:
    """The verifier's count (optimizer.topology.check): routers and links from (p, a, h)."""
    e, params = args.endpoints, args.params_map
    p0, a0, h0 = balanced_shape(args.radix)
    p, a, h = params.get("p", p0), params.get("a", a0), params.get("h", h0)
    groups = math.ceil(e / (p * a))
    if groups > a * h + 1:
        raise InvalidInput(f"{groups} groups exceed a*h + 1", field="design.nodes")
    if groups == 1:  # one group: only the routers its endpoints fill
        a = math.ceil(e / p)
    return Requirement(
        {"router": groups * a},
        {
            "node-leaf": e,
            "intra-group": groups * a * (a - 1) // 2,
            "global": groups * (groups - 1) // 2,
        },
        {"router": (("node-leaf", 1), ("intra-group", 2), ("global", 2))},
    )
