"""The hardware a workload runs on, as the estimator sees it."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

from optimizer.catalog.model import Server
from optimizer.errors import InvalidInput
from optimizer.performance.calibration import timed_gpu_model
from optimizer.topology.profile import TopologyProfile

NOMINAL_NIC_GBPS = 400
"""Scale-out line rate of a one-node cluster (a one-node design, or a request without NICs
for GPUs that fit one node): no traffic uses it, so it changes no time."""


class UplinkTier(NamedTuple):
    """A block of nodes under one switch tier and the uplinks traffic leaving it shares."""

    nodes: int  # nodes under one block (a leaf, or a pod)
    rails: int  # line-rate flows one ring puts out of a block: one per rail that leaves it
    uplinks: float  # the block's uplinks, in endpoint line rates


@dataclass(frozen=True)
class ClusterSpec:
    """GPUs, their nodes and the scale-out network.

    ``gpu_peak_tflops`` is dense BF16 per GPU; ``intra_node_gbytes_per_s`` is NVLink (or the
    scale-up fabric) per GPU in one direction; ``nic_gbps_per_node`` is the scale-out line
    rate of all NICs of a node together.
    """

    gpus: int
    gpus_per_node: int
    gpu_peak_tflops: float
    gpu_memory_gb: float
    intra_node_gbytes_per_s: float
    fabric: str
    nic_gbps_per_node: float
    nics_per_node: int
    topology: TopologyProfile
    gpu_model: str = ""
    gpu_peak_fp8_tflops: float | None = None
    # issue 16 (scale-up domain): GPUs sharing one NVLink / Infinity Fabric domain; None means
    # gpus_per_node (the host is the domain). 72 for an NVL72 rack of 4-GPU hosts.
    scale_up_gpus: int | None = None
    # issue 14: the switches reduce in the network (InfiniBand SHARP, NVLink SHARP / NVLS).
    in_network_reduction: bool = False
    # NVLS inside a Hopper-or-later scale-up domain on its own; None: as in_network_reduction
    # (the estimate request's one flag covers both). A catalog design sets it apart: NVLS is
    # the server's NVSwitch, SHARP the network's switches (server_cluster).
    nvls: bool | None = None

    def __post_init__(self) -> None:
        for name in ("gpus", "gpus_per_node", "nics_per_node"):
            if getattr(self, name) < 1:
                raise InvalidInput(
                    f"must be >= 1, got {getattr(self, name)}", field=f"cluster.{name}"
                )
        for name in (
            "gpu_peak_tflops",
            "gpu_memory_gb",
            "intra_node_gbytes_per_s",
            "nic_gbps_per_node",
        ):
            if not getattr(self, name) > 0:
                raise InvalidInput(
                    f"must be > 0, got {getattr(self, name)}", field=f"cluster.{name}"
                )
        if self.gpu_peak_fp8_tflops is not None and not self.gpu_peak_fp8_tflops > 0:
            raise InvalidInput(
                f"must be > 0 when given, got {self.gpu_peak_fp8_tflops}",
                field="cluster.gpu_peak_fp8_tflops",
            )
        if self.scale_up_gpus is not None and (
            self.scale_up_gpus < 1
            or (self.scale_up_gpus % self.gpus_per_node and self.gpus_per_node % self.scale_up_gpus)
        ):
            raise InvalidInput(
                f"got {self.scale_up_gpus}, expected a multiple or a divisor of "
                f"gpus_per_node ({self.gpus_per_node})",
                field="cluster.scale_up_gpus",
            )
        if self.gpus > self.gpus_per_node and self.gpus % self.gpus_per_node:
            raise InvalidInput(
                f"{self.gpus} GPUs do not fill whole nodes of {self.gpus_per_node}",
                field="cluster.gpus",
            )

    @cached_property
    def scale_up_domain_gpus(self) -> int:
        """GPUs that reach each other over the scale-up fabric rather than the network."""
        return self.scale_up_gpus or self.gpus_per_node

    @cached_property
    def domain_tile_gpus(self) -> int | None:
        """The largest power-of-two number of whole hosts in a scale-up domain that is larger
        than a host and not a power of two itself (64 of an NVL72's 72 GPUs), else None:
        groups of power-of-two ranks tile such a part of each domain, the rest idle, instead
        of straddling two domains (docs/performance-model.md, "Scale-up domain")."""
        dom, gpn = self.scale_up_domain_gpus, self.gpus_per_node
        if dom <= gpn or dom & (dom - 1) == 0:
            return None
        tile = 1 << (dom.bit_length() - 1)
        return None if tile % gpn or tile <= gpn else tile

    @cached_property
    def hardware(self) -> tuple[int, int, int, str, float, float | None, float]:
        """Everything of the cluster but its network that a plan's time depends on: GPUs,
        host, scale-up domain and the GPU's figures. The estimator's per-plan terms are cached
        on it (issue 14, speed: one plan is re-priced on many candidate networks)."""
        return (
            self.gpus,
            self.gpus_per_node,
            self.scale_up_domain_gpus,
            self.gpu_model,
            self.gpu_peak_tflops,
            self.gpu_peak_fp8_tflops,
            self.intra_node_gbytes_per_s,
        )

    @cached_property
    def nodes(self) -> int:
        return -(-self.gpus // self.gpus_per_node)

    @cached_property
    def nic_bytes_per_s_per_gpu(self) -> float:
        """Scale-out line rate one GPU gets when every GPU of the node sends at once."""
        return self.nic_gbps_per_node * 1e9 / 8 / min(self.gpus, self.gpus_per_node)

    @cached_property
    def nodes_per_leaf(self) -> int:
        """Nodes whose traffic meets at one first-level switch (one node in a direct network).

        A rail-optimized leaf serves one rail, so each of its ports is a different node; in a
        plain fat-tree a node's NICs all land on one leaf.
        """
        topo = self.topology
        if topo.direct:
            return 1
        if topo.rail_optimized:
            return max(1, topo.endpoints_per_leaf)
        return max(1, topo.endpoints_per_leaf // self.nics_per_node)

    @cached_property
    def uplink_tiers(self) -> tuple[UplinkTier, ...]:
        """The blocks whose uplinks leaf-crossing traffic shares (none in a direct network).

        The leaf, with endpoints_per_leaf x bisection_ratio uplinks (its oversubscription,
        or non-blocking with static-ECMP collisions); where the aggregation tier is the
        oversubscribed one, the leaf's uplinks are non-blocking and the pod's (all rails of
        its nodes) carry endpoints_per_pod x bisection_ratio.
        """
        topo = self.topology
        if topo.direct:
            return ()
        rails = 1 if topo.rail_optimized else self.nics_per_node
        pod = topo.endpoints_per_pod
        leaf_ratio = 1.0 if pod else topo.bisection_ratio
        leaf = UplinkTier(self.nodes_per_leaf, rails, topo.endpoints_per_leaf * leaf_ratio)
        if not pod:
            return (leaf,)
        pod_nodes = max(1, pod // self.nics_per_node)
        return leaf, UplinkTier(pod_nodes, self.nics_per_node, pod * topo.bisection_ratio)


def server_gpu_model(server: Server, memory_gb: float | None = None) -> str:
    """The GPU model ``server``'s clusters are timed as (timed_gpu_model): a row naming an
    A800 or an H800 is timed as the A100 or the H100 its peak and memory are
    (catalog_warnings says so); ``memory_gb``: another memory than the row's (a cloud offer's)."""
    memory = server.gpu_memory_gb if memory_gb is None else memory_gb
    return timed_gpu_model(server.gpu_model, server.gpu_peak_bf16_tflops, memory)


def server_cluster(
    server: Server,
    *,
    nodes: int,
    fabric: str,
    nic_gbps: float,
    nics_per_node: int,
    topology: TopologyProfile,
    in_network_reduction: bool = False,
) -> ClusterSpec:
    """``nodes`` units of a catalog server row with ``nics_per_node`` NICs each, as the
    estimator sees them: a rack-scale row (issue 16) becomes its hosts, its NICs shared out per
    host, with the row's scale-up domain; an ordinary server is one host and one domain.
    ``in_network_reduction``: every switch of the design offers it (issue 14, sharp; the
    caller decides from the catalog's switches.in_network_reduction). NVLS is never credited:
    no server row says whether its NVSwitch runs it, so SHARP and non-SHARP designs of the
    same server are timed alike inside the server. ``nic_gbps``: each NIC's line rate over
    all its planes (Nic.line_gbps; each plane is a whole copy of the network, so the time is
    one plane's at that rate); a NIC faster than the server's slots carry moves what they
    carry (issue 14, host link: Server.nic_rate_gbps)."""
    hosts = server.gpus_per_node // server.host_gpus
    return ClusterSpec(
        gpus=nodes * server.gpus_per_node,
        gpus_per_node=server.host_gpus,
        gpu_peak_tflops=server.gpu_peak_bf16_tflops,
        gpu_memory_gb=server.gpu_memory_gb,
        intra_node_gbytes_per_s=server.intra_node_gbytes_per_s,
        fabric=fabric,
        nic_gbps_per_node=server.nic_rate_gbps(nic_gbps) * nics_per_node / hosts,
        nics_per_node=max(1, nics_per_node // hosts),
        topology=topology,
        gpu_model=server_gpu_model(server),
        gpu_peak_fp8_tflops=server.gpu_peak_fp8_tflops,
        scale_up_gpus=server.scale_up_domain_gpus,
        in_network_reduction=in_network_reduction,
        nvls=False,
    )
