"""Conversion between the public messages and the estimator's records.

``EstimateRequest`` -> (Workload, ClusterSpec, PartialPlan, FabricTable) and ``Estimate`` ->
``EstimateResponse``. Every missing or impossible field raises ``InvalidInput`` naming it,
with the message's field path (``workload.layers``, ``cluster.fabric``...).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from google.protobuf.json_format import MessageToDict

from optimizer._pb.procurement.v1 import estimate_pb2 as pb
from optimizer.catalog.model import Catalog
from optimizer.errors import InvalidInput
from optimizer.performance.calibration import (
    CALIBRATED_GENERATIONS,
    MEMORY_GB,
    PEAK_BF16_TFLOPS,
    generation,
    generations_at,
    generations_at_peak,
    timed_gpu_model,
)
from optimizer.performance.cluster import NOMINAL_NIC_GBPS, ClusterSpec
from optimizer.performance.estimator import Estimate
from optimizer.performance.fabrics import DEFAULT_FABRICS, FabricTable, profile_from_mapping
from optimizer.performance.goodput import Reliability
from optimizer.performance.options import ModelOptions
from optimizer.performance.plan import PartialPlan
from optimizer.performance.profile import (
    MAX_RESIDUAL_SPREAD,
    CalibratedFabric,
    CalibrationPoint,
    CalibrationProfile,
)
from optimizer.performance.profile import METRICS as CALIBRATION_METRICS
from optimizer.performance.profile import PARAMETERS as CALIBRATION_PARAMETERS
from optimizer.registry.fabrics import FABRICS
from optimizer.registry.schema import message_values, record_values
from optimizer.registry.topologies import FAT_TREE, TOPOLOGIES
from optimizer.topology.profile import TopologyProfile
from optimizer.topology.sizing import size_network
from optimizer.workload.model import Workload, parameter_count
from optimizer.workload.presets import preset

DEFAULT_SWITCH_RADIX = 64
DEFAULT_GPUS_PER_NODE = 8
OVERSUBSCRIBED_TIERS = ("leaf", "aggregation")

_MOE_FIELDS = (
    "expert_load_imbalance",
    "expert_dispatch",
    "expert_node_limit",
    "expert_capacity_factor",
    "pad_expert_input_to_capacity",
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


def workload_from_proto(msg: pb.Workload) -> Workload:
    """A preset with the request's fields on top, or a model given field by field; a stated
    ``parameters`` count is checked against the architecture (never ignored)."""
    fields = record_values(msg, Workload)
    for name in (
        "activation_recompute",
        "precision",
        "framework",
        "expert_dispatch",
        "attention_kernel",
        "optimizer_moments",
        "pipeline_schedule",
    ):
        if name in fields:  # choices: any case
            fields[name] = fields[name].strip().lower()
    if msg.model:
        w = preset(msg.model, **fields)
    else:
        missing = [n for n in _REQUIRED_WITHOUT_PRESET if n not in fields]
        if missing:
            raise InvalidInput(
                f"required when no preset model is named (missing: {', '.join(missing)})",
                field=f"workload.{missing[0]}",
            )
        fields.setdefault("ffn_hidden_size", 4 * fields["hidden_size"])
        fields.setdefault("kv_heads", fields["attention_heads"])
        w = Workload(name="custom", **fields)
    moe_only = [n for n in _MOE_FIELDS if n in fields]
    if moe_only and not w.is_moe:
        raise InvalidInput(
            "applies to mixture-of-experts workloads only; this one is dense (experts 1)",
            field=f"workload.{moe_only[0]}",
        )
    if msg.HasField("parameters"):
        explicit = tuple(n for n in _PARAMETER_FLAGS if msg.HasField(n))
        w = match_parameters(w, msg.parameters, explicit)
    return w


# --- issue 14 (inputs): workload.parameters against the architecture ------------------------
PARAMETER_TOLERANCE = 0.02  # published counts are rounded ("405B"); 2 % allows for that
_PARAMETER_FLAGS = ("gated_ffn", "tied_embeddings")


def match_parameters(w: Workload, stated: float, explicit: tuple[str, ...] = ()) -> Workload:
    """``w`` when its parameter count is within PARAMETER_TOLERANCE of ``stated``; otherwise
    the closest variant, within tolerance, over the flags of _PARAMETER_FLAGS the request did
    not set (``explicit``), with what was inferred in ``w.inferred`` (the estimate's notes).

    Raises
    ------
    InvalidInput
        ``workload.parameters`` is not positive, or no variant comes within tolerance (the
        message states both counts and the variants tried).
    """
    if not stated > 0:
        raise InvalidInput(f"must be > 0, got {stated:g}", field="workload.parameters")

    def error(x: Workload) -> float:
        return abs(x.main_model_parameters / stated - 1.0)

    if error(w) <= PARAMETER_TOLERANCE:
        return w
    free = [n for n in _PARAMETER_FLAGS if n not in explicit]
    variants = [w]
    for name in free:
        variants += [_flipped(v, name) for v in variants]
    best = min(variants, key=error)
    if error(best) > PARAMETER_TOLERANCE:
        tried = "; ".join(
            f"{_flags(v)}: {parameter_count(v.main_model_parameters)}"
            for v in sorted(variants, key=error)
        )
        fixed = f" ({', '.join(explicit)} set by the request, not varied)" if explicit else ""
        raise InvalidInput(
            f"states {parameter_count(stated)} parameters but the architecture has "
            f"{parameter_count(w.main_model_parameters)}{_without_mtp(w)}, more than "
            f"{PARAMETER_TOLERANCE:.0%} apart; tried "
            f"{tried}{fixed}. Check layers, hidden_size, ffn_hidden_size, heads and vocab_size",
            field="workload.parameters",
        )
    changed = [n for n in free if getattr(best, n) != getattr(w, n)]
    note = (
        f"inferred {', '.join(f'{n}={str(getattr(best, n)).lower()}' for n in changed)} from "
        f"workload.parameters {parameter_count(stated)}: the architecture has "
        f"{parameter_count(best.main_model_parameters)} with it, "
        f"{parameter_count(w.main_model_parameters)} without{_without_mtp(w)}"
    )
    return replace(best, inferred=(*w.inferred, note))


def _without_mtp(w: Workload) -> str:
    """What the stated count is compared with when the workload has MTP modules."""
    return " (its MTP modules' aside, as model cards count)" if w.mtp_layers else ""


def _flipped(w: Workload, flag: str) -> Workload:
    changes: dict[str, Any] = {flag: not getattr(w, flag)}
    return replace(w, **changes)


def _flags(w: Workload) -> str:
    return ", ".join(f"{n}={str(getattr(w, n)).lower()}" for n in _PARAMETER_FLAGS)


def gpu_model_note(msg: pb.Cluster, c: ClusterSpec, catalog: Catalog | None = None) -> str | None:
    """What the estimate should say about a GPU generation the request did not name, or
    named by a model no generation is calibrated for (timed_gpu_model): which was inferred
    from what (``generations_at``), or why the default one was used (of a named model the
    estimate says that itself)."""
    named = msg.gpu_model or _server_fields(msg, catalog).get("gpu_model", "")
    if named and c.gpu_model == named:  # a calibrated generation, or nothing inferred
        return None
    peak, memory = c.gpu_peak_tflops, c.gpu_memory_gb
    at_peak = generations_at_peak(peak)
    matches = generations_at(peak, memory)
    by_memory = matches != at_peak  # the memory told generations of this peak apart
    given = f"gpu_peak_tflops {peak:g}" + (f" and gpu_memory_gb {memory:g}" if by_memory else "")
    unmatched = (
        f"; gpu_memory_gb {memory:g} matches none of "
        + ", ".join(f"{n} {MEMORY_GB[n]:g} GB" for n in at_peak)
        if len(at_peak) > 1 and not by_memory
        else ""
    )
    timed = generation(c.gpu_model).name
    if timed != "default":
        facts = f"its dense BF16 peak is {PEAK_BF16_TFLOPS[timed]:g} TFLOP/s" + (
            f", its memory {MEMORY_GB[timed]:g} GB" if by_memory else ""
        )
        head = "cluster.gpu_model not given"
        if msg.gpu_model:
            head = f"cluster.gpu_model {named!r} names no calibrated generation"
        elif named:  # the catalog row's
            head = f"cluster.server_sku {msg.server_sku!r} has GPU {named!r}, no calibrated one"
        return f"{head}: GPU generation {timed} inferred from {given} ({facts}{unmatched})"
    why = (
        f"{'match' if by_memory else 'matches'} {' and '.join(matches)}, calibrated "
        f"differently{unmatched}"
        if matches
        else "matches no calibrated generation ("
        + ", ".join(f"{n} {p:g}" for n, p in PEAK_BF16_TFLOPS.items())
        + ")"
    )
    return (
        f"cluster.gpu_model not given; {given} {why}: used the 'default' "
        "generation's kernel efficiency (set cluster.gpu_model to choose one)"
    )


# --- end issue 14 (inputs) ------------------------------------------------------------------


def plan_from_proto(msg: pb.Parallelism, workload_msg: pb.Workload) -> PartialPlan:
    """The degrees the request fixes; the workload's micro_batch_size is a fallback, and a
    stated layout (``stage_layers``) fixes the pipeline to its stage count."""
    fixed = record_values(msg, PartialPlan)
    if "micro_batch_size" not in fixed and workload_msg.HasField("micro_batch_size"):
        fixed["micro_batch_size"] = workload_msg.micro_batch_size
    if msg.stage_layers:
        stages = len(msg.stage_layers)
        if fixed.setdefault("pipeline", stages) != stages:
            raise InvalidInput(
                f"lays the layers on {stages} stages, but parallelism.pipeline is "
                f"{fixed['pipeline']}",
                field="parallelism.stage_layers",
            )
    for name, value in fixed.items():
        if isinstance(value, bool):  # reshard_after_forward: either value is a choice
            continue
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
    fields: dict[str, Any] = {
        # A rack-scale row (GB200 NVL72) is one scale-up domain of several hosts: the
        # estimator's node is the host, the domain its own field.
        "gpus_per_node": server.host_gpus,
        "gpu_peak_tflops": server.gpu_peak_bf16_tflops,
        "gpu_peak_fp8_tflops": server.gpu_peak_fp8_tflops,
        "gpu_memory_gb": server.gpu_memory_gb,
        "intra_node_gbytes_per_s": server.intra_node_gbytes_per_s,
        "gpu_model": server.gpu_model,
        "scale_up_gpus": server.scale_up_domain_gpus,
    }
    node_gpus = msg.gpus_per_node if msg.HasField("gpus_per_node") else server.host_gpus
    most = max(1, server.max_nics * node_gpus // server.gpus_per_node)
    if msg.HasField("nics_per_node") and msg.nics_per_node > most:
        # e.g. a rack-scale row's NICs per rack where the estimator's node is the host
        raise InvalidInput(
            f"{msg.nics_per_node} NICs per node, but a node of {node_gpus} {server.sku} GPUs "
            f"holds at most {most} (a rack-scale row's node is a host of {server.host_gpus}); "
            "give nics_per_node and nic_gbps_per_node per node",
            field="cluster.nics_per_node",
        )
    if server.builtin_nics:  # NICs built into the row, shared out per host
        fields["nics_per_node"] = max(
            1, server.builtin_nics * server.host_gpus // server.gpus_per_node
        )
        # and their line rate: what the row ships with needs no restating (as server_cluster
        # times the optimizer's designs: each NIC at what the server's slots carry)
        nic = next(n for n in catalog.nics if n.sku == server.builtin_nic_sku)
        nics = msg.nics_per_node if msg.HasField("nics_per_node") else fields["nics_per_node"]
        fields["nic_gbps_per_node"] = server.nic_rate_gbps(nic.line_gbps) * nics
    return fields


def topology_profile(
    family: str,
    nodes: int,
    nics_per_node: int,
    radix: int,
    oversubscription: float,
    oversubscribed_tier: str,
    rails: int,
    port_lanes: int,
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
            rails=rails,
            oversubscribed_tier=oversubscribed_tier,
            port_lanes=port_lanes,
        )
    except InvalidInput as e:
        raise InvalidInput(
            str(e).split(": ", 1)[-1], field=f"cluster.{e.field or 'topology'}"
        ) from None
    return sizing.profile


def cluster_from_proto(msg: pb.Cluster, catalog: Catalog | None = None) -> ClusterSpec:
    """The cluster, with GPU fields from ``server_sku`` where the request leaves them out.

    Fields ``ClusterSpec`` mirrors by name are copied generically (``record_values``); only
    the defaults, the fabric's spelling and the topology (a family name on the wire, a sized
    profile in the core) are handled here."""
    if msg.gpus < 1:
        raise InvalidInput(f"must be >= 1, got {msg.gpus}", field="cluster.gpus")
    kind = FABRICS.resolve(msg.fabric, msg.fabric_kind, "cluster.fabric", "cluster.fabric_kind")
    if not msg.fabric.strip() and kind is None:
        raise InvalidInput(f"required: {' | '.join(FABRICS.names())}", field="cluster.fabric")
    fields = _server_fields(msg, catalog)
    fields.update(record_values(msg, ClusterSpec, exclude=("topology",)))  # explicit fields win
    fields["fabric"] = kind.name if kind is not None else msg.fabric.strip().lower()
    fields.setdefault("gpus_per_node", DEFAULT_GPUS_PER_NODE)
    for name in ("gpu_peak_tflops", "gpu_memory_gb", "intra_node_gbytes_per_s"):
        if name not in fields:
            raise InvalidInput(
                "required (or give cluster.server_sku and a catalog)", field=f"cluster.{name}"
            )
    # issue 14 (inputs): a missing or uncalibrated model is timed as the generation its peak
    # and memory identify (gpu_model_note says which)
    fields["gpu_model"] = timed_gpu_model(
        fields.get("gpu_model", ""), fields["gpu_peak_tflops"], fields["gpu_memory_gb"]
    )
    family = TOPOLOGIES.resolve(
        msg.topology, msg.topology_family, "cluster.topology", "cluster.topology_family"
    )
    one_node = msg.gpus <= fields["gpus_per_node"] or (family is not None and not family.scale_out)
    if one_node and "nic_gbps_per_node" not in fields:  # nothing leaves the node
        fields["nic_gbps_per_node"], fields["nics_per_node"] = NOMINAL_NIC_GBPS, 1
    if "nic_gbps_per_node" not in fields:
        raise InvalidInput(
            "required: scale-out line rate of a node's NICs in Gb/s",
            field="cluster.nic_gbps_per_node",
        )
    fields.setdefault("nics_per_node", fields["gpus_per_node"])
    nics = fields["nics_per_node"]
    if nics < 1:
        raise InvalidInput(f"must be >= 1, got {nics}", field="cluster.nics_per_node")
    gpn = fields["gpus_per_node"]
    if gpn < 1:
        raise InvalidInput(f"must be >= 1, got {gpn}", field="cluster.gpus_per_node")
    radix = msg.switch_radix if msg.HasField("switch_radix") else DEFAULT_SWITCH_RADIX
    lanes = msg.switch_port_lanes if msg.HasField("switch_port_lanes") else 1
    if radix % lanes:
        raise InvalidInput(
            f"{lanes} ports a cage do not divide the switch's {radix} ports (cluster.switch_radix)",
            field="cluster.switch_port_lanes",
        )
    oversubscription = msg.oversubscription if msg.HasField("oversubscription") else 1.0
    # Without a scale-out fabric the unit is the scale-up domain (one NVL72 rack of 18 hosts)
    unit = (
        gpn if family is None or family.scale_out else max(gpn, fields.get("scale_up_gpus") or gpn)
    )
    # A rail is a GPU's position in its scale-up domain: a domain of several nodes (a GB200
    # NVL72 rack of 18 hosts) has as many rails as NICs, as the optimizer's designs, whose node
    # is the catalog row (the rack), cable them (tests/test_design_reproduced.py).
    domain = fields.get("scale_up_gpus") or gpn
    rails = nics * (domain // gpn) if domain > gpn and domain % gpn == 0 else nics
    profile = topology_profile(
        (family or FAT_TREE).name,
        -(-msg.gpus // unit),
        nics,
        radix,
        oversubscription,
        msg.oversubscribed_tier.strip().lower() or "leaf",
        rails,
        lanes,
    )
    return ClusterSpec(topology=profile, **fields)


def fabrics_from_proto(rows: Any) -> FabricTable:
    """The default fabric table with the request's rows replacing those of the same name."""
    table = dict(DEFAULT_FABRICS)
    for i, row in enumerate(rows):
        values = MessageToDict(
            row, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
        )
        kind = FABRICS.resolve(
            row.fabric,
            row.fabric_kind,
            f"fabric_profiles[{i}].fabric",
            f"fabric_profiles[{i}].fabric_kind",
        )
        if kind is not None:  # a registered fabric, in its canonical spelling
            values["fabric"] = kind.name
        profile = profile_from_mapping(values, f"fabric_profiles[{i}]", "fabric_profiles")
        table[profile.fabric] = profile
    return table


# issue 14 (goodput) -- owned by the goodput work
def reliability_from_proto(msg: pb.Reliability) -> Reliability:
    """The request's failure and checkpoint figures over the sourced defaults; an impossible
    figure raises ``InvalidInput`` naming ``reliability.<field>`` (``Reliability`` checks)."""
    return Reliability(**record_values(msg, Reliability))


# issue 14 (calibrate) -- owned by the calibration work
def _bounded(value: float, field: str, low: float, high: float, low_open: bool = False) -> float:
    """``value`` if it lies in [low, high] ((low, high] when ``low_open``), else InvalidInput."""
    ok = math.isfinite(value) and (value > low if low_open else value >= low) and value <= high
    if not ok:
        bracket = "(" if low_open else "["
        raise InvalidInput(
            f"expected a number in {bracket}{low:g}, {high:g}], got {value!r}",
            field=field,
        )
    return value


def calibration_from_proto(msg: pb.CalibrationProfile) -> CalibrationProfile | None:
    """The request's calibration profile; None when the request carries none. A malformed
    profile is refused naming ``calibration.<field>`` (the file may have been hand-edited)."""
    if msg.ByteSize() == 0:
        return None
    gen = msg.gpu_generation.strip()
    if gen and gen not in CALIBRATED_GENERATIONS:
        raise InvalidInput(
            f"unknown GPU generation {gen!r}; expected one of {', '.join(CALIBRATED_GENERATIONS)}",
            field="calibration.gpu_generation",
        )
    scale = _generation_scale(msg, "kernel_efficiency_scale", gen)
    elementwise = _generation_scale(msg, "elementwise_scale", gen)
    fp8_scale = _generation_scale(msg, "fp8_kernel_efficiency_scale", gen)
    fabrics = []
    for i, row in enumerate(msg.fabrics):
        if not row.fabric.strip():
            raise InvalidInput(
                "required: the fabric's name", field=f"calibration.fabrics[{i}].fabric"
            )
        eff = _bounded(row.efficiency, f"calibration.fabrics[{i}].efficiency", 0, 1, True)
        fabrics.append(CalibratedFabric(row.fabric.strip().lower(), eff))
    for i, name in enumerate(msg.fitted):
        if name not in CALIBRATION_PARAMETERS:
            raise InvalidInput(
                f"unknown parameter {name!r}; expected one of {', '.join(CALIBRATION_PARAMETERS)}",
                field=f"calibration.fitted[{i}]",
            )
    points = []
    for i, pt in enumerate(msg.points):
        if pt.metric not in CALIBRATION_METRICS:
            raise InvalidInput(
                f"expected one of {', '.join(CALIBRATION_METRICS)}, got {pt.metric!r}",
                field=f"calibration.points[{i}].metric",
            )
        _bounded(pt.measured, f"calibration.points[{i}].measured", 0, math.inf, True)
        _bounded(pt.step_time_s, f"calibration.points[{i}].step_time_s", 0, math.inf)
        points.append(
            CalibrationPoint(
                pt.label, pt.metric, pt.measured, pt.predicted, pt.residual, pt.gpus, pt.step_time_s
            )
        )
    return CalibrationProfile(
        gpu_generation=gen,
        kernel_efficiency_scale=scale,
        # informational (the fitted value, for the reader; the scale is what applies), but a
        # hand-edited 1.5 must not pass for one
        kernel_efficiency=_bounded(msg.kernel_efficiency, "calibration.kernel_efficiency", 0, 1),
        fabrics=tuple(fabrics),
        collective_efficiency=_bounded(
            msg.collective_efficiency, "calibration.collective_efficiency", 0, 1, True
        )
        if msg.HasField("collective_efficiency")
        else None,
        step_overhead_s=_bounded(msg.step_overhead_s, "calibration.step_overhead_s", 0, 3600)
        if msg.HasField("step_overhead_s")
        else None,
        fitted=tuple(msg.fitted),
        points=tuple(points),
        residual_spread=_bounded(
            msg.residual_spread, "calibration.residual_spread", 0, MAX_RESIDUAL_SPREAD
        ),
        tool_version=msg.tool_version,
        notes=tuple(msg.notes),
        elementwise_scale=elementwise,
        fp8_kernel_efficiency_scale=fp8_scale,
    )


def _generation_scale(msg: pb.CalibrationProfile, name: str, gen: str) -> float | None:
    """A scale of one generation's built-in value (None: not given); refused without the
    generation it scales."""
    if not msg.HasField(name):
        return None
    if not gen:
        raise InvalidInput(
            f"required with {name} (the generation it scales)", field="calibration.gpu_generation"
        )
    return _bounded(getattr(msg, name), f"calibration.{name}", 0, 10, True)


def calibration_to_proto(profile: CalibrationProfile) -> pb.CalibrationProfile:
    """The profile as its message (the file ``procure calibrate -o`` writes is its JSON)."""
    msg = pb.CalibrationProfile(
        gpu_generation=profile.gpu_generation,
        kernel_efficiency=profile.kernel_efficiency,
        fabrics=[
            pb.CalibratedFabric(fabric=f.fabric, efficiency=f.efficiency) for f in profile.fabrics
        ],
        fitted=list(profile.fitted),
        points=[
            pb.CalibrationPoint(
                label=p.label,
                metric=p.metric,
                measured=p.measured,
                predicted=p.predicted,
                residual=p.residual,
                gpus=p.gpus,
                step_time_s=p.step_time_s,
            )
            for p in profile.points
        ],
        residual_spread=profile.residual_spread,
        tool_version=profile.tool_version,
        notes=list(profile.notes),
    )
    if profile.kernel_efficiency_scale is not None:
        msg.kernel_efficiency_scale = profile.kernel_efficiency_scale
    if profile.elementwise_scale is not None:
        msg.elementwise_scale = profile.elementwise_scale
    if profile.fp8_kernel_efficiency_scale is not None:
        msg.fp8_kernel_efficiency_scale = profile.fp8_kernel_efficiency_scale
    if profile.collective_efficiency is not None:
        msg.collective_efficiency = profile.collective_efficiency
    if profile.step_overhead_s is not None:
        msg.step_overhead_s = profile.step_overhead_s
    return msg


def options_from_proto(req: pb.EstimateRequest | Any) -> ModelOptions:
    """The time model's request-level settings (EstimateRequest and OptimizeRequest both
    carry ``calibration`` and ``reliability``)."""
    return ModelOptions(
        calibration=calibration_from_proto(req.calibration),
        reliability=reliability_from_proto(req.reliability),
    )


def request_from_proto(
    req: pb.EstimateRequest, catalog: Catalog | None = None
) -> tuple[Workload, ClusterSpec, PartialPlan, FabricTable]:
    if not req.HasField("workload"):
        raise InvalidInput("required", field="workload")
    if not req.HasField("cluster"):
        raise InvalidInput("required", field="cluster")
    workload = workload_from_proto(req.workload)
    cluster = cluster_from_proto(req.cluster, catalog)
    note = gpu_model_note(req.cluster, cluster, catalog)  # issue 14 (inputs): said in the notes
    if note is not None:
        workload = replace(workload, inferred=(*workload.inferred, note))
    return (
        with_stage_layers(workload, req.parallelism),
        cluster,
        plan_from_proto(req.parallelism, req.workload),
        fabrics_from_proto(req.fabric_profiles),
    )


def with_stage_layers(w: Workload, msg: pb.Parallelism) -> Workload:
    """The request's pipeline layout (``parallelism.stage_layers``) on the workload, which
    every stage's time and memory read (plan_from_proto fixes the pipeline degree to it)."""
    if not msg.stage_layers:
        return w
    return replace(w, stage_layers=tuple(msg.stage_layers))


def response_to_proto(est: Estimate) -> pb.EstimateResponse:
    """Every mirrored field by name; the nested plan and breakdown likewise."""
    return pb.EstimateResponse(
        parallelism=pb.Parallelism(
            **message_values(est.plan, pb.Parallelism, exclude=("expert_tensor",)),
            expert_tensor=est.plan.expert_tensor_degree,
            stage_layers=est.stage_layers,
        ),
        breakdown=pb.StepBreakdown(**message_values(est.breakdown, pb.StepBreakdown)),
        **message_values(est, pb.EstimateResponse),
    )
