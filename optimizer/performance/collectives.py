"""Alpha-beta costs of collectives (Hockney model; Thakur, Rabenseifner & Gropp, "Optimization
of Collective Communication Operations in MPICH", IJHPCA 2005).

A collective's cost is a pair: the bytes each rank must push through its link (the beta term)
and the latency steps on its critical path (the alpha term); seconds = bytes / B + steps x
alpha. Keeping the pair lets the estimator price the same collective under several fabric
scenarios without recomputing it. ``size_bytes`` is what each rank contributes. NCCL reports
"bus bandwidth" busbw = algbw x 2(n-1)/n for all-reduce (nccl-tests PERFORMANCE.md), which is
why the ring's byte term below is the line-rate lower bound for any all-reduce.
"""

from __future__ import annotations

import math
from typing import NamedTuple


class Cost(NamedTuple):
    """Bytes through each rank's link and latency steps on the critical path."""

    bytes: float
    steps: float

    def seconds(self, bandwidth_bytes_per_s: float, alpha_s: float) -> float:
        return self.bytes / bandwidth_bytes_per_s + self.steps * alpha_s

    def times(self, k: float) -> Cost:
        """The cost of doing this ``k`` times in a row."""
        return Cost(self.bytes * k, self.steps * k)


NO_COST = Cost(0.0, 0.0)


def ring_all_reduce(size_bytes: float, n: int) -> Cost:
    """Ring all-reduce: 2(n-1) steps of S/n bytes: 2(n-1)/n S/B + 2(n-1) alpha (Thakur sec. 4)."""
    if n <= 1:
        return NO_COST
    return Cost(2 * (n - 1) / n * size_bytes, 2 * (n - 1))


def tree_all_reduce(size_bytes: float, n: int) -> Cost:
    """Pipelined double binary tree (NCCL >= 2.4; Sanders, Speck & Traeff 2009): reduce then
    broadcast, each moving S at full bandwidth, with 2 ceil(log2 n) latency steps."""
    if n <= 1:
        return NO_COST
    return Cost(2 * size_bytes, 2 * math.ceil(math.log2(n)))


def reduce_scatter(size_bytes: float, n: int) -> Cost:
    """Ring reduce-scatter of S bytes into n shards: (n-1)/n S/B + (n-1) alpha. All-gather is
    its mirror and costs the same."""
    if n <= 1:
        return NO_COST
    return Cost((n - 1) / n * size_bytes, n - 1)


all_gather = reduce_scatter


def all_to_all(size_bytes: float, n: int) -> Cost:
    """Pairwise-exchange all-to-all: each rank sends (n-1)/n of its S bytes in n-1 messages
    (Thakur sec. 3)."""
    if n <= 1:
        return NO_COST
    return Cost((n - 1) / n * size_bytes, n - 1)


def expected_remote_domains(experts: int, k: int, domains: int, node_limit: int = 0) -> float:
    """Expected other domains (nodes) one token's k routed experts land in, the experts spread
    evenly over ``domains`` and chosen uniformly without replacement (a balanced router).

    A given domain of the M a token may reach (all of them, or ``node_limit``: DeepSeek-V3's
    node-limited routing picks M nodes, then k experts on them; arXiv:2412.19437 sec. 2.1.2)
    receives none of its k experts with the hypergeometric probability C(Mg - g, k) / C(Mg, k),
    g = experts / domains (M at least the k / g domains that hold k experts); the token's own
    domain is one of the M with probability M / domains. What a deduplicating dispatch
    (DeepEP, HybridEP) sends over the network per token."""
    if domains <= 1:
        return 0.0
    per_domain = experts / domains
    # a limit below the domains that hold k experts cannot be kept: the router reaches those
    reach = max(min(node_limit, domains), math.ceil(k / per_domain)) if node_limit else domains
    pool = per_domain * reach
    none = 1.0
    for i in range(k):
        none *= max(0.0, pool - per_domain - i) / (pool - i)
    return reach * (1.0 - none) * (1.0 - 1.0 / domains)


def p2p(size_bytes: float) -> Cost:
    """One point-to-point message: alpha + S/B."""
    return Cost(size_bytes, 1)


def in_network_all_reduce(size_bytes: float, n: int) -> Cost:
    """All-reduce reduced by the switches (InfiniBand SHARP; NVLink SHARP, "NVLS", inside an
    NVSwitch domain): each rank sends its S bytes up once and receives the result once, S per
    direction instead of the ring's 2(n-1)/n S, and the latency is the tree's two traversals
    (up, down) rather than 2(n-1) ring steps (NVIDIA SHARP documentation, "Scalable
    Hierarchical Aggregation and Reduction Protocol"; NCCL 2.18 release notes, NVLS)."""
    if n <= 1:
        return NO_COST
    return Cost(size_bytes, 2)


# NVLS all-reduce on 8x H100 (450 GB/s NVLink4 per direction): 275 GB/s algorithm bandwidth
# (busbw 480 GB/s) at its peak (NCCL maintainer, NVIDIA/nccl-tests #212), so its S bytes move
# at 275 / 450 = 0.61 of the line rate, against 0.82 for ring traffic (NVLINK_EFFICIENCY).
# Checked against stas00/ml-engineering (H200, 480.7 GB/s busbw at 16 GiB) and
# NVIDIA/nccl-tests #290 (H100, 476 GB/s): tests/test_network_in_network_reduction.py.
NVLS_EFFICIENCY = 275.0 / 450.0
# GPU generations whose NVSwitch reduces in the switch (NVLS: Hopper and later NVSwitch 3+).
NVLS_GENERATIONS = frozenset({"H100", "H200", "B200", "B300", "GB200", "GB300"})


def all_reduce_s(size_bytes: float, n: int, bandwidth_bytes_per_s: float, alpha_s: float) -> float:
    """The faster of ring and tree, as NCCL's tuner picks per message size."""
    return min(
        ring_all_reduce(size_bytes, n).seconds(bandwidth_bytes_per_s, alpha_s),
        tree_all_reduce(size_bytes, n).seconds(bandwidth_bytes_per_s, alpha_s),
    )


def hierarchical_all_reduce_s(
    size_bytes: float,
    local: int,
    nodes: int,
    intra_bytes_per_s: float,
    intra_alpha_s: float,
    inter_bytes_per_s: float,
    inter_alpha_s: float,
) -> float:
    """Reduce-scatter inside the node, all-reduce of each 1/local shard across nodes (one rail
    per rank), all-gather inside the node (Jia et al., arXiv:1807.11205, sec. 4.2; NCCL's
    NVLink + network rings). With equal bandwidths its byte term equals the ring's bound."""
    intra = reduce_scatter(size_bytes, local).times(2)
    return intra.seconds(intra_bytes_per_s, intra_alpha_s) + all_reduce_s(
        size_bytes / local, nodes, inter_bytes_per_s, inter_alpha_s
    )


def line_rate_all_reduce_bound_s(size_bytes: float, n: int, bandwidth_bytes_per_s: float) -> float:
    """No all-reduce can beat 2(n-1)/n S/B: every rank must send and receive that much
    (Patarasuk & Yuan, JPDC 2009)."""
    return 2 * (n - 1) / n * size_bytes / bandwidth_bytes_per_s if n > 1 else 0.0
