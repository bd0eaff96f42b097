"""Clusters and plans the estimator tests share (plain functions, no pytest magic)."""

from __future__ import annotations

from google.protobuf.json_format import ParseDict

from optimizer._pb.procurement.v1 import estimate_pb2
from optimizer.performance.cluster import ClusterSpec
from optimizer.performance.convert import workload_from_proto
from optimizer.performance.validation import unseen_runs
from optimizer.topology.sizing import size_network
from optimizer.workload.model import Workload


def cluster(
    gpus: int = 64,
    *,
    fabric: str = "infiniband",
    topology: str = "fat_tree",
    oversubscription: float = 1.0,
    nic_gbps_per_node: float = 3200.0,
    nics_per_node: int = 8,
    gpu: str = "H100",
    radix: int = 64,
    memory_gb: float = 80.0,
) -> ClusterSpec:
    """An HGX-class cluster (8 GPUs per node) on the named network."""
    a100 = gpu == "A100"
    nodes = max(1, gpus // 8)
    profile = size_network(
        topology,
        nodes * nics_per_node,
        radix,
        oversubscription=oversubscription,
        rails=nics_per_node,
    ).profile
    return ClusterSpec(
        gpus=gpus,
        gpus_per_node=8,
        gpu_peak_tflops=312.0 if a100 else 989.4,
        gpu_memory_gb=memory_gb,
        intra_node_gbytes_per_s=300.0 if a100 else 450.0,
        fabric=fabric,
        nic_gbps_per_node=nic_gbps_per_node,
        nics_per_node=nics_per_node,
        topology=profile,
        gpu_model=gpu,
        gpu_peak_fp8_tflops=None if a100 else 1978.9,
    )


def qwen3_30b() -> Workload:
    """Qwen3-30B-A3B as the published-run data states it (32 heads of 128 on h 2,048, a
    151,936-token vocabulary)."""
    run = next(r for r in unseen_runs() if r.id.startswith("qwen3"))
    fields = {k: v for k, v in run.request["workload"].items() if k != "parameters"}
    return workload_from_proto(ParseDict(fields, estimate_pb2.Workload()))
