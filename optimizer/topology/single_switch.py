"""Single switch (star): every endpoint on one switch.

Source: domain.md section 3 and the seed article's rule of thumb (tens of GPUs need one
switch). A modular chassis counts as one switch with its own radix and price.

Rules: E <= k; one switch; E links; non-blocking crossbar (bisection E/2 links); one switch hop.
"""

from __future__ import annotations

from optimizer.errors import InvalidInput
from optimizer.topology.network import (
    LinkGroupSizing,
    NetworkSizing,
    Requirement,
    SizingArgs,
    TierSizing,
    refuse_oversubscription,
    require_positive,
)
from optimizer.topology.profile import TopologyProfile


def max_endpoints(radix: int) -> int:
    """One switch attaches at most its ports."""
    return radix


def size_single_switch(
    endpoints: int, radix: int, *, oversubscription: float = 1.0
) -> NetworkSizing:
    """One switch of ``radix`` ports for ``endpoints`` ports; refuses E > k."""
    require_positive(endpoints, "endpoints")
    require_positive(radix, "radix")
    refuse_oversubscription("single_switch", oversubscription)
    if endpoints > max_endpoints(radix):
        msg = f"{endpoints} endpoints exceed one switch's {radix} ports"
        raise InvalidInput(msg, field="endpoints")
    profile = TopologyProfile(
        family="single_switch",
        endpoints=endpoints,
        tiers=1,
        max_switch_hops=1,
        oversubscription=1.0,
        bisection_ratio=1.0,
        endpoints_per_leaf=endpoints,
    )
    return NetworkSizing(
        "single_switch",
        endpoints,
        (TierSizing("leaf", 1, radix, endpoints, 0, busiest_switch_ports_used=endpoints),),
        (LinkGroupSizing("node-leaf", endpoints),),
        bisection_links=endpoints // 2,
        profile=profile,
    )


def required(args: SizingArgs) -> Requirement:
    """The verifier's count (optimizer.topology.check): one switch, a link per endpoint."""
    e, k = args.endpoints, args.radix
    if e > k:
        raise InvalidInput(f"{e} endpoints exceed one {k}-port switch", field="design.nodes")
    return Requirement({"leaf": 1}, {"node-leaf": e}, {"leaf": (("node-leaf", 1),)})
