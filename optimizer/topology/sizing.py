"""One entry point that sizes any topology family: ``size_network``.

The optimizer states its constraints with it, the BOM builder prices it, the verifier checks
against it and the estimator reads its ``profile``; each family's rules and sources live in
its own module.
"""

from __future__ import annotations

from optimizer.errors import InvalidInput
from optimizer.topology import dragonfly, fat_tree, rail_optimized, single_switch
from optimizer.topology.dragonfly import size_dragonfly
from optimizer.topology.fat_tree import size_fat_tree
from optimizer.topology.network import LinkGroupSizing, NetworkSizing, TierSizing
from optimizer.topology.profile import TOPOLOGY_FAMILIES
from optimizer.topology.rail_optimized import size_rail_optimized
from optimizer.topology.single_switch import size_single_switch
from optimizer.topology.torus import size_torus

__all__ = ["LinkGroupSizing", "NetworkSizing", "TierSizing", "max_endpoints", "size_network"]


def size_network(
    family: str,
    endpoints: int,
    radix: int,
    *,
    oversubscription: float = 1.0,
    rails: int = 1,
    oversubscribed_tier: str = "leaf",
    params: tuple[tuple[str, int], ...] = (),
) -> NetworkSizing:
    """Switches, links and profile of ``family`` for ``endpoints`` ports.

    Parameters
    ----------
    family:
        One of ``TOPOLOGY_FAMILIES``.
    endpoints:
        Endpoint ports: nodes x NIC ports per node.
    radix:
        Usable ports per switch at the endpoint speed (after breakout); unused by the torus.
    oversubscription:
        Down:up ratio (>= 1) at ``oversubscribed_tier`` ("leaf" or "aggregation"); fat-tree and
        rail-optimized only, the other families take 1.
    rails:
        NIC ports per node: the planes of a rail-optimized fabric, the ports a torus node has.
    params:
        Family parameters: torus ``dims``; dragonfly ``p``, ``a``, ``h``.

    Raises
    ------
    InvalidInput
        When the family cannot attach ``endpoints`` with these switches, naming the field.
    """
    params_map = dict(params)
    if family not in ("torus", "dragonfly") and params_map:
        msg = f"{family} takes no topology parameters, got {sorted(params_map)}"
        raise InvalidInput(msg, field="topology_params")
    if family == "single_switch":
        return size_single_switch(endpoints, radix, oversubscription=oversubscription)
    if family == "fat_tree":
        return size_fat_tree(
            endpoints,
            radix,
            oversubscription=oversubscription,
            oversubscribed_tier=oversubscribed_tier,
        )
    if family == "rail_optimized":
        return size_rail_optimized(
            endpoints,
            radix,
            rails=rails,
            oversubscription=oversubscription,
            oversubscribed_tier=oversubscribed_tier,
        )
    if family == "dragonfly":
        return size_dragonfly(
            endpoints, radix, oversubscription=oversubscription, params=params_map
        )
    if family == "torus":
        return size_torus(
            endpoints, rails=rails, oversubscription=oversubscription, params=params_map
        )
    msg = f"got {family!r}, expected one of {', '.join(TOPOLOGY_FAMILIES)}"
    raise InvalidInput(msg, field="topology")


def max_endpoints(
    family: str,
    radix: int,
    *,
    oversubscription: float = 1.0,
    rails: int = 1,
    oversubscribed_tier: str = "leaf",
    params: tuple[tuple[str, int], ...] = (),
) -> int | None:
    """Largest ``endpoints`` that ``size_network`` accepts with these arguments.

    ``None`` for the torus, which any node count can form (its limit is ports per node).
    """
    if family == "single_switch":
        return single_switch.max_endpoints(radix)
    if family == "fat_tree":
        return fat_tree.max_endpoints(radix, oversubscription, oversubscribed_tier)
    if family == "rail_optimized":
        return rail_optimized.max_endpoints(radix, rails, oversubscription, oversubscribed_tier)
    if family == "dragonfly":
        return dragonfly.max_endpoints(radix, dict(params))
    if family == "torus":
        return None
    msg = f"got {family!r}, expected one of {', '.join(TOPOLOGY_FAMILIES)}"
    raise InvalidInput(msg, field="topology")
