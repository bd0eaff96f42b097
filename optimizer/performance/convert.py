"""Conversion between the public messages and the estimator's records.

``EstimateRequest`` -> (Workload, ClusterSpec, PartialPlan, FabricTable) and ``Estimate`` ->
``EstimateResponse``. Every missing or impossible field raises ``InvalidInput`` naming it,
with the message's field path (``workload.layers``, ``cluster.fabric``...).
"""

from __future__ import annotations

from typing import Any

from google.protobuf.json_format import MessageToDict

from optimizer._pb.procurement.v1 import estimate_pb2 as pb
from optimizer.catalog.model import Catalog
from optimizer.errors import InvalidInput
from optimizer.performance.cluster import ClusterSpec
from optimizer.performance.estimator import Estimate
from optimizer.performance.fabrics import DEFAULT_FABRICS, FabricTable, profile_from_mapping
from optimizer.performance.plan import PartialPlan
from optimizer.registry.fabrics import FABRICS
from optimizer.registry.topologies import FAT_TREE, TOPOLOGIES
from optimizer.topology.profile import TopologyProfile
from optimizer.topology.sizing import size_network
from optimizer.workload.model import Workload
from optimizer.workload.presets import preset

DEFAULT_SWITCH_RADIX = 64
DEFAULT_GPUS_PER_NODE = 8
OVERSUBSCRIBED_TIERS = ("leaf", "aggregation")

_ARCHITECTURE = (
    "layers",
    "hidden_size",
    "ffn_hidden_size",
    "attention_heads",
    "kv_heads",
    "sequence_length",
    "vocab_size",
    "global_batch_size",
    "experts",
    "experts_per_token",
    "training_tokens",
    "gated_ffn",
    "tied_embeddings",
    "flash_attention",
)
_REQUIRED_WITHOUT_PRESET = (
    "layers",
    "hidden_size",
    "attention_heads",
    "sequence_length",
    "vocab_size",
    "training_tokens",
    "global_batch_size",
)


def _set_fields(msg: Any, names: tuple[str, ...]) -> dict[str, Any]:
    return {n: getattr(msg, n) for n in names if msg.HasField(n)}


def workload_from_proto(msg: pb.Workload) -> Workload:
    """A preset with the request's fields on top, or a model given field by field."""
    fields = _set_fields(msg, _ARCHITECTURE)
    for name, value in (
        ("activation_recompute", msg.activation_recompute),
        ("precision", msg.precision),
    ):
        if value:
            fields[name] = value.strip().lower()
    if msg.model:
        return preset(msg.model, **fields)
    missing = [n for n in _REQUIRED_WITHOUT_PRESET if n not in fields]
    if missing:
        raise InvalidInput(
            f"required when no preset model is named (missing: {', '.join(missing)})",
            field=f"workload.{missing[0]}",
        )
    fields.setdefault("ffn_hidden_size", 4 * fields["hidden_size"])
    fields.setdefault("kv_heads", fields["attention_heads"])
    return Workload(name="custom", **fields)


def plan_from_proto(msg: pb.Parallelism, workload_msg: pb.Workload) -> PartialPlan:
    """The degrees the request fixes; the workload's micro_batch_size is a fallback."""
    fixed = _set_fields(
        msg,
        (
            "tensor",
            "pipeline",
            "data",
            "expert",
            "virtual_pipeline",
            "zero_stage",
            "micro_batch_size",
        ),
    )
    if "micro_batch_size" not in fixed and workload_msg.HasField("micro_batch_size"):
        fixed["micro_batch_size"] = workload_msg.micro_batch_size
    for name, value in fixed.items():
        low = 0 if name == "zero_stage" else 1
        if value < low:
            raise InvalidInput(f"must be >= {low}, got {value}", field=f"parallelism.{name}")
    return PartialPlan(**fixed)


def _server_fields(msg: pb.Cluster, catalog: Catalog | None) -> dict[str, Any]:
    """GPU fields of ``server_sku`` from the request's catalog (explicit fields win)."""
    if not msg.server_sku:
        return {}
    if catalog is None:
        raise InvalidInput("a catalog is needed to look up cluster.server_sku", field="catalog")
    server = next((s for s in catalog.servers if s.sku == msg.server_sku), None)
    if server is None:
        raise InvalidInput(
            f"server {msg.server_sku!r} is not in catalog {catalog.meta.name!r}",
            field="cluster.server_sku",
        )
    return {
        "gpus_per_node": server.gpus_per_node,
        "gpu_peak_tflops": server.gpu_peak_bf16_tflops,
        "gpu_peak_fp8_tflops": server.gpu_peak_fp8_tflops,
        "gpu_memory_gb": server.gpu_memory_gb,
        "intra_node_gbytes_per_s": server.intra_node_gbytes_per_s,
        "gpu_model": server.gpu_model,
    }


def topology_profile(
    family: str,
    nodes: int,
    nics_per_node: int,
    radix: int,
    oversubscription: float,
    oversubscribed_tier: str,
) -> TopologyProfile:
    """The shared profile from the topology sizing (optimizer.topology.sizing)."""
    family = TOPOLOGIES.normalize(family, "cluster.topology")
    if oversubscribed_tier not in OVERSUBSCRIBED_TIERS:
        raise InvalidInput(
            f"expected one of {', '.join(OVERSUBSCRIBED_TIERS)}, got {oversubscribed_tier!r}",
            field="cluster.oversubscribed_tier",
        )
    try:
        sizing = size_network(
            family,
            nodes * nics_per_node,
            radix,
            oversubscription=oversubscription,
            rails=nics_per_node,
            oversubscribed_tier=oversubscribed_tier,
        )
    except InvalidInput as e:
        raise InvalidInput(
            str(e).split(": ", 1)[-1], field=f"cluster.{e.field or 'topology'}"
        ) from None
    return sizing.profile


def cluster_from_proto(msg: pb.Cluster, catalog: Catalog | None = None) -> ClusterSpec:
    """The cluster, with GPU fields from ``server_sku`` where the request leaves them out."""
    if msg.gpus < 1:
        raise InvalidInput(f"must be >= 1, got {msg.gpus}", field="cluster.gpus")
    if not msg.fabric:
        raise InvalidInput(f"required: {' | '.join(FABRICS.names())}", field="cluster.fabric")
    fabric = _fabric_name(msg.fabric)
    fields = _server_fields(msg, catalog)
    fields.update(
        _set_fields(
            msg,
            (
                "gpus_per_node",
                "gpu_peak_tflops",
                "gpu_peak_fp8_tflops",
                "gpu_memory_gb",
                "intra_node_gbytes_per_s",
            ),
        )
    )
    if msg.gpu_model:
        fields["gpu_model"] = msg.gpu_model
    fields.setdefault("gpus_per_node", DEFAULT_GPUS_PER_NODE)
    for name in ("gpu_peak_tflops", "gpu_memory_gb", "intra_node_gbytes_per_s"):
        if name not in fields:
            raise InvalidInput(
                "required (or give cluster.server_sku and a catalog)", field=f"cluster.{name}"
            )
    if not msg.HasField("nic_gbps_per_node"):
        raise InvalidInput(
            "required: scale-out line rate of a node's NICs in Gb/s",
            field="cluster.nic_gbps_per_node",
        )
    nics = msg.nics_per_node if msg.HasField("nics_per_node") else fields["gpus_per_node"]
    if nics < 1:
        raise InvalidInput(f"must be >= 1, got {nics}", field="cluster.nics_per_node")
    gpn = fields["gpus_per_node"]
    if gpn < 1:
        raise InvalidInput(f"must be >= 1, got {gpn}", field="cluster.gpus_per_node")
    radix = msg.switch_radix if msg.HasField("switch_radix") else DEFAULT_SWITCH_RADIX
    oversubscription = msg.oversubscription if msg.HasField("oversubscription") else 1.0
    profile = topology_profile(
        msg.topology.strip() or FAT_TREE.name,
        -(-msg.gpus // gpn),
        nics,
        radix,
        oversubscription,
        msg.oversubscribed_tier.strip().lower() or "leaf",
    )
    return ClusterSpec(
        gpus=msg.gpus,
        fabric=fabric,
        nic_gbps_per_node=msg.nic_gbps_per_node,
        nics_per_node=nics,
        topology=profile,
        **fields,
    )


def _fabric_name(text: str) -> str:
    """A registered fabric in its canonical spelling (``RoCE`` -> ``roce``); any other name is
    kept (lower case) for the fabric table to accept, as a request's own profile row, or refuse."""
    return FABRICS.normalize(text) if text in FABRICS else text.strip().lower()


def fabrics_from_proto(rows: Any) -> FabricTable:
    """The default fabric table with the request's rows replacing those of the same name."""
    table = dict(DEFAULT_FABRICS)
    for i, row in enumerate(rows):
        values = MessageToDict(
            row, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
        )
        profile = profile_from_mapping(values, f"fabric_profiles[{i}]", "fabric_profiles")
        table[profile.fabric] = profile
    return table


def request_from_proto(
    req: pb.EstimateRequest, catalog: Catalog | None = None
) -> tuple[Workload, ClusterSpec, PartialPlan, FabricTable]:
    if not req.HasField("workload"):
        raise InvalidInput("required", field="workload")
    if not req.HasField("cluster"):
        raise InvalidInput("required", field="cluster")
    return (
        workload_from_proto(req.workload),
        cluster_from_proto(req.cluster, catalog),
        plan_from_proto(req.parallelism, req.workload),
        fabrics_from_proto(req.fabric_profiles),
    )


def response_to_proto(est: Estimate) -> pb.EstimateResponse:
    p, b = est.plan, est.breakdown
    return pb.EstimateResponse(
        step_time_s=est.step_time_s,
        training_time_hours=est.training_time_hours,
        training_time_hours_low=est.training_time_hours_low,
        training_time_hours_high=est.training_time_hours_high,
        model_tflops_per_gpu=est.model_tflops_per_gpu,
        hardware_tflops_per_gpu=est.hardware_tflops_per_gpu,
        mfu=est.mfu,
        memory_per_gpu_gb=est.memory_per_gpu_gb,
        parallelism=pb.Parallelism(
            tensor=p.tensor,
            pipeline=p.pipeline,
            data=p.data,
            expert=p.expert,
            virtual_pipeline=p.virtual_pipeline,
            zero_stage=p.zero_stage,
            micro_batch_size=p.micro_batch_size,
        ),
        breakdown=pb.StepBreakdown(
            compute_s=b.compute_s,
            pipeline_bubble_s=b.pipeline_bubble_s,
            tensor_parallel_s=b.tensor_parallel_s,
            data_parallel_s=b.data_parallel_s,
            pipeline_p2p_s=b.pipeline_p2p_s,
            all_to_all_s=b.all_to_all_s,
            exposed_communication_s=b.exposed_communication_s,
            host_cpu_overhead_s=b.host_cpu_overhead_s,
        ),
        steps=est.steps,
        parameters=est.parameters,
        tokens_per_s=est.tokens_per_s,
        notes=list(est.notes),
        gpus_used=est.gpus_used,
    )
