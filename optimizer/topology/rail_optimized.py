"""Rail-optimized fat-tree: NIC i of every node lands on a leaf of rail i.

Sources
-------
- NVIDIA DGX SuperPOD reference architecture, H100 and B200 (docs.nvidia.com/dgx-superpod):
  a scalable unit (SU) is 32 node slots and 8 leaves, one per NIC rail; 64-port NDR leaves run
  32 ports down and 32 up; spines are shared by all rails (1 SU: 8 leaves, 4 spines); beyond
  64 leaves a core tier joins pods of 32 leaves (16 SU: 128 leaf, 128 spine, 64 core).
- domain.md section 3: one leaf-spine plane per rail, the fat-tree formulas per plane with
  E/rails endpoints.

Rules
-----
- nodes = E / rails (every node brings one port per rail).
- Leaves L = rails * ceil(nodes / d_leaf): each rail has its own leaves (an SU per d_leaf nodes).
- Above the leaves the tiers are those of a fat-tree with L leaves (``fat_tree.size_clos``):
  two tiers while L <= k, else pods and a core tier.
- A per-rail ring among up to d_leaf nodes stays on one leaf (one switch hop), which is what
  ``endpoints_per_leaf`` tells the estimator.
"""

from __future__ import annotations

import math

from optimizer.errors import InvalidInput
from optimizer.topology.fat_tree import clos_required, size_clos, split_ports, tier_ratios
from optimizer.topology.network import NetworkSizing, Requirement, SizingArgs, require_positive


def max_endpoints(
    radix: int,
    rails: int,
    oversubscription: float = 1.0,
    oversubscribed_tier: str = "leaf",
    lanes: int = 1,
) -> int:
    """Largest E = nodes x rails: the rails*ceil(nodes/d_leaf) leaves fill at most k pods."""
    leaf_o, agg_o = tier_ratios(oversubscription, oversubscribed_tier)
    d_leaf, _ = split_ports(radix, leaf_o, lanes=lanes)
    d_agg, _ = split_ports(radix, agg_o, lanes=lanes)
    return rails * d_leaf * (radix * d_agg // rails)


def size_rail_optimized(
    endpoints: int,
    radix: int,
    *,
    rails: int,
    oversubscription: float = 1.0,
    oversubscribed_tier: str = "leaf",
    lanes: int = 1,
) -> NetworkSizing:
    """Size one plane per rail for ``endpoints`` = nodes x ``rails`` ports."""
    require_positive(endpoints, "endpoints")
    require_positive(radix, "radix")
    require_positive(rails, "rails")
    if endpoints % rails:
        msg = f"{endpoints} endpoint ports do not split evenly over {rails} rails"
        raise InvalidInput(msg, field="endpoints")
    leaf_o, agg_o = tier_ratios(oversubscription, oversubscribed_tier)
    d_leaf, _ = split_ports(radix, leaf_o, lanes=lanes)
    nodes = endpoints // rails
    leaves = rails * math.ceil(nodes / d_leaf)
    return size_clos(
        "rail_optimized",
        endpoints,
        leaves,
        radix,
        leaf_o=leaf_o,
        agg_o=agg_o,
        endpoints_per_leaf=min(d_leaf, nodes),
        rail_optimized=True,
        lanes=lanes,
    )


def required(args: SizingArgs) -> Requirement:
    """The verifier's count (optimizer.topology.check): each rail's own leaves, then a Clos."""
    leaf_o, _ = tier_ratios(args.oversubscription, args.oversubscribed_tier)
    d_leaf, _ = split_ports(args.radix, leaf_o, lanes=args.port_lanes)
    return clos_required(args, args.rails * math.ceil(args.nodes / d_leaf))
