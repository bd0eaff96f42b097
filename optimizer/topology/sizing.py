"""One entry point that sizes any topology family: ``size_network``.

The optimizer states its constraints with it, the BOM builder prices it, the verifier checks
against it and the estimator reads its ``profile``; each family's rules and sources live in
its own module, and which module sizes which family is its registry record
(``optimizer.registry.topologies``).
"""

from __future__ import annotations

from optimizer.errors import InvalidInput
from optimizer.registry.topologies import TOPOLOGIES, TopologyFamily
from optimizer.topology.network import (
    LinkGroupSizing,
    NetworkSizing,
    SizingArgs,
    TierSizing,
    in_planes,
)

__all__ = [
    "LinkGroupSizing",
    "NetworkSizing",
    "SizingArgs",
    "TierSizing",
    "max_endpoints",
    "size_network",
]


def size_network(
    family: str,
    endpoints: int,
    radix: int,
    *,
    oversubscription: float = 1.0,
    rails: int = 1,
    oversubscribed_tier: str = "leaf",
    params: tuple[tuple[str, int], ...] = (),
    planes: int = 1,
    port_lanes: int = 1,
) -> NetworkSizing:
    """Switches, links and profile of ``family`` for ``endpoints`` ports.

    Parameters
    ----------
    family:
        A registered topology family (any case, ``-`` or ``_``).
    endpoints:
        Endpoint ports: nodes x NIC ports per node.
    radix:
        Usable ports per switch at the endpoint speed (after breakout); unused by switchless
        families.
    oversubscription:
        Down:up ratio (>= 1) at ``oversubscribed_tier`` ("leaf" or "aggregation"); families
        with an oversubscribed tier only, the others take 1.
    rails:
        NIC ports per node: the planes of a rail-optimized fabric, the ports a torus node has.
    params:
        Family parameters by name (torus ``dims``; dragonfly ``p``, ``a``, ``h``).
    planes:
        Independent copies of the network, each NIC cabling one port into each (issue 16,
        ``nics.planes``); ``endpoints`` counts one plane's ports.
    port_lanes:
        Endpoint ports per switch cage (a broken-out port's lanes, ``compat.port_lanes``): a
        tier's down and up ports are split in whole cages.

    Raises
    ------
    InvalidInput
        When the family cannot attach ``endpoints`` with these switches, naming the field.
    """
    args = SizingArgs(
        endpoints, radix, oversubscription, rails, oversubscribed_tier, params, port_lanes
    )
    return in_planes(_family(family, args).size(args), planes)


def max_endpoints(
    family: str,
    radix: int,
    *,
    oversubscription: float = 1.0,
    rails: int = 1,
    oversubscribed_tier: str = "leaf",
    params: tuple[tuple[str, int], ...] = (),
    port_lanes: int = 1,
) -> int | None:
    """Largest ``endpoints`` that ``size_network`` accepts with these arguments.

    ``None`` for families any node count can form (the torus: its limit is ports per node).
    """
    args = SizingArgs(0, radix, oversubscription, rails, oversubscribed_tier, params, port_lanes)
    return _family(family, args).max_endpoints(args)


def _family(name: str, args: SizingArgs) -> TopologyFamily:
    """The registered family, refusing parameters it does not take."""
    family = TOPOLOGIES.get(name, "topology")
    if args.params and not family.params:
        msg = f"{family.name} takes no topology parameters, got {sorted(args.params_map)}"
        raise InvalidInput(msg, field="topology_params")
    return family
