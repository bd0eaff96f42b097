"""Torus (k-ary n-cube), a direct network: nodes link to their neighbours through NIC ports.

Sources: W. J. Dally, "Performance analysis of k-ary n-cube interconnection networks",
IEEE Trans. Computers 39(6), 1990; W. J. Dally, B. Towles, "Principles and Practices of
Interconnection Networks", 2004, ch. 5. For a k-ary n-cube of N = k^n nodes: 2n ports per
node, n*N links, bisection 2N/k links, diameter n*floor(k/2) hops.

Rules used here
---------------
- nodes N = E / rails; the shape is the mixed-radix torus k_1 x ... x k_n with product exactly
  N and the smallest largest side (then the fewest ports), n from the ``dims`` parameter
  (default 3). Like TPU pods, sides may differ (4 x 4 x 8).
- A side k_i >= 3 is a ring: 2 ports per node and N links; a side of 2 joins each pair once:
  1 port per node and N/2 links; a side of 1 adds nothing.
- Every NIC port is cabled: ``rails`` must be a multiple of the shape's ports per node P, and
  each neighbour pair gets rails / P parallel links (two nodes back to back: one cable per
  rail). At least two nodes; no switches at all.
- Bisection (cut across the largest side K): 2N/K links for K >= 3, N/2 for K = 2, times the
  parallel links.
- Whether the nodes may relay traffic at all is the hardware's (NIC or server ``forwarding``):
  ``optimizer.topology.plan`` applies the registry's ``needs_forwarding`` rule.
- Diameter: sum of floor(k_i/2) link hops; ``max_switch_hops`` reports it, each intermediate
  node forwarding like a router.
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
    bisection_ratio,
    refuse_oversubscription,
    require_positive,
)
from optimizer.topology.profile import TopologyProfile

DEFAULT_DIMS = 3


def torus_shape(nodes: int, dims: int) -> tuple[int, ...]:
    """Sides (largest first) of the ``dims``-dimensional torus of exactly ``nodes`` nodes whose
    largest side is smallest; ties go to the shape using fewer ports."""
    # (nodes, 1, ..., 1) always factors, so the minimum exists.
    return min(_factorizations(nodes, dims, nodes), key=lambda s: (s[0], ports_per_node(s)))


def ports_per_node(shape: tuple[int, ...]) -> int:
    """NIC ports one node uses: 2 per ring side (k >= 3), 1 per side of 2."""
    return sum(2 if k >= 3 else (1 if k == 2 else 0) for k in shape)


def size_torus(
    endpoints: int,
    *,
    rails: int,
    oversubscription: float = 1.0,
    params: Mapping[str, int] | None = None,
) -> NetworkSizing:
    """Size a switchless torus for ``endpoints`` = nodes x ``rails`` NIC ports."""
    require_positive(endpoints, "endpoints")
    require_positive(rails, "rails")
    refuse_oversubscription("torus", oversubscription)
    dims = _dims(params or {})
    if endpoints % rails:
        msg = f"{endpoints} endpoint ports do not split evenly over {rails} NIC ports per node"
        raise InvalidInput(msg, field="endpoints")
    nodes = endpoints // rails
    shape = torus_shape(nodes, dims)
    parallel = parallel_links(shape, rails, "nics_per_node")
    links = parallel * sum(nodes if k >= 3 else (nodes // 2 if k == 2 else 0) for k in shape)
    largest = shape[0]
    bisection = parallel * (2 * nodes // largest if largest >= 3 else nodes // 2)
    used_endpoints = nodes * rails
    ports = rails
    profile = TopologyProfile(
        family="torus",
        endpoints=used_endpoints,
        tiers=0,
        max_switch_hops=sum(k // 2 for k in shape),
        oversubscription=1.0,
        bisection_ratio=bisection_ratio(bisection, used_endpoints),
        endpoints_per_leaf=ports,
        direct=True,
        shape=shape,
    )
    return NetworkSizing(
        "torus", used_endpoints, (), (LinkGroupSizing("torus", links),), bisection, profile
    )


def parallel_links(shape: tuple[int, ...], rails: int, field: str) -> int:
    """Links per neighbour pair so that all ``rails`` NIC ports of a node are cabled; refuses a
    single node and a NIC count that is not a multiple of the shape's ports per node."""
    ports = ports_per_node(shape)
    if ports == 0:
        raise InvalidInput("a torus needs at least 2 nodes, got 1", field="nodes")
    if rails % ports:
        msg = (
            f"a {'x'.join(map(str, shape))} torus uses {ports} NIC ports per node; "
            f"{rails} NICs per node would leave {rails % ports} uncabled (expected a "
            f"multiple of {ports})"
        )
        raise InvalidInput(msg, field=field)
    return rails // ports


def _dims(params: Mapping[str, int]) -> int:
    unknown = set(params) - {"dims"}
    if unknown:
        msg = f"unknown torus parameter(s) {sorted(unknown)}, expected dims"
        raise InvalidInput(msg, field="topology_params")
    dims = params.get("dims", DEFAULT_DIMS)
    require_positive(dims, "topology_params.dims")
    return dims


def _factorizations(n: int, parts: int, largest: int) -> list[tuple[int, ...]]:
    """Non-increasing tuples of ``parts`` factors >= 1 with product ``n``, each <= ``largest``."""
    if parts == 1:
        return [(n,)] if n <= largest else []
    out: list[tuple[int, ...]] = []
    for first in (d for d in _divisors(n) if d <= largest):
        out.extend((first, *rest) for rest in _factorizations(n // first, parts - 1, first))
    return out


def _divisors(n: int) -> list[int]:
    """Divisors of ``n``, largest first (trial division up to sqrt(n))."""
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted({*small, *(n // d for d in small)}, reverse=True)


def required(args: SizingArgs) -> Requirement:
    """The verifier's count (optimizer.topology.check): links of the shape, no switches."""
    nodes = args.nodes
    shape = torus_shape(nodes, args.params_map.get("dims", DEFAULT_DIMS))
    parallel = parallel_links(shape, args.rails, "design.nics_per_node")
    links = sum(nodes if side >= 3 else nodes // 2 for side in shape if side > 1)
    return Requirement({}, {"torus": parallel * links}, {})
