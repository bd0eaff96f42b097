"""One node, no scale-out fabric: the GPUs talk over NVLink (or PCIe) inside the server.

A one-node cluster needs no switch, cable or NIC; a server that ships with NICs keeps them as
spares (docs/optimizer.md, "Buildability rules"). The registry record caps it at one node.

Rules: no switches, no links, no endpoint attached; bisection and hops are those of the
server's own scale-up fabric, which the estimator models apart from the network.
"""

from __future__ import annotations

from optimizer.errors import InvalidInput
from optimizer.topology.network import NetworkSizing, Requirement, SizingArgs
from optimizer.topology.profile import TopologyProfile

NAME = "single_node"


def size_single_node(args: SizingArgs) -> NetworkSizing:
    """Nothing to size: no switch, no link, no endpoint port attached. Refuses more than one
    node where the NIC ports per node tell the node count (a one-node design may have none)."""
    if args.rails and args.endpoints > args.rails:
        msg = (
            f"a single node without a scale-out fabric has one node; {args.endpoints} endpoint "
            f"ports at {args.rails} per node are {args.endpoints // args.rails} nodes"
        )
        raise InvalidInput(msg, field="nodes")
    profile = TopologyProfile(
        family=NAME,
        endpoints=0,
        tiers=0,
        max_switch_hops=0,
        oversubscription=1.0,
        bisection_ratio=1.0,
        endpoints_per_leaf=0,
    )
    return NetworkSizing(NAME, 0, (), (), 0, profile)


def required(args: SizingArgs) -> Requirement:
    """The verifier's count (optimizer.topology.check): no switch and no link."""
    return Requirement({}, {}, {})
