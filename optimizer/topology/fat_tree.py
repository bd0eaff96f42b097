"""Two- and three-tier fat-trees (folded Clos), oversubscribed at the leaf or aggregation tier.

Sources
-------
- C. E. Leiserson, "Fat-trees: universal networks for hardware-efficient supercomputing",
  IEEE Trans. Computers C-34(10), 1985: the fat-tree and its bisection argument.
- M. Al-Fares, A. Loukissas, A. Vahdat, "A scalable, commodity data center network
  architecture", SIGCOMM 2008: the k-ary three-tier fat-tree of k-port switches, k pods of k/2
  edge and k/2 aggregation switches, (k/2)^2 core switches, k^3/4 hosts, 5k^2/4 switches.
- NVIDIA DGX SuperPOD reference architectures (H100, B200): 64-port leaves split 32 down /
  32 up; the spine count is rounded up so that every leaf spreads its uplinks evenly over the
  spines (3 SU: 24 leaves x 32 uplinks need 12 spines' ports, 16 are deployed).
- Meta, "The Llama 3 Herd of Models", 2024, section 3.3.1: full-bisection pods joined with
  1:7 oversubscription at the aggregation layer.

Rules (k = usable ports per switch at the endpoint speed, o = down:up ratio at a tier)
------------------------------------------------------------------------------------
- Port split at an oversubscribed tier: down d = floor(k*o/(1+o)), up u = k - d (o = 1: k/2),
  in whole cages where ports are broken out (f lanes a cage: d rounded down to a multiple of
  f): a cage holds a splitter's or twin module's two NIC ends or an uplink, not one of each,
  so 85 down and 43 up 400G lanes need 43 + 22 = 65 of an SN5600's 64 cages (84:44 fit).
- Leaves L = ceil(E/d_leaf), and L = 1 when E <= k at any ratio: one switch that holds every
  endpoint is non-blocking and needs no uplink (a 1:1 tree of 96 endpoints on 128-port
  switches is one switch, not two leaves and a spine). Every leaf cables all its u uplinks
  (vendors cable leaves fully so the fabric can grow without recabling, as the SuperPOD
  tables show). A single leaf needs no spine: the tree is then one switch (one tier, one hop).
- Two tiers while L <= k (each spine reaches every leaf): spines S = the smallest divisor of
  u_leaf that is >= ceil(L*u_leaf/k), so each leaf runs u_leaf/S links to every spine.
  Maximum E = k*d_leaf (k^2/2 non-blocking).
- Three tiers beyond: pods of d_agg leaves and u_leaf aggregation switches (every leaf of a pod
  reaches every aggregation switch of the pod once); pods P = ceil(L/d_agg) <= k; core
  C = the smallest divisor of u_leaf*u_agg (a pod's uplinks) that is >= ceil(A*u_agg/k).
  Maximum E = k*d_agg*d_leaf (k^3/4 non-blocking).
- Bisection links = min(E/2, leaf uplinks/2, aggregation uplinks/2).
- Longest shortest path: 3 switches (two tiers), 5 switches (three tiers).
- Uplinks at switch speed (``uplink_lanes``): ports are counted at the endpoint speed (an
  800G port with breakout 2 is two 400G ports). Where both tiers of a switch-to-switch group
  have cages of f times the endpoint speed (an 800G port, or a Quantum-2 twin-port cage of
  2 x 400G) and every switch pair of the group carries a multiple of f endpoint-speed links
  (a full mesh: links = f * m * lower * upper switches), each f of them run as one link at
  the cage's speed (one 800G cable or twin-port optic pair instead of two 400G). Port use
  and aggregate bandwidth are unchanged, so the sizing and the estimator are too; only the
  links bought (and their parts) change.
"""

from __future__ import annotations

import math

from optimizer.errors import InvalidInput
from optimizer.topology.network import (
    LinkGroupSizing,
    NetworkSizing,
    Requirement,
    SizingArgs,
    TierSizing,
    bisection_ratio,
    require_positive,
)
from optimizer.topology.profile import TopologyProfile

# The switch tiers each switch-to-switch group of a Clos joins (lower, upper).
GROUP_TIERS = {"leaf-spine": ("leaf", "spine"), "spine-core": ("spine", "core")}

OVERSUBSCRIBED_TIERS = ("leaf", "aggregation")


def split_ports(
    radix: int, oversubscription: float, field: str = "oversubscription", lanes: int = 1
) -> tuple[int, int]:
    """Down and up ports of a switch at down:up ratio ``oversubscription``: d = floor(k*o/(1+o)),
    in whole cages of ``lanes`` ports where they divide the radix (never above the ratio)."""
    if not oversubscription >= 1.0 or math.isinf(oversubscription):
        msg = f"must be a finite down:up ratio >= 1, got {oversubscription}"
        raise InvalidInput(msg, field=field)
    # A tiny epsilon keeps exact ratios (k*o/(1+o) = 48.0) from flooring to 47 in binary floats.
    down = math.floor(radix * oversubscription / (1.0 + oversubscription) + 1e-9)
    if lanes > 1 and radix % lanes == 0:
        down -= down % lanes
    up = radix - down
    if down < 1 or up < 1:
        msg = f"a {radix}-port switch cannot split {oversubscription}:1 into down and up ports"
        raise InvalidInput(msg, field=field)
    return down, up


def smallest_divisor_at_least(n: int, lower: int) -> int:
    """Smallest divisor of ``n`` that is >= ``lower`` (n itself when lower <= n)."""
    return next(d for d in range(max(1, lower), n + 1) if n % d == 0)


def max_endpoints(
    radix: int,
    oversubscription: float = 1.0,
    oversubscribed_tier: str = "leaf",
    tiers: int = 3,
    lanes: int = 1,
) -> int:
    """Largest E a ``tiers``-tier fat-tree of ``radix``-port switches attaches.

    k^2/2 (two tiers) and k^3/4 (three tiers) when non-blocking.
    """
    leaf_o, agg_o = tier_ratios(oversubscription, oversubscribed_tier)
    d_leaf, _ = split_ports(radix, leaf_o, lanes=lanes)
    d_agg, _ = split_ports(radix, agg_o, lanes=lanes)
    return radix * d_leaf if tiers == 2 else radix * d_agg * d_leaf


def size_fat_tree(
    endpoints: int,
    radix: int,
    *,
    oversubscription: float = 1.0,
    oversubscribed_tier: str = "leaf",
    lanes: int = 1,
) -> NetworkSizing:
    """Size a fat-tree for ``endpoints`` ports; two tiers when they fit, else three."""
    require_positive(endpoints, "endpoints")
    require_positive(radix, "radix")
    leaf_o, agg_o = tier_ratios(oversubscription, oversubscribed_tier)
    leaves = fat_tree_leaves(endpoints, radix, leaf_o, lanes)
    return size_clos(
        "fat_tree",
        endpoints,
        leaves,
        radix,
        leaf_o=leaf_o,
        agg_o=agg_o,
        endpoints_per_leaf=endpoints if leaves == 1 else split_ports(radix, leaf_o, lanes=lanes)[0],
        rail_optimized=False,
        lanes=lanes,
    )


def fat_tree_leaves(endpoints: int, radix: int, leaf_o: float, lanes: int) -> int:
    """Leaves of a fat-tree: one switch when it holds every endpoint (no uplink needed, at any
    ratio), else enough leaves of d_leaf down ports each."""
    if endpoints <= radix:
        return 1
    d_leaf, _ = split_ports(radix, leaf_o, lanes=lanes)
    return math.ceil(endpoints / d_leaf)


def size_clos(
    family: str,
    endpoints: int,
    leaves: int,
    radix: int,
    *,
    leaf_o: float,
    agg_o: float,
    endpoints_per_leaf: int,
    rail_optimized: bool,
    lanes: int = 1,
) -> NetworkSizing:
    """The tiers above ``leaves``: shared by the fat-tree and the rail-optimized planes.

    ``endpoints_per_leaf`` is the fullest leaf's endpoint count (its down ports used).
    """
    d_leaf, u_leaf = split_ports(radix, leaf_o, lanes=lanes)
    if leaves == 1:  # everything fits one leaf: a spine would connect nothing
        only = TierSizing("leaf", 1, radix, endpoints, 0, busiest_switch_ports_used=endpoints)
        return _clos(
            family,
            endpoints,
            (only,),
            (LinkGroupSizing("node-leaf", endpoints),),
            endpoints // 2,
            1.0,
            endpoints_per_leaf,
            rail_optimized,
        )
    leaf_uplinks = leaves * u_leaf
    leaf_tier = TierSizing(
        "leaf",
        leaves,
        radix,
        endpoints,
        leaf_uplinks,
        busiest_switch_ports_used=endpoints_per_leaf + u_leaf,
    )
    if leaves <= radix:
        spines = smallest_divisor_at_least(u_leaf, math.ceil(leaf_uplinks / radix))
        spine_tier = TierSizing(
            "spine",
            spines,
            radix,
            leaf_uplinks,
            0,
            busiest_switch_ports_used=leaf_uplinks // spines,
        )
        tiers: tuple[TierSizing, ...] = (leaf_tier, spine_tier)
        groups: tuple[LinkGroupSizing, ...] = (
            LinkGroupSizing("node-leaf", endpoints),
            LinkGroupSizing("leaf-spine", leaf_uplinks),
        )
        bisection = min(endpoints // 2, leaf_uplinks // 2)
        return _clos(
            family,
            endpoints,
            tiers,
            groups,
            bisection,
            d_leaf / u_leaf,
            endpoints_per_leaf,
            rail_optimized,
        )
    d_agg, u_agg = split_ports(radix, agg_o, lanes=lanes)
    pods = math.ceil(leaves / d_agg)
    if pods > radix:
        msg = (
            f"{endpoints} endpoints need {leaves} leaves in {pods} pods; a three-tier fat-tree "
            f"of {radix}-port switches has at most {radix} pods "
            f"({radix * d_agg * d_leaf} endpoints at this oversubscription)"
        )
        raise InvalidInput(msg, field="endpoints")
    aggs = pods * u_leaf
    agg_uplinks = aggs * u_agg
    # Every pod spreads its u_leaf*u_agg uplinks evenly over the core switches.
    cores = smallest_divisor_at_least(u_leaf * u_agg, math.ceil(agg_uplinks / radix))
    tiers = (
        leaf_tier,
        TierSizing(
            "spine",
            aggs,
            radix,
            leaf_uplinks,
            agg_uplinks,
            busiest_switch_ports_used=min(d_agg, leaves) + u_agg,
        ),
        TierSizing(
            "core",
            cores,
            radix,
            agg_uplinks,
            0,
            busiest_switch_ports_used=pods * (u_leaf * u_agg // cores),
        ),
    )
    groups = (
        LinkGroupSizing("node-leaf", endpoints),
        LinkGroupSizing("leaf-spine", leaf_uplinks),
        LinkGroupSizing("spine-core", agg_uplinks),
    )
    bisection = min(endpoints // 2, leaf_uplinks // 2, agg_uplinks // 2)
    worst_o = max(d_leaf / u_leaf, d_agg / u_agg)
    # Where only the aggregation tier is oversubscribed, a pod's d_agg leaves reach each
    # other at full bandwidth: the estimator prices the pod's uplinks, not the leaf's.
    pod_block = d_agg * endpoints_per_leaf if d_agg > u_agg and d_leaf <= u_leaf else 0
    return _clos(
        family,
        endpoints,
        tiers,
        groups,
        bisection,
        worst_o,
        endpoints_per_leaf,
        rail_optimized,
        pods,
        min(pod_block, endpoints),
    )


def _clos(
    family: str,
    endpoints: int,
    tiers: tuple[TierSizing, ...],
    groups: tuple[LinkGroupSizing, ...],
    bisection: int,
    worst_o: float,
    endpoints_per_leaf: int,
    rail_optimized: bool,
    pods: int = 1,
    endpoints_per_pod: int = 0,
) -> NetworkSizing:
    profile = TopologyProfile(
        family=family,
        endpoints=endpoints,
        tiers=len(tiers),
        max_switch_hops=2 * len(tiers) - 1,  # up to the top tier and back down
        oversubscription=worst_o,
        bisection_ratio=bisection_ratio(bisection, endpoints),
        endpoints_per_leaf=endpoints_per_leaf,
        rail_optimized=rail_optimized,
        endpoints_per_pod=endpoints_per_pod,
    )
    return NetworkSizing(family, endpoints, tiers, groups, bisection, profile, pods)


def tier_ratios(oversubscription: float, oversubscribed_tier: str) -> tuple[float, float]:
    """(leaf ratio, aggregation ratio) for the tier the request oversubscribes."""
    if oversubscribed_tier not in OVERSUBSCRIBED_TIERS:
        msg = f"got {oversubscribed_tier!r}, expected one of {', '.join(OVERSUBSCRIBED_TIERS)}"
        raise InvalidInput(msg, field="oversubscribed_tier")
    if oversubscribed_tier == "leaf":
        return oversubscription, 1.0
    return 1.0, oversubscription


def required(args: SizingArgs) -> Requirement:
    """The verifier's count (optimizer.topology.check): leaves from the port split."""
    leaf_o, _ = tier_ratios(args.oversubscription, args.oversubscribed_tier)
    return clos_required(args, fat_tree_leaves(args.endpoints, args.radix, leaf_o, args.port_lanes))


def clos_required(args: SizingArgs, leaves: int) -> Requirement:
    """Switches, links and port use above ``leaves`` leaves, recomputed from the formulas in
    this module's docstring (not through ``size_clos``): the verifier's independent count."""
    e, k = args.endpoints, args.radix
    leaf_o, agg_o = tier_ratios(args.oversubscription, args.oversubscribed_tier)
    _, u_leaf = split_ports(k, leaf_o, lanes=args.port_lanes)
    if leaves == 1:  # one leaf is the whole tree
        return Requirement({"leaf": 1}, {"node-leaf": e}, {"leaf": (("node-leaf", 1),)})
    leaf_spine = leaves * u_leaf  # leaves are cabled fully
    if leaves <= k:  # two tiers: each spine port set reaches every leaf
        return Requirement(
            {"leaf": leaves, "spine": math.ceil(leaf_spine / k)},
            {"node-leaf": e, "leaf-spine": leaf_spine},
            {"leaf": (("node-leaf", 1), ("leaf-spine", 1)), "spine": (("leaf-spine", 1),)},
        )
    d_agg, u_agg = split_ports(k, agg_o, lanes=args.port_lanes)
    pods = math.ceil(leaves / d_agg)
    if pods > k:
        raise InvalidInput(f"{pods} pods exceed a core of {k}-port switches", field="design.nodes")
    aggs = pods * u_leaf
    return Requirement(
        {"leaf": leaves, "spine": aggs, "core": math.ceil(aggs * u_agg / k)},
        {"node-leaf": e, "leaf-spine": leaf_spine, "spine-core": aggs * u_agg},
        {
            "leaf": (("node-leaf", 1), ("leaf-spine", 1)),
            "spine": (("leaf-spine", 1), ("spine-core", 1)),
            "core": (("spine-core", 1),),
        },
    )


def uplink_lanes(
    sizing: NetworkSizing, group: str, cage_gbps: dict[str, int], speed_gbps: int
) -> int:
    """Endpoint-speed links that one ``group`` link bundles at the switches' cage bandwidth
    (1: the group runs at the endpoint speed). ``cage_gbps`` is each tier's SKU cage
    bandwidth (``compat.cage_gbps``: its port speed, both ports of a twin-port cage); see
    the module docstring for the rule."""
    tiers = GROUP_TIERS.get(group)
    if tiers is None or speed_gbps <= 0 or any(t not in cage_gbps for t in tiers):
        return 1
    lower, upper = sizing.tier(tiers[0]), sizing.tier(tiers[1])
    if lower is None or upper is None:
        return 1
    lanes, rest = divmod(min(cage_gbps[t] for t in tiers), speed_gbps)
    planes = sizing.planes  # issue 16 (fabric800): the mesh is within one plane
    mesh = (lower.switches // planes) * (upper.switches // planes)
    if rest or lanes < 2 or (sizing.links(group) // planes) % (mesh * lanes):
        return 1
    return lanes
