"""The one description of a network topology that both the BOM builder and the estimator read.

A topology family's sizing function returns this alongside its switch and link counts, so
oversubscription and rail optimisation change the bill of materials and the predicted
training time through the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TopologyProfile:
    """What a collective sees of the fabric.

    Attributes
    ----------
    family:
        A registered topology family (``optimizer.registry.topologies``).
    endpoints:
        Endpoint ports attached (nodes x NIC ports used per node).
    tiers:
        Switch tiers an endpoint-to-endpoint path may climb (0 for a direct torus).
    max_switch_hops:
        Switches crossed on the longest shortest path (latency term: hops x per-hop latency).
    oversubscription:
        Downlink:uplink bandwidth ratio at the most oversubscribed tier (1.0 = non-blocking).
    bisection_ratio:
        Bisection bandwidth divided by the non-blocking bisection (E/2 x endpoint line rate),
        in (0, 1]. All-to-all traffic is bounded by it.
    endpoints_per_leaf:
        Endpoints that share the first switch (or, for a torus, a node): traffic among them
        never crosses an upper tier.
    rail_optimized:
        One leaf-spine plane per NIC rail: rank i of every node sits on the same rail, so a
        per-rail ring stays within a plane and, for up to ``endpoints_per_leaf`` nodes, one hop.
    direct:
        A direct (switchless) network: nodes forward traffic, a ring embeds in it without
        crossing its cut, and a node's neighbour is one link away.
    shape:
        A direct network's sides k_1 x ... x k_n (a torus; empty for a switched fabric): the
        estimator times collectives by it (dimension-ordered rings, hop distances).
    endpoints_per_pod:
        Endpoints under one pod of a three-tier Clos whose aggregation tier is the
        oversubscribed one (0 otherwise). Its leaves' uplinks are then non-blocking: traffic
        among a pod's leaves runs at full bandwidth, and only what leaves the pod shares the
        oversubscribed uplinks (Meta's Llama 3 cluster: full-bisection pods of 3,072 GPUs
        joined at 1:7, Dubey et al. 2024, sec. 3.3.1).
    """

    family: str
    endpoints: int
    tiers: int
    max_switch_hops: int
    oversubscription: float
    bisection_ratio: float
    endpoints_per_leaf: int
    rail_optimized: bool = False
    direct: bool = False
    shape: tuple[int, ...] = ()
    endpoints_per_pod: int = 0
